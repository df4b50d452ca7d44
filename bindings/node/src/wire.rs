//! The form in which replies reach the JavaScript layer: one byte buffer per batch of
//! replies, which `lib/wire.js` decodes into JavaScript values. Making each value through
//! Node-API costs a call per string, number, object and property (about 5–7 µs for a
//! five-property record), and each reply's slots in an array of the batch cost a call each
//! too; the buffer costs one call, and the JavaScript decoder builds the objects with shapes
//! and property names V8 reuses. The form is private to the package (the addon and
//! `lib/wire.js` come from one build).
//!
//! A batch is its replies one after the other ([`reply`]): the op id and the length of the
//! rest of the reply, each a `u32` (little-endian), then a kind byte and what it says:
//! - [`KIND_VALUE`]: a varint count, then at most one value (`get`; none is `undefined`);
//! - [`KIND_VALUES`]: a varint count, then values (`getAll`) or keys (`getAllKeys`);
//! - [`KIND_RECORDS`]: a varint count, then key, primary key and value per record
//!   (`getAllRecords`);
//! - [`KIND_ROWS`]: a varint count, a byte that is 1 when the cursor's range ends after the
//!   rows, then key, primary key and value per row (a key cursor's rows carry `undefined` as
//!   the value);
//! - [`KIND_PLAIN`]: one value (`undefined`, a key, a count, or the description of an opened
//!   database as an object);
//! - [`KIND_ERROR`]: the error's name and message, two strings.
//!
//! A value is a tag byte and its payload: [`TAG_UNDEFINED`], [`TAG_NULL`], [`TAG_FALSE`],
//! [`TAG_TRUE`]; [`TAG_NUMBER`] (the `f64`'s 8 bytes, little-endian); [`TAG_INT`] (a zigzag
//! varint of an `i32`: integers that are not `-0`); [`TAG_ASCII`] (varint length, one byte
//! per code unit, every unit below 0x80); [`TAG_UTF16`] (varint length in code units, two
//! bytes each, little-endian, lone surrogates as they are); [`TAG_DATE`] (time value as for
//! numbers); [`TAG_BINARY`] (varint length, bytes: an ArrayBuffer); [`TAG_ARRAY`] (varint
//! length, members); [`TAG_OBJECT`] (varint property count, then per property its name, a
//! string in the ASCII or UTF-16 form with its tag, and its value); [`TAG_CLONE`] (varint
//! length, V8's serialization of a value stored with one (see [`CLONE_FIELD`]), then the
//! generated key injected into its projection or `undefined`). Keys use the same tags.
//! Varints are unsigned LEB128.
//!
//! Values written go the other way in the same form: `lib/wire.js` writes the clone of a
//! value to store (or its projection) with the tags from [`TAG_UNDEFINED`] to [`TAG_OBJECT`],
//! and [`read_value`] makes the engine's value of it, so a value crosses Node-API as one
//! buffer instead of a call per property. A key range goes the same way ([`read_range`]): a
//! byte of flags ([`RANGE_LOWER`], [`RANGE_UPPER`], [`RANGE_LOWER_OPEN`],
//! [`RANGE_UPPER_OPEN`]), then the lower bound's key if there is one, then the upper's.

use indexa::{
    extract_key_from_value_using_key_path, Cursor, Key, KeyPath, KeyPathExtraction, KeyRange,
    Object, StoredText, Utf16String, Value, MAX_KEY_DEPTH, MAX_VALUE_DEPTH,
};

use crate::convert::{engine_error, named_error, CLONE_FIELD};
use crate::worker::{Payload, Reply, Rows, StoreInfo};

pub const KIND_VALUE: u8 = 0;
pub const KIND_VALUES: u8 = 1;
pub const KIND_RECORDS: u8 = 2;
pub const KIND_ROWS: u8 = 3;
pub const KIND_PLAIN: u8 = 4;
pub const KIND_ERROR: u8 = 5;

pub const TAG_UNDEFINED: u8 = 0;
pub const TAG_NULL: u8 = 1;
pub const TAG_FALSE: u8 = 2;
pub const TAG_TRUE: u8 = 3;
pub const TAG_NUMBER: u8 = 4;
pub const TAG_INT: u8 = 5;
pub const TAG_ASCII: u8 = 6;
pub const TAG_UTF16: u8 = 7;
pub const TAG_DATE: u8 = 8;
pub const TAG_BINARY: u8 = 9;
pub const TAG_ARRAY: u8 = 10;
pub const TAG_OBJECT: u8 = 11;
pub const TAG_CLONE: u8 = 12;

/// A range's flags: it has a lower bound.
pub const RANGE_LOWER: u8 = 1;
/// It has an upper bound.
pub const RANGE_UPPER: u8 = 2;
/// Its lower bound is open.
pub const RANGE_LOWER_OPEN: u8 = 4;
/// Its upper bound is open.
pub const RANGE_UPPER_OPEN: u8 = 8;

/// Appends `reply` to a batch of replies (see the module's documentation).
pub fn reply(out: &mut Vec<u8>, reply: Reply) {
    out.extend_from_slice(&reply.id.to_le_bytes());
    let length_at = out.len();
    out.extend_from_slice(&[0; 4]);
    match reply.result {
        Ok(payload) => self::payload(out, payload),
        Err(e) => {
            let mut w = Writer(out);
            w.0.push(KIND_ERROR);
            w.str(e.name());
            w.str(e.message());
        }
    }
    let length = (out.len() - length_at - 4) as u32;
    out[length_at..length_at + 4].copy_from_slice(&length.to_le_bytes());
}

