//! The text form of values and keys: JSON with a few tagged objects for what JSON lacks.
//!
//! Every text interface (command line, batch protocol, shard router) reads and writes values
//! in this form (text form, issue 2):
//!
//! - JSON `null`, booleans, strings, arrays and objects are [`Value::Null`], [`Value::Bool`],
//!   [`Value::String`], [`Value::Array`] and [`Value::Object`]; a JSON number is a
//!   [`Value::Number`] (`-0` reads as `-0.0`, a number too large for `f64` as ±Infinity).
//! - An object with exactly one member whose name is one of the six tag names is a tagged
//!   value:
//!   - `{"$date": ms}` is a [`Value::Date`] holding `TimeClip(ms)` ([`crate::time_clip`]:
//!     truncated, NaN beyond ±8.64e15); `ms` is a number or a `$number` tag, so invalid
//!     dates round-trip as `{"$date":{"$number":"NaN"}}`;
//!   - `{"$binary": "base64"}` is a [`Value::Binary`] (standard alphabet, padded, canonical);
//!   - `{"$undefined": true}` is [`Value::Undefined`];
//!   - `{"$number": "NaN" | "Infinity" | "-Infinity" | "-0"}` is a [`Value::Number`];
//!   - `{"$object": {…}}` is the inner object taken literally: its own members are not read as
//!     tags (so user data may have a lone `$date` member), while the values inside it are read
//!     normally;
//!   - `{"$structuredClone": {"value": {…}, "serialized": {"$binary": "…"}}}` is a value stored
//!     with its structured-clone serialization (the Node.js package does this for what the
//!     value model cannot hold: Maps, typed arrays, Blobs …): `value` is what key paths see
//!     (the object without the serialization), `serialized` the bytes, carried unchanged.
//!
//!   A tagged object with a bad payload (`{"$date":"x"}`, bad base64, `{"$undefined":false}`)
//!   is a `SyntaxError`. Objects with other `$` names, or with more than one member, are plain
//!   objects.
//!
//! Output is compact JSON, members in insertion order, numbers as JavaScript's
//! `Number.prototype.toString` writes them (`3`, `0.1`, `1e+21`, `-1e-7`), NaN, ±Infinity and
//! `-0` as `$number` tags, and an object with a single tag-named member wrapped in `$object`,
//! so that [`parse_value`] of [`value_to_text`] gives back the same value (NaN payload bits
//! aside). Strings are written as UTF-8 with the escapes JSON requires (`\"`, `\\`, control
//! characters as `\n`, `\t`, `\r`, `\b`, `\f` or `\u00XX`); a lone surrogate is written as an
//! uppercase `\uD800`-style escape.
//!
//! The reader is strict RFC 8259 (no trailing commas, comments, leading zeros or `NaN`
//! literals) except that `\u` escapes may denote lone surrogates. Duplicate member names keep
//! the first position and the last value, as `JSON.parse` does. Nesting is limited to
//! [`MAX_TEXT_DEPTH`].

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;

use crate::error::{Error, Result};
use crate::key::{convert_value_to_key, Key};
use crate::object::Object;
use crate::utf16::Utf16String;
use crate::value::{time_clip, Value};

/// The deepest nesting of arrays and objects (tag objects included) [`parse_value`] accepts:
/// the same as [`crate::MAX_VALUE_DEPTH`], so every stored value can be written out and read
/// back.
pub const MAX_TEXT_DEPTH: usize = crate::value_codec::MAX_VALUE_DEPTH;

/// Reads a value from its text form (see the module docs). Whitespace may surround the value.
///
/// # Errors
/// [`Error::Syntax`], with the byte offset of the problem in the message, when `text` is not
/// one JSON value (trailing garbage included), breaks RFC 8259, nests deeper than
/// [`MAX_TEXT_DEPTH`], or holds a tagged object with a bad payload.
///
/// Source: text form, issue 2.
pub fn parse_value(text: &str) -> Result<Value> {
    let mut parser = Parser {
        text,
        bytes: text.as_bytes(),
        pos: 0,
    };
    let value = parser.value()?;
    parser.skip_ws();
    if parser.pos != parser.bytes.len() {
        return Err(parser.error("unexpected text after the value"));
    }
    Ok(value)
}

/// Writes `value` in the text form (see the module docs) and returns it.
///
/// Source: text form, issue 2.
pub fn value_to_text(value: &Value) -> String {
    let mut out = String::new();
    write_value(value, &mut out);
    out
}

