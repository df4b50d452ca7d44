//! Keys and their order.
//!
//! Source: <https://www.w3.org/TR/IndexedDB-3/#key-construct> and seed 003 ("Claves e índices").

use std::cmp::Ordering;

use crate::error::{Error, Result};
use crate::utf16::Utf16String;
use crate::value::{time_clip, Value};

/// A valid IndexedDB key.
///
/// Invariants (upheld by the constructors [`Key::number`] and [`Key::date`], by
/// [`crate::decode_key`] and by key conversion from values; code that builds variants directly
/// must uphold them too): `Number` and `Date` never hold NaN, and `Number` never holds `-0.0`
/// (it is normalised to `+0.0`).
///
/// `Ord` is the spec's "compare two keys": number < date < string < binary < array; numbers
/// and dates by value, strings by UTF-16 code unit, binaries bytewise, arrays element-wise and
/// then by length.
#[derive(Debug, Clone)]
pub enum Key {
    /// A number key (ECMAScript Number): any `f64` except NaN, including ±Infinity.
    Number(f64),
    /// A date key: milliseconds since the Unix epoch (a Date's time value), never NaN.
    Date(f64),
    /// A string key: UTF-16 code units.
    String(Utf16String),
    /// A binary key (from an ArrayBuffer or a view of one): the bytes.
    Binary(Vec<u8>),
    /// An array key: the member keys, in order.
    Array(Vec<Key>),
}

impl Key {
    /// A number key; `-0.0` becomes `+0.0`.
    ///
    /// # Errors
    /// [`Error::Data`] if `n` is NaN.
    pub fn number(n: f64) -> Result<Key> {
        if n.is_nan() {
            return Err(Error::Data("NaN is not a valid key".into()));
        }
        Ok(Key::Number(if n == 0.0 { 0.0 } else { n }))
    }

    /// A date key from milliseconds since the Unix epoch, as a Date holds them: the value
    /// goes through [`time_clip`] (truncated toward zero; `-0.0` becomes `+0.0`).
    ///
    /// # Errors
    /// [`Error::Data`] if that gives NaN: `ms` is NaN, infinite or beyond ±8.64e15 (an
    /// invalid Date).
    pub fn date(ms: f64) -> Result<Key> {
        let clipped = time_clip(ms);
        if clipped.is_nan() {
            return Err(Error::Data("an invalid Date is not a valid key".into()));
        }
        Ok(Key::Date(clipped))
    }

    /// A string key from Rust text.
    pub fn string(s: &str) -> Key {
        Key::String(Utf16String::from(s))
    }

    /// The key's type name as the spec writes it: `number`, `date`, `string`, `binary`, `array`.
    pub fn type_name(&self) -> &'static str {
        match self {
            Key::Number(_) => "number",
            Key::Date(_) => "date",
            Key::String(_) => "string",
            Key::Binary(_) => "binary",
            Key::Array(_) => "array",
        }
    }

    fn type_rank(&self) -> u8 {
        match self {
            Key::Number(_) => 0,
            Key::Date(_) => 1,
            Key::String(_) => 2,
            Key::Binary(_) => 3,
            Key::Array(_) => 4,
        }
    }
}

