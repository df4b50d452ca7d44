//! The binary form of a [`Value`]: compact, exact, and safe to decode from untrusted bytes.
//!
//! This is an on-disk format. An encoded value is one format-version byte
//! ([`VALUE_FORMAT_VERSION`], currently 1) followed by one encoded value. Each value starts with
//! a tag byte:
//!
//! | Tag    | Kind       | Payload after the tag                                                   |
//! |--------|------------|-------------------------------------------------------------------------|
//! | `0x00` | undefined  | none                                                                    |
//! | `0x01` | null       | none                                                                    |
//! | `0x02` | false      | none                                                                    |
//! | `0x03` | true       | none                                                                    |
//! | `0x04` | number     | 8 bytes: the `f64` bits, little-endian (NaN payloads and `-0` kept)     |
//! | `0x05` | small int  | zigzag varint of an `i32`; a Number that is an integer in `i32` range   |
//! | `0x06` | string     | varint byte length, then the code units as WTF-8                        |
//! | `0x07` | date       | 8 bytes: the time value's `f64` bits, little-endian                     |
//! | `0x08` | binary     | varint byte length, then the bytes                                      |
//! | `0x09` | array      | varint element count, then each element                                 |
//! | `0x0A` | object     | varint property count, then per property: name (varint byte length and  |
//! |        |            | WTF-8, as for strings) and value, in insertion order; names are unique  |
//! | `0x0B` | *reserved* | Map                                                                     |
//! | `0x0C` | *reserved* | Set                                                                     |
//! | `0x0D` | *reserved* | typed array / DataView                                                  |
//! | `0x0E` | *reserved* | BigInt                                                                  |
//! | `0x0F`–`0xFF` | *reserved* | future kinds                                                     |
//!
//! Varints are unsigned LEB128 (7 bits per byte, low group first, high bit set on every byte but
//! the last), at most 10 bytes, minimal (no trailing zero groups). Zigzag maps `0, -1, 1, -2, …`
//! to `0, 1, 2, 3, …`. The encoder writes a Number as a small int when it is an integer in
//! `i32` range and not `-0`; the decoder also accepts any Number in the 8-byte form.
//!
//! WTF-8 is UTF-8 generalised to lone surrogates: a surrogate pair is written as the 4-byte
//! UTF-8 of its code point, a lone surrogate as the 3-byte sequence UTF-8 would use for its
//! value. A lead-surrogate sequence directly followed by a trail-surrogate sequence is not valid
//! WTF-8 (it must be written as the pair's code point), so every string has exactly one form.
//!
//! Decoding rejects (with [`Error::Unknown`]) an unknown version or tag, truncated input,
//! invalid WTF-8, a malformed varint, duplicate property names, nesting deeper than
//! [`MAX_VALUE_DEPTH`] and trailing bytes. It never panics and never allocates more than the
//! remaining input can fill.

use crate::error::{Error, Result};
use crate::object::Object;
use crate::utf16::Utf16String;
use crate::value::Value;

/// The format version byte that starts every encoded value; a decoder refuses other versions.
pub const VALUE_FORMAT_VERSION: u8 = 1;

/// The deepest nesting of arrays and objects [`decode_value`] accepts; a value at top level is
/// at depth 0, its elements at depth 1, and so on.
pub const MAX_VALUE_DEPTH: usize = 512;

pub(crate) const TAG_UNDEFINED: u8 = 0x00;
pub(crate) const TAG_NULL: u8 = 0x01;
pub(crate) const TAG_FALSE: u8 = 0x02;
pub(crate) const TAG_TRUE: u8 = 0x03;
pub(crate) const TAG_NUMBER: u8 = 0x04;
pub(crate) const TAG_SMALL_INT: u8 = 0x05;
pub(crate) const TAG_STRING: u8 = 0x06;
pub(crate) const TAG_DATE: u8 = 0x07;
pub(crate) const TAG_BINARY: u8 = 0x08;
pub(crate) const TAG_ARRAY: u8 = 0x09;
pub(crate) const TAG_OBJECT: u8 = 0x0A;

/// Encodes `value` in the binary value format (see the module docs for the layout), starting
/// with the format version byte.
///
/// Encoding cannot fail. Source: the value kinds of the HTML structured clone algorithm
/// (<https://html.spec.whatwg.org/multipage/structured-data.html>) that [`Value`] models.
pub fn encode_value(value: &Value) -> Vec<u8> {
    // Enough for a small record without regrowing.
    let mut out = Vec::with_capacity(128);
    encode_value_into(value, &mut out);
    out
}

/// Appends the binary form of `value` (version byte first) to `out`; see [`encode_value`].
pub fn encode_value_into(value: &Value, out: &mut Vec<u8>) {
    out.push(VALUE_FORMAT_VERSION);
    encode_inner(value, out);
}

/// Decodes a value written by [`encode_value`]: `bytes` must hold exactly one version byte and
/// one value.
///
/// # Errors
/// [`Error::Unknown`] with a message starting `corrupt value:` (and naming the byte offset) when
/// the bytes are not a valid encoding: an unsupported version, an unknown or reserved tag,
/// truncation, invalid WTF-8, a malformed varint, a duplicate property name, nesting deeper than
/// [`MAX_VALUE_DEPTH`], or bytes left over after the value.
///
/// Source: the layout in the module docs.
pub fn decode_value(bytes: &[u8]) -> Result<Value> {
    let mut reader = Reader::start(bytes)?;
    let value = reader.value(0)?;
    reader.finish()?;
    Ok(value)
}

/// Reads a value written by [`encode_value`] and reports what it holds to `visitor`, in
/// order, without building a [`Value`]: for a reader that turns the stored bytes straight into
/// another form. `bytes` are checked as they are read, exactly as [`decode_value`] checks them.
///
/// # Errors
/// As [`decode_value`]; the visitor may have been given the part of the value read before the
/// fault.
///
/// Source: the layout in the module docs.
pub fn visit_value(bytes: &[u8], visitor: &mut impl ValueVisitor) -> Result<()> {
    let mut reader = Reader::start(bytes)?;
    reader.walk(0, visitor)?;
    reader.finish()
}

/// Checks that `bytes` are exactly what [`decode_value`] accepts, without building the value.
///
/// # Errors
/// As [`decode_value`].
pub(crate) fn check_value(bytes: &[u8]) -> Result<()> {
    visit_value(bytes, &mut Check)
}