/// Appends the text form of `value` to `out`; see [`value_to_text`].
pub fn write_value(value: &Value, out: &mut String) {
    match value {
        Value::Undefined => out.push_str(r#"{"$undefined":true}"#),
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(*n, out),
        Value::String(s) => write_string(s.units(), out),
        Value::Date(ms) => {
            out.push_str(r#"{"$date":"#);
            write_number(*ms, out);
            out.push('}');
        }
        Value::Binary(bytes) => {
            out.push_str(r#"{"$binary":""#);
            STANDARD.encode_string(bytes, out);
            out.push_str("\"}");
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(item, out);
            }
            out.push(']');
        }
        Value::Object(map) => {
            let tag_shaped = map.len() == 1
                && map
                    .keys()
                    .next()
                    .is_some_and(|name| Tag::from_name(name.units()).is_some());
            if let Some((value, serialized)) = split_structured_clone(map) {
                out.push_str(r#"{"$structuredClone":{"value":"#);
                write_value(&value, out);
                out.push_str(r#","serialized":"#);
                write_value(serialized, out);
                out.push_str("}}");
            } else if tag_shaped {
                out.push_str(r#"{"$object":"#);
                write_members(map, out);
                out.push('}');
            } else {
                write_members(map, out);
            }
        }
    }
}

/// The member of a stored object that holds its structured-clone serialization (written by
/// the Node.js package for values the value model cannot hold exactly). Its name is not an
/// identifier, so no key path reaches it; the text form writes such an object as a
/// `$structuredClone` tag, so the name never appears in text.
pub const STRUCTURED_CLONE_FIELD: &str = "\u{0}v8";

/// An object with a [`STRUCTURED_CLONE_FIELD`] member holding binary data (wherever it is: a
/// key generator appends the generated key after it), split into the object without it and
/// the serialization.
fn split_structured_clone(map: &Object) -> Option<(Value, &Value)> {
    let field = Utf16String::from(STRUCTURED_CLONE_FIELD);
    let serialized = map.get(&field)?;
    if !matches!(serialized, Value::Binary(_)) {
        return None;
    }
    let mut value = map.clone();
    value.shift_remove(&field);
    Some((Value::Object(value), serialized))
}

/// Reads a key from its text form: [`parse_value`], then
/// <https://www.w3.org/TR/IndexedDB-3/#convert-a-value-to-a-key>.
///
/// # Errors
/// [`Error::Syntax`] as for [`parse_value`]; [`Error::Data`] when the value is not a valid key
/// (undefined, null, a boolean, an object, NaN, an invalid date, or an array holding one).
///
/// Source: text form, issue 2.
pub fn parse_key(text: &str) -> Result<Key> {
    let value = parse_value(text)?;
    convert_value_to_key(&value).ok_or_else(|| {
        let shown = value_to_text(&value);
        let shown = match shown.char_indices().nth(80) {
            Some((cut, _)) => format!("{}…", &shown[..cut]),
            None => shown,
        };
        Error::Data(format!("{shown} is not a valid key"))
    })
}

/// Writes a key in the text form: the text of the value the key converts to
/// (<https://www.w3.org/TR/IndexedDB-3/#convert-a-key-to-a-value>).
///
/// Source: text form, issue 2.
pub fn key_to_text(key: &Key) -> String {
    value_to_text(&Value::from(key))
}

fn write_number(n: f64, out: &mut String) {
    if n.is_nan() {
        out.push_str(r#"{"$number":"NaN"}"#);
    } else if n == f64::INFINITY {
        out.push_str(r#"{"$number":"Infinity"}"#);
    } else if n == f64::NEG_INFINITY {
        out.push_str(r#"{"$number":"-Infinity"}"#);
    } else if n == 0.0 && n.is_sign_negative() {
        out.push_str(r#"{"$number":"-0"}"#);
    } else {
        out.push_str(ryu_js::Buffer::new().format_finite(n));
    }
}

fn write_members(map: &Object, out: &mut String) {
    out.push('{');
    for (i, (name, item)) in map.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(name.units(), out);
        out.push(':');
        write_value(item, out);
    }
    out.push('}');
}

fn write_string(units: &[u16], out: &mut String) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let escape_unit = |u: u16, out: &mut String| {
        out.push_str("\\u");
        for shift in [12, 8, 4, 0] {
            out.push(char::from(HEX[usize::from((u >> shift) & 0xF)]));
        }
    };
    out.reserve(units.len() + 2);
    out.push('"');
    for c in char::decode_utf16(units.iter().copied()) {
        match c {
            Ok('"') => out.push_str("\\\""),
            Ok('\\') => out.push_str("\\\\"),
            Ok('\n') => out.push_str("\\n"),
            Ok('\t') => out.push_str("\\t"),
            Ok('\r') => out.push_str("\\r"),
            Ok('\u{8}') => out.push_str("\\b"),
            Ok('\u{C}') => out.push_str("\\f"),
            Ok(c) if c < ' ' => escape_unit(c as u16, out),
            Ok(c) => out.push(c),
            Err(e) => escape_unit(e.unpaired_surrogate(), out),
        }
    }
    out.push('"');
}

/// The six tag names of the text form.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Tag {
    Date,
    Binary,
    Undefined,
    Number,
    Object,
    StructuredClone,
}

impl Tag {
    fn name(self) -> &'static str {
        match self {
            Tag::Date => "$date",
            Tag::Binary => "$binary",
            Tag::Undefined => "$undefined",
            Tag::Number => "$number",
            Tag::Object => "$object",
            Tag::StructuredClone => "$structuredClone",
        }
    }

    fn from_name(units: &[u16]) -> Option<Tag> {
        if units.first() != Some(&u16::from(b'$')) {
            return None;
        }
        [
            Tag::Date,
            Tag::Binary,
            Tag::Undefined,
            Tag::Number,
            Tag::Object,
            Tag::StructuredClone,
        ]
        .into_iter()
        .find(|tag| {
            let name = tag.name().as_bytes();
            name.len() == units.len() && name.iter().zip(units).all(|(&b, &u)| u16::from(b) == u)
        })
    }
}

/// A value as read, before the reader knows whether a tag-shaped object stands for a tagged
/// value or (as the payload of `$object`) for itself.
enum Parsed {
    /// A value that reads the same either way.
    Value(Value),
    /// An object with one member named after `tag`, starting at byte `at`; the payload is
    /// resolved once it is known how to read it.
    Tagged {
        tag: Tag,
        payload: Box<Parsed>,
        at: usize,
    },
}

#[cold]
#[inline(never)]
fn syntax(at: usize, what: &str) -> Error {
    Error::Syntax(format!("{what} at byte {at}"))
}

#[cold]
#[inline(never)]
fn bad_payload(tag: Tag, at: usize, what: &str) -> Error {
    syntax(at, &format!("{} payload must be {what}", tag.name()))
}

/// A step applied, innermost first, when resolving a chain of tag-shaped objects.
enum Step {
    /// Read the value as the payload of `tag`.
    Interpret(Tag, usize),
    /// Wrap the value as the only member, named after `tag`, of a literal object.
    Wrap(Tag),
}

/// The value a parsed item stands for.
///
/// Read normally, `{"$object": p}` is `p` taken literally and `{"<tag>": p}` is `p` read
/// normally, then interpreted; taken literally, `{"<tag>": p}` is an object holding `p` read
/// normally. Chains are walked with a loop, so nesting costs no native stack.
fn resolve(parsed: Parsed) -> Result<Value> {
    let mut current = match parsed {
        Parsed::Value(value) => return Ok(value),
        tagged => tagged,
    };
    let mut steps = Vec::new();
    let mut literal_at = None;
    let leaf = loop {
        match current {
            Parsed::Value(value) => break value,
            Parsed::Tagged { tag, payload, at } => {
                match (literal_at.take(), tag) {
                    (Some(_), _) => steps.push(Step::Wrap(tag)),
                    (None, Tag::Object) => literal_at = Some(at),
                    (None, _) => steps.push(Step::Interpret(tag, at)),
                }
                current = *payload;
            }
        }
    };
    let mut value = match (literal_at, leaf) {
        (None, value) | (Some(_), value @ Value::Object(_)) => value,
        (Some(at), _) => return Err(bad_payload(Tag::Object, at, "an object")),
    };
    while let Some(step) = steps.pop() {
        value = match step {
            Step::Wrap(tag) => {
                let mut map = Object::with_capacity(1);
                map.insert(Utf16String::from(tag.name()), value);
                Value::Object(map)
            }
            Step::Interpret(tag, at) => interpret(tag, at, value)?,
        };
    }
    Ok(value)
}

/// The value `{"<tag>": payload}` (at byte `at`) stands for; `tag` is not `$object`.
fn interpret(tag: Tag, at: usize, payload: Value) -> Result<Value> {
    match (tag, payload) {
        (Tag::Date, Value::Number(ms)) => Ok(Value::Date(time_clip(ms))),
        (Tag::Date, _) => Err(bad_payload(tag, at, "a number or a $number tag")),
        (Tag::Binary, Value::String(s)) => s
            .to_string()
            .and_then(|s| STANDARD.decode(s).ok())
            .map(Value::Binary)
            .ok_or_else(|| bad_payload(tag, at, "standard padded base64")),
        (Tag::Binary, _) => Err(bad_payload(tag, at, "a base64 string")),
        (Tag::Undefined, Value::Bool(true)) => Ok(Value::Undefined),
        (Tag::Undefined, _) => Err(bad_payload(tag, at, "true")),
        (Tag::Number, Value::String(s)) if s == "NaN" => Ok(Value::Number(f64::NAN)),
        (Tag::Number, Value::String(s)) if s == "Infinity" => Ok(Value::Number(f64::INFINITY)),
        (Tag::Number, Value::String(s)) if s == "-Infinity" => Ok(Value::Number(f64::NEG_INFINITY)),
        (Tag::Number, Value::String(s)) if s == "-0" => Ok(Value::Number(-0.0)),
        (Tag::Number, _) => Err(bad_payload(
            tag,
            at,
            r#""NaN", "Infinity", "-Infinity" or "-0""#,
        )),
        (Tag::StructuredClone, Value::Object(mut payload)) => {
            let serialized = payload.shift_remove(&Utf16String::from("serialized"));
            let value = payload.shift_remove(&Utf16String::from("value"));
            match (value, serialized) {
                (Some(Value::Object(mut map)), Some(bytes @ Value::Binary(_)))
                    if payload.is_empty()
                        && !map.contains_key(&Utf16String::from(STRUCTURED_CLONE_FIELD)) =>
                {
                    map.insert(Utf16String::from(STRUCTURED_CLONE_FIELD), bytes);
                    Ok(Value::Object(map))
                }
                _ => Err(bad_payload(
                    tag,
                    at,
                    r#"{"value": an object, "serialized": a $binary}"#,
                )),
            }
        }
        (Tag::StructuredClone, _) => Err(bad_payload(
            tag,
            at,
            r#"{"value": an object, "serialized": a $binary}"#,
        )),
        (Tag::Object, _) => Err(bad_payload(tag, at, "an object")),
    }
}

/// An array or object being read.
enum Frame {
    Array(Vec<Value>),
    Object {
        /// Byte offset of the `{`.
        at: usize,
        map: Object,
        /// The name of the member whose value is being read.
        name: Utf16String,
        /// While the first member is read: the tag its name spells, if any.
        first_tag: Option<Tag>,
        first: bool,
    },
}

struct Parser<'a> {
    text: &'a str,
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> Error {
        syntax(self.pos, what)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    /// Reads one value (after optional whitespace). Arrays and objects are kept on an explicit
    /// stack, so nesting costs no native stack.
    fn value(&mut self) -> Result<Value> {
        let mut stack: Vec<Frame> = Vec::new();
        'value: loop {
            self.skip_ws();
            let mut done = match self.peek() {
                Some(open @ (b'[' | b'{')) => {
                    if stack.len() >= MAX_TEXT_DEPTH {
                        return Err(self.error(&format!("nesting deeper than {MAX_TEXT_DEPTH}")));
                    }
                    let at = self.pos;
                    self.pos += 1;
                    self.skip_ws();
                    match (open, self.peek()) {
                        (b'[', Some(b']')) => {
                            self.pos += 1;
                            Parsed::Value(Value::Array(Vec::new()))
                        }
                        (b'[', _) => {
                            stack.push(Frame::Array(Vec::new()));
                            continue 'value;
                        }
                        (_, Some(b'}')) => {
                            self.pos += 1;
                            Parsed::Value(Value::Object(Object::default()))
                        }
                        _ => {
                            let name = self.name()?;
                            let first_tag = Tag::from_name(name.units());
                            stack.push(Frame::Object {
                                at,
                                map: Object::default(),
                                name,
                                first_tag,
                                first: true,
                            });
                            continue 'value;
                        }
                    }
                }
                Some(b'"') => Parsed::Value(Value::String(self.string()?)),
                Some(b'-' | b'0'..=b'9') => Parsed::Value(Value::Number(self.number()?)),
                Some(b't') => Parsed::Value(self.literal(b"true", Value::Bool(true))?),
                Some(b'f') => Parsed::Value(self.literal(b"false", Value::Bool(false))?),
                Some(b'n') => Parsed::Value(self.literal(b"null", Value::Null)?),
                Some(_) => return Err(self.error("expected a value")),
                None => return Err(self.error("unexpected end of text, expected a value")),
            };
            // Hand the finished item to the enclosing arrays and objects, closing those that end.
            loop {
                self.skip_ws();
                let next = self.peek();
                match stack.last_mut() {
                    None => return resolve(done),
                    Some(Frame::Array(items)) => {
                        items.push(resolve(done)?);
                        match next {
                            Some(b',') => {
                                self.pos += 1;
                                continue 'value;
                            }
                            Some(b']') => {
                                self.pos += 1;
                                let items = std::mem::take(items);
                                stack.pop();
                                done = Parsed::Value(Value::Array(items));
                            }
                            _ => return Err(self.error("expected ',' or ']'")),
                        }
                    }
                    Some(Frame::Object {
                        at,
                        map,
                        name,
                        first_tag,
                        first,
                    }) => {
                        if let (true, Some(b'}'), Some(tag)) = (*first, next, *first_tag) {
                            self.pos += 1;
                            done = Parsed::Tagged {
                                tag,
                                payload: Box::new(done),
                                at: *at,
                            };
                            stack.pop();
                            continue;
                        }
                        *first = false;
                        map.insert(std::mem::take(name), resolve(done)?);
                        match next {
                            Some(b',') => {
                                self.pos += 1;
                                *name = self.name()?;
                                continue 'value;
                            }
                            Some(b'}') => {
                                self.pos += 1;
                                let map = std::mem::take(map);
                                stack.pop();
                                done = Parsed::Value(Value::Object(map));
                            }
                            _ => return Err(self.error("expected ',' or '}'")),
                        }
                    }
                }
            }
        }
    }

    fn literal(&mut self, word: &[u8], value: Value) -> Result<Value> {
        if self.bytes[self.pos..].starts_with(word) {
            self.pos += word.len();
            Ok(value)
        } else {
            Err(self.error("expected a value"))
        }
    }

    /// A member name and the `:` after it.
    fn name(&mut self) -> Result<Utf16String> {
        self.skip_ws();
        if self.peek() != Some(b'"') {
            return Err(self.error("expected a member name"));
        }
        let name = self.string()?;
        self.skip_ws();
        if self.peek() != Some(b':') {
            return Err(self.error("expected ':'"));
        }
        self.pos += 1;
        Ok(name)
    }

    /// A string literal starting at the opening quote.
    fn string(&mut self) -> Result<Utf16String> {
        let open = self.pos;
        self.pos += 1;
        let mut units = Utf16String::new();
        loop {
            let start = self.pos;
            let mut end = start;
            let mut high = 0u8;
            while let Some(&b) = self.bytes.get(end) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                high |= b;
                end += 1;
            }
            let chunk = &self.bytes[start..end];
            if high < 0x80 {
                units.push_units(chunk.iter().map(|&b| u16::from(b)));
            } else {
                // The chunk is delimited by ASCII bytes of valid UTF-8, so it is a whole str.
                let text = self
                    .text
                    .get(start..end)
                    .ok_or_else(|| syntax(start, "invalid UTF-8 in a string"))?;
                units.push_units(text.encode_utf16());
            }
            self.pos = end;
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(units);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let unit = self.escape()?;
                    units.push_units([unit]);
                }
                Some(_) => return Err(self.error("control character in a string")),
                None => return Err(syntax(open, "unterminated string")),
            }
        }
    }

    /// The code unit of the escape after a backslash.
    fn escape(&mut self) -> Result<u16> {
        let unit = match self.peek() {
            Some(b'"') => 0x22,
            Some(b'\\') => 0x5C,
            Some(b'/') => 0x2F,
            Some(b'b') => 0x08,
            Some(b'f') => 0x0C,
            Some(b'n') => 0x0A,
            Some(b'r') => 0x0D,
            Some(b't') => 0x09,
            Some(b'u') => {
                let mut unit = 0u16;
                for k in 1..=4 {
                    let digit = self
                        .bytes
                        .get(self.pos + k)
                        .and_then(|&b| char::from(b).to_digit(16))
                        .ok_or_else(|| syntax(self.pos + k, "expected 4 hex digits after \\u"))?;
                    unit = (unit << 4) | digit as u16;
                }
                self.pos += 5;
                return Ok(unit);
            }
            _ => return Err(self.error("invalid escape")),
        };
        self.pos += 1;
        Ok(unit)
    }

    fn number(&mut self) -> Result<f64> {
        let start = self.pos;
        let digits_from = |bytes: &[u8], mut i: usize| {
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            i
        };
        let bytes = self.bytes;
        let negative = bytes[start] == b'-';
        let int_start = start + usize::from(negative);
        let int_end = match bytes.get(int_start) {
            Some(b'0') => int_start + 1,
            Some(b'1'..=b'9') => digits_from(bytes, int_start + 1),
            _ => return Err(syntax(int_start, "expected a digit")),
        };
        let mut end = int_end;
        if bytes.get(end) == Some(&b'.') {
            if !bytes.get(end + 1).is_some_and(u8::is_ascii_digit) {
                return Err(syntax(end + 1, "expected a digit after '.'"));
            }
            end = digits_from(bytes, end + 1);
        }
        if let Some(b'e' | b'E') = bytes.get(end) {
            end += 1;
            if let Some(b'+' | b'-') = bytes.get(end) {
                end += 1;
            }
            if !bytes.get(end).is_some_and(u8::is_ascii_digit) {
                return Err(syntax(end, "expected a digit in the exponent"));
            }
            end = digits_from(bytes, end);
        }
        self.pos = end;
        if end == int_end && int_end - int_start <= 15 {
            // An integer of at most 15 digits is exact in an f64.
            let magnitude = bytes[int_start..int_end]
                .iter()
                .fold(0u64, |n, &d| n * 10 + u64::from(d - b'0'))
                as f64;
            return Ok(if negative { -magnitude } else { magnitude });
        }
        self.text
            .get(start..end)
            .and_then(|s| s.parse::<f64>().ok())
            .ok_or_else(|| syntax(start, "invalid number"))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::value_codec::testing::{same_value, value};

    fn obj(pairs: &[(&str, Value)]) -> Value {
        Value::Object(
            pairs
                .iter()
                .map(|(n, v)| (Utf16String::from(*n), v.clone()))
                .collect(),
        )
    }

    fn text(v: &Value) -> String {
        value_to_text(v)
    }

    fn err_name(text: &str) -> &'static str {
        match parse_value(text) {
            Ok(v) => panic!("{text:?} parsed as {v:?}"),
            Err(e) => e.name(),
        }
    }

    #[test]
    fn numbers_are_written_as_javascript_does() {
        let cases = [
            (3.0, "3"),
            (0.1, "0.1"),
            (1e21, "1e+21"),
            (-1e-7, "-1e-7"),
            (5e-324, "5e-324"),
            (0.0, "0"),
            (123456789012345680000.0, "123456789012345680000"),
            (1.5e-6, "0.0000015"),
            (-0.0, r#"{"$number":"-0"}"#),
            (f64::NAN, r#"{"$number":"NaN"}"#),
            (f64::INFINITY, r#"{"$number":"Infinity"}"#),
            (f64::NEG_INFINITY, r#"{"$number":"-Infinity"}"#),
        ];
        for (n, want) in cases {
            assert_eq!(text(&Value::Number(n)), want);
            let back = parse_value(want).unwrap();
            assert!(same_value(&back, &Value::Number(n), false), "{want}");
        }
    }

    #[test]
    fn reads_json_numbers() {
        let back = parse_value("-0").unwrap();
        assert!(same_value(&back, &Value::Number(-0.0), true));
        assert_eq!(parse_value("1E2").unwrap(), Value::Number(100.0));
        assert_eq!(parse_value("-12.5e-1").unwrap(), Value::Number(-1.25));
        assert_eq!(parse_value("1e400").unwrap(), Value::Number(f64::INFINITY));
        assert_eq!(
            parse_value("9007199254740993").unwrap(),
            Value::Number(9007199254740992.0)
        );
        assert_eq!(parse_value("0.1").unwrap(), Value::Number(0.1));
        for bad in [
            "01", "-", "1.", ".5", "1e", "+1", "NaN", "Infinity", "0x10", "1.e3",
        ] {
            assert_eq!(err_name(bad), "SyntaxError", "{bad}");
        }
    }

    #[test]
    fn tagged_values() {
        assert_eq!(parse_value(r#"{"$date":1}"#).unwrap(), Value::Date(1.0));
        // A Date holds a time-clipped value.
        assert_eq!(parse_value(r#"{"$date":1.5}"#).unwrap(), Value::Date(1.0));
        assert!(
            matches!(parse_value(r#"{"$date":8640000000000001}"#).unwrap(), Value::Date(ms) if ms.is_nan())
        );
        assert_eq!(text(&Value::Date(1.5)), r#"{"$date":1.5}"#);
        let nan_date = parse_value(r#"{"$date":{"$number":"NaN"}}"#).unwrap();
        assert!(matches!(nan_date, Value::Date(ms) if ms.is_nan()));
        assert_eq!(
            text(&Value::Date(f64::NAN)),
            r#"{"$date":{"$number":"NaN"}}"#
        );
        assert_eq!(
            parse_value(r#"{"$binary":"AAEC/w=="}"#).unwrap(),
            Value::Binary(vec![0, 1, 2, 255])
        );
        assert_eq!(
            text(&Value::Binary(vec![0, 1, 2, 255])),
            r#"{"$binary":"AAEC/w=="}"#
        );
        assert_eq!(text(&Value::Binary(vec![])), r#"{"$binary":""}"#);
        assert_eq!(
            parse_value(r#"{"$undefined":true}"#).unwrap(),
            Value::Undefined
        );
        assert_eq!(text(&Value::Undefined), r#"{"$undefined":true}"#);
        // Other `$` names and tags with company are plain objects.
        assert_eq!(
            parse_value(r#"{"$x":1}"#).unwrap(),
            obj(&[("$x", 1.into())])
        );
        assert_eq!(
            parse_value(r#"{"$date":1,"b":"x"}"#).unwrap(),
            obj(&[("$date", 1.into()), ("b", "x".into())])
        );
    }

    #[test]
    fn object_tag_keeps_tag_names_literal() {
        let v = obj(&[("$date", 1.into())]);
        assert_eq!(text(&v), r#"{"$object":{"$date":1}}"#);
        assert_eq!(parse_value(r#"{"$object":{"$date":1}}"#).unwrap(), v);
        // Only the top level of the payload is literal.
        assert_eq!(
            parse_value(r#"{"$object":{"$date":{"$date":2}}}"#).unwrap(),
            obj(&[("$date", Value::Date(2.0))])
        );
        // A bad payload inside a literal object is just data.
        assert_eq!(
            parse_value(r#"{"$object":{"$date":"x"}}"#).unwrap(),
            obj(&[("$date", "x".into())])
        );
        let nested = obj(&[("$object", obj(&[("$date", 1.into())]))]);
        let written = text(&nested);
        assert_eq!(
            written,
            r#"{"$object":{"$object":{"$object":{"$date":1}}}}"#
        );
        assert_eq!(parse_value(&written).unwrap(), nested);
        // With a second member, the `$object` member's value is read normally.
        assert_eq!(
            parse_value(r#"{"$object":{"$date":1},"b":2}"#).unwrap(),
            obj(&[("$object", Value::Date(1.0)), ("b", 2.into())])
        );
        assert_eq!(text(&obj(&[])), "{}");
    }

    #[test]
    fn bad_tag_payloads_are_syntax_errors() {
        for bad in [
            r#"{"$date":"x"}"#,
            r#"{"$date":{"$date":1}}"#,
            r#"{"$binary":"AAE"}"#,
            r#"{"$binary":"AB=="}"#,
            r#"{"$binary":1}"#,
            r#"{"$undefined":false}"#,
            r#"{"$number":"1"}"#,
            r#"{"$number":1}"#,
            r#"{"$object":1}"#,
            r#"{"$object":[]}"#,
            r#"{"$object":{"$object":{"$date":"x"}}}"#,
        ] {
            let err = parse_value(bad).unwrap_err();
            assert_eq!(err.name(), "SyntaxError", "{bad}");
        }
        let err = parse_value(r#"{"$date":"x"}"#).unwrap_err();
        assert_eq!(
            err.message(),
            "$date payload must be a number or a $number tag at byte 0"
        );
    }

    #[test]
    fn structured_clone_tag() {
        // A stored value with its serialization: the object without it, then the bytes.
        let stored = obj(&[
            ("size", 3.into()),
            ("type", Value::String("text/plain".into())),
            (STRUCTURED_CLONE_FIELD, Value::Binary(vec![2, 0, 255])),
        ]);
        let written = r#"{"$structuredClone":{"value":{"size":3,"type":"text/plain"},"serialized":{"$binary":"AgD/"}}}"#;
        assert_eq!(text(&stored), written);
        assert_eq!(parse_value(written).unwrap(), stored);
        // Member order in the payload does not matter.
        assert_eq!(
            parse_value(r#"{"$structuredClone":{"serialized":{"$binary":"AgD/"},"value":{"size":3,"type":"text/plain"}}}"#)
                .unwrap(),
            stored
        );
        // Only the serialization: an empty object.
        let bare = obj(&[(STRUCTURED_CLONE_FIELD, Value::Binary(vec![1]))]);
        assert_eq!(
            text(&bare),
            r#"{"$structuredClone":{"value":{},"serialized":{"$binary":"AQ=="}}}"#
        );
        assert_eq!(parse_value(&text(&bare)).unwrap(), bare);
        // A tag-shaped projection stays literal inside.
        let tagged = obj(&[
            ("$date", 1.into()),
            (STRUCTURED_CLONE_FIELD, Value::Binary(vec![1])),
        ]);
        assert_eq!(parse_value(&text(&tagged)).unwrap(), tagged);
        // Wherever the member is (a generated key comes after it), the same tag; read back,
        // the member comes last.
        let first = obj(&[
            (STRUCTURED_CLONE_FIELD, Value::Binary(vec![1])),
            ("a", 1.into()),
        ]);
        assert_eq!(
            text(&first),
            r#"{"$structuredClone":{"value":{"a":1},"serialized":{"$binary":"AQ=="}}}"#
        );
        let Value::Object(back) = parse_value(&text(&first)).unwrap() else {
            panic!("an object")
        };
        assert_eq!(
            back.keys()
                .map(|k| k.to_string().unwrap())
                .collect::<Vec<_>>(),
            ["a", STRUCTURED_CLONE_FIELD]
        );
        // Not binary: written as it is.
        let not_binary = obj(&[(STRUCTURED_CLONE_FIELD, 1.into())]);
        assert_eq!(text(&not_binary), r#"{"\u0000v8":1}"#);
        // User data with a lone `$structuredClone` member is wrapped in `$object`.
        let user = obj(&[("$structuredClone", 1.into())]);
        assert_eq!(text(&user), r#"{"$object":{"$structuredClone":1}}"#);
        assert_eq!(parse_value(&text(&user)).unwrap(), user);
        for bad in [
            r#"{"$structuredClone":1}"#,
            r#"{"$structuredClone":{"value":{}}}"#,
            r#"{"$structuredClone":{"value":[],"serialized":{"$binary":""}}}"#,
            r#"{"$structuredClone":{"value":{},"serialized":"AA=="}}"#,
            r#"{"$structuredClone":{"value":{},"serialized":{"$binary":""},"x":1}}"#,
        ] {
            let err = parse_value(bad).unwrap_err();
            assert_eq!(err.name(), "SyntaxError", "{bad}");
        }
    }

    #[test]
    fn strings_and_escapes() {
        let s = Value::String(Utf16String::from_units(vec![0xD800]));
        assert_eq!(text(&s), r#""\uD800""#);
        assert_eq!(parse_value(r#""\uD800""#).unwrap(), s);
        assert_eq!(parse_value(r#""\ud800""#).unwrap(), s);
        assert_eq!(
            parse_value(r#""\uD834\uDD1E""#).unwrap(),
            Value::string("\u{1D11E}")
        );
        assert_eq!(text(&Value::string("\u{1D11E}é")), "\"\u{1D11E}é\"");
        assert_eq!(
            text(&Value::string("a\"\\\n\t\r\u{8}\u{C}\u{0}\u{1F}\u{7F}/")),
            r#""a\"\\\n\t\r\b\f\u0000\u001F/""#.replace('/', "\u{7F}/")
        );
        assert_eq!(
            parse_value(r#""\"\\\/\b\f\n\r\t\u00e9""#).unwrap(),
            Value::string("\"\\/\u{8}\u{C}\n\r\té")
        );
        for bad in [
            "\"abc",
            "\"a\nb\"",
            r#""\x""#,
            r#""\u12""#,
            r#""\u12G4""#,
            "'a'",
        ] {
            assert_eq!(err_name(bad), "SyntaxError", "{bad}");
        }
    }

    #[test]
    fn structure() {
        assert_eq!(
            parse_value(" [1, {\"a\" : [true,false,null]}, \"x\"]\n").unwrap(),
            Value::Array(vec![
                1.into(),
                obj(&[(
                    "a",
                    Value::Array(vec![true.into(), false.into(), Value::Null])
                )]),
                "x".into()
            ])
        );
        assert_eq!(
            parse_value(r#"{"a":1,"b":3,"a":2}"#).unwrap(),
            obj(&[("a", 2.into()), ("b", 3.into())])
        );
        assert_eq!(
            text(&parse_value(r#"{"a":1,"a":2}"#).unwrap()),
            r#"{"a":2}"#
        );
        for bad in [
            "[1,]",
            "{\"a\":1,}",
            "[1 2]",
            "{\"a\" 1}",
            "{a:1}",
            "",
            " ",
            "[",
            "{",
            "1 2",
            "// c\n1",
            "tru",
            "nul",
            "[1]x",
            "{\"a\":1}}",
            "\u{FEFF}1",
        ] {
            assert_eq!(err_name(bad), "SyntaxError", "{bad:?}");
        }
        let err = parse_value("[1,]").unwrap_err();
        assert_eq!(err.message(), "expected a value at byte 3");
    }

    fn nested_arrays(depth: usize) -> Value {
        let mut v = Value::Null;
        for _ in 0..depth {
            v = Value::Array(vec![v]);
        }
        v
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let deepest = nested_arrays(MAX_TEXT_DEPTH);
        let written = text(&deepest);
        assert_eq!(parse_value(&written).unwrap(), deepest);
        let too_deep = format!("[{written}]");
        let err = parse_value(&too_deep).unwrap_err();
        assert_eq!(err.name(), "SyntaxError");
        assert_eq!(
            err.message(),
            format!("nesting deeper than {MAX_TEXT_DEPTH} at byte {MAX_TEXT_DEPTH}")
        );
        // Chains of tag objects resolve without recursion.
        let n = MAX_TEXT_DEPTH - 1;
        let chain = format!("{}{{}}{}", r#"{"$object":"#.repeat(n), "}".repeat(n));
        assert!(matches!(parse_value(&chain).unwrap(), Value::Object(_)));
        let chain = format!("{}1{}", r#"{"$date":"#.repeat(n), "}".repeat(n));
        assert_eq!(err_name(&chain), "SyntaxError");
    }

    #[test]
    fn hostile_nesting_needs_little_stack() {
        let run = std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn(|| {
                for deep in [
                    "[".repeat(1_000_000),
                    r#"{"a":"#.repeat(300_000),
                    r#"{"$object":"#.repeat(300_000),
                    format!("{}1{}", r#"{"$number":"#.repeat(1000), "}".repeat(1000)),
                ] {
                    assert_eq!(err_name(&deep), "SyntaxError");
                }
            })
            .unwrap();
        run.join().unwrap();
    }

    #[test]
    fn keys() {
        let key = parse_key(r#"[1,"a",{"$date":5},{"$binary":"AQ=="}]"#).unwrap();
        assert_eq!(
            key,
            Key::Array(vec![
                Key::from(1),
                Key::from("a"),
                Key::Date(5.0),
                Key::Binary(vec![1])
            ])
        );
        assert_eq!(
            key_to_text(&key),
            r#"[1,"a",{"$date":5},{"$binary":"AQ=="}]"#
        );
        assert_eq!(key_to_text(&parse_key("-0").unwrap()), "0");
        for bad in ["null", "true", "{}", r#"{"$number":"NaN"}"#, "[1,null]"] {
            assert_eq!(parse_key(bad).unwrap_err().name(), "DataError", "{bad}");
        }
        assert_eq!(
            parse_key("[1,null]").unwrap_err().message(),
            "[1,null] is not a valid key"
        );
        assert_eq!(parse_key("[").unwrap_err().name(), "SyntaxError");
    }

    fn jsonish() -> impl Strategy<Value = String> {
        let token = prop::sample::select(vec![
            "{",
            "}",
            "[",
            "]",
            ",",
            ":",
            "\"",
            "\\",
            "\\u",
            "D800",
            "dc00",
            "\"$date\"",
            "\"$object\"",
            "\"$number\"",
            "\"$binary\"",
            "\"$undefined\"",
            "\"NaN\"",
            "1",
            "-",
            "0",
            "e",
            "E+",
            ".",
            "true",
            "null",
            " ",
            "\n",
            "\"a\"",
            "é",
            "\u{0}",
            "\"AQ==\"",
        ]);
        prop::collection::vec(token, 0..40).prop_map(|tokens| tokens.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn round_trips(v in value()) {
            let written = text(&v);
            let back = parse_value(&written);
            prop_assert!(back.is_ok(), "{} did not parse: {:?}", written, back);
            let back = back.unwrap();
            prop_assert!(same_value(&back, &v, false), "{:?} came back as {:?} via {}", v, back, written);
            prop_assert_eq!(text(&back), written);
        }

        #[test]
        fn arbitrary_text_never_panics(s in any::<String>(), t in jsonish()) {
            let _ = parse_value(&s);
            let _ = parse_value(&t);
            let _ = parse_key(&t);
        }

        #[test]
        fn damaged_text_never_panics(v in value(), at in any::<usize>(), t in jsonish()) {
            let written = text(&v);
            let mut cut = at % (written.len() + 1);
            while !written.is_char_boundary(cut) {
                cut -= 1;
            }
            let _ = parse_value(&written[..cut]);
            let _ = parse_value(&format!("{}{}{}", &written[..cut], t, &written[cut..]));
        }
    }
}
