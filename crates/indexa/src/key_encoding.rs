//! The order-preserving byte encoding of keys: storage order is key order.
//!
//! `memcmp(encode_key(a), encode_key(b))` has the same sign as
//! [`compare_two_keys(a, b)`](crate::compare_two_keys), and every key has exactly one encoding,
//! so the encoding can serve as the primary key of SQLite rows. The byte layout is described in
//! `docs/format.md`; in short, each key is a type tag followed by its payload:
//!
//! | tag    | type   | payload                                                        |
//! |--------|--------|----------------------------------------------------------------|
//! | `0x10` | number | 8 bytes: the IEEE-754 bits, big-endian, sign-flipped (see below) |
//! | `0x20` | date   | 8 bytes, as number                                             |
//! | `0x30` | string | code units, each in 1–3 bytes (see below), then `0x00`          |
//! | `0x40` | binary | bytes, each in 1–2 bytes (see below), then `0x00`               |
//! | `0x50` | array  | the member encodings, then `0x00`                               |
//!
//! Numbers: `-0` is written as `+0`; for a non-negative number the sign bit is set, for a
//! negative one all 64 bits are inverted, so unsigned big-endian order is numeric order.
//!
//! String code unit `u`: `0x0000..=0x007E` → one byte `u + 1`; `0x007F..=0x407E` → two bytes
//! `0x80 | (v >> 8), v & 0xFF` with `v = u - 0x7F`; `0x407F..=0xFFFF` → three bytes
//! `0xC0, u >> 8, u & 0xFF`. Every first byte is ≥ `0x01`, so the `0x00` terminator sorts a
//! string before any longer string it is a prefix of.
//!
//! Binary byte `b`: `0x00..=0xFD` → `b + 1`; `0xFE` → `0xFF 0x00`; `0xFF` → `0xFF 0x01`.
//!
//! Array: the terminator `0x00` is below every tag, so an array sorts before any longer array
//! it is a prefix of.

use crate::error::{Error, Result};
use crate::key::Key;
use crate::utf16::Utf16String;
use crate::value::{time_clip, Value};
use crate::value_codec as codec;

/// Version of this byte layout. Storage records it and refuses files with another version.
pub const KEY_ENCODING_VERSION: u32 = 1;

const TAG_NUMBER: u8 = 0x10;
const TAG_DATE: u8 = 0x20;
const TAG_STRING: u8 = 0x30;
const TAG_BINARY: u8 = 0x40;
pub(crate) const TAG_ARRAY: u8 = 0x50;
pub(crate) const TERMINATOR: u8 = 0x00;

/// Deepest array nesting [`decode_key`] accepts; deeper input is rejected, not recursed into.
pub const MAX_KEY_DEPTH: usize = 1024;

/// An encoded key, held in line up to 32 bytes (a number key takes 9, a compound key of two
/// numbers 20, an ASCII string key its length + 2): the primary and index keys of a record
/// being written, without an allocation each.
pub(crate) type KeyBytes = smallvec::SmallVec<[u8; 32]>;

/// Where key bytes are appended: a `Vec` or [`KeyBytes`].
pub(crate) trait KeyOut {
    /// Appends one byte.
    fn push(&mut self, byte: u8);
    /// Appends `bytes`.
    fn extend_from_slice(&mut self, bytes: &[u8]);
}

impl KeyOut for Vec<u8> {
    #[inline]
    fn push(&mut self, byte: u8) {
        Vec::push(self, byte);
    }
    #[inline]
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        Vec::extend_from_slice(self, bytes);
    }
}

impl KeyOut for KeyBytes {
    #[inline]
    fn push(&mut self, byte: u8) {
        smallvec::SmallVec::push(self, byte);
    }
    #[inline]
    fn extend_from_slice(&mut self, bytes: &[u8]) {
        smallvec::SmallVec::extend_from_slice(self, bytes);
    }
}

/// Encodes a key into its order-preserving bytes.
pub fn encode_key(key: &Key) -> Vec<u8> {
    let mut out = Vec::with_capacity(16);
    encode_key_into(key, &mut out);
    out
}

