//! Typed reads and writes: a [`serde::Deserializer`] over a stored value's bytes (the value
//! codec, `value_codec.rs`), so a record decodes straight into the caller's type without
//! building a [`Value`](crate::Value) first, and a [`serde::Serializer`] that writes those
//! bytes straight from the caller's type ([`encode_serialized`], for
//! `ObjectStore::add_as`/`put_as`).
//!
//! [`decode_value_as::<T>(bytes)`](decode_value_as) gives exactly what
//! [`from_value::<T>`](crate::from_value)`(`[`decode_value`](crate::decode_value)`(bytes)?)`
//! gives — the same mapping (`value_serde.rs`'s module docs), the same kinds of error, and the
//! same bytes refused as corrupt — with strings, binaries and property names borrowed from the
//! stored bytes while the type reads them. Properties the type ignores are checked and skipped
//! without being built.

use std::borrow::Cow;
use std::collections::HashSet;
use std::hash::{Hash, Hasher};

use serde::de::{self, DeserializeOwned, DeserializeSeed, Visitor};
use serde::ser::{self, Serialize};

use crate::error::{Error, Result};
use crate::value_codec::{
    corrupt, put_number, put_varint, sketch_bit, LoneSurrogates, PropertyNames, Reader, FEW_NAMES,
    MAX_VALUE_DEPTH, TAG_ARRAY, TAG_BINARY, TAG_DATE, TAG_FALSE, TAG_NULL, TAG_NUMBER, TAG_OBJECT,
    TAG_SMALL_INT, TAG_STRING, TAG_TRUE, TAG_UNDEFINED, VALUE_FORMAT_VERSION,
};
use crate::value_serde::{
    exact_integer, rust_string, visit_bytes_as_seq, visit_number, KeyDeserializer, KeySerializer,
};

/// Decodes a stored value (the bytes [`encode_value`](crate::encode_value) writes) straight
/// into `T`, without building a [`Value`](crate::Value).
///
/// # Errors
/// [`Error::Unknown`] (`corrupt value: …`) for bytes [`decode_value`](crate::decode_value)
/// refuses; [`Error::Type`] when the value does not have the shape `T` expects, as for
/// [`from_value`](crate::from_value).
///
/// Source: the value codec's layout (`docs/format.md`) read through the serde data model
/// (<https://serde.rs/data-model.html>), mapped as in `from_value`.
pub fn decode_value_as<T: DeserializeOwned>(bytes: &[u8]) -> Result<T> {
    let mut reader = Reader::start(bytes)?;
    let out = T::deserialize(Stored {
        reader: &mut reader,
        depth: 0,
    })?;
    reader.finish()?;
    Ok(out)
}

/// The value at the reader's position, at nesting `depth` (the top-level value is at 0).
struct Stored<'r, 'a> {
    reader: &'r mut Reader<'a>,
    depth: usize,
}

/// A value's tag and fixed payload, read before it is handed to a visitor.
enum Head<'a> {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    Date(f64),
    /// A string: its text when it is UTF-8, else its bytes (it holds a lone surrogate).
    String(std::result::Result<&'a str, LoneSurrogates<'a>>),
    Binary(&'a [u8]),
    /// An array and its element count; the elements follow.
    Array(usize),
    /// An object and its property count; the properties follow.
    Object(usize),
}

impl<'r, 'a> Stored<'r, 'a> {
    fn head(&mut self) -> Result<Head<'a>> {
        let r = &mut *self.reader;
        let start = r.pos;
        Ok(match r.byte()? {
            TAG_UNDEFINED => Head::Undefined,
            TAG_NULL => Head::Null,
            TAG_FALSE => Head::Bool(false),
            TAG_TRUE => Head::Bool(true),
            TAG_NUMBER => Head::Number(r.f64_bits()?),
            TAG_SMALL_INT => Head::Number(r.small_int()?),
            TAG_STRING => Head::String(r.text()?),
            TAG_DATE => Head::Date(r.f64_bits()?),
            TAG_BINARY => {
                let len = r.count(1, 0)?;
                Head::Binary(r.take(len)?)
            }
            TAG_ARRAY => Head::Array(r.container(TAG_ARRAY, self.depth, 0)?),
            TAG_OBJECT => Head::Object(r.container(TAG_OBJECT, self.depth, 0)?),
            other => return Err(corrupt(start, &format!("unknown tag 0x{other:02X}"))),
        })
    }

    /// The members of the array or object just opened.
    fn members(&mut self) -> Stored<'_, 'a> {
        Stored {
            reader: self.reader,
            depth: self.depth + 1,
        }
    }

    fn visit<V: Visitor<'a>>(mut self, head: Head<'a>, visitor: V) -> Result<V::Value> {
        match head {
            Head::Undefined => visitor.visit_none(),
            Head::Null => visitor.visit_unit(),
            Head::Bool(b) => visitor.visit_bool(b),
            Head::Number(n) => visit_number(n, visitor),
            Head::Date(ms) => visitor.visit_f64(ms),
            Head::String(Ok(s)) => visitor.visit_borrowed_str(s),
            Head::String(Err(lone)) => visitor.visit_string(rust_string(lone.units())?),
            Head::Binary(bytes) => visitor.visit_borrowed_bytes(bytes),
            Head::Array(n) => self.members().visit_array(n, visitor),
            Head::Object(n) => self.members().visit_object(n, visitor),
        }
    }

    /// Visits the `n` elements of an array as a sequence (self is at the first element).
    fn visit_array<V: Visitor<'a>>(self, n: usize, visitor: V) -> Result<V::Value> {
        let mut access = Elements {
            members: self,
            left: n,
        };
        let out = visitor.visit_seq(&mut access)?;
        if access.left != 0 {
            return Err(de::Error::invalid_length(n, &"fewer elements in the array"));
        }
        Ok(out)
    }

    /// Visits the `n` properties of an object as a map (self is at the first name).
    fn visit_object<V: Visitor<'a>>(self, n: usize, visitor: V) -> Result<V::Value> {
        let mut access = Properties {
            members: self,
            left: n,
            names: PropertyNames::default(),
        };
        let out = visitor.visit_map(&mut access)?;
        if access.left != 0 {
            return Err(de::Error::invalid_length(
                n,
                &"fewer properties in the object",
            ));
        }
        Ok(out)
    }

    fn peek(&self) -> Result<u8> {
        self.reader.peek()
    }
}

