//! Key paths: which part of a value is its key, and putting a generated key back in.
//!
//! Source: <https://www.w3.org/TR/IndexedDB-3/#key-path-construct> and the algorithms
//! "evaluate a key path on a value", "extract a key from a value using a key path",
//! "convert a value to a multiEntry key", "check that a key could be injected into a value"
//! and "inject a key into a value using a key path" (section 7).

use std::borrow::Cow;
use std::fmt;

use smallvec::SmallVec;

use crate::error::{Error, Result};
use crate::key::{convert_value_to_key, Key};
use crate::key_encoding::{
    encode_stored_scalar_as_key_into, encode_value_as_key, encode_values_as_array_key, KeyBytes,
    TAG_ARRAY as TAG_ARRAY_KEY, TERMINATOR,
};
use crate::object::Object;
use crate::utf16::Utf16String;
use crate::value::Value;
use crate::value_codec::{Reader, TAG_OBJECT};
use crate::value_codec_serde::StoredValue;

/// A valid key path: a string (`""`, `"a"`, `"a.b.c"`) or a non-empty array of such strings
/// (a compound key path, whose key is the array of the parts' keys).
///
/// Build one with [`KeyPath::parse`] or [`KeyPath::compound`]; both validate.
#[derive(Clone, PartialEq, Eq)]
pub struct KeyPath(Repr);

#[derive(Clone, PartialEq, Eq)]
enum Repr {
    Single(Path),
    Compound(Vec<Path>),
}

/// One dotted key path string, split once into its identifiers.
#[derive(Clone, PartialEq, Eq)]
struct Path {
    text: String,
    identifiers: Vec<Utf16String>,
    /// The identifiers as UTF-8, as a stored value's property names are written.
    utf8_identifiers: Vec<Box<str>>,
}

impl Path {
    fn parse(text: &str) -> Result<Path> {
        if !is_valid_key_path_string(text) {
            return Err(Error::Syntax(format!("{text:?} is not a valid key path")));
        }
        let utf8_identifiers: Vec<Box<str>> = if text.is_empty() {
            Vec::new()
        } else {
            text.split('.').map(Box::from).collect()
        };
        Ok(Path {
            text: text.to_owned(),
            identifiers: utf8_identifiers
                .iter()
                .map(|i| Utf16String::from(&**i))
                .collect(),
            utf8_identifiers,
        })
    }
}

/// True when `text` is `""`, an ECMAScript IdentifierName, or IdentifierNames joined by `.`
/// (<https://www.w3.org/TR/IndexedDB-3/#valid-key-path>).
fn is_valid_key_path_string(text: &str) -> bool {
    text.is_empty() || text.split('.').all(is_identifier_name)
}

/// Characters in Unicode's ID_Start (which ECMAScript uses) but not in XID_Start (which
/// `unicode-ident` answers for): the few whose NFKC forms are not identifier-closed.
const ID_START_NOT_XID: &[char] = &[
    '\u{037A}', '\u{0E33}', '\u{0EB3}', '\u{309B}', '\u{309C}', '\u{FC5E}', '\u{FC5F}', '\u{FC60}',
    '\u{FC61}', '\u{FC62}', '\u{FC63}', '\u{FDFA}', '\u{FDFB}', '\u{FE70}', '\u{FE72}', '\u{FE74}',
    '\u{FE76}', '\u{FE78}', '\u{FE7A}', '\u{FE7C}', '\u{FE7E}', '\u{FF9E}', '\u{FF9F}',
];

/// ECMAScript IdentifierName: (ID_Start | `$` | `_`) (ID_Continue | `$` | ZWNJ | ZWJ)*,
/// where ID_Start and ID_Continue are XID_Start and XID_Continue plus
/// [`ID_START_NOT_XID`] (every ID_Start character is also ID_Continue).
fn is_identifier_name(s: &str) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    let id_start = |c: char| unicode_ident::is_xid_start(c) || ID_START_NOT_XID.contains(&c);
    (first == '$' || first == '_' || id_start(first))
        && chars.all(|c| {
            c == '$'
                || c == '\u{200C}'
                || c == '\u{200D}'
                || unicode_ident::is_xid_continue(c)
                || id_start(c)
        })
}

impl KeyPath {
    /// Parses a key path string: `""`, an identifier, or identifiers joined by `.`.
    ///
    /// # Errors
    /// [`Error::Syntax`] if `text` is not a valid key path.
    pub fn parse(text: &str) -> Result<KeyPath> {
        Path::parse(text).map(|p| KeyPath(Repr::Single(p)))
    }