/// Appends the order-preserving bytes of `key` to `out`.
pub fn encode_key_into(key: &Key, out: &mut Vec<u8>) {
    write_key(key, out);
}

/// [`encode_key_into`] into a `Vec` or [`KeyBytes`].
pub(crate) fn write_key(key: &Key, out: &mut impl KeyOut) {
    match key {
        Key::Number(n) => {
            out.push(TAG_NUMBER);
            encode_f64(*n, out);
        }
        Key::Date(ms) => {
            out.push(TAG_DATE);
            encode_f64(*ms, out);
        }
        Key::String(s) => encode_string(s.units(), out),
        Key::Binary(bytes) => encode_binary(bytes, out),
        Key::Array(items) => {
            out.push(TAG_ARRAY);
            for item in items {
                write_key(item, out);
            }
            out.push(TERMINATOR);
        }
    }
}

/// "Convert a value to a key" (<https://www.w3.org/TR/IndexedDB-3/#convert-a-value-to-a-key>)
/// fused with [`encode_key_into`]: appends the bytes of the key `value` converts to and
/// returns true, or returns false (with `out` possibly extended) when the value is not a
/// valid key. Gives the same bytes as `encode_key(&convert_value_to_key(value)?)` without
/// building the [`Key`] (index keys are computed for every stored record).
pub(crate) fn encode_value_as_key_into(value: &Value, out: &mut KeyBytes) -> bool {
    match value {
        Value::Number(n) if !n.is_nan() => {
            out.push(TAG_NUMBER);
            encode_f64(*n, out);
        }
        Value::Date(ms) => {
            let clipped = time_clip(*ms);
            if clipped.is_nan() {
                return false;
            }
            out.push(TAG_DATE);
            encode_f64(clipped, out);
        }
        Value::String(s) => encode_string(s.units(), out),
        Value::Binary(bytes) => encode_binary(bytes, out),
        Value::Array(items) => {
            out.push(TAG_ARRAY);
            for item in items {
                if !encode_value_as_key_into(item, out) {
                    return false;
                }
            }
            out.push(TERMINATOR);
        }
        Value::Number(_) | Value::Undefined | Value::Null | Value::Bool(_) | Value::Object(_) => {
            return false
        }
    }
    true
}

/// The encoded key `value` converts to, or `None` when it is not a valid key; see
/// [`encode_value_as_key_into`].
pub(crate) fn encode_value_as_key(value: &Value) -> Option<KeyBytes> {
    let mut out = KeyBytes::new();
    encode_value_as_key_into(value, &mut out).then_some(out)
}

/// [`encode_value_as_key_into`] on the scalar stored where `reader` is, read in place instead
/// of decoded: `Some(true)` when its key was appended, `Some(false)` when it is not a valid key
/// (`undefined`, `null`, a Boolean, NaN, an invalid Date; nothing appended), `None` for an
/// array or an object, which the reader leaves unread.
///
/// # Errors
/// [`Error::Unknown`] for stored bytes the value codec refuses.
pub(crate) fn encode_stored_scalar_as_key_into(
    reader: &mut codec::Reader<'_>,
    out: &mut KeyBytes,
) -> Result<Option<bool>> {
    let number = |n: f64, tag: u8, out: &mut KeyBytes| {
        if n.is_nan() {
            return false;
        }
        out.push(tag);
        encode_f64(n, out);
        true
    };
    let start = reader.pos;
    Ok(Some(match reader.byte()? {
        codec::TAG_NUMBER => number(reader.f64_bits()?, TAG_NUMBER, out),
        codec::TAG_SMALL_INT => number(reader.small_int()?, TAG_NUMBER, out),
        codec::TAG_DATE => number(time_clip(reader.f64_bits()?), TAG_DATE, out),
        codec::TAG_STRING => {
            out.push(TAG_STRING);
            match reader.text()? {
                Ok(text) => {
                    // Up to the first byte of 0x7F or more, each byte is a code unit of one
                    // byte (most text is all such): written in one go.
                    let ascii = text.bytes().position(|b| b >= 0x7F).unwrap_or(text.len());
                    out.extend(text.as_bytes()[..ascii].iter().map(|b| b + 1));
                    text[ascii..]
                        .encode_utf16()
                        .for_each(|u| encode_unit(u, out));
                }
                Err(lone) => encode_units(lone.units().units(), out),
            }
            out.push(TERMINATOR);
            true
        }
        codec::TAG_BINARY => {
            let len = reader.count(1, 0)?;
            encode_binary(reader.take(len)?, out);
            true
        }
        codec::TAG_ARRAY | codec::TAG_OBJECT => {
            reader.pos = start;
            return Ok(None);
        }
        codec::TAG_UNDEFINED | codec::TAG_NULL | codec::TAG_FALSE | codec::TAG_TRUE => false,
        other => return Err(codec::corrupt(start, &format!("unknown tag 0x{other:02X}"))),
    }))
}