/// The kind of a value, for error messages (as `value_serde.rs` names them).
fn unexpected<'x>(head: &'x Head<'_>) -> de::Unexpected<'x> {
    match head {
        Head::Undefined => de::Unexpected::Other("undefined"),
        Head::Null => de::Unexpected::Unit,
        Head::Bool(b) => de::Unexpected::Bool(*b),
        Head::Number(n) => de::Unexpected::Float(*n),
        Head::String(_) => de::Unexpected::Other("a string"),
        Head::Date(_) => de::Unexpected::Other("a date"),
        Head::Binary(b) => de::Unexpected::Bytes(b),
        Head::Array(_) => de::Unexpected::Seq,
        Head::Object(_) => de::Unexpected::Map,
    }
}

impl<'de, 'r> de::Deserializer<'de> for Stored<'r, 'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
        let head = self.head()?;
        self.visit(head, visitor)
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
        match self.head()? {
            Head::Number(n) | Head::Date(n) => visitor.visit_f64(n),
            other => self.visit(other, visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
        match self.peek()? {
            TAG_UNDEFINED | TAG_NULL => {
                self.head()?;
                visitor.visit_none()
            }
            _ => visitor.visit_some(self),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
        match self.head()? {
            Head::Undefined | Head::Null => visitor.visit_unit(),
            other => Err(de::Error::invalid_type(unexpected(&other), &visitor)),
        }
    }

    fn deserialize_unit_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_unit(visitor)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_seq<V: Visitor<'de>>(mut self, visitor: V) -> Result<V::Value> {
        match self.head()? {
            Head::Binary(bytes) => visit_bytes_as_seq(bytes.iter().copied(), visitor),
            other => self.visit(other, visitor),
        }
    }

    fn deserialize_tuple<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_tuple_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        _len: usize,
        visitor: V,
    ) -> Result<V::Value> {
        self.deserialize_seq(visitor)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        mut self,
        name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let expected = || format!("a {name} variant name or an object with one property");
        match self.head()? {
            Head::String(s) => visitor.visit_enum(Variant {
                name: match s {
                    Ok(s) => s.to_owned(),
                    Err(lone) => rust_string(lone.units())?,
                },
                value: None,
            }),
            Head::Object(1) => {
                let members = self.members();
                let variant = match members.reader.text()? {
                    Ok(s) => s.to_owned(),
                    Err(lone) => rust_string(lone.units())?,
                };
                visitor.visit_enum(Variant {
                    name: variant,
                    value: Some(members),
                })
            }
            Head::Object(_) => Err(de::Error::invalid_type(
                de::Unexpected::Map,
                &expected().as_str(),
            )),
            other => Err(de::Error::invalid_type(
                unexpected(&other),
                &expected().as_str(),
            )),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.reader.skip_value(self.depth)?;
        visitor.visit_unit()
    }

    fn deserialize_i128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_any(visitor)
    }

    fn deserialize_u128<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_any(visitor)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 u8 u16 u32 u64 char str string bytes byte_buf map struct
        identifier
    }
}

/// An array's elements, read in place.
struct Elements<'r, 'a> {
    members: Stored<'r, 'a>,
    left: usize,
}

impl<'de, 'r> de::SeqAccess<'de> for Elements<'r, 'de> {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        seed.deserialize(Stored {
            reader: self.members.reader,
            depth: self.members.depth,
        })
        .map(Some)
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// An object's properties, read in place; a repeated name is refused as corrupt, as
/// `decode_value` does.
struct Properties<'r, 'a> {
    members: Stored<'r, 'a>,
    left: usize,
    names: PropertyNames<'a>,
}

impl<'de, 'r> de::MapAccess<'de> for Properties<'r, 'de> {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        if self.left == 0 {
            return Ok(None);
        }
        self.left -= 1;
        let reader = &mut *self.members.reader;
        let at = reader.pos;
        let name = reader.text()?;
        // The name's length and WTF-8 bytes: equal names have equal bytes.
        self.names.insert(reader.since(at), at)?;
        let name = match name {
            Ok(s) => Cow::Borrowed(s),
            Err(lone) => Cow::Owned(rust_string(lone.units())?),
        };
        seed.deserialize(KeyDeserializer(name)).map(Some)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        seed.deserialize(Stored {
            reader: self.members.reader,
            depth: self.members.depth,
        })
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.left)
    }
}

/// An enum's variant: its name, and for `{"Variant": value}` the value, still to be read.
struct Variant<'r, 'a> {
    name: String,
    value: Option<Stored<'r, 'a>>,
}

impl<'de, 'r> de::EnumAccess<'de> for Variant<'r, 'de> {
    type Error = Error;
    type Variant = VariantValue<'r, 'de>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, VariantValue<'r, 'de>)> {
        let name: de::value::StringDeserializer<Error> =
            de::IntoDeserializer::into_deserializer(self.name);
        Ok((seed.deserialize(name)?, VariantValue(self.value)))
    }
}

/// The value of an enum variant (`None` for a variant written as its bare name).
struct VariantValue<'r, 'a>(Option<Stored<'r, 'a>>);