    /// A compound key path from its parts (each as for [`KeyPath::parse`]).
    ///
    /// # Errors
    /// [`Error::Syntax`] if `parts` is empty or any part is not a valid key path string.
    pub fn compound<S: AsRef<str>>(parts: &[S]) -> Result<KeyPath> {
        if parts.is_empty() {
            return Err(Error::Syntax(
                "an array key path must not be empty".to_owned(),
            ));
        }
        let paths = parts
            .iter()
            .map(|p| Path::parse(p.as_ref()))
            .collect::<Result<Vec<_>>>()?;
        Ok(KeyPath(Repr::Compound(paths)))
    }

    /// A key path from its text-form value: a string, or an array of strings.
    ///
    /// # Errors
    /// [`Error::Syntax`] for an invalid key path string or an empty array; [`Error::Type`] if
    /// `value` is neither a string nor an array of strings.
    pub fn from_value(value: &Value) -> Result<KeyPath> {
        let text = |v: &Value| match v {
            Value::String(s) => s
                .to_string()
                .ok_or_else(|| Error::Syntax(format!("{s:?} is not a valid key path"))),
            _ => Err(Error::Type(
                "a key path is a string or an array of strings".to_owned(),
            )),
        };
        match value {
            Value::Array(items) => {
                let parts = items.iter().map(text).collect::<Result<Vec<_>>>()?;
                KeyPath::compound(&parts)
            }
            other => KeyPath::parse(&text(other)?),
        }
    }

    /// The key path as a value: a string, or an array of strings (IDBObjectStore.keyPath).
    pub fn to_value(&self) -> Value {
        match &self.0 {
            Repr::Single(p) => Value::string(&p.text),
            Repr::Compound(ps) => Value::Array(ps.iter().map(|p| Value::string(&p.text)).collect()),
        }
    }

    /// True for an array (compound) key path.
    pub fn is_compound(&self) -> bool {
        matches!(self.0, Repr::Compound(_))
    }

    /// True for the empty string key path `""` (the whole value is the key).
    pub fn is_empty_string(&self) -> bool {
        matches!(&self.0, Repr::Single(p) if p.text.is_empty())
    }

    /// The key path strings: one for a string key path, the parts of a compound one.
    pub fn strings(&self) -> Vec<&str> {
        match &self.0 {
            Repr::Single(p) => vec![p.text.as_str()],
            Repr::Compound(ps) => ps.iter().map(|p| p.text.as_str()).collect(),
        }
    }
}

impl fmt::Debug for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for KeyPath {
    /// A string key path as `"a.b"` (quoted), a compound one as `["a","b"]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Repr::Single(p) => write!(f, "{:?}", p.text),
            Repr::Compound(ps) => {
                f.write_str("[")?;
                for (i, p) in ps.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{:?}", p.text)?;
                }
                f.write_str("]")
            }
        }
    }
}

/// The outcome of [`extract_key_from_value_using_key_path`].
#[derive(Debug, Clone, PartialEq)]
pub enum KeyPathExtraction {
    /// The key path yields a valid key.
    Key(Key),
    /// The key path yields a value that is not a valid key (e.g. `null`, an object).
    Invalid,
    /// The key path yields nothing (a property along the way is missing).
    Failure,
}

/// Evaluates a key path on a value:
/// <https://www.w3.org/TR/IndexedDB-3/#evaluate-a-key-path-on-a-value>.
///
/// Returns `None` for the spec's "failure". `length` of strings (in code units) and arrays is
/// supported; other properties must be own properties of objects.
pub fn evaluate_key_path_on_value<'v>(
    value: &'v Value,
    key_path: &KeyPath,
) -> Option<Cow<'v, Value>> {
    match &key_path.0 {
        // Step 1: a list evaluates each item; any failure fails the whole.
        Repr::Compound(paths) => {
            let mut items = Vec::with_capacity(paths.len());
            for p in paths {
                items.push(evaluate_path(value, p)?.into_owned());
            }
            Some(Cow::Owned(Value::Array(items)))
        }
        Repr::Single(p) => evaluate_path(value, p),
    }
}

fn evaluate_path<'v>(value: &'v Value, path: &Path) -> Option<Cow<'v, Value>> {
    evaluate_identifiers(value, &path.identifiers)
}

fn evaluate_identifiers<'v>(
    value: &'v Value,
    identifiers: &[Utf16String],
) -> Option<Cow<'v, Value>> {
    // Step 2: the empty string yields the value itself.
    let mut current: Cow<'v, Value> = Cow::Borrowed(value);
    // Steps 3-5: walk the identifiers.
    for identifier in identifiers {
        current = match current {
            Cow::Borrowed(v) => step(v, identifier)?,
            // Only `length` produces an owned value, and a number has no properties.
            Cow::Owned(_) => return None,
        };
    }
    Some(current)
}

fn step<'v>(value: &'v Value, identifier: &Utf16String) -> Option<Cow<'v, Value>> {
    match value {
        Value::String(s) if identifier.eq_str("length") => {
            Some(Cow::Owned(Value::Number(s.len() as f64)))
        }
        Value::Array(items) if identifier.eq_str("length") => {
            Some(Cow::Owned(Value::Number(items.len() as f64)))
        }
        Value::Object(map) => map.get(identifier).map(Cow::Borrowed),
        _ => None,
    }
}