/// Appends a successful reply's result.
fn payload(out: &mut Vec<u8>, payload: Payload) {
    match payload {
        Payload::Values(bytes, _) => out.extend_from_slice(&bytes),
        Payload::Rows(r, at_end) => rows(out, &r, at_end),
        Payload::Encoded(bytes) => out.extend_from_slice(&bytes),
        Payload::Keys(keys) => {
            let mut w = Writer::new(out, KIND_VALUES, keys.len());
            for k in &keys {
                w.key(k);
            }
        }
        Payload::None | Payload::MaybeKey(None) => {
            out.extend_from_slice(&[KIND_PLAIN, TAG_UNDEFINED])
        }
        Payload::Key(k) | Payload::MaybeKey(Some(k)) => {
            out.push(KIND_PLAIN);
            Writer(out).key(&k);
        }
        Payload::Count(n) => {
            out.push(KIND_PLAIN);
            Writer(out).number(n as f64);
        }
        Payload::Opened {
            old_version,
            version,
            stores,
        } => {
            out.push(KIND_PLAIN);
            Writer(out).opened(old_version, version, &stores);
        }
    }
}

/// The values of a `getAll` in the reply's form ([`KIND_VALUES`], their count, each value),
/// and their count: each value as `visit` reports it to a [`Transcoder`] straight from its
/// stored bytes. When one of them may be stored with its serialization, each value is read
/// back from that form and a value that is one is written as [`Writer::stored_value`] writes
/// it (`inject`: the object store's key path when a generated key may need injecting); the
/// others keep their bytes.
///
/// # Errors
/// Those of `visit`.
pub(crate) fn values_reply(
    visit: impl FnOnce(&mut Transcoder<'_>) -> indexa::Result<usize>,
    inject: Option<&KeyPath>,
) -> indexa::Result<(Vec<u8>, usize)> {
    transcoded_reply(KIND_VALUES, visit, inject)
}

/// The records of a `getAllRecords` in the reply's form ([`KIND_RECORDS`], their count, per
/// record its key, primary key and value), and their count, as [`values_reply`] writes
/// values.
///
/// # Errors
/// Those of `visit`.
pub(crate) fn records_reply(
    visit: impl FnOnce(&mut Transcoder<'_>) -> indexa::Result<usize>,
    inject: Option<&KeyPath>,
) -> indexa::Result<(Vec<u8>, usize)> {
    transcoded_reply(KIND_RECORDS, visit, inject)
}

/// [`values_reply`] ([`KIND_VALUES`]) or [`records_reply`] ([`KIND_RECORDS`]).
fn transcoded_reply(
    kind: u8,
    visit: impl FnOnce(&mut Transcoder<'_>) -> indexa::Result<usize>,
    inject: Option<&KeyPath>,
) -> indexa::Result<(Vec<u8>, usize)> {
    let mut transcoded = Vec::new();
    let mut t = Transcoder {
        w: Writer(&mut transcoded),
        serialized: false,
    };
    let count = visit(&mut t)?;
    let serialized = t.serialized;
    let mut out = Vec::new();
    let mut w = Writer::new(&mut out, kind, count);
    if !serialized {
        w.0.extend_from_slice(&transcoded);
        return Ok((out, count));
    }
    let mut r = Reader {
        bytes: &transcoded,
        at: 0,
    };
    for _ in 0..count {
        let start = r.at;
        let keys = if kind == KIND_RECORDS {
            let key = r.key(0).map_err(read_back_error)?;
            Some((key, r.key(0).map_err(read_back_error)?))
        } else {
            None
        };
        let value = r.value(0).map_err(read_back_error)?;
        if serialization(&value).is_some() {
            if let Some((key, primary_key)) = &keys {
                w.key(key);
                w.key(primary_key);
            }
            w.stored_value(&value, inject);
        } else {
            w.0.extend_from_slice(&transcoded[start..r.at]);
        }
    }
    Ok((out, count))
}

/// Appends a cursor step's rows to `out`.
pub fn rows(out: &mut Vec<u8>, rows: &Rows, at_end: bool) {
    let w = Writer::new(out, KIND_ROWS, rows.count);
    w.0.push(u8::from(at_end));
    w.0.extend_from_slice(&rows.bytes);
}

/// Appends the record `cursor` is on, as one row of a cursor step (see [`rows`]), to `out`:
/// its key, its primary key, and its value as [`transcoded_value`] writes it (`undefined` for
/// a key cursor's row). False, with nothing written, past the end.
///
/// # Errors
/// The engine's error for a damaged value; nothing of the row is left in `out`.
pub fn row(out: &mut Vec<u8>, cursor: &Cursor, inject: Option<&KeyPath>) -> indexa::Result<bool> {
    let Some(key) = cursor.key() else {
        return Ok(false);
    };
    let start = out.len();
    let mut w = Writer(out);
    w.key(key);
    w.key(cursor.primary_key().unwrap_or(key));
    match transcoded_value(out, |t| cursor.visit_value(t), inject) {
        Ok(true) => {}
        Ok(false) => out.push(TAG_UNDEFINED),
        Err(e) => {
            out.truncate(start);
            return Err(e);
        }
    }
    Ok(true)
}

/// The result of a `get` in the reply's form: [`KIND_VALUE`], a count of 0 or 1, and the value
/// as [`transcoded_value`] writes it.
///
/// # Errors
/// Those of `visit`.
pub(crate) fn get_reply(
    visit: impl FnOnce(&mut Transcoder<'_>) -> indexa::Result<bool>,
    inject: Option<&KeyPath>,
) -> indexa::Result<Vec<u8>> {
    let mut out = vec![KIND_VALUE, 1];
    if transcoded_value(&mut out, visit, inject)? {
        Ok(out)
    } else {
        Ok(vec![KIND_VALUE, 0])
    }
}

/// Appends the value that `visit` reports to a [`Transcoder`] straight from its stored bytes
/// to `out`; false, with nothing written, when `visit` finds none. A value that may be one
/// stored with its serialization is read back and, when it is one, written again as
/// [`Writer::stored_value`] writes it (`inject` as for [`values_reply`]).
///
/// # Errors
/// Those of `visit`; nothing is left in `out`.
fn transcoded_value(
    out: &mut Vec<u8>,
    visit: impl FnOnce(&mut Transcoder<'_>) -> indexa::Result<bool>,
    inject: Option<&KeyPath>,
) -> indexa::Result<bool> {
    let start = out.len();
    let mut t = Transcoder {
        w: Writer(out),
        serialized: false,
    };
    let written = match visit(&mut t) {
        Ok(true) if t.serialized => read_back(&out[start..]).map(|value| {
            if serialization(&value).is_some() {
                out.truncate(start);
                Writer(out).stored_value(&value, inject);
            }
            true
        }),
        other => other,
    };
    if !matches!(written, Ok(true)) {
        out.truncate(start);
    }
    written
}

/// The value a [`Transcoder`] wrote at the start of `bytes`, read back.
fn read_back(bytes: &[u8]) -> indexa::Result<Value> {
    Reader { bytes, at: 0 }.value(0).map_err(read_back_error)
}

/// A [`Transcoder`]'s bytes that do not read back (which would be a bug) as the engine's
/// `UnknownError`.
fn read_back_error(e: napi::Error) -> indexa::Error {
    indexa::Error::Unknown(format!("a value read back: {}", e.reason))
}

/// Writes a stored value in the reply's form as [`indexa::visit_value`] reads it, without
/// the engine's value on the way. A property named [`CLONE_FIELD`] anywhere in it sets
/// `serialized`: the value may be one stored with its serialization, which only
/// [`Writer::stored_value`] writes as such.
pub(crate) struct Transcoder<'a> {
    w: Writer<'a>,
    serialized: bool,
}

impl indexa::RecordVisitor for Transcoder<'_> {
    fn record(&mut self, key: &Key, primary_key: &Key) {
        self.w.key(key);
        self.w.key(primary_key);
    }
}

impl indexa::ValueVisitor for Transcoder<'_> {
    fn undefined(&mut self) {
        self.w.0.push(TAG_UNDEFINED);
    }
    fn null(&mut self) {
        self.w.0.push(TAG_NULL);
    }
    fn boolean(&mut self, b: bool) {
        self.w.0.push(if b { TAG_TRUE } else { TAG_FALSE });
    }
    fn number(&mut self, n: f64) {
        self.w.number(n);
    }
    fn date(&mut self, time: f64) {
        self.w.f64(TAG_DATE, time);
    }
    fn string(&mut self, text: StoredText<'_>) {
        match text {
            StoredText::Utf8(s) => self.w.str(s),
            StoredText::Units(units) => self.w.string(units),
        }
    }
    fn binary(&mut self, bytes: &[u8]) {
        self.w.bytes(TAG_BINARY, bytes);
    }
    fn array(&mut self, len: usize) {
        self.w.varint_tagged(TAG_ARRAY, len);
    }
    fn object(&mut self, len: usize) {
        self.w.varint_tagged(TAG_OBJECT, len);
    }
    fn name(&mut self, name: StoredText<'_>) {
        if name == StoredText::Utf8(CLONE_FIELD) {
            self.serialized = true;
        }
        self.string(name);
    }
}

/// The serialization of a value stored with one (see [`CLONE_FIELD`]); `None` for any other.
fn serialization(value: &Value) -> Option<&[u8]> {
    match value {
        Value::Object(map) => match map.get(&Utf16String::from(CLONE_FIELD)) {
            Some(Value::Binary(bytes)) => Some(bytes),
            _ => None,
        },
        _ => None,
    }
}

struct Writer<'a>(&'a mut Vec<u8>);

impl Writer<'_> {
    fn new(out: &mut Vec<u8>, kind: u8, count: usize) -> Writer<'_> {
        out.reserve(64 * count);
        let mut w = Writer(out);
        w.0.push(kind);
        w.varint(count as u64);
        w
    }

    fn varint(&mut self, mut n: u64) {
        while n >= 0x80 {
            self.0.push((n as u8 & 0x7F) | 0x80);
            n >>= 7;
        }
        self.0.push(n as u8);
    }

    fn f64(&mut self, tag: u8, n: f64) {
        self.0.push(tag);
        self.0.extend_from_slice(&n.to_bits().to_le_bytes());
    }

    fn number(&mut self, n: f64) {
        if n.fract() == 0.0
            && n >= f64::from(i32::MIN)
            && n <= f64::from(i32::MAX)
            && !(n == 0.0 && n.is_sign_negative())
        {
            let i = n as i32;
            self.0.push(TAG_INT);
            self.varint(u64::from(((i << 1) ^ (i >> 31)) as u32));
        } else {
            self.f64(TAG_NUMBER, n);
        }
    }

    fn string(&mut self, s: &Utf16String) {
        let units = s.units();
        if units.iter().all(|&u| u < 0x80) {
            self.varint_tagged(TAG_ASCII, units.len());
            self.0.extend(units.iter().map(|&u| u as u8));
        } else {
            self.varint_tagged(TAG_UTF16, units.len());
            for u in units {
                self.0.extend_from_slice(&u.to_le_bytes());
            }
        }
    }

    /// A string given as Rust text (a name, a key path, an error's message).
    fn str(&mut self, s: &str) {
        if s.is_ascii() {
            self.bytes(TAG_ASCII, s.as_bytes());
        } else {
            self.varint_tagged(TAG_UTF16, s.encode_utf16().count());
            for u in s.encode_utf16() {
                self.0.extend_from_slice(&u.to_le_bytes());
            }
        }
    }

    /// A key path as `IDBObjectStore.keyPath` gives it (`null` for none): a string, or an
    /// array of strings.
    fn key_path(&mut self, key_path: Option<&KeyPath>) {
        let Some(kp) = key_path else {
            self.0.push(TAG_NULL);
            return;
        };
        let strings = kp.strings();
        if kp.is_compound() {
            self.varint_tagged(TAG_ARRAY, strings.len());
        }
        for s in strings {
            self.str(s);
        }
    }

    /// The description of an opened database: `{oldVersion, version, stores: [{name, keyPath,
    /// autoIncrement, indexes: [{name, keyPath, unique, multiEntry}]}]}`, `oldVersion` `null`
    /// when the open made the database.
    fn opened(&mut self, old_version: Option<u64>, version: u64, stores: &[StoreInfo]) {
        self.varint_tagged(TAG_OBJECT, 3);
        self.str("oldVersion");
        match old_version {
            Some(v) => self.number(v as f64),
            None => self.0.push(TAG_NULL),
        }
        self.str("version");
        self.number(version as f64);
        self.str("stores");
        self.varint_tagged(TAG_ARRAY, stores.len());
        for s in stores {
            self.varint_tagged(TAG_OBJECT, 4);
            self.str("name");
            self.string(&s.name);
            self.str("keyPath");
            self.key_path(s.key_path.as_ref());
            self.str("autoIncrement");
            self.0.push(if s.auto_increment {
                TAG_TRUE
            } else {
                TAG_FALSE
            });
            self.str("indexes");
            self.varint_tagged(TAG_ARRAY, s.indexes.len());
            for ix in &s.indexes {
                self.varint_tagged(TAG_OBJECT, 4);
                self.str("name");
                self.string(&ix.name);
                self.str("keyPath");
                self.key_path(Some(&ix.key_path));
                self.str("unique");
                self.0.push(if ix.unique { TAG_TRUE } else { TAG_FALSE });
                self.str("multiEntry");
                self.0
                    .push(if ix.multi_entry { TAG_TRUE } else { TAG_FALSE });
            }
        }
    }

    fn varint_tagged(&mut self, tag: u8, n: usize) {
        self.0.push(tag);
        self.varint(n as u64);
    }

    fn bytes(&mut self, tag: u8, bytes: &[u8]) {
        self.varint_tagged(tag, bytes.len());
        self.0.extend_from_slice(bytes);
    }

    fn key(&mut self, key: &Key) {
        match key {
            Key::Number(n) => self.number(*n),
            Key::Date(ms) => self.f64(TAG_DATE, *ms),
            Key::String(s) => self.string(s),
            Key::Binary(b) => self.bytes(TAG_BINARY, b),
            Key::Array(items) => {
                self.varint_tagged(TAG_ARRAY, items.len());
                for item in items {
                    self.key(item);
                }
            }
        }
    }

    /// A value as stored: with a serialization (see [`CLONE_FIELD`]), that serialization and
    /// the key injected into the projection, for the JavaScript layer to inject again.
    fn stored_value(&mut self, value: &Value, inject: Option<&KeyPath>) {
        let Some(bytes) = serialization(value) else {
            self.value(value);
            return;
        };
        self.bytes(TAG_CLONE, bytes);
        match inject.map(|kp| extract_key_from_value_using_key_path(value, kp, false)) {
            Some(KeyPathExtraction::Key(k)) => self.key(&k),
            _ => self.0.push(TAG_UNDEFINED),
        }
    }

    fn value(&mut self, value: &Value) {
        match value {
            Value::Undefined => self.0.push(TAG_UNDEFINED),
            Value::Null => self.0.push(TAG_NULL),
            Value::Bool(false) => self.0.push(TAG_FALSE),
            Value::Bool(true) => self.0.push(TAG_TRUE),
            Value::Number(n) => self.number(*n),
            Value::String(s) => self.string(s),
            Value::Date(ms) => self.f64(TAG_DATE, *ms),
            Value::Binary(b) => self.bytes(TAG_BINARY, b),
            Value::Array(items) => {
                self.varint_tagged(TAG_ARRAY, items.len());
                for item in items {
                    self.value(item);
                }
            }
            Value::Object(map) => {
                self.varint_tagged(TAG_OBJECT, map.len());
                for (name, item) in map {
                    self.string(name);
                    self.value(item);
                }
            }
        }
    }
}