impl<'de, 'r> de::VariantAccess<'de> for VariantValue<'r, 'de> {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        match self.0 {
            None => Ok(()),
            Some(mut value) => match value.head()? {
                Head::Null => Ok(()),
                other => Err(de::Error::invalid_type(
                    unexpected(&other),
                    &"a unit variant",
                )),
            },
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        match self.0 {
            Some(value) => seed.deserialize(value),
            None => Err(de::Error::invalid_type(
                de::Unexpected::UnitVariant,
                &"a newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        let Some(mut value) = self.0 else {
            return Err(de::Error::invalid_type(
                de::Unexpected::UnitVariant,
                &"a tuple variant",
            ));
        };
        match value.head()? {
            Head::Array(n) => value.members().visit_array(n, visitor),
            other => Err(de::Error::invalid_type(
                unexpected(&other),
                &"a tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let Some(mut value) = self.0 else {
            return Err(de::Error::invalid_type(
                de::Unexpected::UnitVariant,
                &"a struct variant",
            ));
        };
        match value.head()? {
            Head::Object(n) => value.members().visit_object(n, visitor),
            Head::Array(n) => value.members().visit_array(n, visitor),
            other => Err(de::Error::invalid_type(
                unexpected(&other),
                &"a struct variant",
            )),
        }
    }
}

/// A value in its stored form (the value codec's bytes, version byte first), written from
/// serde by [`encode_serialized`], with where the values of its top-level properties start
/// when it is an object (or struct): a record's key paths are evaluated on it in place
/// (`key_path.rs`), each without reading the properties before the one it names.
#[derive(Debug)]
pub(crate) struct StoredValue {
    pub(crate) bytes: Vec<u8>,
    /// Per top-level property, where its name starts and ends (its value starts there).
    /// `None` for a value that is not an object, an empty object, or an enum variant's.
    pub(crate) properties: Option<Vec<(usize, usize)>>,
}

/// The stored form of `value`, written straight from its `Serialize` implementation: exactly
/// the bytes [`encode_value`](crate::encode_value)`(&`[`to_value`](crate::to_value)`(value)?)`
/// gives, without building a [`Value`](crate::Value) — strings and property names go from
/// UTF-8 to the stored WTF-8 as they are. `None` when only that generic way gives them
/// exactly, or gives its error: any error (an integer beyond ±2^53, a map key that cannot be a
/// property name, the type's own), even one the type's `Serialize` went past; a map or struct
/// that repeats a property name (the generic value keeps one, at the first place, with the
/// last value); a map value without its key, or a key without its value; nesting within two
/// levels of [`MAX_VALUE_DEPTH`](crate::MAX_VALUE_DEPTH) (whose error the write reports).
///
/// Source: the value codec's layout (`docs/format.md`) written through the serde data model
/// (<https://serde.rs/data-model.html>), mapped as in `to_value`.
pub(crate) fn encode_serialized<T: Serialize + ?Sized>(value: &T) -> Option<StoredValue> {
    let mut encoder = Encoder {
        out: Vec::with_capacity(128),
        depth: 0,
        generic_only: false,
        properties: None,
    };
    encoder.out.push(VALUE_FORMAT_VERSION);
    let written = value.serialize(&mut encoder);
    if encoder.generic_only || written.is_err() {
        return None;
    }
    Some(StoredValue {
        bytes: encoder.out,
        properties: encoder.properties,
    })
}

/// Writes serde data in the value codec's form (see [`encode_serialized`]).
struct Encoder {
    out: Vec<u8>,
    /// The arrays and objects open around the value being written.
    depth: usize,
    /// Set when the bytes can only be had through the generic value; the error that stops
    /// the serialization then is not the caller's.
    generic_only: bool,
    /// The top-level object's properties (see [`StoredValue`]), once it is written.
    properties: Option<Vec<(usize, usize)>>,
}

impl Encoder {
    #[cold]
    fn generic_only(&mut self) -> Error {
        self.generic_only = true;
        Error::Data("written through the generic value instead".into())
    }

    fn number(&mut self, n: f64) -> Result<()> {
        put_number(&mut self.out, n);
        Ok(())
    }

    fn integer(&mut self, n: i128) -> Result<()> {
        let n = exact_integer(n.unsigned_abs(), n < 0)?;
        self.number(n)
    }

    /// A string from Rust text: UTF-8 is WTF-8 as it is.
    fn text(&mut self, tag: u8, s: &str) {
        self.out.push(tag);
        put_varint(&mut self.out, s.len() as u64);
        self.out.extend_from_slice(s.as_bytes());
    }

    /// One more level of nesting; near the limit, the generic path's check (no more than
    /// MAX_VALUE_DEPTH - 1 levels) decides.
    fn deeper(&mut self) -> Result<()> {
        if self.depth + 2 >= MAX_VALUE_DEPTH {
            return Err(self.generic_only());
        }
        self.depth += 1;
        Ok(())
    }

    /// Opens an array or object of `hint` members (the count is set right at its end),
    /// inside `levels - 1` levels opened for it (an enum variant's outer object).
    fn open(&mut self, tag: u8, hint: usize, levels: usize) -> Result<Compound<'_>> {
        self.deeper()?;
        self.out.push(tag);
        let count_at = self.out.len();
        put_varint(&mut self.out, hint as u64);
        Ok(Compound {
            count_at,
            hint,
            count: 0,
            object: tag == TAG_OBJECT,
            // Room for a struct's names at once (a map's hint may be anything).
            names: Vec::with_capacity(if tag == TAG_OBJECT {
                hint.min(FEW_NAMES)
            } else {
                0
            }),
            sketches: 0,
            hashes: None,
            levels,
            encoder: self,
        })
    }

    /// Opens `{variant: …}`, the outer object of an externally tagged enum variant with data.
    fn variant(&mut self, variant: &str) -> Result<()> {
        self.deeper()?;
        self.out.extend_from_slice(&[TAG_OBJECT, 1]);
        put_varint(&mut self.out, variant.len() as u64);
        self.out.extend_from_slice(variant.as_bytes());
        Ok(())
    }
}

/// An array or object being written.
struct Compound<'e> {
    encoder: &'e mut Encoder,
    /// Where its count starts, the count written there, and the members so far.
    count_at: usize,
    hint: usize,
    count: usize,
    /// Whether it is an object (a map, a struct).
    object: bool,
    /// An object's property names so far, as byte ranges of the output.
    names: Vec<(usize, usize)>,
    /// While it has fewer than [`FEW_NAMES`] names: the mask of their [`sketch_bit`]s.
    sketches: u64,
    /// From [`FEW_NAMES`] names on: their hashes.
    hashes: Option<HashSet<u64>>,
    /// The levels of nesting it closes: 2 for an enum variant's, with its outer object.
    levels: usize,
}