/// What one dotted path names in a stored value (see [`StoredValue::find`]).
enum Found<'a> {
    /// A value still in the stored bytes: the reader is at its tag, `depth` levels down.
    Stored(Reader<'a>, usize),
    /// A value built to evaluate the path: the whole value's, or a `length`.
    Built(Value),
}

impl StoredValue {
    /// "Evaluate a key path on a value" for one dotted path: the objects along the path are
    /// read in place, and only the value found is built. `None` is the spec's failure.
    fn evaluate_path(&self, path: &Path) -> Result<Option<Value>> {
        Ok(match self.find(path)? {
            None => None,
            Some(Found::Stored(mut reader, depth)) => Some(reader.value(depth)?),
            Some(Found::Built(value)) => Some(value),
        })
    }

    /// The first steps of [`StoredValue::evaluate_path`]: where the value a dotted path names
    /// is, the objects along the path read in place. `None` is the spec's failure.
    fn find(&self, path: &Path) -> Result<Option<Found<'_>>> {
        let mut names = path.utf8_identifiers.iter();
        let (Some(first), Some(properties)) = (names.next(), &self.properties) else {
            // The value itself, or a top-level string's or array's `length`, or nothing.
            let value = crate::value_codec::decode_value(&self.bytes)?;
            return Ok(evaluate_path(&value, path).map(|v| Found::Built(v.into_owned())));
        };
        let found = properties
            .iter()
            .find(|&&(start, end)| self.bytes[start..end] == *first.as_bytes());
        let Some(&(_, at)) = found else {
            return Ok(None);
        };
        let mut reader = Reader::start(&self.bytes)?;
        reader.pos = at;
        for (i, name) in names.enumerate() {
            let depth = i + 1;
            if reader.peek()? != TAG_OBJECT {
                // A string's or an array's `length`, or nothing: the rest of the path on it.
                let value = reader.value(depth)?;
                let rest = &path.identifiers[depth..];
                return Ok(evaluate_identifiers(&value, rest).map(|v| Found::Built(v.into_owned())));
            }
            reader.byte()?;
            let mut left = reader.container(TAG_OBJECT, depth, 0)?;
            loop {
                if left == 0 {
                    return Ok(None);
                }
                left -= 1;
                // Identifiers hold no lone surrogates, so their UTF-8 is their stored WTF-8.
                let len = reader.count(1, 0)?;
                if reader.take(len)? == name.as_bytes() {
                    break;
                }
                reader.skip_value(depth + 1)?;
            }
        }
        Ok(Some(Found::Stored(reader, path.identifiers.len())))
    }
}

/// Extracts a key from a value using a key path:
/// <https://www.w3.org/TR/IndexedDB-3/#extract-a-key-from-a-value-using-a-key-path>.
///
/// With `multi_entry` and a value at the path that is an array, the key is the array of its
/// members' keys, deduplicated with invalid members skipped (see
/// [`convert_value_to_multi_entry_key`]).
pub fn extract_key_from_value_using_key_path(
    value: &Value,
    key_path: &KeyPath,
    multi_entry: bool,
) -> KeyPathExtraction {
    match evaluate_key_path_on_value(value, key_path) {
        Some(found) => extraction(&found, multi_entry),
        None => KeyPathExtraction::Failure,
    }
}

/// [`extract_key_from_value_using_key_path`] on a value as stored, building only the values
/// the key path yields.
///
/// # Errors
/// [`Error::Unknown`] for bytes [`decode_value`](crate::decode_value) refuses along the way.
pub(crate) fn extract_key_from_stored_value_using_key_path(
    value: &StoredValue,
    key_path: &KeyPath,
) -> Result<KeyPathExtraction> {
    let found = match &key_path.0 {
        Repr::Single(p) => value.evaluate_path(p)?,
        Repr::Compound(paths) => {
            let mut items = Vec::with_capacity(paths.len());
            for p in paths {
                match value.evaluate_path(p)? {
                    Some(item) => items.push(item),
                    None => return Ok(KeyPathExtraction::Failure),
                }
            }
            Some(Value::Array(items))
        }
    };
    Ok(match found {
        Some(found) => extraction(&found, false),
        None => KeyPathExtraction::Failure,
    })
}

/// The key a value a key path yielded converts to (the last steps of "extract a key from a
/// value using a key path").
fn extraction(found: &Value, multi_entry: bool) -> KeyPathExtraction {
    let key = match (found, multi_entry) {
        (Value::Array(_), true) => Some(convert_value_to_multi_entry_key(found)),
        _ => convert_value_to_key(found),
    };
    match key {
        Some(key) => KeyPathExtraction::Key(key),
        None => KeyPathExtraction::Invalid,
    }
}