/// The encoded array key the values `items` convert to (each member as
/// [`encode_value_as_key_into`]), or `None` when one of them is not a valid key.
pub(crate) fn encode_values_as_array_key<'v>(
    items: impl IntoIterator<Item = &'v Value>,
) -> Option<KeyBytes> {
    let mut out = KeyBytes::new();
    out.push(TAG_ARRAY);
    for item in items {
        if !encode_value_as_key_into(item, &mut out) {
            return None;
        }
    }
    out.push(TERMINATOR);
    Some(out)
}

/// The encoding of a string key without its terminator: every string key starting with the
/// code units of `prefix` has an encoding starting with these bytes, and no other key does.
pub(crate) fn encode_string_prefix(prefix: &Utf16String) -> Vec<u8> {
    let mut out = vec![TAG_STRING];
    encode_units(prefix.units(), &mut out);
    out
}

fn encode_units(units: &[u16], out: &mut impl KeyOut) {
    for &u in units {
        encode_unit(u, out);
    }
}

/// One code unit of a string key, in 1–3 bytes.
fn encode_unit(u: u16, out: &mut impl KeyOut) {
    match u {
        0x0000..=0x007E => out.push(u as u8 + 1),
        0x007F..=0x407E => {
            let v = u - 0x7F;
            out.extend_from_slice(&[0x80 | (v >> 8) as u8, v as u8]);
        }
        _ => out.extend_from_slice(&[0xC0, (u >> 8) as u8, u as u8]),
    }
}

/// A string key: tag, code units, terminator.
fn encode_string(units: &[u16], out: &mut impl KeyOut) {
    out.push(TAG_STRING);
    encode_units(units, out);
    out.push(TERMINATOR);
}

/// A binary key: tag, each byte in 1–2 bytes, terminator.
fn encode_binary(bytes: &[u8], out: &mut impl KeyOut) {
    out.push(TAG_BINARY);
    for &b in bytes {
        match b {
            0xFE => out.extend_from_slice(&[0xFF, 0x00]),
            0xFF => out.extend_from_slice(&[0xFF, 0x01]),
            _ => out.push(b + 1),
        }
    }
    out.push(TERMINATOR);
}

fn encode_f64(n: f64, out: &mut impl KeyOut) {
    out.extend_from_slice(&sortable_bits(n).to_be_bytes());
}

/// The 8 payload bytes of a number or date, as a `u64` (`docs/format.md`): `-0` as `+0`,
/// then the IEEE-754 bits with the sign bit set if it was clear, or all bits inverted if it
/// was set, so that unsigned order is number order.
pub(crate) fn sortable_bits(n: f64) -> u64 {
    let n = if n == 0.0 { 0.0 } else { n };
    let bits = n.to_bits();
    if bits >> 63 == 0 {
        bits | (1 << 63)
    } else {
        !bits
    }
}

/// The number whose [`sortable_bits`] are `sortable`.
pub(crate) fn from_sortable_bits(sortable: u64) -> f64 {
    f64::from_bits(if sortable >> 63 == 1 {
        sortable & !(1 << 63)
    } else {
        !sortable
    })
}