impl Compound<'_> {
    /// A member; after a failed one the bytes are left to the generic path, whatever the
    /// type's `Serialize` does next.
    fn element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.count += 1;
        let written = value.serialize(&mut *self.encoder);
        if written.is_err() {
            self.encoder.generic_only = true;
        }
        written
    }

    /// A property name (WTF-8); a repeated one leaves the object to the generic path, and so
    /// does a name that does not follow a value (a map's key given twice in a row).
    fn name(&mut self, name: &[u8]) -> Result<()> {
        if self.names.len() != self.count {
            return Err(self.encoder.generic_only());
        }
        let out = &mut self.encoder.out;
        put_varint(out, name.len() as u64);
        let start = out.len();
        out.extend_from_slice(name);
        let repeated = if self.names.len() < FEW_NAMES {
            // Compared with the names before only when one of them had the same sketch.
            let bit = sketch_bit(name);
            let seen = self.sketches & bit != 0;
            self.sketches |= bit;
            seen && self.names.iter().any(|&(s, e)| out[s..e] == *name)
        } else {
            // Equal hashes are taken as a repeat: at worst the generic path writes it.
            let hash = |bytes: &[u8]| {
                let mut h = std::hash::DefaultHasher::new();
                bytes.hash(&mut h);
                h.finish()
            };
            let hashes = self
                .hashes
                .get_or_insert_with(|| self.names.iter().map(|&(s, e)| hash(&out[s..e])).collect());
            !hashes.insert(hash(name))
        };
        if repeated {
            return Err(self.encoder.generic_only());
        }
        self.names.push((start, start + name.len()));
        Ok(())
    }

    /// A map's value, which must follow its key.
    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        if self.names.len() != self.count + 1 {
            return Err(self.encoder.generic_only());
        }
        self.element(value)
    }

    fn property<T: Serialize + ?Sized>(&mut self, name: &str, value: &T) -> Result<()> {
        self.name(name.as_bytes())?;
        self.element(value)
    }

    /// Closes the array or object, setting its count when the hint was not it.
    fn end(self) -> Result<()> {
        let encoder = self.encoder;
        if self.object && self.names.len() != self.count {
            // A map's key without its value.
            return Err(encoder.generic_only());
        }
        encoder.depth -= self.levels;
        let mut shift = 0;
        if self.count != self.hint {
            let mut count = Vec::with_capacity(10);
            put_varint(&mut count, self.count as u64);
            let hint_len = varint_len(self.hint as u64);
            shift = count.len() as isize - hint_len as isize;
            encoder
                .out
                .splice(self.count_at..self.count_at + hint_len, count);
        }
        if encoder.depth == 0 && self.levels == 1 && !self.names.is_empty() {
            let mut names = self.names;
            for (start, end) in &mut names {
                *start = start.wrapping_add_signed(shift);
                *end = end.wrapping_add_signed(shift);
            }
            encoder.properties = Some(names);
        }
        Ok(())
    }
}

/// How many bytes the varint of `n` takes.
fn varint_len(mut n: u64) -> usize {
    let mut len = 1;
    while n >= 0x80 {
        n >>= 7;
        len += 1;
    }
    len
}

impl<'e> ser::Serializer for &'e mut Encoder {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = Compound<'e>;
    type SerializeTuple = Compound<'e>;
    type SerializeTupleStruct = Compound<'e>;
    type SerializeTupleVariant = Compound<'e>;
    type SerializeMap = Compound<'e>;
    type SerializeStruct = Compound<'e>;
    type SerializeStructVariant = Compound<'e>;

    fn serialize_bool(self, v: bool) -> Result<()> {
        self.out.push(if v { TAG_TRUE } else { TAG_FALSE });
        Ok(())
    }

    fn serialize_i8(self, v: i8) -> Result<()> {
        self.number(f64::from(v))
    }

    fn serialize_i16(self, v: i16) -> Result<()> {
        self.number(f64::from(v))
    }

    fn serialize_i32(self, v: i32) -> Result<()> {
        self.number(f64::from(v))
    }

    fn serialize_i64(self, v: i64) -> Result<()> {
        self.integer(i128::from(v))
    }

    fn serialize_i128(self, v: i128) -> Result<()> {
        self.integer(v)
    }

    fn serialize_u8(self, v: u8) -> Result<()> {
        self.number(f64::from(v))
    }

    fn serialize_u16(self, v: u16) -> Result<()> {
        self.number(f64::from(v))
    }

    fn serialize_u32(self, v: u32) -> Result<()> {
        self.number(f64::from(v))
    }

    fn serialize_u64(self, v: u64) -> Result<()> {
        self.integer(i128::from(v))
    }

    fn serialize_u128(self, v: u128) -> Result<()> {
        let n = exact_integer(v, false)?;
        self.number(n)
    }

    fn serialize_f32(self, v: f32) -> Result<()> {
        self.number(f64::from(v))
    }

    fn serialize_f64(self, v: f64) -> Result<()> {
        self.number(v)
    }

    fn serialize_char(self, v: char) -> Result<()> {
        self.text(TAG_STRING, v.encode_utf8(&mut [0; 4]));
        Ok(())
    }