/// A record's encoded keys in one index: most records have one or none, and most keys are
/// short, so they are kept without an allocation.
pub(crate) type IndexKeys = SmallVec<[KeyBytes; 1]>;

/// The encoded index keys of `value` for an index with this key path: "extract a key from a
/// value using a key path" (<https://www.w3.org/TR/IndexedDB-3/#extract-a-key-from-a-value-using-a-key-path>)
/// and then [`encode_key`](crate::encode_key), without building the [`Key`]. Empty when the
/// key path yields no valid key; with `multi_entry` and an array at the path, one per distinct
/// valid member (as [`convert_value_to_multi_entry_key`], in encoded order); else one.
pub(crate) fn extract_encoded_index_keys(
    value: &Value,
    key_path: &KeyPath,
    multi_entry: bool,
) -> IndexKeys {
    let evaluate = |p: &Path| Ok::<_, std::convert::Infallible>(evaluate_path(value, p));
    match index_keys_from(evaluate, key_path, multi_entry) {
        Ok(keys) => keys,
        Err(never) => match never {},
    }
}

/// [`extract_encoded_index_keys`] on a value as stored, building only the values the key path
/// yields.
///
/// # Errors
/// [`Error::Unknown`] for bytes [`decode_value`](crate::decode_value) refuses along the way.
pub(crate) fn extract_encoded_index_keys_from_stored_value(
    value: &StoredValue,
    key_path: &KeyPath,
    multi_entry: bool,
) -> Result<IndexKeys> {
    if let Some(keys) = scalar_index_keys(value, key_path)? {
        return Ok(keys);
    }
    let evaluate = |p: &Path| value.evaluate_path(p).map(|v| v.map(Cow::Owned));
    index_keys_from(evaluate, key_path, multi_entry)
}

/// [`extract_encoded_index_keys_from_stored_value`] when every path of the key path names a
/// scalar stored in place (the common case: a string, a number, a date): its key encoded
/// straight from the stored bytes, building no value. `None` when one names an array or an
/// object or needs a built value (the generic path then runs). multiEntry changes nothing for
/// a scalar, so it is not asked.
fn scalar_index_keys(value: &StoredValue, key_path: &KeyPath) -> Result<Option<IndexKeys>> {
    let (paths, compound) = match &key_path.0 {
        Repr::Single(p) => (std::slice::from_ref(p), false),
        Repr::Compound(paths) => (paths.as_slice(), true),
    };
    // A value that is not an object, or a path naming the value itself, is evaluated on the
    // whole value built: leave it to the generic path rather than build it twice.
    if value.properties.is_none() || paths.iter().any(|p| p.identifiers.is_empty()) {
        return Ok(None);
    }
    let mut key = KeyBytes::new();
    if compound {
        key.push(TAG_ARRAY_KEY);
    }
    // As in the generic path, an item that yields nothing ends the evaluation with no key,
    // and one that is not a valid key decides only once every item is evaluated.
    let mut valid = true;
    for p in paths {
        match value.find(p)? {
            None => return Ok(Some(IndexKeys::new())),
            // A `length` along the path (rare): the generic path evaluates it again.
            Some(Found::Built(_)) => return Ok(None),
            Some(Found::Stored(mut reader, _)) => {
                match encode_stored_scalar_as_key_into(&mut reader, &mut key)? {
                    None => return Ok(None),
                    Some(appended) => valid &= appended,
                }
            }
        }
    }
    if !valid {
        return Ok(Some(IndexKeys::new()));
    }
    if compound {
        key.push(TERMINATOR);
    }
    Ok(Some(smallvec::smallvec![key]))
}

/// The encoded index keys, with `evaluate` giving what each dotted path yields.
fn index_keys_from<'v, E>(
    mut evaluate: impl FnMut(&Path) -> std::result::Result<Option<Cow<'v, Value>>, E>,
    key_path: &KeyPath,
    multi_entry: bool,
) -> std::result::Result<IndexKeys, E> {
    Ok(match &key_path.0 {
        Repr::Compound(paths) => {
            // Evaluate every item, then convert: either failing means no index key.
            let mut items: SmallVec<[_; 4]> = SmallVec::with_capacity(paths.len());
            for p in paths {
                match evaluate(p)? {
                    Some(item) => items.push(item),
                    None => return Ok(IndexKeys::new()),
                }
            }
            encode_values_as_array_key(items.iter().map(|item| &**item))
                .into_iter()
                .collect()
        }
        Repr::Single(p) => match evaluate(p)? {
            None => IndexKeys::new(),
            Some(found) => match (&*found, multi_entry) {
                (Value::Array(members), true) => {
                    // Equal keys have equal encodings, so sorting the bytes and dropping
                    // repeats removes duplicates (the entries' order does not matter).
                    let mut keys: IndexKeys =
                        members.iter().filter_map(encode_value_as_key).collect();
                    keys.sort_unstable();
                    keys.dedup();
                    keys
                }
                (other, _) => encode_value_as_key(other).into_iter().collect(),
            },
        },
    })
}