/// The engine's value of a value written by `lib/wire.js` (tags [`TAG_UNDEFINED`] to
/// [`TAG_OBJECT`]).
///
/// # Errors
/// `DataError` when arrays and objects nest deeper than the engine stores (the message the
/// engine's own check gives); `UnknownError` for bytes that are not such a value.
pub fn read_value(bytes: &[u8]) -> napi::Result<Value> {
    let mut r = Reader { bytes, at: 0 };
    let value = r.value(0)?;
    r.end()?;
    Ok(value)
}

/// The key range `lib/IDBKeyRange.js` wrote (see the module's documentation).
///
/// # Errors
/// `DataError` for a bound that is not a valid key or bounds the spec refuses (the lower
/// above the upper, or equal with one open); `UnknownError` for bytes that are not such a
/// range.
pub fn read_range(bytes: &[u8]) -> napi::Result<KeyRange> {
    let mut r = Reader { bytes, at: 0 };
    let flags = r.byte()?;
    let lower = if flags & RANGE_LOWER != 0 {
        Some(r.key(0)?)
    } else {
        None
    };
    let upper = if flags & RANGE_UPPER != 0 {
        Some(r.key(0)?)
    } else {
        None
    };
    r.end()?;
    KeyRange::from_bounds(
        lower,
        upper,
        flags & RANGE_LOWER_OPEN != 0,
        flags & RANGE_UPPER_OPEN != 0,
    )
    .map_err(engine_error)
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn malformed(&self) -> napi::Error {
        named_error(
            "UnknownError",
            format!("the value's bytes are malformed at byte {}", self.at),
        )
    }

    fn end(&self) -> napi::Result<()> {
        if self.at == self.bytes.len() {
            Ok(())
        } else {
            Err(self.malformed())
        }
    }

    fn byte(&mut self) -> napi::Result<u8> {
        let b = *self.bytes.get(self.at).ok_or_else(|| self.malformed())?;
        self.at += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize) -> napi::Result<&[u8]> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| self.malformed())?;
        let out = &self.bytes[self.at..end];
        self.at = end;
        Ok(out)
    }

    fn varint(&mut self) -> napi::Result<usize> {
        let mut n = 0usize;
        for shift in (0..usize::BITS).step_by(7) {
            let b = self.byte()?;
            n |= usize::from(b & 0x7F) << shift;
            if b < 0x80 {
                return Ok(n);
            }
        }
        Err(self.malformed())
    }

    /// A count of members or bytes that follow: each takes at least one byte, so a count
    /// beyond the bytes left is malformed (and never reserves more than the input holds).
    fn count(&mut self) -> napi::Result<usize> {
        let n = self.varint()?;
        if n > self.bytes.len() - self.at {
            return Err(self.malformed());
        }
        Ok(n)
    }

    fn binary(&mut self) -> napi::Result<Vec<u8>> {
        let len = self.count()?;
        Ok(self.take(len)?.to_vec())
    }

    fn f64(&mut self) -> napi::Result<f64> {
        let bytes = self.take(8)?;
        Ok(f64::from_le_bytes(bytes.try_into().expect("8 bytes")))
    }

    fn string(&mut self, tag: u8) -> napi::Result<Utf16String> {
        let len = self.varint()?;
        match tag {
            TAG_ASCII => Utf16String::from_ascii(self.take(len)?).ok_or_else(|| self.malformed()),
            TAG_UTF16 => {
                let bytes = self.take(len.checked_mul(2).ok_or_else(|| self.malformed())?)?;
                Ok(bytes
                    .chunks_exact(2)
                    .map(|u| u16::from_le_bytes([u[0], u[1]]))
                    .collect())
            }
            _ => Err(self.malformed()),
        }
    }

    fn int(&mut self) -> napi::Result<f64> {
        let z = u32::try_from(self.varint()?).map_err(|_| self.malformed())?;
        Ok(f64::from((z >> 1) as i32 ^ -((z & 1) as i32)))
    }

    fn key(&mut self, depth: usize) -> napi::Result<Key> {
        let tag = self.byte()?;
        Ok(match tag {
            TAG_INT => Key::Number(self.int()?),
            TAG_NUMBER => Key::number(self.f64()?).map_err(engine_error)?,
            TAG_DATE => Key::date(self.f64()?).map_err(engine_error)?,
            TAG_ASCII | TAG_UTF16 => Key::String(self.string(tag)?),
            TAG_BINARY => Key::Binary(self.binary()?),
            TAG_ARRAY => {
                if depth + 1 >= MAX_KEY_DEPTH {
                    return Err(named_error("DataError", "the value is not a valid key"));
                }
                let len = self.count()?;
                let mut keys = Vec::with_capacity(len);
                for _ in 0..len {
                    keys.push(self.key(depth + 1)?);
                }
                Key::Array(keys)
            }
            _ => return Err(self.malformed()),
        })
    }

    fn value(&mut self, depth: usize) -> napi::Result<Value> {
        let tag = self.byte()?;
        Ok(match tag {
            TAG_UNDEFINED => Value::Undefined,
            TAG_NULL => Value::Null,
            TAG_FALSE => Value::Bool(false),
            TAG_TRUE => Value::Bool(true),
            TAG_NUMBER => Value::Number(self.f64()?),
            TAG_INT => Value::Number(self.int()?),
            TAG_ASCII | TAG_UTF16 => Value::String(self.string(tag)?),
            TAG_DATE => Value::Date(self.f64()?),
            TAG_BINARY => Value::Binary(self.binary()?),
            TAG_ARRAY | TAG_OBJECT => {
                if depth + 1 > MAX_VALUE_DEPTH - 1 {
                    return Err(named_error(
                        "DataError",
                        format!(
                            "the value nests arrays and objects deeper than {} levels",
                            MAX_VALUE_DEPTH - 1
                        ),
                    ));
                }
                let len = self.count()?;
                if tag == TAG_ARRAY {
                    let mut items = Vec::with_capacity(len);
                    for _ in 0..len {
                        items.push(self.value(depth + 1)?);
                    }
                    Value::Array(items)
                } else {
                    let mut map = Object::with_capacity(len);
                    for _ in 0..len {
                        let name_tag = self.byte()?;
                        let name = self.string(name_tag)?;
                        let item = self.value(depth + 1)?;
                        map.insert(name, item);
                    }
                    Value::Object(map)
                }
            }
            _ => return Err(self.malformed()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The spec error name a failure carries (`named_error` puts it first).
    fn error_name(e: napi::Error) -> String {
        e.reason.split(':').next().unwrap_or_default().to_string()
    }

    /// `{"a": 1, "é": [true, null, -0.5]}` as `lib/wire.js` writes it.
    fn object_bytes() -> Vec<u8> {
        let mut b = vec![TAG_OBJECT, 2, TAG_ASCII, 1, b'a', TAG_INT, 2];
        b.extend([
            TAG_UTF16, 1, 0xE9, 0x00, TAG_ARRAY, 3, TAG_TRUE, TAG_NULL, TAG_NUMBER,
        ]);
        b.extend((-0.5f64).to_le_bytes());
        b
    }

    #[test]
    fn a_value_reads_back_exactly() {
        let mut want = Object::default();
        want.insert("a".into(), Value::Number(1.0));
        want.insert(
            "é".into(),
            Value::Array(vec![Value::Bool(true), Value::Null, Value::Number(-0.5)]),
        );
        assert_eq!(read_value(&object_bytes()).unwrap(), Value::Object(want));
    }

    #[test]
    fn cut_short_or_padded_bytes_are_an_unknown_error() {
        let bytes = object_bytes();
        for end in 0..bytes.len() {
            let e = read_value(&bytes[..end]).unwrap_err();
            assert_eq!(error_name(e), "UnknownError", "cut at {end}");
        }
        let mut padded = bytes.clone();
        padded.push(TAG_NULL);
        assert_eq!(error_name(read_value(&padded).unwrap_err()), "UnknownError");
        // A count beyond the bytes left, an unknown tag, a property name that is not a string,
        // an ASCII string with a byte that is not ASCII.
        for bad in [
            vec![TAG_ARRAY, 0xFF, 0xFF, 0xFF, 0x7F],
            vec![TAG_CLONE, 0],
            vec![TAG_OBJECT, 1, TAG_INT, 2, TAG_NULL],
            vec![TAG_ASCII, 2, b'a', 0xE9],
        ] {
            assert_eq!(error_name(read_value(&bad).unwrap_err()), "UnknownError");
        }
    }

    #[test]
    fn nesting_deeper_than_the_engine_stores_is_a_data_error() {
        let levels = MAX_VALUE_DEPTH - 1;
        let mut ok = [TAG_ARRAY, 1].repeat(levels);
        ok.push(TAG_NULL);
        assert!(read_value(&ok).is_ok());
        let mut deep = [TAG_ARRAY, 1].repeat(levels + 1);
        deep.push(TAG_NULL);
        assert_eq!(error_name(read_value(&deep).unwrap_err()), "DataError");
    }

    /// Values of every kind the engine stores, with lone surrogates, non-ASCII names, a
    /// property named [`CLONE_FIELD`] inside a value, and a value stored with its
    /// serialization.
    fn every_kind() -> [Value; 4] {
        let lone = Utf16String::from_units(vec![0x61, 0xDC00]);
        let mut nested = Object::default();
        nested.insert("é".into(), Value::String("ü".into()));
        nested.insert(lone.clone(), Value::String(lone.clone()));
        nested.insert(CLONE_FIELD.into(), Value::Null);
        let mut city = Object::default();
        city.insert("name".into(), Value::String("Zürich".into()));
        city.insert("pop".into(), Value::Number(421_878.0));
        city.insert("lat".into(), Value::Number(47.37));
        city.insert("neg".into(), Value::Number(-0.0));
        city.insert("at".into(), Value::Date(1.5e12));
        city.insert("raw".into(), Value::Binary(vec![0, 255]));
        city.insert(
            "list".into(),
            Value::Array(vec![
                Value::Undefined,
                Value::Null,
                Value::Bool(true),
                Value::Bool(false),
                Value::Number(-7.0),
                Value::Number(f64::from(i32::MAX) + 1.0),
                Value::Object(nested),
            ]),
        );
        // A value stored with its serialization: its projection and the serialization's bytes.
        let mut serialized = Object::default();
        serialized.insert("id".into(), Value::Number(3.0));
        serialized.insert("ü".into(), Value::String(lone.clone()));
        serialized.insert(lone.clone(), Value::Array(vec![Value::Number(-0.0)]));
        serialized.insert(CLONE_FIELD.into(), Value::Binary(vec![0xFF, 0x0F]));
        [
            Value::Object(city),
            Value::String(lone),
            Value::Object(serialized),
            Value::Array(Vec::new()),
        ]
    }

    /// A temporary database whose object store "s" (out-of-line keys) holds [`every_kind`]
    /// under keys 0, 1, …; the factory owns its directory.
    fn every_kind_stored() -> (indexa::Factory, indexa::Database) {
        let factory = indexa::Factory::temporary().unwrap();
        let db = factory
            .open("values", Some(1), |tx, _, _| {
                tx.create_object_store("s", None, false)?;
                Ok(())
            })
            .unwrap();
        let tx = db
            .transaction(&["s"], indexa::TransactionMode::ReadWrite)
            .unwrap();
        let store = tx.object_store("s").unwrap();
        for (i, v) in every_kind().into_iter().enumerate() {
            store.add(v, Some(Key::Number(i as f64))).unwrap();
        }
        tx.commit().unwrap();
        (factory, db)
    }

    #[test]
    fn cursor_rows_read_from_the_stored_bytes_are_written_as_from_the_engine_value() {
        use indexa::{CursorDirection, TransactionMode};
        let values = every_kind();
        let (_factory, db) = every_kind_stored();
        let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
        let store = tx.object_store("s").unwrap();
        let mut cursor = store.open_cursor(None, CursorDirection::Next).unwrap();
        for (i, v) in values.iter().enumerate() {
            let mut got = Vec::new();
            assert!(row(&mut got, &cursor, None).unwrap());
            let mut want = Vec::new();
            let mut w = Writer(&mut want);
            w.key(&Key::Number(i as f64));
            w.key(&Key::Number(i as f64));
            w.stored_value(v, None);
            assert_eq!(got, want, "record {i}");
            cursor.continue_key(&tx, None).unwrap();
        }
        let mut out = vec![1];
        assert!(!row(&mut out, &cursor, None).unwrap());
        assert_eq!(out, [1]);
        let keys = store.open_key_cursor(None, CursorDirection::Next).unwrap();
        assert!(row(&mut out, &keys, None).unwrap());
        assert_eq!(out, [1, TAG_INT, 0, TAG_INT, 0, TAG_UNDEFINED]);
    }

    #[test]
    fn gets_read_from_the_stored_bytes_are_written_as_from_the_engine_value() {
        use indexa::TransactionMode;
        let values = every_kind();
        let (_factory, db) = every_kind_stored();
        let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
        let store = tx.object_store("s").unwrap();
        let kp = KeyPath::parse("id").unwrap();
        for inject in [None, Some(&kp)] {
            for (i, v) in values.iter().enumerate() {
                let got = get_reply(|t| store.get_with(Key::Number(i as f64), t), inject);
                let mut want = vec![KIND_VALUE, 1];
                Writer(&mut want).stored_value(v, inject);
                assert_eq!(got.unwrap(), want, "record {i}");
            }
        }
        let got = get_reply(|t| store.get_with(Key::Number(9.0), t), None);
        assert_eq!(got.unwrap(), [KIND_VALUE, 0]);
    }

    #[test]
    fn records_read_from_the_stored_bytes_are_written_as_from_the_engine_records() {
        use indexa::{Query, TransactionMode};
        let (_factory, db) = every_kind_stored();
        let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
        let store = tx.object_store("s").unwrap();
        let kp = KeyPath::parse("id").unwrap();
        for inject in [None, Some(&kp)] {
            for query in [
                Query::all(),
                Query::from(Key::Number(1.0)),
                Query::from(Key::Number(9.0)),
            ] {
                // As written from the engine's records.
                let records = store.get_all_records(query.clone()).unwrap();
                let mut want = Vec::new();
                let mut w = Writer::new(&mut want, KIND_RECORDS, records.len());
                for r in &records {
                    w.key(&r.key);
                    w.key(&r.primary_key);
                    w.stored_value(&r.value, inject);
                }
                let got = records_reply(|t| store.get_all_records_with(query, t), inject);
                assert_eq!(got.unwrap(), (want, records.len()));
            }
        }
    }

    #[test]
    fn get_alls_read_from_the_stored_bytes_are_written_as_from_the_engine_values() {
        use indexa::{Query, TransactionMode};
        // As written from the engine's values.
        let values_of = |vs: &[Value], inject: Option<&KeyPath>| {
            let mut out = Vec::new();
            let mut w = Writer::new(&mut out, KIND_VALUES, vs.len());
            for v in vs {
                w.stored_value(v, inject);
            }
            out
        };
        let all = every_kind();
        let (_factory, db) = every_kind_stored();
        let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
        let store = tx.object_store("s").unwrap();
        for i in 0..all.len() {
            let one = Query::from(Key::Number(i as f64));
            let got = values_reply(|t| store.get_all_with(one, t), None);
            assert_eq!(
                got.unwrap(),
                (values_of(&all[i..=i], None), 1),
                "record {i}"
            );
        }
        // Values stored with their serialization among others, with and without a key path
        // to inject a generated key by.
        let kp = KeyPath::parse("id").unwrap();
        for inject in [None, Some(&kp)] {
            let got = values_reply(|t| store.get_all_with(Query::all(), t), inject);
            assert_eq!(got.unwrap(), (values_of(&all, inject), all.len()));
        }
        let none = Query::from(Key::Number(9.0));
        let got = values_reply(|t| store.get_all_with(none, t), None);
        assert_eq!(got.unwrap(), (vec![KIND_VALUES, 0], 0));
    }

    /// The bytes of one reply: its op id, the length of the rest, then the rest.
    fn reply_bytes(id: u32, result: Result<Payload, indexa::Error>) -> Vec<u8> {
        let mut out = Vec::new();
        reply(&mut out, Reply { id, result });
        out
    }

    /// `id`, the length of `rest` and `rest`, as [`reply`] lays them out.
    fn framed(id: u32, rest: &[u8]) -> Vec<u8> {
        let mut b = id.to_le_bytes().to_vec();
        b.extend((rest.len() as u32).to_le_bytes());
        b.extend(rest);
        b
    }

    #[test]
    fn replies_without_records_are_framed_exactly() {
        assert_eq!(
            reply_bytes(7, Ok(Payload::None)),
            framed(7, &[KIND_PLAIN, TAG_UNDEFINED])
        );
        assert_eq!(
            reply_bytes(8, Ok(Payload::MaybeKey(None))),
            framed(8, &[KIND_PLAIN, TAG_UNDEFINED])
        );
        assert_eq!(
            reply_bytes(9, Ok(Payload::Count(3))),
            framed(9, &[KIND_PLAIN, TAG_INT, 6])
        );
        let key = Key::Array(vec![Key::Number(-1.0), Key::string("k")]);
        assert_eq!(
            reply_bytes(10, Ok(Payload::Key(key.clone()))),
            framed(
                10,
                &[KIND_PLAIN, TAG_ARRAY, 2, TAG_INT, 1, TAG_ASCII, 1, b'k']
            )
        );
        assert_eq!(
            reply_bytes(11, Ok(Payload::Keys(vec![Key::Date(0.0)]))),
            framed(11, &[&[KIND_VALUES, 1, TAG_DATE][..], &[0; 8]].concat())
        );
        let error = indexa::Error::Constraint("é".into());
        assert_eq!(
            reply_bytes(12, Err(error)),
            framed(
                12,
                &[
                    &[KIND_ERROR, TAG_ASCII, 15][..],
                    b"ConstraintError",
                    &[TAG_UTF16, 1, 0xE9, 0x00],
                ]
                .concat()
            )
        );
    }

    #[test]
    fn an_opened_database_is_described_as_an_object() {
        let stores = vec![StoreInfo {
            name: "s".into(),
            key_path: Some(KeyPath::compound(&["a", "b"]).unwrap()),
            auto_increment: true,
            indexes: Vec::new(),
        }];
        let bytes = reply_bytes(
            1,
            Ok(Payload::Opened {
                old_version: None,
                version: 2,
                stores,
            }),
        );
        let mut want = vec![KIND_PLAIN, TAG_OBJECT, 3];
        for part in [
            &[TAG_ASCII, 10][..],
            b"oldVersion",
            &[TAG_NULL, TAG_ASCII, 7],
            b"version",
            &[TAG_INT, 4, TAG_ASCII, 6],
            b"stores",
            &[TAG_ARRAY, 1, TAG_OBJECT, 4, TAG_ASCII, 4],
            b"name",
            &[TAG_ASCII, 1, b's', TAG_ASCII, 7],
            b"keyPath",
            &[
                TAG_ARRAY, 2, TAG_ASCII, 1, b'a', TAG_ASCII, 1, b'b', TAG_ASCII, 13,
            ],
            b"autoIncrement",
            &[TAG_TRUE, TAG_ASCII, 7],
            b"indexes",
            &[TAG_ARRAY, 0],
        ] {
            want.extend(part);
        }
        assert_eq!(bytes, framed(1, &want));
    }

    #[test]
    fn a_range_reads_back_with_its_bounds_and_flags() {
        let bytes = [
            RANGE_LOWER | RANGE_UPPER | RANGE_UPPER_OPEN,
            TAG_INT,
            6, // 3
            TAG_ARRAY,
            1,
            TAG_ASCII,
            1,
            b'x',
        ];
        let want = KeyRange::from_bounds(
            Some(Key::Number(3.0)),
            Some(Key::Array(vec![Key::string("x")])),
            false,
            true,
        )
        .unwrap();
        assert_eq!(read_range(&bytes).unwrap(), want);
    }

    #[test]
    fn a_range_the_spec_refuses_or_a_bound_that_is_no_key_is_a_data_error() {
        // The lower bound above the upper.
        let above = [RANGE_LOWER | RANGE_UPPER, TAG_INT, 4, TAG_INT, 2];
        assert_eq!(error_name(read_range(&above).unwrap_err()), "DataError");
        // No bound at all (the package sends no range instead).
        assert_eq!(error_name(read_range(&[0]).unwrap_err()), "DataError");
        let mut nan = vec![RANGE_LOWER, TAG_NUMBER];
        nan.extend(f64::NAN.to_le_bytes());
        assert_eq!(error_name(read_range(&nan).unwrap_err()), "DataError");
        assert_eq!(
            error_name(read_range(&[RANGE_LOWER, TAG_NULL]).unwrap_err()),
            "UnknownError"
        );
    }
}