    fn serialize_str(self, v: &str) -> Result<()> {
        self.text(TAG_STRING, v);
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<()> {
        self.out.push(TAG_BINARY);
        put_varint(&mut self.out, v.len() as u64);
        self.out.extend_from_slice(v);
        Ok(())
    }

    fn serialize_none(self) -> Result<()> {
        self.out.push(TAG_NULL);
        Ok(())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<()> {
        self.out.push(TAG_NULL);
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<()> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<()> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<()> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<()> {
        self.variant(variant)?;
        value.serialize(&mut *self)?;
        self.depth -= 1;
        Ok(())
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Compound<'e>> {
        self.open(TAG_ARRAY, len.unwrap_or(0), 1)
    }

    fn serialize_tuple(self, len: usize) -> Result<Compound<'e>> {
        self.open(TAG_ARRAY, len, 1)
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<Compound<'e>> {
        self.open(TAG_ARRAY, len, 1)
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'e>> {
        self.variant(variant)?;
        self.open(TAG_ARRAY, len, 2)
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Compound<'e>> {
        self.open(TAG_OBJECT, len.unwrap_or(0), 1)
    }

    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<Compound<'e>> {
        self.open(TAG_OBJECT, len, 1)
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Compound<'e>> {
        self.variant(variant)?;
        self.open(TAG_OBJECT, len, 2)
    }
}

/// The serde traits of arrays (`$method` a member's) and of objects with `&'static str`
/// names, all written by [`Compound`].
macro_rules! compound_impls {
    ($($trait:ident :: $method:ident),*; $($object:ident),*) => {
        $(
            impl ser::$trait for Compound<'_> {
                type Ok = ();
                type Error = Error;

                fn $method<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
                    self.element(value)
                }

                fn end(self) -> Result<()> {
                    Compound::end(self)
                }
            }
        )*
        $(
            impl ser::$object for Compound<'_> {
                type Ok = ();
                type Error = Error;

                fn serialize_field<T: Serialize + ?Sized>(
                    &mut self,
                    key: &'static str,
                    value: &T,
                ) -> Result<()> {
                    self.property(key, value)
                }

                fn end(self) -> Result<()> {
                    Compound::end(self)
                }
            }
        )*
    };
}

compound_impls!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field;
    SerializeStruct,
    SerializeStructVariant
);

impl ser::SerializeMap for Compound<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        // As `to_value` names the property (strings, chars, integers, unit variants).
        let name = key.serialize(KeySerializer).inspect_err(|_| {
            self.encoder.generic_only = true;
        })?;
        let mut wtf8 = Vec::with_capacity(name.len());
        crate::utf16::push_wtf8(&mut wtf8, name.units());
        self.name(&wtf8)
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.value(value)
    }

    fn end(self) -> Result<()> {
        Compound::end(self)
    }
}