/// Converts a value to a multiEntry key:
/// <https://www.w3.org/TR/IndexedDB-3/#convert-a-value-to-a-multientry-key>.
///
/// An array becomes an array key of its members that are valid keys, duplicates removed,
/// first occurrence kept. Any other value converts as a single key would; when that is invalid
/// the result is an empty array key (no index entries).
pub fn convert_value_to_multi_entry_key(value: &Value) -> Key {
    match value {
        Value::Array(items) => {
            let mut keys: Vec<Key> = Vec::with_capacity(items.len());
            for item in items {
                if let Some(key) = convert_value_to_key(item) {
                    if !keys.contains(&key) {
                        keys.push(key);
                    }
                }
            }
            Key::Array(keys)
        }
        other => match convert_value_to_key(other) {
            Some(key) => key,
            None => Key::Array(Vec::new()),
        },
    }
}

/// Checks that a key could be injected into a value:
/// <https://www.w3.org/TR/IndexedDB-3/#check-that-a-key-could-be-injected-into-a-value>.
///
/// Seed 000 differs from IndexedDB 3.0 here and we follow the seed: only a plain object can
/// receive the key, so an array (like any primitive) in the way makes this false.
/// `key_path` must be a non-empty string key path (stores with a key generator have one).
pub fn check_that_a_key_could_be_injected_into_a_value(value: &Value, key_path: &KeyPath) -> bool {
    let Repr::Single(path) = &key_path.0 else {
        return false;
    };
    // Steps 1-3: all identifiers but the last.
    let Some((_, parents)) = path.identifiers.split_last() else {
        return false;
    };
    let mut current = value;
    // Step 4.
    for identifier in parents {
        let Value::Object(map) = current else {
            return false;
        };
        match map.get(identifier) {
            Some(next) => current = next,
            None => return true,
        }
    }
    // Step 5.
    matches!(current, Value::Object(_))
}