/// A string or property name of a stored value: as UTF-8 when it is valid UTF-8 (the usual
/// case), else as its UTF-16 code units (it holds a lone surrogate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoredText<'a> {
    /// The text, with no lone surrogate.
    Utf8(&'a str),
    /// The code units of a text that holds a lone surrogate.
    Units(&'a Utf16String),
}

/// What [`visit_value`] (and [`crate::Cursor::visit_value`]) meet in a stored value, depth
/// first, in the order stored: a scalar is one call; an array is [`ValueVisitor::array`]
/// followed by its elements; an object is [`ValueVisitor::object`] followed, per property in
/// insertion order, by [`ValueVisitor::name`] and the property's value. The value kinds are
/// [`Value`]'s.
pub trait ValueVisitor {
    /// `undefined`.
    fn undefined(&mut self);
    /// `null`.
    fn null(&mut self);
    /// A Boolean.
    fn boolean(&mut self, b: bool);
    /// A Number (any `f64`: NaN payloads and `-0` as stored).
    fn number(&mut self, n: f64);
    /// A Date, by its time value in milliseconds since the epoch (NaN for an invalid date).
    fn date(&mut self, time: f64);
    /// A String.
    fn string(&mut self, text: StoredText<'_>);
    /// An ArrayBuffer's bytes.
    fn binary(&mut self, bytes: &[u8]);
    /// An Array of `len` elements, which the next `len` values reported are.
    fn array(&mut self, len: usize);
    /// An Object of `len` properties, each reported next as its name and then its value.
    fn object(&mut self, len: usize);
    /// The name of an object's property, whose value is reported next.
    fn name(&mut self, name: StoredText<'_>);
}

/// What `get_all_records_with` on [`crate::ObjectStore`] and [`crate::Index`] report: per
/// record, its keys through [`RecordVisitor::record`], then its value as a [`ValueVisitor`]
/// meets it.
pub trait RecordVisitor: ValueVisitor {
    /// A record's key (for an index's records, the index key) and its primary key; the
    /// record's value is reported next.
    fn record(&mut self, key: &crate::Key, primary_key: &crate::Key);
}

/// The visitor of [`check_value`] and [`Reader::skip_value`]: reads, reports nothing.
struct Check;

impl ValueVisitor for Check {
    fn undefined(&mut self) {}
    fn null(&mut self) {}
    fn boolean(&mut self, _: bool) {}
    fn number(&mut self, _: f64) {}
    fn date(&mut self, _: f64) {}
    fn string(&mut self, _: StoredText<'_>) {}
    fn binary(&mut self, _: &[u8]) {}
    fn array(&mut self, _: usize) {}
    fn object(&mut self, _: usize) {}
    fn name(&mut self, _: StoredText<'_>) {}
}

#[cold]
pub(crate) fn corrupt(offset: usize, what: &str) -> Error {
    Error::Unknown(format!("corrupt value: {what} at byte {offset}"))
}

/// The `i32` a Number is written as in the small-int form, if it has one.
fn small_int(n: f64) -> Option<i32> {
    if n.fract() != 0.0 || n < f64::from(i32::MIN) || n > f64::from(i32::MAX) {
        return None;
    }
    if n == 0.0 && n.is_sign_negative() {
        return None;
    }
    // In range and integral (NaN and the infinities failed the checks above), so exact.
    Some(n as i32)
}

fn encode_inner(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Undefined => out.push(TAG_UNDEFINED),
        Value::Null => out.push(TAG_NULL),
        Value::Bool(false) => out.push(TAG_FALSE),
        Value::Bool(true) => out.push(TAG_TRUE),
        Value::Number(n) => put_number(out, *n),
        Value::String(s) => {
            out.push(TAG_STRING);
            put_wtf8(out, s.units());
        }
        Value::Date(ms) => {
            out.push(TAG_DATE);
            out.extend_from_slice(&ms.to_bits().to_le_bytes());
        }
        Value::Binary(bytes) => {
            out.push(TAG_BINARY);
            put_varint(out, bytes.len() as u64);
            out.extend_from_slice(bytes);
        }
        Value::Array(items) => {
            out.push(TAG_ARRAY);
            put_varint(out, items.len() as u64);
            for item in items {
                encode_inner(item, out);
            }
        }
        Value::Object(map) => {
            out.push(TAG_OBJECT);
            put_varint(out, map.len() as u64);
            for (name, item) in map {
                put_wtf8(out, name.units());
                encode_inner(item, out);
            }
        }
    }
}

/// Writes a Number: the small-int form when it has one, else the 8-byte form.
pub(crate) fn put_number(out: &mut Vec<u8>, n: f64) {
    match small_int(n) {
        Some(i) => {
            out.push(TAG_SMALL_INT);
            // Zigzag: the sign goes to the low bit.
            let zigzag = ((i << 1) ^ (i >> 31)) as u32;
            put_varint(out, u64::from(zigzag));
        }
        None => {
            out.push(TAG_NUMBER);
            out.extend_from_slice(&n.to_bits().to_le_bytes());
        }
    }
}

pub(crate) fn put_varint(out: &mut Vec<u8>, mut n: u64) {
    while n >= 0x80 {
        out.push((n as u8 & 0x7F) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

/// Writes the WTF-8 byte length as a varint, then the WTF-8 bytes of `units`.
pub(crate) fn put_wtf8(out: &mut Vec<u8>, units: &[u16]) {
    if units.iter().all(|&u| u < 0x80) {
        put_varint(out, units.len() as u64);
        out.extend(units.iter().map(|&u| u as u8));
        return;
    }
    put_varint(out, wtf8_len(units) as u64);
    crate::utf16::push_wtf8(out, units);
}

fn wtf8_len(units: &[u16]) -> usize {
    char::decode_utf16(units.iter().copied())
        .map(|c| match c {
            Ok(c) => c.len_utf8(),
            Err(_) => 3,
        })
        .sum()
}

/// The WTF-8 bytes of a stored string that holds a lone surrogate, checked by
/// [`Reader::text`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct LoneSurrogates<'a>(&'a [u8]);

impl LoneSurrogates<'_> {
    /// The string's code units.
    pub(crate) fn units(self) -> Utf16String {
        let units = wtf8_to_units(self.0);
        debug_assert!(units.is_some(), "checked by Reader::text");
        units.unwrap_or_default()
    }
}

/// Decodes WTF-8 into UTF-16 code units; `None` if `bytes` is not valid WTF-8.
///
/// Inlined: most strings are short and ASCII, and returning each through two calls cost a
/// generic read more than the widening itself (see BENCHMARKS.md, "Strings widened in line").
#[inline]
pub(crate) fn wtf8_to_units(bytes: &[u8]) -> Option<Utf16String> {
    if let Some(ascii) = Utf16String::from_ascii(bytes) {
        return Some(ascii);
    }
    wtf8_to_units_beyond_ascii(bytes)
}

/// [`wtf8_to_units`] for bytes that are not all ASCII.
#[inline(never)]
fn wtf8_to_units_beyond_ascii(bytes: &[u8]) -> Option<Utf16String> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Some(s.encode_utf16().collect());
    }
    let mut units = Vec::with_capacity(bytes.len());
    wtf8_each_unit(bytes, |u| units.push(u)).then(|| Utf16String::from_units(units))
}

/// Whether `bytes` are WTF-8, checked without keeping the code units.
fn is_wtf8(bytes: &[u8]) -> bool {
    wtf8_each_unit(bytes, |_| {})
}

/// Hands each UTF-16 code unit of WTF-8 `bytes` to `unit`, in order; false (having handed on
/// those before) at the first byte that is not WTF-8.
fn wtf8_each_unit(bytes: &[u8], mut unit: impl FnMut(u16)) -> bool {
    let mut i = 0;
    let mut prev_lead_end = usize::MAX;
    while i < bytes.len() {
        let b0 = bytes[i];
        let cont = |k: usize| bytes.get(i + k).copied().filter(|b| b & 0xC0 == 0x80);
        if b0 < 0x80 {
            unit(u16::from(b0));
            i += 1;
        } else if (0xC2..=0xDF).contains(&b0) {
            let Some(b1) = cont(1) else { return false };
            unit((u16::from(b0 & 0x1F) << 6) | u16::from(b1 & 0x3F));
            i += 2;
        } else if (0xE0..=0xEF).contains(&b0) {
            let (Some(b1), Some(b2)) = (cont(1), cont(2)) else {
                return false;
            };
            let u =
                (u16::from(b0 & 0x0F) << 12) | (u16::from(b1 & 0x3F) << 6) | u16::from(b2 & 0x3F);
            if u < 0x800 {
                return false; // overlong
            }
            if (0xDC00..=0xDFFF).contains(&u) && prev_lead_end == i {
                return false; // a pair must be written as its code point
            }
            unit(u);
            i += 3;
            if (0xD800..=0xDBFF).contains(&u) {
                prev_lead_end = i;
            }
        } else if (0xF0..=0xF4).contains(&b0) {
            let (Some(b1), Some(b2), Some(b3)) = (cont(1), cont(2), cont(3)) else {
                return false;
            };
            let cp = (u32::from(b0 & 0x07) << 18)
                | (u32::from(b1 & 0x3F) << 12)
                | (u32::from(b2 & 0x3F) << 6)
                | u32::from(b3 & 0x3F);
            let Some(c) = char::from_u32(cp).filter(|_| cp >= 0x1_0000) else {
                return false;
            };
            let mut buf = [0u16; 2];
            c.encode_utf16(&mut buf).iter().for_each(|&u| unit(u));
            i += 4;
        } else {
            return false;
        }
    }
    true
}

/// A position in an encoded value; shared with the serde deserializer over stored bytes
/// (`value_codec_serde.rs`).
pub(crate) struct Reader<'a> {
    bytes: &'a [u8],
    pub(crate) pos: usize,
}

impl<'a> Reader<'a> {
    /// A reader after the version byte of `bytes`.
    pub(crate) fn start(bytes: &'a [u8]) -> Result<Reader<'a>> {
        let mut reader = Reader { bytes, pos: 0 };
        let version = reader.byte()?;
        if version != VALUE_FORMAT_VERSION {
            return Err(corrupt(0, &format!("unsupported format version {version}")));
        }
        Ok(reader)
    }

    /// Checks that the whole input was read.
    pub(crate) fn finish(&self) -> Result<()> {
        if self.pos != self.bytes.len() {
            return Err(corrupt(
                self.pos,
                &format!("{} trailing bytes", self.bytes.len() - self.pos),
            ));
        }
        Ok(())
    }

    /// The bytes read since byte `at`.
    #[inline]
    pub(crate) fn since(&self, at: usize) -> &'a [u8] {
        &self.bytes[at..self.pos]
    }

    /// The next byte, not consumed.
    pub(crate) fn peek(&self) -> Result<u8> {
        self.bytes
            .get(self.pos)
            .copied()
            .ok_or_else(|| corrupt(self.pos, "unexpected end of input"))
    }

    fn remaining(&self) -> usize {
        self.bytes.len() - self.pos
    }

    #[inline]
    pub(crate) fn byte(&mut self) -> Result<u8> {
        let b = *self
            .bytes
            .get(self.pos)
            .ok_or_else(|| corrupt(self.pos, "unexpected end of input"))?;
        self.pos += 1;
        Ok(b)
    }

    #[inline]
    pub(crate) fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        if n > self.remaining() {
            return Err(self.too_long(self.pos, "length", n as u64));
        }
        let slice = &self.bytes[self.pos..self.pos + n];
        self.pos += n;
        Ok(slice)
    }

    pub(crate) fn f64_bits(&mut self) -> Result<f64> {
        let bytes = self.take(8)?;
        let mut buf = [0u8; 8];
        buf.copy_from_slice(bytes);
        Ok(f64::from_bits(u64::from_le_bytes(buf)))
    }

    #[inline]
    pub(crate) fn varint(&mut self) -> Result<u64> {
        // Most varints (lengths, counts, small ints) fit in one byte.
        if let Some(&b) = self.bytes.get(self.pos) {
            if b < 0x80 {
                self.pos += 1;
                return Ok(u64::from(b));
            }
        }
        self.long_varint()
    }

    fn long_varint(&mut self) -> Result<u64> {
        let start = self.pos;
        let mut n: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            let group = u64::from(b & 0x7F);
            if shift == 63 && group > 1 {
                return Err(corrupt(start, "varint overflows 64 bits"));
            }
            n |= group << shift;
            if b & 0x80 == 0 {
                if b == 0 && shift > 0 {
                    return Err(corrupt(start, "non-minimal varint"));
                }
                return Ok(n);
            }
        }
        Err(corrupt(start, "varint longer than 10 bytes"))
    }

    /// A varint used as a length or count, checked against what is left of the input: every
    /// counted item takes at least `min_item_bytes` bytes, and `pending` other items need at
    /// least one byte each.
    #[inline]
    pub(crate) fn count(&mut self, min_item_bytes: usize, pending: usize) -> Result<usize> {
        let start = self.pos;
        let n = self.varint()?;
        let room = self.remaining().saturating_sub(pending) / min_item_bytes;
        match usize::try_from(n) {
            Ok(n) if n <= room => Ok(n),
            _ => Err(self.too_long(start, "count", n)),
        }
    }

    /// The error for a length or count `n`, read at `offset`, that exceeds what is left of the
    /// input.
    #[cold]
    fn too_long(&self, offset: usize, what: &str, n: u64) -> Error {
        corrupt(
            offset,
            &format!("{what} {n} exceeds the {} bytes left", self.remaining()),
        )
    }

    fn wtf8(&mut self) -> Result<Utf16String> {
        let start = self.pos;
        let len = self.count(1, 0)?;
        let bytes = self.take(len)?;
        wtf8_to_units(bytes).ok_or_else(|| corrupt(start, "invalid WTF-8 in a string"))
    }

    /// A string's WTF-8 bytes, checked: `Ok(str)` when they are UTF-8, else the bytes of a
    /// string that holds a lone surrogate. (Small, so handing it on copies no code units.)
    #[inline]
    pub(crate) fn text(&mut self) -> Result<std::result::Result<&'a str, LoneSurrogates<'a>>> {
        let start = self.pos;
        let len = self.count(1, 0)?;
        let bytes = self.take(len)?;
        // Most names and strings are short and ASCII: checked byte by byte, that costs a
        // fraction of the general UTF-8 check.
        if bytes.is_ascii() {
            // SAFETY: ASCII bytes are UTF-8.
            return Ok(Ok(unsafe { std::str::from_utf8_unchecked(bytes) }));
        }
        match std::str::from_utf8(bytes) {
            Ok(s) => Ok(Ok(s)),
            Err(_) if is_wtf8(bytes) => Ok(Err(LoneSurrogates(bytes))),
            Err(_) => Err(corrupt(start, "invalid WTF-8 in a string")),
        }
    }

    /// The value of a small int whose tag was just read.
    pub(crate) fn small_int(&mut self) -> Result<f64> {
        let start = self.pos - 1;
        let z = u32::try_from(self.varint()?)
            .map_err(|_| corrupt(start, "small int out of i32 range"))?;
        Ok(f64::from(((z >> 1) as i32) ^ -((z & 1) as i32)))
    }

    /// The element or property count of an array or object at `depth` whose tag was just
    /// read, refusing nesting past [`MAX_VALUE_DEPTH`]; `pending` other items still need at
    /// least a byte each (see [`Reader::count`]).
    pub(crate) fn container(&mut self, tag: u8, depth: usize, pending: usize) -> Result<usize> {
        if depth >= MAX_VALUE_DEPTH {
            return Err(corrupt(
                self.pos - 1,
                &format!("nesting deeper than {MAX_VALUE_DEPTH}"),
            ));
        }
        // A property takes at least two bytes: an empty name's length and a tag.
        self.count(if tag == TAG_ARRAY { 1 } else { 2 }, pending)
    }

    /// Reads past one value at `depth`, checking it as [`Reader::value`] does (the same input
    /// is accepted and refused) without building it.
    pub(crate) fn skip_value(&mut self, depth: usize) -> Result<()> {
        self.walk(depth, &mut Check)
    }

    /// Reads one value at `depth`, checking it as [`Reader::value`] does (the same input is
    /// accepted and refused), and reports what it holds to `visitor` (see [`ValueVisitor`]);
    /// an explicit stack, no native recursion.
    fn walk(&mut self, depth: usize, visitor: &mut impl ValueVisitor) -> Result<()> {
        // Per open array or object: the members still to read, an object's names so far, and
        // the name of the property being read, with where it starts (checked against the
        // others once its value is read, as `Reader::value` does).
        type Open<'a> = (usize, Option<PropertyNames<'a>>, Option<(&'a [u8], usize)>);
        // Two open levels (a record and one nested object or array) need no allocation: a
        // heap stack cost every record read a large allocation (an `Open` is a few hundred
        // bytes), which also made the allocator consolidate its free lists.
        let mut stack: smallvec::SmallVec<[Open<'a>; 2]> = smallvec::SmallVec::new();
        // The members the open arrays and objects still expect, after the one being read.
        let mut pending: usize = 0;
        loop {
            let start = self.pos;
            match self.byte()? {
                TAG_UNDEFINED => visitor.undefined(),
                TAG_NULL => visitor.null(),
                TAG_FALSE => visitor.boolean(false),
                TAG_TRUE => visitor.boolean(true),
                TAG_NUMBER => visitor.number(self.f64_bits()?),
                TAG_DATE => visitor.date(self.f64_bits()?),
                TAG_SMALL_INT => visitor.number(self.small_int()?),
                TAG_STRING => match self.text()? {
                    Ok(s) => visitor.string(StoredText::Utf8(s)),
                    Err(lone) => visitor.string(StoredText::Units(&lone.units())),
                },
                TAG_BINARY => {
                    let len = self.count(1, 0)?;
                    visitor.binary(self.take(len)?);
                }
                tag @ (TAG_ARRAY | TAG_OBJECT) => {
                    let n = self.container(tag, depth + stack.len(), pending)?;
                    pending += n;
                    if tag == TAG_ARRAY {
                        visitor.array(n);
                    } else {
                        visitor.object(n);
                    }
                    let names = (tag == TAG_OBJECT).then(PropertyNames::default);
                    stack.push((n, names, None));
                }
                other => return Err(corrupt(start, &format!("unknown tag 0x{other:02X}"))),
            }
            loop {
                let Some((left, names, read)) = stack.last_mut() else {
                    return Ok(());
                };
                if let (Some(names), Some((name, at))) = (names.as_mut(), read.take()) {
                    names.insert(name, at)?;
                }
                if *left == 0 {
                    stack.pop();
                    continue;
                }
                *left -= 1;
                pending -= 1;
                if names.is_some() {
                    let at = self.pos;
                    let len = self.count(1, 0)?;
                    let name = self.take(len)?;
                    // UTF-8 (the usual case) is valid WTF-8 and needs no conversion.
                    match std::str::from_utf8(name) {
                        Ok(s) => visitor.name(StoredText::Utf8(s)),
                        Err(_) => {
                            let units = wtf8_to_units(name)
                                .ok_or_else(|| corrupt(at, "invalid WTF-8 in a string"))?;
                            visitor.name(StoredText::Units(&units));
                        }
                    }
                    *read = Some((name, at));
                }
                break;
            }
        }
    }

    /// Reads one value. Arrays and objects are kept on an explicit stack, so nesting costs no
    /// native stack; `pending` counts the items open arrays and objects still expect, each of
    /// which needs at least one more byte, which bounds what the decoder reserves.
    pub(crate) fn value(&mut self, depth: usize) -> Result<Value> {
        // Two open levels (a record and one nested object or array) need no allocation.
        let mut stack: smallvec::SmallVec<[Frame; 2]> = smallvec::SmallVec::new();
        let mut pending: usize = 0;
        loop {
            let start = self.pos;
            let tag = self.byte()?;
            let mut done = match tag {
                TAG_UNDEFINED => Value::Undefined,
                TAG_NULL => Value::Null,
                TAG_FALSE => Value::Bool(false),
                TAG_TRUE => Value::Bool(true),
                TAG_NUMBER => Value::Number(self.f64_bits()?),
                TAG_SMALL_INT => Value::Number(self.small_int()?),
                TAG_STRING => Value::String(self.wtf8()?),
                TAG_DATE => Value::Date(self.f64_bits()?),
                TAG_BINARY => {
                    let len = self.count(1, 0)?;
                    Value::Binary(self.take(len)?.to_vec())
                }
                TAG_ARRAY | TAG_OBJECT => {
                    let n = self.container(tag, depth + stack.len(), pending)?;
                    if n == 0 && tag == TAG_ARRAY {
                        Value::Array(Vec::new())
                    } else if n == 0 {
                        Value::Object(Object::default())
                    } else {
                        pending += n - 1;
                        if tag == TAG_ARRAY {
                            stack.push(Frame::Array {
                                items: Vec::with_capacity(n),
                                left: n - 1,
                            });
                        } else {
                            let name_at = self.pos;
                            stack.push(Frame::Object {
                                map: Object::with_capacity(n),
                                left: n - 1,
                                name: self.wtf8()?,
                                name_at,
                                sketches: 0,
                            });
                        }
                        continue;
                    }
                }
                other => return Err(corrupt(start, &format!("unknown tag 0x{other:02X}"))),
            };
            // Hand the finished value to the enclosing arrays and objects, closing those that
            // are complete.
            loop {
                match stack.last_mut() {
                    None => return Ok(done),
                    Some(Frame::Array { items, left }) => {
                        items.push(done);
                        if *left == 0 {
                            done = Value::Array(std::mem::take(items));
                            stack.pop();
                            continue;
                        }
                        *left -= 1;
                    }
                    Some(Frame::Object {
                        map,
                        left,
                        name,
                        name_at,
                        sketches,
                    }) => {
                        // A name whose sketch no earlier name had is new: appended unchecked.
                        let bit = sketch_bit(name.units());
                        let named = std::mem::take(name);
                        if *sketches & bit == 0 {
                            map.push_distinct(named, done);
                        } else if map.push_unique(named, done).is_err() {
                            return Err(corrupt(*name_at, "duplicate property name"));
                        }
                        *sketches |= bit;
                        if *left == 0 {
                            done = Value::Object(std::mem::take(map));
                            stack.pop();
                            continue;
                        }
                        *left -= 1;
                        *name_at = self.pos;
                        *name = self.wtf8()?;
                    }
                }
                pending -= 1;
                break;
            }
        }
    }
}

/// The property names of an object read so far, to refuse a repeated one: compared in place
/// while few, hashed beyond. While few, a 64-bit mask of their sketches (length, first and
/// last byte) says which names cannot be among them, so a name is compared with the others
/// only when its sketch was seen: a record's names, nearly always distinct, then cost a few
/// instructions each instead of a comparison with every name before.
pub(crate) struct PropertyNames<'a> {
    /// The first [`FEW_NAMES`] names, `few[..count]` in use (a plain array: a `SmallVec`'s
    /// push, with a call per name, cost a typed read about 25 instructions more per name).
    few: [&'a [u8]; FEW_NAMES],
    count: usize,
    sketches: u64,
    many: Option<std::collections::HashSet<&'a [u8], crate::object::PropertyHasher>>,
}

/// How many names an object checks for a repeat by sketch (comparing them on a match),
/// before it hashes them: [`PropertyNames`] when reading, the serde encoder when writing.
pub(crate) const FEW_NAMES: usize = 16;

impl Default for PropertyNames<'_> {
    fn default() -> Self {
        PropertyNames {
            few: [&[]; FEW_NAMES],
            count: 0,
            sketches: 0,
            many: None,
        }
    }
}

/// The bit of `name`'s sketch (its WTF-8 bytes, or a decoded name's code units) in
/// [`PropertyNames`]' mask, the decoder's and the serde encoder's: equal names have equal
/// sketches.
pub(crate) fn sketch_bit<T: Copy + Into<u32>>(name: &[T]) -> u64 {
    let (first, last) = match name {
        [] => (0, 0),
        [first, .., last] => ((*first).into(), (*last).into()),
        [only] => ((*only).into(), (*only).into()),
    };
    sketch_of(name.len(), first, last)
}

/// One bit of 64 picked by a name's length, first and last byte or code unit.
#[inline]
fn sketch_of(len: usize, first: u32, last: u32) -> u64 {
    let sketch = (len as u32)
        .wrapping_mul(7)
        .wrapping_add(first.wrapping_mul(3))
        .wrapping_add(last);
    1 << (sketch & 63)
}

impl<'a> PropertyNames<'a> {
    /// Adds `name` (its WTF-8 bytes, which start at byte `at`).
    ///
    /// # Errors
    /// [`Error::Unknown`] (`duplicate property name`) when the object already has it.
    #[inline]
    pub(crate) fn insert(&mut self, name: &'a [u8], at: usize) -> Result<()> {
        let fresh = if self.count < FEW_NAMES {
            let bit = sketch_bit(name);
            let fresh = self.sketches & bit == 0 || !self.few[..self.count].contains(&name);
            self.sketches |= bit;
            self.few[self.count] = name;
            self.count += 1;
            fresh
        } else {
            self.insert_many(name)
        };
        if fresh {
            Ok(())
        } else {
            Err(corrupt(at, "duplicate property name"))
        }
    }

    /// [`PropertyNames::insert`] past [`FEW_NAMES`] names: whether `name` is new.
    #[inline(never)]
    fn insert_many(&mut self, name: &'a [u8]) -> bool {
        let few = &self.few;
        self.many
            .get_or_insert_with(|| few.iter().copied().collect())
            .insert(name)
    }
}

/// An array or object being decoded.
enum Frame {
    Array {
        items: Vec<Value>,
        /// Elements still to read after the one being read.
        left: usize,
    },
    Object {
        map: Object,
        /// Properties still to read after the one being read.
        left: usize,
        /// The name of the property being read, and where it starts.
        name: Utf16String,
        name_at: usize,
        /// The sketches of the names appended so far ([`sketch_bit`]).
        sketches: u64,
    },
}

/// Helpers shared by the tests of the value modules: a `SameValue` comparison and a proptest
/// strategy for values.
#[cfg(test)]
pub(crate) mod testing {
    use proptest::prelude::*;

    use crate::object::Object;
    use crate::utf16::Utf16String;
    use crate::value::Value;

    /// An object's stored bytes (fewer than 128 properties, each name shorter than 128
    /// bytes) with these property names, each holding null.
    pub(crate) fn object_named(names: &[&str]) -> Vec<u8> {
        let mut bytes = vec![
            super::VALUE_FORMAT_VERSION,
            super::TAG_OBJECT,
            names.len() as u8,
        ];
        for name in names {
            bytes.push(name.len() as u8);
            bytes.extend_from_slice(name.as_bytes());
            bytes.push(super::TAG_NULL);
        }
        bytes
    }

    /// True when `a` and `b` are the same value: numbers and dates compared by bits, except that
    /// with `exact_nan == false` any two NaNs match (JavaScript's SameValue).
    pub(crate) fn same_value(a: &Value, b: &Value, exact_nan: bool) -> bool {
        let same_num =
            |x: f64, y: f64| x.to_bits() == y.to_bits() || (!exact_nan && x.is_nan() && y.is_nan());
        match (a, b) {
            (Value::Number(x), Value::Number(y)) | (Value::Date(x), Value::Date(y)) => {
                same_num(*x, *y)
            }
            (Value::Array(x), Value::Array(y)) => {
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q, exact_nan))
            }
            (Value::Object(x), Value::Object(y)) => {
                x.len() == y.len()
                    && x.iter()
                        .zip(y)
                        .all(|((n, p), (m, q))| n == m && same_value(p, q, exact_nan))
            }
            _ => a == b,
        }
    }

    fn number() -> impl Strategy<Value = f64> {
        prop_oneof![
            Just(0.0),
            Just(-0.0),
            Just(f64::NAN),
            Just(f64::INFINITY),
            Just(f64::NEG_INFINITY),
            Just(f64::MIN_POSITIVE / 8.0),
            Just(5e-324),
            Just(f64::MAX),
            Just(1e21),
            Just(-1e-7),
            Just(f64::from(i32::MIN)),
            Just(f64::from(i32::MAX)),
            Just(f64::from(i32::MAX) + 1.0),
            any::<i32>().prop_map(f64::from),
            any::<f64>(),
            any::<u64>().prop_map(f64::from_bits),
        ]
    }

    fn units() -> impl Strategy<Value = Utf16String> {
        let unit = prop_oneof![
            0x20u16..0x7F,
            any::<u16>(),
            Just(0u16),
            Just(0xFFFF),
            Just(0xD800),
            Just(0xDFFF),
            Just(u16::from(b'"')),
            Just(u16::from(b'\\')),
            Just(0x7F),
            Just(0x1F),
        ];
        // Up to 40 units: strings of up to 16 are kept inline, longer ones on the heap.
        let units = prop::collection::vec(unit, 0..40).prop_map(Utf16String::from_units);
        prop_oneof![
            units,
            Just(Utf16String::new()),
            Just(Utf16String::from("\u{1D11E}")),
            prop::sample::select(vec![
                "$date",
                "$binary",
                "$undefined",
                "$number",
                "$object",
                "$x"
            ])
            .prop_map(Utf16String::from),
        ]
    }

    /// Random values: every kind, nested arrays and objects, awkward numbers and strings.
    pub(crate) fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Undefined),
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            number().prop_map(Value::Number),
            number().prop_map(|n| Value::Date(crate::value::time_clip(n))),
            units().prop_map(Value::String),
            prop::collection::vec(any::<u8>(), 0..8).prop_map(Value::Binary),
        ];
        leaf.prop_recursive(5, 64, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((units(), inner), 0..6)
                    .prop_map(|pairs| Value::Object(pairs.into_iter().collect::<Object>())),
            ]
        })
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::testing::{object_named, same_value, value};
    use super::*;

    fn round_trip(v: &Value) -> Value {
        decode_value(&encode_value(v)).unwrap()
    }

    #[test]
    fn layout_of_simple_values() {
        assert_eq!(encode_value(&Value::Undefined), [1, 0x00]);
        assert_eq!(encode_value(&Value::Null), [1, 0x01]);
        assert_eq!(encode_value(&Value::Bool(false)), [1, 0x02]);
        assert_eq!(encode_value(&Value::Bool(true)), [1, 0x03]);
        assert_eq!(encode_value(&Value::Number(0.0)), [1, 0x05, 0]);
        assert_eq!(encode_value(&Value::Number(-1.0)), [1, 0x05, 1]);
        assert_eq!(encode_value(&Value::Number(1.0)), [1, 0x05, 2]);
        assert_eq!(encode_value(&Value::Number(300.0)), [1, 0x05, 0xD8, 0x04]);
        let mut minus_zero = vec![1, 0x04];
        minus_zero.extend_from_slice(&(-0.0f64).to_bits().to_le_bytes());
        assert_eq!(encode_value(&Value::Number(-0.0)), minus_zero);
        assert_eq!(
            encode_value(&Value::string("hé")),
            [1, 0x06, 3, b'h', 0xC3, 0xA9]
        );
        assert_eq!(encode_value(&Value::Binary(vec![7, 8])), [1, 0x08, 2, 7, 8]);
        let arr = Value::Array(vec![Value::Null, Value::Bool(true)]);
        assert_eq!(encode_value(&arr), [1, 0x09, 2, 0x01, 0x03]);
        let mut obj = Object::default();
        obj.insert(Utf16String::from("a"), Value::Null);
        assert_eq!(
            encode_value(&Value::Object(obj)),
            [1, 0x0A, 1, 1, b'a', 0x01]
        );
    }

    #[test]
    fn small_int_range_edges() {
        for n in [i32::MIN, i32::MIN + 1, -1, 0, 1, i32::MAX] {
            let bytes = encode_value(&Value::Number(f64::from(n)));
            assert_eq!(bytes[1], TAG_SMALL_INT, "{n}");
            assert_eq!(
                round_trip(&Value::Number(f64::from(n))),
                Value::Number(f64::from(n))
            );
        }
        for n in [
            f64::from(i32::MAX) + 1.0,
            f64::from(i32::MIN) - 1.0,
            0.5,
            -0.0,
        ] {
            assert_eq!(encode_value(&Value::Number(n))[1], TAG_NUMBER, "{n}");
        }
    }

    #[test]
    fn exact_numbers_survive() {
        let nan_payload = f64::from_bits(0x7FF8_0000_0000_1234);
        for n in [nan_payload, -0.0, 5e-324, f64::NEG_INFINITY] {
            let back = round_trip(&Value::Number(n));
            assert!(same_value(&back, &Value::Number(n), true), "{n}");
            let back = round_trip(&Value::Date(n));
            assert!(same_value(&back, &Value::Date(n), true), "{n}");
        }
    }

    #[test]
    fn lone_surrogates_and_pairs() {
        let s = Utf16String::from_units(vec![0xD800, 0x61, 0xDC00, 0xD834, 0xDD1E, 0xDBFF]);
        let v = Value::String(s);
        let bytes = encode_value(&v);
        assert_eq!(
            &bytes[2..],
            [
                14, 0xED, 0xA0, 0x80, b'a', 0xED, 0xB0, 0x80, 0xF0, 0x9D, 0x84, 0x9E, 0xED, 0xAF,
                0xBF
            ]
        );
        assert_eq!(round_trip(&v), v);
        // A pair written as two surrogate sequences is not WTF-8.
        let split = [1, 0x06, 6, 0xED, 0xA0, 0xB4, 0xED, 0xB4, 0x9E];
        assert_eq!(decode_value(&split).unwrap_err().name(), "UnknownError");
    }

    #[test]
    fn rejects_corrupt_input() {
        let cases: &[&[u8]] = &[
            &[],
            &[2, 0x01],
            &[1],
            &[1, 0x0B],
            &[1, 0xFF],
            &[1, 0x01, 0x01],
            &[1, 0x04, 0, 0],
            &[1, 0x06, 5, b'a'],
            &[1, 0x06, 1, 0xFF],
            &[1, 0x06, 2, 0xC0, 0x80],
            &[
                1, 0x09, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01,
            ],
            &[
                1, 0x09, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F,
            ],
            &[1, 0x05, 0x80, 0x00],
            &[1, 0x05, 0x80, 0x80, 0x80, 0x80, 0x10],
            &[1, 0x0A, 2, 1, b'a', 0x01, 1, b'a', 0x01],
            &[1, 0x0A, 1, 1, b'a'],
        ];
        for bytes in cases {
            let err = decode_value(bytes).unwrap_err();
            assert_eq!(err.name(), "UnknownError", "{bytes:?}");
            assert!(err.message().starts_with("corrupt value: "), "{err}");
        }
    }

    #[test]
    fn nesting_limit() {
        let mut deepest = Value::Null;
        for _ in 0..MAX_VALUE_DEPTH {
            deepest = Value::Array(vec![deepest]);
        }
        let bytes = encode_value(&deepest);
        assert_eq!(decode_value(&bytes).unwrap(), deepest);
        let mut too_deep = vec![1, TAG_ARRAY, 1];
        too_deep.extend_from_slice(&bytes[1..]);
        let err = decode_value(&too_deep).unwrap_err();
        assert_eq!(
            err.message(),
            format!(
                "corrupt value: nesting deeper than {MAX_VALUE_DEPTH} at byte {}",
                2 * MAX_VALUE_DEPTH + 1
            )
        );
    }

    #[test]
    fn hostile_input_needs_little_stack_and_memory() {
        let run = std::thread::Builder::new()
            .stack_size(128 * 1024)
            .spawn(|| {
                let mut deep = vec![1];
                deep.extend(std::iter::repeat([TAG_ARRAY, 1]).take(1_000_000).flatten());
                assert!(decode_value(&deep).is_err());
                let mut deep = vec![1];
                deep.extend(
                    std::iter::repeat([TAG_OBJECT, 1, 0])
                        .take(1_000_000)
                        .flatten(),
                );
                assert!(decode_value(&deep).is_err());
            })
            .unwrap();
        run.join().unwrap();
        // Each level claims as many elements as bytes remain; only the first claim fits.
        let mut greedy = vec![1];
        for _ in 0..1000 {
            greedy.extend_from_slice(&[TAG_ARRAY, 0xE8, 0x0F]);
        }
        let err = decode_value(&greedy).unwrap_err();
        assert!(err.message().contains("exceeds"), "{err}");
    }

    /// A visitor that rebuilds the value it is shown, and logs each call.
    #[derive(Default)]
    struct Rebuild {
        log: Vec<String>,
        /// Open arrays and objects: the container, the members still to come, and an
        /// object's pending property name.
        open: Vec<(Value, usize, Option<Utf16String>)>,
        done: Option<Value>,
    }

    fn owned(text: StoredText<'_>) -> Utf16String {
        match text {
            StoredText::Utf8(s) => Utf16String::from(s),
            StoredText::Units(u) => u.clone(),
        }
    }

    impl Rebuild {
        fn put(&mut self, mut v: Value) {
            loop {
                let Some((container, left, name)) = self.open.last_mut() else {
                    self.done = Some(v);
                    return;
                };
                match container {
                    Value::Array(items) => items.push(v),
                    Value::Object(map) => {
                        map.insert(name.take().unwrap(), v);
                    }
                    _ => unreachable!(),
                }
                *left -= 1;
                if *left > 0 {
                    return;
                }
                v = self.open.pop().unwrap().0;
            }
        }

        fn open(&mut self, container: Value, len: usize) {
            if len == 0 {
                self.put(container);
            } else {
                self.open.push((container, len, None));
            }
        }
    }

    impl ValueVisitor for Rebuild {
        fn undefined(&mut self) {
            self.log.push("undefined".into());
            self.put(Value::Undefined);
        }
        fn null(&mut self) {
            self.log.push("null".into());
            self.put(Value::Null);
        }
        fn boolean(&mut self, b: bool) {
            self.log.push(format!("boolean {b}"));
            self.put(Value::Bool(b));
        }
        fn number(&mut self, n: f64) {
            self.log.push(format!("number {n:?}"));
            self.put(Value::Number(n));
        }
        fn date(&mut self, time: f64) {
            self.log.push(format!("date {time:?}"));
            self.put(Value::Date(time));
        }
        fn string(&mut self, text: StoredText<'_>) {
            self.log.push(format!("string {text:?}"));
            self.put(Value::String(owned(text)));
        }
        fn binary(&mut self, bytes: &[u8]) {
            self.log.push(format!("binary {bytes:?}"));
            self.put(Value::Binary(bytes.to_vec()));
        }
        fn array(&mut self, len: usize) {
            self.log.push(format!("array {len}"));
            self.open(Value::Array(Vec::new()), len);
        }
        fn object(&mut self, len: usize) {
            self.log.push(format!("object {len}"));
            self.open(Value::Object(Object::default()), len);
        }
        fn name(&mut self, name: StoredText<'_>) {
            self.log.push(format!("name {name:?}"));
            self.open.last_mut().unwrap().2 = Some(owned(name));
        }
    }

    #[test]
    fn a_visit_reports_every_kind_in_stored_order() {
        let lone = Utf16String::from_units(vec![0x61, 0xD800]);
        let mut map = Object::default();
        map.insert(
            "b".into(),
            Value::Array(vec![Value::Undefined, Value::Null]),
        );
        map.insert("a".into(), Value::Number(-0.0));
        map.insert(lone.clone(), Value::String(lone.clone()));
        map.insert("é".into(), Value::Object(Object::default()));
        let v = Value::Array(vec![
            Value::Bool(true),
            Value::Number(7.0),
            Value::Number(1.5),
            Value::Date(86_400_000.0),
            Value::String("ok".into()),
            Value::Binary(vec![1, 2]),
            Value::Object(map),
            Value::Array(Vec::new()),
        ]);
        let mut seen = Rebuild::default();
        visit_value(&encode_value(&v), &mut seen).unwrap();
        let lone_text = format!("{:?}", StoredText::Units(&lone));
        assert_eq!(
            seen.log,
            [
                "array 8",
                "boolean true",
                "number 7.0",
                "number 1.5",
                "date 86400000.0",
                "string Utf8(\"ok\")",
                "binary [1, 2]",
                "object 4",
                "name Utf8(\"b\")",
                "array 2",
                "undefined",
                "null",
                "name Utf8(\"a\")",
                "number -0.0",
                &format!("name {lone_text}"),
                &format!("string {lone_text}"),
                "name Utf8(\"é\")",
                "object 0",
                "array 0",
            ]
        );
        assert!(same_value(&seen.done.unwrap(), &v, true));
    }

    #[test]
    fn names_with_the_same_sketch_are_still_told_apart() {
        // Same length, first and last byte: one sketch, different names.
        assert_eq!(sketch_bit(b"axb"), sketch_bit(b"ayb"));
        assert_eq!(sketch_bit(b""), 1);
        let units = |s: &str| s.encode_utf16().collect::<Vec<u16>>();
        assert_eq!(sketch_bit(&units("axb")), sketch_bit(b"axb"));
        assert_eq!(sketch_bit(&units("ayb")), sketch_bit(b"ayb"));
        let distinct = object_named(&["axb", "ayb", "", "a", "azb"]);
        assert_eq!(check_value(&distinct), Ok(()));
        let Ok(Value::Object(decoded)) = decode_value(&distinct) else {
            panic!("not an object")
        };
        let decoded: Vec<String> = decoded.keys().map(|k| k.to_string_lossy()).collect();
        assert_eq!(decoded, ["axb", "ayb", "", "a", "azb"]);
        for names in [
            &["axb", "ayb", "axb"][..],
            &["", "q", ""],
            &["a", "b", "c", "d", "e", "f", "g", "h", "a"],
        ] {
            let repeated = object_named(names);
            let err = check_value(&repeated).unwrap_err();
            assert_eq!(Err(err), decode_value(&repeated).map(|_| ()), "{names:?}");
        }
        // Past 16 names the check hashes them: a repeat there is refused too.
        let many: Vec<String> = (0..20).map(|i| format!("n{i}")).collect();
        let mut names: Vec<&str> = many.iter().map(String::as_str).collect();
        assert_eq!(check_value(&object_named(&names)), Ok(()));
        names.push("n3");
        assert!(check_value(&object_named(&names)).is_err());
        assert!(decode_value(&object_named(&names)).is_err());
        // Names "a", "aa", … up to 64 letters take every one of the 64 sketch bits: decoding
        // still accepts a new name and refuses only a repeat.
        let many: Vec<String> = (1..=64).map(|n| "a".repeat(n)).collect();
        let bits = many
            .iter()
            .fold(0u64, |mask, n| mask | sketch_bit(n.as_bytes()));
        assert_eq!(bits, u64::MAX);
        let mut names: Vec<&str> = many.iter().map(String::as_str).collect();
        names.push("b");
        assert!(decode_value(&object_named(&names)).is_ok());
        names.push("aaa");
        assert!(decode_value(&object_named(&names)).is_err());
    }

    #[test]
    fn a_visit_refuses_what_decoding_refuses() {
        // A repeated property name, refused once its value is read, as decoding does.
        let bytes = [
            VALUE_FORMAT_VERSION,
            TAG_OBJECT,
            2,
            1,
            b'x',
            TAG_NULL,
            1,
            b'x',
            TAG_NULL,
        ];
        let mut seen = Rebuild::default();
        let err = visit_value(&bytes, &mut seen).unwrap_err();
        assert_eq!(err, decode_value(&bytes).unwrap_err());
        assert_eq!(
            seen.log,
            [
                "object 2",
                "name Utf8(\"x\")",
                "null",
                "name Utf8(\"x\")",
                "null"
            ]
        );
        let mut seen = Rebuild::default();
        assert_eq!(
            visit_value(&[VALUE_FORMAT_VERSION, TAG_NULL, 0], &mut seen).unwrap_err(),
            decode_value(&[VALUE_FORMAT_VERSION, TAG_NULL, 0]).unwrap_err()
        );
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(512))]

        #[test]
        fn a_visit_shows_exactly_the_decoded_value(v in value()) {
            let mut seen = Rebuild::default();
            visit_value(&encode_value(&v), &mut seen).unwrap();
            let back = seen.done.unwrap();
            prop_assert!(same_value(&back, &v, true), "{:?} came back as {:?}", v, back);
        }

        #[test]
        fn a_visit_fails_where_and_as_decoding_fails(
            v in value(),
            at in any::<usize>(),
            byte in any::<u8>(),
            cut in any::<bool>(),
        ) {
            let mut bytes = encode_value(&v);
            let i = at % bytes.len();
            bytes[i] = byte;
            if cut {
                bytes.truncate(i + 1);
            }
            prop_assert_eq!(check_value(&bytes), decode_value(&bytes).map(|_| ()));
        }

        #[test]
        fn round_trips_exactly(v in value()) {
            let back = round_trip(&v);
            prop_assert!(same_value(&back, &v, true), "{:?} came back as {:?}", v, back);
        }

        #[test]
        fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let _ = decode_value(&bytes);
            let mut versioned = vec![VALUE_FORMAT_VERSION];
            versioned.extend_from_slice(&bytes);
            let _ = decode_value(&versioned);
        }

        #[test]
        fn damaged_encodings_never_panic(v in value(), at in any::<usize>(), byte in any::<u8>()) {
            let mut bytes = encode_value(&v);
            let i = at % bytes.len();
            bytes[i] = byte;
            let _ = decode_value(&bytes);
            bytes.truncate(i);
            prop_assert!(decode_value(&bytes).is_err());
        }
    }
}