/// Where each top-level property's name starts and ends in a stored value (its value starts
/// there), read by a decoder: `None` when the value is not an object. For tests, against
/// [`StoredValue::properties`].
#[cfg(test)]
pub(crate) fn top_level_properties(bytes: &[u8]) -> Option<Vec<(usize, usize)>> {
    let mut reader = Reader::start(bytes).unwrap();
    if reader.peek().unwrap() != TAG_OBJECT {
        return None;
    }
    reader.byte().unwrap();
    let n = reader.container(TAG_OBJECT, 0, 0).unwrap();
    let mut read = Vec::new();
    for _ in 0..n {
        let len = reader.count(1, 0).unwrap();
        let start = reader.pos;
        reader.take(len).unwrap();
        read.push((start, reader.pos));
        reader.skip_value(1).unwrap();
    }
    Some(read)
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use serde::de::IgnoredAny;
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::value_codec::testing::{object_named, same_value, value};
    use crate::value_codec::{check_value, decode_value, encode_value};
    use crate::value_serde::{from_value, to_value};
    use crate::{parse_value, Value};

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    struct City {
        name: String,
        lat: f64,
        population: u32,
        tags: Vec<String>,
        founded: Option<i64>,
        kind: Kind,
    }

    #[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
    enum Kind {
        Village,
        Town(u8),
        Capital { of: String },
        Pair(i32, bool),
    }

    /// An enum that nests, for the levels enum variants with data open.
    #[derive(Serialize)]
    enum Tree {
        Leaf,
        Node(Box<Tree>),
        Pair(Box<Tree>, u8),
        Named { t: Box<Tree> },
    }

    fn stored(text: &str) -> Vec<u8> {
        encode_value(&parse_value(text).unwrap())
    }

    #[test]
    fn a_record_decodes_into_a_struct() {
        let bytes = stored(
            r#"{"name":"Ávila","extra":[1,{"x":null}],"lat":40.65,"population":57744,
                "tags":["walls","\ud83c\udff0"],"founded":null,"kind":{"Capital":{"of":"Ávila"}}}"#,
        );
        assert_eq!(
            decode_value_as::<City>(&bytes).unwrap(),
            City {
                name: "Ávila".into(),
                lat: 40.65,
                population: 57744,
                tags: vec!["walls".into(), "🏰".into()],
                founded: None,
                kind: Kind::Capital {
                    of: "Ávila".into()
                },
            }
        );
        let town = stored(
            r#"{"name":"a","lat":-1,"population":0,"tags":[],"founded":-300,"kind":{"Town":7}}"#,
        );
        let city = decode_value_as::<City>(&town).unwrap();
        assert_eq!(
            (city.lat, city.founded, city.kind),
            (-1.0, Some(-300), Kind::Town(7))
        );
        for (text, kind) in [
            (r#""Village""#, Kind::Village),
            (r#"{"Village":null}"#, Kind::Village),
            (r#"{"Pair":[-2,true]}"#, Kind::Pair(-2, true)),
        ] {
            assert_eq!(decode_value_as::<Kind>(&stored(text)).unwrap(), kind);
        }
    }

    #[test]
    fn other_kinds_read_as_from_value_reads_them() {
        assert_eq!(
            decode_value_as::<f64>(&stored(r#"{"$date":5}"#)).unwrap(),
            5.0
        );
        assert_eq!(
            decode_value_as::<Vec<u8>>(&stored(r#"{"$binary":"AP8="}"#)).unwrap(),
            vec![0, 255]
        );
        assert_eq!(
            decode_value_as::<Option<u8>>(&stored(r#"{"$undefined":true}"#)).unwrap(),
            None
        );
        assert_eq!(
            decode_value_as::<BTreeMap<u32, bool>>(&stored(r#"{"7":true,"10":false}"#)).unwrap(),
            BTreeMap::from([(7, true), (10, false)])
        );
        assert_eq!(
            decode_value_as::<(String, i8)>(&stored(r#"["x",-128]"#)).unwrap(),
            ("x".to_owned(), -128)
        );
    }

    #[test]
    fn a_shape_mismatch_is_a_type_error_and_damage_an_unknown_error() {
        let err = |text: &str| decode_value_as::<City>(&stored(text)).unwrap_err();
        assert_eq!(
            err(r#"{"name":"a"}"#).to_string(),
            "TypeError: missing field `lat`"
        );
        assert_eq!(err("[]").name(), "TypeError");
        assert_eq!(
            decode_value_as::<u8>(&stored("256")).unwrap_err().name(),
            "TypeError"
        );
        let lone = decode_value_as::<String>(&stored(r#""\ud800""#)).unwrap_err();
        assert_eq!(lone.name(), "TypeError");
        assert!(lone.to_string().contains("lone surrogate"), "{lone}");
        // A repeated property name, an unknown tag, trailing bytes, another version, a string
        // that is not WTF-8, a lead surrogate's bytes followed by a trail surrogate's.
        for bytes in [
            vec![1, 0x0A, 2, 1, b'a', 1, 1, b'a', 1],
            vec![1, 0x0B],
            vec![1, 0x06, 1, 0xFF],
            vec![1, 0x06, 6, 0xED, 0xA0, 0x80, 0xED, 0xB0, 0x80],
            vec![1, 1, 1],
            vec![2, 1],
        ] {
            let e = decode_value_as::<Value>(&bytes).unwrap_err();
            assert!(
                e.to_string().starts_with("UnknownError: corrupt value:"),
                "{e}"
            );
            let e = decode_value_as::<IgnoredAny>(&bytes).unwrap_err();
            assert_eq!(e.name(), "UnknownError");
        }
    }

    #[test]
    fn nesting_is_limited_as_decode_value_limits_it() {
        let nested = |depth: usize| {
            let mut bytes = vec![1];
            bytes.extend(std::iter::repeat([0x09, 1]).take(depth).flatten());
            bytes.push(0x01);
            bytes
        };
        let ok = nested(crate::MAX_VALUE_DEPTH);
        let deep = nested(crate::MAX_VALUE_DEPTH + 1);
        assert!(decode_value(&ok).is_ok() && decode_value(&deep).is_err());
        assert!(check_value(&ok).is_ok() && check_value(&deep).is_err());
        assert!(decode_value_as::<IgnoredAny>(&ok).is_ok());
        assert!(decode_value_as::<IgnoredAny>(&deep).is_err());
    }

    fn same_outcome<T: PartialEq + std::fmt::Debug>(a: Result<T>, b: Result<T>) {
        match (a, b) {
            (Ok(a), Ok(b)) => assert_eq!(a, b),
            (Err(a), Err(b)) => assert_eq!(a.name(), b.name(), "{a} / {b}"),
            (a, b) => panic!("{a:?} / {b:?}"),
        }
    }

    fn city() -> impl Strategy<Value = City> {
        let kind = prop_oneof![
            Just(Kind::Village),
            any::<u8>().prop_map(Kind::Town),
            ".*".prop_map(|of| Kind::Capital { of }),
            (any::<i32>(), any::<bool>()).prop_map(|(a, b)| Kind::Pair(a, b)),
        ];
        (
            ".*",
            any::<f64>().prop_filter("NaN is not equal to itself", |f| !f.is_nan()),
            any::<u32>(),
            prop::collection::vec(".{0,4}", 0..4),
            prop::option::of(-(1i64 << 53)..(1i64 << 53)),
            kind,
        )
            .prop_map(|(name, lat, population, tags, founded, kind)| City {
                name,
                lat,
                population,
                tags,
                founded,
                kind,
            })
    }

    /// Both read the same value (numbers by their bits), or both fail with the same error.
    fn same_generic(a: Result<Value>, b: Result<Value>) -> bool {
        match (a, b) {
            (Ok(a), Ok(b)) => same_value(&a, &b, true),
            (Err(a), Err(b)) => a.name() == b.name(),
            _ => false,
        }
    }

    /// The stored bytes of `x` as the generic way gives them: `to_value`, then `encode_value`.
    fn generic<T: Serialize + ?Sized>(x: &T) -> Result<Vec<u8>> {
        to_value(x).map(|v| encode_value(&v))
    }

    /// The top-level properties `encode_serialized` gives are the names a decoder reads,
    /// in order, each followed by its value; none for a value that is not an object.
    fn properties_are_where_they_say(stored: &StoredValue) -> bool {
        match (&stored.properties, top_level_properties(&stored.bytes)) {
            (Some(properties), Some(read)) => *properties == read,
            (None, None) => true,
            // An enum variant's object, or an empty one.
            (None, Some(read)) => read.len() <= 1,
            (Some(_), None) => false,
        }
    }

    /// A map whose length serde is not told up front.
    struct Unhinted(Vec<(String, u32)>);

    impl Serialize for Unhinted {
        fn serialize<S: serde::Serializer>(
            &self,
            serializer: S,
        ) -> std::result::Result<S::Ok, S::Error> {
            use serde::ser::SerializeMap;
            let mut map = serializer.serialize_map(None)?;
            for (k, v) in &self.0 {
                map.serialize_entry(k, v)?;
            }
            map.end()
        }
    }

    /// `encode_serialized` gives what the generic way gives, or leaves it to that way.
    fn same_bytes<T: Serialize + ?Sized>(x: &T) -> bool {
        match (encode_serialized(x), generic(x)) {
            (Some(a), Ok(b)) => a.bytes == b && properties_are_where_they_say(&a),
            _ => false,
        }
    }

    #[test]
    fn a_struct_is_written_as_the_generic_value_encodes() {
        let c = City {
            name: "Ávila 🏰".into(),
            lat: -0.0,
            population: 57744,
            tags: vec!["walls".into(), String::new()],
            founded: Some(-(1 << 53)),
            kind: Kind::Capital { of: "x".into() },
        };
        let bytes = encode_serialized(&c).unwrap().bytes;
        assert_eq!(bytes, generic(&c).unwrap());
        assert_eq!(decode_value_as::<City>(&bytes).unwrap(), c);
        for kind in [Kind::Village, Kind::Town(7), Kind::Pair(-1, true)] {
            assert!(same_bytes(&kind));
        }
        // Counts not known up front, or not what the hint said.
        let long: Vec<u32> = (0..200).collect();
        assert!(same_bytes(
            &long.iter().filter(|n| *n % 3 == 0).collect::<Vec<_>>()
        ));
        let map: BTreeMap<i64, Vec<u32>> = (0..150).map(|i| (i - 75, long.clone())).collect();
        assert!(same_bytes(&map));
        assert!(same_bytes(
            &serde_json::json!({"a": [1, {"b": null}], "": "c"})
        ));
        // A top-level object whose count takes more bytes than the hint's: the properties
        // move with the bytes after it.
        let unhinted = Unhinted((0..200).map(|i| (format!("p{i}"), i)).collect());
        assert!(same_bytes(&unhinted));
        let stored = encode_serialized(&unhinted).unwrap();
        assert_eq!(stored.properties.map(|p| p.len()), Some(200));
    }

    #[test]
    fn what_only_the_generic_value_gives_exactly_is_left_to_it() {
        // Two names that the generic value's map makes one.
        let repeated = Value::Object(
            [
                (crate::Utf16String::from_units(vec![0xD800]), Value::Null),
                (
                    crate::Utf16String::from_units(vec![0xDC00]),
                    Value::Bool(true),
                ),
            ]
            .into_iter()
            .collect(),
        );
        assert!(encode_serialized(&repeated).is_none());
        // Nesting near the limit (the write refuses more than MAX_VALUE_DEPTH - 1 levels).
        let arrays =
            |levels: usize| (0..levels).fold(Value::Null, |inner, _| Value::Array(vec![inner]));
        assert!(same_bytes(&arrays(MAX_VALUE_DEPTH - 2)));
        assert!(encode_serialized(&arrays(MAX_VALUE_DEPTH - 1)).is_none());
        // An enum variant with data is two levels: `{"Pair": [inner, 0]}`.
        let variants = |pairs: usize, last: fn(Box<Tree>) -> Tree| {
            (1..pairs).fold(last(Box::new(Tree::Leaf)), |inner, _| {
                Tree::Pair(Box::new(inner), 0)
            })
        };
        let at_most = (MAX_VALUE_DEPTH - 2) / 2;
        for last in [
            |t| Tree::Pair(t, 1),
            |t| Tree::Named { t },
            |t| Tree::Node(Box::new(Tree::Node(t))),
        ] {
            assert!(same_bytes(&variants(at_most, last)));
            assert!(encode_serialized(&variants(at_most + 1, last)).is_none());
        }
    }

    /// A `Serialize` that calls the serializer in ways `to_value` answers, wrongly or not.
    enum Odd {
        /// A map value without its key.
        ValueFirst,
        /// A map key without its value.
        Dangling,
        /// Members that fail, gone past, then one that does not.
        Retried,
        /// A repeated name after more names than are checked by sketch.
        LateRepeat,
        /// A struct that gives a field name twice, among names with other sketches.
        EarlyRepeat,
    }

    impl Serialize for Odd {
        fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
            use serde::ser::{SerializeMap, SerializeSeq};
            match self {
                Odd::ValueFirst => {
                    let mut m = s.serialize_map(Some(1))?;
                    m.serialize_value(&1)?;
                    m.end()
                }
                Odd::Dangling => {
                    let mut m = s.serialize_map(None)?;
                    m.serialize_entry("a", &1)?;
                    m.serialize_key("dangling")?;
                    m.end()
                }
                Odd::Retried => {
                    let mut q = s.serialize_seq(None)?;
                    let _ = q.serialize_element(&u64::MAX);
                    let _ = q.serialize_element(&(1u32, u64::MAX));
                    q.serialize_element(&7)?;
                    q.end()
                }
                Odd::LateRepeat => {
                    let mut m = s.serialize_map(None)?;
                    for i in 0..40 {
                        m.serialize_entry(&format!("p{i}"), &i)?;
                    }
                    m.serialize_entry("p3", &0)?;
                    m.end()
                }
                Odd::EarlyRepeat => {
                    use serde::ser::SerializeStruct;
                    let mut st = s.serialize_struct("EarlyRepeat", 4)?;
                    st.serialize_field("name", &1)?;
                    st.serialize_field("lat", &2)?;
                    st.serialize_field("name", &3)?;
                    st.serialize_field("country", &4)?;
                    st.end()
                }
            }
        }
    }

    #[test]
    fn errors_and_odd_calls_are_left_to_the_generic_value() {
        // Errors, even those the type went past, are the generic way's to give.
        assert_eq!(generic(&(1u64 << 54)).unwrap_err().name(), "DataError");
        assert!(encode_serialized(&(1u64 << 54)).is_none());
        let bad_key: BTreeMap<bool, u8> = [(true, 1)].into_iter().collect();
        assert!(generic(&bad_key).is_err() && encode_serialized(&bad_key).is_none());
        for odd in [
            Odd::ValueFirst,
            Odd::Dangling,
            Odd::Retried,
            Odd::LateRepeat,
            Odd::EarlyRepeat,
        ] {
            assert!(encode_serialized(&odd).is_none());
        }
        // The generic value keeps a repeated name once, at its first place, with its last value.
        assert_eq!(
            generic(&Odd::EarlyRepeat).unwrap(),
            encode_value(&parse_value(r#"{"name":3,"lat":2,"country":4}"#).unwrap())
        );
        assert_eq!(
            generic(&Odd::Retried).unwrap(),
            encode_value(&parse_value("[7]").unwrap())
        );
        assert_eq!(
            generic(&Odd::Dangling).unwrap(),
            encode_value(&parse_value(r#"{"a":1}"#).unwrap())
        );
    }

    proptest! {
        #[test]
        fn typed_reads_equal_converting_the_generic_value(v in value()) {
            let bytes = encode_value(&v);
            same_outcome(
                decode_value_as::<serde_json::Value>(&bytes),
                from_value::<serde_json::Value>(v.clone()),
            );
            prop_assert!(same_generic(
                decode_value_as::<Value>(&bytes),
                from_value::<Value>(v.clone())
            ));
            same_outcome(decode_value_as::<City>(&bytes), from_value::<City>(v));
        }

        #[test]
        fn serialized_bytes_equal_the_generic_values_encoding(v in value(), c in city()) {
            // A Value serializes as its nearest serde data (a Date as its milliseconds), the
            // same on both ways; serde_json's maps give names as strings.
            prop_assert!(same_bytes(&v) || encode_serialized(&v).is_none());
            prop_assert!(same_bytes(&c));
            let json = serde_json::to_value(&v).unwrap();
            prop_assert!(same_bytes(&json));
        }

        #[test]
        fn a_struct_reads_back_as_written(c in city()) {
            let v = to_value(&c).unwrap();
            let bytes = encode_value(&v);
            prop_assert_eq!(decode_value_as::<City>(&bytes).unwrap(), c.clone());
            prop_assert_eq!(from_value::<City>(v).unwrap(), c);
        }

        #[test]
        fn checking_accepts_exactly_what_decoding_accepts(
            v in value(), at in any::<usize>(), byte in any::<u8>()
        ) {
            let mut bytes = encode_value(&v);
            prop_assert!(check_value(&bytes).is_ok());
            let i = at % bytes.len();
            bytes[i] = byte;
            let decoded = decode_value(&bytes).is_ok();
            prop_assert_eq!(check_value(&bytes).is_ok(), decoded);
            prop_assert_eq!(decode_value_as::<IgnoredAny>(&bytes).is_ok(), decoded);
            if let Ok(v) = decode_value(&bytes) {
                prop_assert!(same_generic(decode_value_as::<Value>(&bytes), from_value::<Value>(v)));
            }
        }

        #[test]
        fn arbitrary_bytes_are_refused_alike(bytes in prop::collection::vec(any::<u8>(), 0..64)) {
            let decoded = decode_value(&bytes).is_ok();
            prop_assert_eq!(check_value(&bytes).is_ok(), decoded);
            prop_assert_eq!(decode_value_as::<IgnoredAny>(&bytes).is_ok(), decoded);
        }
    }

    /// Around the 16 names kept in place and the hash set that takes over from the 17th: a
    /// repeat of the first or the last kept name, at the 16th, the 17th or a later name, and
    /// a repeat among the hashed names, are refused by `check_value`, `decode_value` and
    /// typed reads whatever the target (a map would otherwise keep one of the two); as many
    /// distinct names are not.
    #[test]
    fn typed_reads_refuse_repeats_around_the_sixteenth_name() {
        let all: Vec<String> = (0..24).map(|i| format!("n{i}")).collect();
        let first = |k: usize| all[..k].iter().map(String::as_str).collect::<Vec<&str>>();
        for k in [FEW_NAMES - 1, FEW_NAMES, FEW_NAMES + 1, 20] {
            let bytes = object_named(&first(k));
            assert_eq!(check_value(&bytes), Ok(()), "{k} names");
            assert!(decode_value(&bytes).is_ok(), "{k} names");
            let json = decode_value_as::<serde_json::Value>(&bytes).unwrap();
            assert_eq!(json.as_object().map(|o| o.len()), Some(k));
            assert_eq!(
                decode_value_as::<BTreeMap<String, ()>>(&bytes)
                    .unwrap()
                    .len(),
                k
            );
            assert!(decode_value_as::<IgnoredAny>(&bytes).is_ok());
        }
        for (k, repeated) in [
            (FEW_NAMES - 1, "n0"),
            (FEW_NAMES - 1, "n14"),
            (FEW_NAMES, "n0"),
            (FEW_NAMES, "n15"),
            (20, "n15"),
            (20, "n16"),
            (20, "n19"),
        ] {
            let mut names = first(k);
            // The repeat's name starts after the 3 bytes of version, tag and count, and
            // each name before it with its length byte and its value's tag.
            let at = 3 + names.iter().map(|n| n.len() + 2).sum::<usize>();
            names.push(repeated);
            let bytes = object_named(&names);
            let err = check_value(&bytes).unwrap_err();
            assert_eq!(err, corrupt(at, "duplicate property name"), "{names:?}");
            let generic = decode_value(&bytes).map(|_| ());
            assert_eq!(generic, Err(err.clone()), "{names:?}");
            let json = decode_value_as::<serde_json::Value>(&bytes).unwrap_err();
            assert_eq!(json, err, "{names:?}");
            let map = decode_value_as::<BTreeMap<String, ()>>(&bytes).unwrap_err();
            assert_eq!(map, err, "{names:?}");
            assert_eq!(
                decode_value_as::<Value>(&bytes).unwrap_err(),
                err,
                "{names:?}"
            );
            let ignored = decode_value_as::<IgnoredAny>(&bytes).unwrap_err();
            assert_eq!(ignored, err, "{names:?}");
        }
    }
}