/// Compares two keys: <https://www.w3.org/TR/IndexedDB-3/#compare-two-keys>.
pub fn compare_two_keys(a: &Key, b: &Key) -> Ordering {
    // Steps 1-4: differing types order as array > binary > string > date > number.
    let (ta, tb) = (a.type_rank(), b.type_rank());
    if ta != tb {
        return ta.cmp(&tb);
    }
    match (a, b) {
        // Step 5, number and date: by value (never NaN, so partial_cmp always answers).
        (Key::Number(x), Key::Number(y)) | (Key::Date(x), Key::Date(y)) => {
            x.partial_cmp(y).unwrap_or(Ordering::Equal)
        }
        // Step 5, string: by code unit.
        (Key::String(x), Key::String(y)) => x.cmp(y),
        // Step 5, binary: bytewise, a prefix first.
        (Key::Binary(x), Key::Binary(y)) => x.cmp(y),
        // Step 5, array: member by member, then the shorter first.
        (Key::Array(x), Key::Array(y)) => {
            for (p, q) in x.iter().zip(y) {
                let c = compare_two_keys(p, q);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        _ => unreachable!("type ranks are equal, so the variants are equal"),
    }
}

/// Converts a value to a key: <https://www.w3.org/TR/IndexedDB-3/#convert-a-value-to-a-key>.
///
/// Numbers (not NaN), valid Dates, strings, binaries and arrays whose members all convert are
/// keys; anything else (undefined, null, bools, objects, NaN, an invalid Date) is "invalid",
/// returned as `None`. `-0` becomes `+0`. Callers turn `None` into a [`Error::Data`] where the
/// spec throws, or skip the record where it does not (index keys).
pub fn convert_value_to_key(value: &Value) -> Option<Key> {
    match value {
        Value::Number(n) => Key::number(*n).ok(),
        Value::Date(ms) => Key::date(*ms).ok(),
        Value::String(s) => Some(Key::String(s.clone())),
        Value::Binary(b) => Some(Key::Binary(b.clone())),
        // Step "array": each member must convert, else the whole value is invalid.
        Value::Array(items) => items
            .iter()
            .map(convert_value_to_key)
            .collect::<Option<Vec<Key>>>()
            .map(Key::Array),
        Value::Undefined | Value::Null | Value::Bool(_) | Value::Object(_) => None,
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Self) -> Ordering {
        compare_two_keys(self, other)
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl PartialEq for Key {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Key {}

impl From<&str> for Key {
    fn from(s: &str) -> Self {
        Key::string(s)
    }
}

impl From<String> for Key {
    fn from(s: String) -> Self {
        Key::String(Utf16String::from(s))
    }
}

impl From<Utf16String> for Key {
    fn from(s: Utf16String) -> Self {
        Key::String(s)
    }
}

impl From<i32> for Key {
    fn from(n: i32) -> Self {
        Key::Number(f64::from(n))
    }
}

impl From<u32> for Key {
    fn from(n: u32) -> Self {
        Key::Number(f64::from(n))
    }
}

impl From<Vec<Key>> for Key {
    fn from(keys: Vec<Key>) -> Self {
        Key::Array(keys)
    }
}

impl From<Vec<u8>> for Key {
    fn from(bytes: Vec<u8>) -> Self {
        Key::Binary(bytes)
    }
}

impl TryFrom<f64> for Key {
    type Error = Error;
    fn try_from(n: f64) -> Result<Key> {
        Key::number(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_order_number_date_string_binary_array() {
        let keys = [
            Key::Number(f64::INFINITY),
            Key::Date(f64::NEG_INFINITY),
            Key::string(""),
            Key::Binary(vec![]),
            Key::Array(vec![]),
        ];
        for w in keys.windows(2) {
            assert_eq!(compare_two_keys(&w[0], &w[1]), Ordering::Less, "{w:?}");
        }
    }

    #[test]
    fn arrays_compare_member_wise_then_by_length() {
        let a = Key::Array(vec![Key::from(1), Key::from("b")]);
        let b = Key::Array(vec![Key::from(2)]);
        assert!(a < b);
        let c = Key::Array(vec![Key::from(1)]);
        assert!(c < a);
        // Seed 003: ["trabajo", []] is above every ["trabajo", <string>].
        let top = Key::Array(vec![Key::from("trabajo"), Key::Array(vec![])]);
        let entry = Key::Array(vec![Key::from("trabajo"), Key::from("\u{FFFF}\u{FFFF}")]);
        assert!(entry < top);
    }

    #[test]
    fn minus_zero_is_normalised_and_nan_rejected() {
        let k = Key::number(-0.0).unwrap();
        match k {
            Key::Number(n) => assert!(n.is_sign_positive()),
            _ => unreachable!(),
        }
        assert_eq!(Key::number(f64::NAN).unwrap_err().name(), "DataError");
        assert_eq!(Key::date(f64::NAN).unwrap_err().name(), "DataError");
        assert_eq!(Key::date(8.64e15 + 1.0).unwrap_err().name(), "DataError");
        assert_eq!(Key::date(f64::INFINITY).unwrap_err().name(), "DataError");
        assert_eq!(Key::date(1.5).unwrap(), Key::Date(1.0));
        assert_eq!(Key::date(-1.5).unwrap(), Key::Date(-1.0));
        assert!(matches!(Key::date(-0.5).unwrap(), Key::Date(z) if z.is_sign_positive()));
    }

    #[test]
    fn value_to_key_conversion() {
        assert_eq!(
            convert_value_to_key(&Value::Number(-0.0)),
            Some(Key::Number(0.0))
        );
        assert_eq!(convert_value_to_key(&Value::Number(f64::NAN)), None);
        assert_eq!(convert_value_to_key(&Value::Date(f64::NAN)), None);
        assert_eq!(convert_value_to_key(&Value::Null), None);
        assert_eq!(convert_value_to_key(&Value::Bool(true)), None);
        let arr = Value::Array(vec![Value::from(1), Value::from("a")]);
        assert_eq!(
            convert_value_to_key(&arr),
            Some(Key::Array(vec![Key::from(1), Key::from("a")]))
        );
        let bad = Value::Array(vec![Value::from(1), Value::Null]);
        assert_eq!(convert_value_to_key(&bad), None);
    }

    #[test]
    fn strings_compare_by_code_unit() {
        assert!(Key::from("\u{1D11E}") < Key::from("\u{FFFD}"));
        assert!(Key::from("mar") < Key::from("mar\u{FFFF}z"));
    }
}