/// Decodes bytes made by [`encode_key`].
///
/// # Errors
/// [`Error::Data`] when the bytes are not exactly one canonical key encoding: an unknown tag,
/// a truncated payload, a non-canonical or NaN number, trailing bytes, or arrays nested deeper
/// than [`MAX_KEY_DEPTH`]. Never panics.
pub fn decode_key(bytes: &[u8]) -> Result<Key> {
    let mut reader = Reader { bytes, pos: 0 };
    let key = reader.key(0)?;
    if reader.pos != bytes.len() {
        return Err(reader.error("trailing bytes after the key"));
    }
    Ok(key)
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Reader<'_> {
    fn error(&self, what: &str) -> Error {
        Error::Data(format!("invalid key encoding at byte {}: {what}", self.pos))
    }

    fn byte(&mut self) -> Result<u8> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or_else(|| self.error("unexpected end"))?;
        self.pos += 1;
        Ok(b)
    }

    fn key(&mut self, depth: usize) -> Result<Key> {
        let tag = self.byte()?;
        match tag {
            TAG_NUMBER => Ok(Key::Number(self.f64()?)),
            TAG_DATE => Ok(Key::Date(self.f64()?)),
            TAG_STRING => self.string().map(Key::String),
            TAG_BINARY => self.binary().map(Key::Binary),
            TAG_ARRAY => {
                if depth >= MAX_KEY_DEPTH {
                    return Err(self.error("arrays nested too deeply"));
                }
                let mut items = Vec::new();
                loop {
                    if self.bytes.get(self.pos) == Some(&TERMINATOR) {
                        self.pos += 1;
                        return Ok(Key::Array(items));
                    }
                    items.push(self.key(depth + 1)?);
                }
            }
            _ => {
                self.pos -= 1;
                Err(self.error("unknown type tag"))
            }
        }
    }

    fn f64(&mut self) -> Result<f64> {
        let end = self.pos + 8;
        let chunk = self
            .bytes
            .get(self.pos..end)
            .ok_or_else(|| self.error("truncated number"))?;
        let mut raw = [0u8; 8];
        raw.copy_from_slice(chunk);
        let n = from_sortable_bits(u64::from_be_bytes(raw));
        // -0 and NaN are never written, so they are not canonical.
        if n.is_nan() || (n == 0.0 && n.is_sign_negative()) {
            return Err(self.error("number is NaN or -0"));
        }
        self.pos = end;
        Ok(n)
    }

    fn string(&mut self) -> Result<Utf16String> {
        let mut units = Utf16String::new();
        loop {
            let b = self.byte()?;
            let unit = match b {
                TERMINATOR => return Ok(units),
                0x01..=0x7F => u16::from(b - 1),
                0x80..=0xBF => {
                    let lo = self.byte()?;
                    (u16::from(b & 0x3F) << 8 | u16::from(lo)) + 0x7F
                }
                0xC0 => {
                    let hi = self.byte()?;
                    let lo = self.byte()?;
                    let u = u16::from(hi) << 8 | u16::from(lo);
                    if u < 0x407F {
                        return Err(self.error("non-canonical string code unit"));
                    }
                    u
                }
                _ => return Err(self.error("invalid string byte")),
            };
            units.push_units([unit]);
        }
    }

    fn binary(&mut self) -> Result<Vec<u8>> {
        let mut out = Vec::new();
        loop {
            let b = self.byte()?;
            match b {
                TERMINATOR => return Ok(out),
                0xFF => match self.byte()? {
                    0x00 => out.push(0xFE),
                    0x01 => out.push(0xFF),
                    _ => return Err(self.error("invalid binary escape")),
                },
                _ => out.push(b - 1),
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    fn k(s: &str) -> Key {
        Key::from(s)
    }

    #[test]
    fn documented_bytes() {
        assert_eq!(
            encode_key(&Key::Number(1.0)),
            [0x10, 0xBF, 0xF0, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            encode_key(&Key::Number(-0.0)),
            encode_key(&Key::Number(0.0))
        );
        assert_eq!(encode_key(&k("a")), [0x30, 0x62, 0x00]);
        assert_eq!(
            encode_key(&Key::String(Utf16String::from_units(vec![0x7F, 0x407F]))),
            [0x30, 0x80, 0x00, 0xC0, 0x40, 0x7F, 0x00]
        );
        assert_eq!(
            encode_key(&Key::Binary(vec![0, 0xFE, 0xFF])),
            [0x40, 0x01, 0xFF, 0x00, 0xFF, 0x01, 0x00]
        );
        assert_eq!(encode_key(&Key::Array(vec![])), [0x50, 0x00]);
    }

    #[test]
    fn bad_bytes_are_data_errors() {
        for bad in [
            &[][..],
            &[0x11],
            &[0x10, 1, 2],
            &[0x30, 0x62],
            &[0x30, 0xC1, 0],
            &[0x30, 0xC0, 0x00, 0x01, 0x00],
            &[0x40, 0xFF, 0x02, 0x00],
            &[0x50],
            &[0x30, 0x00, 0x00],
            // NaN and -0 are not canonical.
            &[0x10, 0xFF, 0xF8, 0, 0, 0, 0, 0, 0],
            &[0x10, 0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF],
        ] {
            assert_eq!(
                decode_key(bad).map_err(|e| e.name()),
                Err("DataError"),
                "{bad:02X?}"
            );
        }
    }

    #[test]
    fn deep_nesting_is_rejected_without_overflow() {
        let mut bytes = vec![TAG_ARRAY; 100_000];
        bytes.extend(std::iter::repeat_n(TERMINATOR, 100_000));
        assert_eq!(decode_key(&bytes).unwrap_err().name(), "DataError");
    }

    #[test]
    fn prefix_bytes_match_exactly_the_strings_with_the_prefix() {
        let p = encode_string_prefix(&Utf16String::from("mar"));
        assert!(encode_key(&k("mar")).starts_with(&p));
        assert!(encode_key(&k("mar\u{FFFF}z")).starts_with(&p));
        assert!(!encode_key(&k("ma")).starts_with(&p));
        assert!(!encode_key(&k("mas")).starts_with(&p));
    }

    pub(crate) fn arb_key() -> impl Strategy<Value = Key> {
        let number = prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::MIN_POSITIVE),
            Just(-f64::MIN_POSITIVE),
            Just(5e-324),
            Just(-5e-324),
            Just(f64::MAX),
            any::<f64>().prop_filter("not NaN", |n| !n.is_nan()),
            (-1000i32..1000).prop_map(f64::from),
        ];
        let unit = prop_oneof![
            Just(0u16),
            Just(0x7Eu16),
            Just(0x7Fu16),
            Just(0x407Eu16),
            Just(0x407Fu16),
            Just(0xD800u16),
            Just(0xDFFFu16),
            Just(0xFFFFu16),
            0x61u16..0x64,
            any::<u16>(),
        ];
        let leaf = prop_oneof![
            number.clone().prop_map(|n| Key::number(n).unwrap()),
            prop_oneof![
                Just(0.0),
                Just(-8.64e15),
                Just(8.64e15),
                -1e13f64..1e13,
                any::<i32>().prop_map(f64::from),
            ]
            .prop_map(|n| Key::date(n).unwrap()),
            proptest::collection::vec(unit, 0..5)
                .prop_map(|u| Key::String(Utf16String::from_units(u))),
            proptest::collection::vec(
                prop_oneof![Just(0u8), Just(0xFEu8), Just(0xFFu8), any::<u8>()],
                0..5
            )
            .prop_map(Key::Binary),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            proptest::collection::vec(inner, 0..4).prop_map(Key::Array)
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn encoded_order_is_key_order(a in arb_key(), b in arb_key()) {
            prop_assert_eq!(encode_key(&a).cmp(&encode_key(&b)), a.cmp(&b));
        }

        #[test]
        fn decode_inverts_encode(a in arb_key()) {
            let decoded = decode_key(&encode_key(&a)).unwrap();
            prop_assert_eq!(&decoded, &a);
            // Exactly the same bits (equality of keys already holds; check the encoding too).
            prop_assert_eq!(encode_key(&decoded), encode_key(&a));
        }

        #[test]
        fn decode_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok(key) = decode_key(&bytes) {
                // Whatever decodes is canonical: it re-encodes to the same bytes.
                prop_assert_eq!(encode_key(&key), bytes);
            }
        }
    }
}