/// Injects a key into a value using a key path:
/// <https://www.w3.org/TR/IndexedDB-3/#inject-a-key-into-a-value-using-a-key-path>.
///
/// Missing intermediate objects are created: `{zip:{}}` with key path `foo.bar.baz` and key
/// `1` becomes `{zip:{}, foo:{bar:{baz:1}}}`.
///
/// # Errors
/// [`Error::Data`] if [`check_that_a_key_could_be_injected_into_a_value`] is false (a
/// primitive or an array in the way; seed 000).
pub fn inject_key_into_value_using_key_path(
    value: &mut Value,
    key: &Key,
    key_path: &KeyPath,
) -> Result<()> {
    if !check_that_a_key_could_be_injected_into_a_value(value, key_path) {
        return Err(Error::Data(format!(
            "a key cannot be injected into this value at key path {key_path}"
        )));
    }
    let Repr::Single(path) = &key_path.0 else {
        unreachable!("checked above: only string key paths can be injected into");
    };
    let (last, parents) = path
        .identifiers
        .split_last()
        .expect("checked above: the key path is not empty");
    let mut current = value;
    for identifier in parents {
        let Value::Object(map) = current else {
            unreachable!("checked above: every parent is an object");
        };
        current = map.get_or_insert_with(identifier, || Value::Object(Object::default()));
    }
    let Value::Object(map) = current else {
        unreachable!("checked above: the last parent is an object");
    };
    map.insert(last.clone(), Value::from(key));
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `v` in its stored form, with its top-level properties found as `encode_serialized`
    /// records them.
    fn stored(v: &Value) -> StoredValue {
        let bytes = crate::encode_value(v);
        let properties =
            crate::value_codec_serde::top_level_properties(&bytes).filter(|p| !p.is_empty());
        StoredValue { bytes, properties }
    }

    fn obj(fields: &[(&str, Value)]) -> Value {
        Value::Object(
            fields
                .iter()
                .map(|(k, v)| (Utf16String::from(*k), v.clone()))
                .collect(),
        )
    }

    #[test]
    fn valid_and_invalid_key_paths() {
        for ok in ["", "a", "a.b.c", "$x", "_y", "año", "a1.b2", "\u{3C0}"] {
            assert!(KeyPath::parse(ok).is_ok(), "{ok:?}");
        }
        for bad in [" ", "a.", ".a", "a..b", "1a", "a b", "a-b", "Major Genre"] {
            assert_eq!(
                KeyPath::parse(bad).unwrap_err().name(),
                "SyntaxError",
                "{bad:?}"
            );
        }
        assert_eq!(
            KeyPath::compound::<&str>(&[]).unwrap_err().name(),
            "SyntaxError"
        );
        assert!(KeyPath::compound(&["a", ""]).is_ok());
        assert_eq!(
            KeyPath::compound(&["a", "b c"]).unwrap_err().name(),
            "SyntaxError"
        );
    }

    #[test]
    fn evaluates_nested_and_length() {
        let v = obj(&[
            ("name", obj(&[("common", Value::from("Aruba"))])),
            ("tags", Value::Array(vec![Value::from(1), Value::from(2)])),
        ]);
        let kp = KeyPath::parse("name.common").unwrap();
        assert_eq!(
            extract_key_from_value_using_key_path(&v, &kp, false),
            KeyPathExtraction::Key(Key::from("Aruba"))
        );
        let len = KeyPath::parse("name.common.length").unwrap();
        assert_eq!(
            extract_key_from_value_using_key_path(&v, &len, false),
            KeyPathExtraction::Key(Key::from(5))
        );
        let tags_len = KeyPath::parse("tags.length").unwrap();
        assert_eq!(
            extract_key_from_value_using_key_path(&v, &tags_len, false),
            KeyPathExtraction::Key(Key::from(2))
        );
        let missing = KeyPath::parse("name.other").unwrap();
        assert_eq!(
            extract_key_from_value_using_key_path(&v, &missing, false),
            KeyPathExtraction::Failure
        );
        let invalid = KeyPath::parse("name").unwrap();
        assert_eq!(
            extract_key_from_value_using_key_path(&v, &invalid, false),
            KeyPathExtraction::Invalid
        );
    }

    #[test]
    fn empty_key_path_is_the_whole_value() {
        let kp = KeyPath::parse("").unwrap();
        assert_eq!(
            extract_key_from_value_using_key_path(&Value::from("x"), &kp, false),
            KeyPathExtraction::Key(Key::from("x"))
        );
    }

    #[test]
    fn compound_key_path_yields_an_array_key() {
        let v = obj(&[
            ("libreta", Value::from("trabajo")),
            ("creado", Value::from(3)),
        ]);
        let kp = KeyPath::compound(&["libreta", "creado"]).unwrap();
        assert_eq!(
            extract_key_from_value_using_key_path(&v, &kp, false),
            KeyPathExtraction::Key(Key::Array(vec![Key::from("trabajo"), Key::from(3)]))
        );
        let partial = obj(&[("libreta", Value::from("trabajo"))]);
        assert_eq!(
            extract_key_from_value_using_key_path(&partial, &kp, false),
            KeyPathExtraction::Failure
        );
    }

    #[test]
    fn multi_entry_dedupes_and_skips_invalid_members() {
        let v = obj(&[(
            "etiquetas",
            Value::Array(vec![
                Value::from("a"),
                Value::Null,
                Value::from("b"),
                Value::from("a"),
                Value::Array(vec![Value::from(1)]),
            ]),
        )]);
        let kp = KeyPath::parse("etiquetas").unwrap();
        assert_eq!(
            extract_key_from_value_using_key_path(&v, &kp, true),
            KeyPathExtraction::Key(Key::Array(vec![
                Key::from("a"),
                Key::from("b"),
                Key::Array(vec![Key::from(1)])
            ]))
        );
        // Without multiEntry, the null member makes the whole array invalid.
        assert_eq!(
            extract_key_from_value_using_key_path(&v, &kp, false),
            KeyPathExtraction::Invalid
        );
    }

    #[test]
    fn seed_000_injection_creates_missing_objects() {
        // { foo: {} } with key path foo.bar gets bar = 1.
        let mut v = obj(&[("foo", obj(&[]))]);
        let kp = KeyPath::parse("foo.bar").unwrap();
        inject_key_into_value_using_key_path(&mut v, &Key::from(1), &kp).unwrap();
        assert_eq!(v, obj(&[("foo", obj(&[("bar", Value::from(1))]))]));

        // { zip: {} } with key path foo.bar.baz becomes { zip: {}, foo: { bar: { baz: 1 } } }.
        let mut v = obj(&[("zip", obj(&[]))]);
        let kp = KeyPath::parse("foo.bar.baz").unwrap();
        inject_key_into_value_using_key_path(&mut v, &Key::from(1), &kp).unwrap();
        assert_eq!(
            v,
            obj(&[
                ("zip", obj(&[])),
                ("foo", obj(&[("bar", obj(&[("baz", Value::from(1))]))])),
            ])
        );
    }

    #[test]
    fn seed_000_injection_into_primitive_or_array_is_a_data_error() {
        let kp = KeyPath::parse("foo").unwrap();
        let mut four = Value::from(4);
        assert_eq!(
            inject_key_into_value_using_key_path(&mut four, &Key::from(1), &kp)
                .unwrap_err()
                .name(),
            "DataError"
        );
        assert_eq!(four, Value::from(4));
        let mut ten = Value::Array(vec![Value::from(10)]);
        assert!(!check_that_a_key_could_be_injected_into_a_value(&ten, &kp));
        assert_eq!(
            inject_key_into_value_using_key_path(&mut ten, &Key::from(1), &kp)
                .unwrap_err()
                .name(),
            "DataError"
        );
        // A primitive in the middle of the path.
        let v = obj(&[("foo", Value::from(4))]);
        assert!(!check_that_a_key_could_be_injected_into_a_value(
            &v,
            &KeyPath::parse("foo.bar").unwrap()
        ));
    }

    /// Index keys as plain byte vectors, to compare with `encode_key`'s.
    fn plain(keys: IndexKeys) -> Vec<Vec<u8>> {
        keys.into_iter().map(|k| k.to_vec()).collect()
    }

    /// The index keys the spec's steps give: extract a key, then encode it (one per member of
    /// a multiEntry array key).
    fn index_keys_by_the_spec(value: &Value, kp: &KeyPath, multi_entry: bool) -> Vec<Vec<u8>> {
        match extract_key_from_value_using_key_path(value, kp, multi_entry) {
            KeyPathExtraction::Key(Key::Array(members)) if multi_entry => {
                members.iter().map(crate::encode_key).collect()
            }
            KeyPathExtraction::Key(key) => vec![crate::encode_key(&key)],
            KeyPathExtraction::Invalid | KeyPathExtraction::Failure => Vec::new(),
        }
    }

    #[test]
    fn encoded_index_keys_of_dates_numbers_and_invalid_members() {
        let kp = KeyPath::parse("a").unwrap();
        let cases = [
            (Value::Date(1.7), vec![crate::encode_key(&Key::Date(1.0))]),
            (Value::Date(-0.5), vec![crate::encode_key(&Key::Date(0.0))]),
            (Value::Date(f64::NAN), vec![]),
            (Value::Date(9e15), vec![]),
            (Value::Number(f64::NAN), vec![]),
            (
                Value::Number(-0.0),
                vec![crate::encode_key(&Key::Number(0.0))],
            ),
            (Value::Array(vec![Value::from(1), Value::Null]), vec![]),
        ];
        for (member, expected) in cases {
            let v = obj(&[("a", member.clone())]);
            assert_eq!(
                plain(extract_encoded_index_keys(&v, &kp, false)),
                expected,
                "{member:?}"
            );
            assert_eq!(
                plain(extract_encoded_index_keys(&v, &kp, false)),
                index_keys_by_the_spec(&v, &kp, false)
            );
        }
        // multiEntry: invalid members skipped, duplicates (also 0 and -0) kept once.
        let v = obj(&[(
            "a",
            Value::Array(vec![
                Value::from(2),
                Value::Null,
                Value::Number(0.0),
                Value::from(2),
                Value::Number(-0.0),
                Value::string("x"),
            ]),
        )]);
        assert_eq!(
            plain(extract_encoded_index_keys(&v, &kp, true)),
            vec![
                crate::encode_key(&Key::from(0)),
                crate::encode_key(&Key::from(2)),
                crate::encode_key(&Key::string("x")),
            ]
        );
    }

    #[test]
    fn stored_scalars_along_a_path_give_their_keys_in_place() {
        let inner = obj(&[("y", Value::Null), ("x", Value::string("é\u{1D11E}"))]);
        let v = obj(&[
            ("a", inner),
            ("b", Value::from(5)),
            ("d", Value::Date(f64::NAN)),
            ("bin", Value::Binary(vec![0xFE, 0])),
        ]);
        let keys = |kp: KeyPath| {
            plain(extract_encoded_index_keys_from_stored_value(&stored(&v), &kp, false).unwrap())
        };
        let x = Key::string("é\u{1D11E}");
        assert_eq!(
            keys(KeyPath::parse("a.x").unwrap()),
            [crate::encode_key(&x)]
        );
        assert_eq!(
            keys(KeyPath::compound(&["b", "a.x", "bin"]).unwrap()),
            [crate::encode_key(&Key::Array(vec![
                Key::from(5),
                x,
                Key::Binary(vec![0xFE, 0])
            ]))]
        );
        // An invalid Date, null, and a missing property give no key.
        for path in ["d", "a.y", "a.z", "c"] {
            assert_eq!(
                keys(KeyPath::parse(path).unwrap()),
                Vec::<Vec<u8>>::new(),
                "{path}"
            );
        }
        assert_eq!(
            keys(KeyPath::compound(&["b", "d"]).unwrap()),
            Vec::<Vec<u8>>::new()
        );
    }

    #[test]
    fn stored_strings_give_the_keys_of_their_code_units() {
        // Each side of the one-byte range (0x7E is one byte, 0x7F two), and beyond it.
        let kp = KeyPath::parse("s").unwrap();
        for text in [
            "",
            "DE",
            "~}",
            "a\u{7F}b",
            "\u{7F}",
            "é",
            "Zürich",
            "\u{1D11E}",
        ] {
            let v = obj(&[("s", Value::string(text))]);
            let keys = extract_encoded_index_keys_from_stored_value(&stored(&v), &kp, false);
            assert_eq!(
                plain(keys.unwrap()),
                [crate::encode_key(&Key::string(text))],
                "{text:?}"
            );
        }
    }

    #[test]
    fn a_missing_item_ends_a_compound_key_path_before_later_damage() {
        // {a: a string whose byte is not WTF-8}, key path ["c", "a"]: "c" yields nothing, so
        // "a" is not read, as in the generic path.
        let damaged = StoredValue {
            bytes: vec![1, 0x0A, 1, 1, b'a', 0x06, 1, 0xFF],
            properties: Some(vec![(4, 5)]),
        };
        let kp = KeyPath::compound(&["c", "a"]).unwrap();
        let keys = extract_encoded_index_keys_from_stored_value(&damaged, &kp, false);
        assert_eq!(plain(keys.unwrap()), Vec::<Vec<u8>>::new());
        let kp = KeyPath::compound(&["a", "c"]).unwrap();
        let err = extract_encoded_index_keys_from_stored_value(&damaged, &kp, false);
        assert_eq!(err.unwrap_err().name(), "UnknownError");
    }

    /// Objects nested a few levels with the names key paths below use, holding mostly
    /// scalars that are valid keys, and any values.
    fn nested_value() -> impl proptest::strategy::Strategy<Value = Value> {
        use proptest::prelude::*;
        let leaf = prop_oneof![
            any::<i32>().prop_map(|n| Value::Number(f64::from(n))),
            any::<f64>().prop_map(Value::Number),
            any::<f64>().prop_map(Value::Date),
            "[a-zé\u{1D11E}]{0,20}".prop_map(|s| Value::string(&s)),
            prop::collection::vec(any::<u8>(), 0..6).prop_map(Value::Binary),
            crate::value_codec::testing::value(),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            let name = prop_oneof![Just("a"), Just("b"), Just("x"), Just("length")];
            prop::collection::vec((name, inner), 0..4).prop_map(|fields| {
                Value::Object(
                    fields
                        .into_iter()
                        .map(|(name, v)| (Utf16String::from(name), v))
                        .collect(),
                )
            })
        })
    }

    /// Key paths over those names (and one no value has), single or compound.
    fn some_key_path() -> impl proptest::strategy::Strategy<Value = KeyPath> {
        use proptest::prelude::*;
        let name = prop_oneof![Just("a"), Just("b"), Just("x"), Just("length"), Just("c")];
        let path = prop_oneof![
            Just(String::new()),
            prop::collection::vec(name, 1..4).prop_map(|names| names.join(".")),
        ];
        prop_oneof![
            path.clone().prop_map(|p| KeyPath::parse(&p).unwrap()),
            prop::collection::vec(path, 1..4).prop_map(|ps| KeyPath::compound(&ps).unwrap()),
        ]
    }

    proptest::proptest! {
        #[test]
        fn index_keys_from_the_stored_bytes_match_those_from_the_value(
            v in nested_value(),
            kp in some_key_path(),
            multi_entry in proptest::prelude::any::<bool>(),
        ) {
            let from_stored =
                extract_encoded_index_keys_from_stored_value(&stored(&v), &kp, multi_entry);
            proptest::prop_assert_eq!(
                plain(from_stored.unwrap()),
                plain(extract_encoded_index_keys(&v, &kp, multi_entry))
            );
        }

        #[test]
        fn encoded_index_keys_match_extract_then_encode(
            a in crate::value_codec::testing::value(),
            b in crate::value_codec::testing::value(),
        ) {
            let v = obj(&[("a", a), ("b", b)]);
            for (kp, multi_entry) in [
                (KeyPath::parse("a").unwrap(), false),
                (KeyPath::parse("a").unwrap(), true),
                (KeyPath::parse("a.length").unwrap(), false),
                (KeyPath::parse("").unwrap(), false),
                (KeyPath::compound(&["a", "b"]).unwrap(), false),
                (KeyPath::compound(&["b", "a.length"]).unwrap(), false),
            ] {
                let mut by_the_spec = index_keys_by_the_spec(&v, &kp, multi_entry);
                by_the_spec.sort_unstable();
                proptest::prop_assert_eq!(
                    plain(extract_encoded_index_keys(&v, &kp, multi_entry)),
                    by_the_spec.clone()
                );
                let from_stored =
                    extract_encoded_index_keys_from_stored_value(&stored(&v), &kp, multi_entry);
                proptest::prop_assert_eq!(plain(from_stored.unwrap()), by_the_spec);
            }
        }
    }
}
