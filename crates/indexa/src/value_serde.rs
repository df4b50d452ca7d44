//! A serde bridge between Rust types and [`Value`], so applications can store their own types.
//!
//! [`to_value`] runs a [`serde::Serializer`] that builds a [`Value`]; [`from_value`] runs a
//! [`serde::Deserializer`] that reads one. The mapping:
//!
//! | Rust (serde data model)            | Value                                              |
//! |------------------------------------|----------------------------------------------------|
//! | `bool`                             | `Bool`                                             |
//! | integers                           | `Number`; beyond ±2^53 a `DataError`               |
//! | `f32`, `f64`                       | `Number` (NaN and `-0.0` kept)                     |
//! | `char`, `str`                      | `String`                                           |
//! | bytes                              | `Binary`                                           |
//! | `()`, `None`, unit struct          | `Null`                                             |
//! | `Some(x)`, newtype struct          | the value of `x`                                   |
//! | sequence, tuple, tuple struct      | `Array`                                            |
//! | map                                | `Object` (string, char or integer keys)            |
//! | struct                             | `Object`, fields in declaration order              |
//! | enum                               | externally tagged, as `serde_json` does: `"Unit"`, |
//! |                                    | `{"Newtype": x}`, `{"Tuple": […]}`, `{"Struct": {…}}` |
//!
//! Reading back, a `Number` that is an integer feeds integer fields (`u32`, `i64`, …; out of
//! range is a `TypeError`), `Null` and `Undefined` read as `()` and `None`, a `Date` reads as
//! its time value in milliseconds (`f64`), and a `Binary` reads as bytes or as a sequence of
//! `u8` (so `Vec<u8>` works).
//!
//! [`Value`] itself implements `Serialize` and `Deserialize`, so it can be a field of a user
//! type: through other formats a `Date` becomes its milliseconds and a `Binary` its bytes.

use std::borrow::Cow;
use std::fmt;

use serde::de::{self, DeserializeSeed, IntoDeserializer, Visitor};
use serde::ser::{self, Impossible, Serialize};

use crate::error::{Error, Result};
use crate::object::Object;
use crate::utf16::Utf16String;
use crate::value::Value;

/// Converts any `Serialize` type to a [`Value`] (mapping in the module docs).
///
/// # Errors
/// [`Error::Data`] when an integer is beyond ±2^53 (not exactly a JavaScript Number), when a map
/// key is neither a string, a char, an integer nor a unit enum variant, or when the type's
/// `Serialize` implementation reports an error.
///
/// Source: the serde data model (<https://serde.rs/data-model.html>), mapped as in the module
/// docs.
pub fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value> {
    value.serialize(ValueSerializer)
}

/// Converts a [`Value`] to any `DeserializeOwned` type (mapping in the module docs).
///
/// # Errors
/// [`Error::Type`] when the value does not have the shape `T` expects: a kind mismatch, an
/// integer out of the field's range, a missing field, an unknown enum variant, a string with a
/// lone surrogate read as a Rust string, or an error the type's `Deserialize` reports.
///
/// Source: the serde data model (<https://serde.rs/data-model.html>), mapped as in the module
/// docs.
pub fn from_value<T: de::DeserializeOwned>(value: Value) -> Result<T> {
    T::deserialize(ValueDeserializer(value))
}

impl ser::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::Data(msg.to_string())
    }
}

impl de::Error for Error {
    fn custom<T: fmt::Display>(msg: T) -> Self {
        Error::Type(msg.to_string())
    }
}

/// 2^53: integers up to this magnitude are exact in an `f64`.
const MAX_SAFE_MAGNITUDE: u128 = 1 << 53;

/// The Number an integer of this magnitude and sign is, when it is exact as one.
///
/// # Errors
/// [`Error::Data`] beyond ±2^53.
pub(crate) fn exact_integer(magnitude: u128, negative: bool) -> Result<f64> {
    if magnitude > MAX_SAFE_MAGNITUDE {
        let sign = if negative { "-" } else { "" };
        return Err(Error::Data(format!(
            "the integer {sign}{magnitude} is beyond ±2^53, so it is not exact as a Number"
        )));
    }
    // At most 2^53, so the conversion is exact.
    let n = magnitude as f64;
    Ok(if negative { -n } else { n })
}

fn integer(magnitude: u128, negative: bool) -> Result<Value> {
    exact_integer(magnitude, negative).map(Value::Number)
}

fn signed(n: i128) -> Result<Value> {
    integer(n.unsigned_abs(), n < 0)
}

struct ValueSerializer;

impl ser::Serializer for ValueSerializer {
    type Ok = Value;
    type Error = Error;
    type SerializeSeq = SerializeArray;
    type SerializeTuple = SerializeArray;
    type SerializeTupleStruct = SerializeArray;
    type SerializeTupleVariant = SerializeArrayVariant;
    type SerializeMap = SerializeObject;
    type SerializeStruct = SerializeObject;
    type SerializeStructVariant = SerializeObjectVariant;

    fn serialize_bool(self, v: bool) -> Result<Value> {
        Ok(Value::Bool(v))
    }

    fn serialize_i8(self, v: i8) -> Result<Value> {
        Ok(Value::Number(f64::from(v)))
    }

    fn serialize_i16(self, v: i16) -> Result<Value> {
        Ok(Value::Number(f64::from(v)))
    }

    fn serialize_i32(self, v: i32) -> Result<Value> {
        Ok(Value::Number(f64::from(v)))
    }

    fn serialize_i64(self, v: i64) -> Result<Value> {
        signed(i128::from(v))
    }

    fn serialize_i128(self, v: i128) -> Result<Value> {
        signed(v)
    }

    fn serialize_u8(self, v: u8) -> Result<Value> {
        Ok(Value::Number(f64::from(v)))
    }

    fn serialize_u16(self, v: u16) -> Result<Value> {
        Ok(Value::Number(f64::from(v)))
    }

    fn serialize_u32(self, v: u32) -> Result<Value> {
        Ok(Value::Number(f64::from(v)))
    }

    fn serialize_u64(self, v: u64) -> Result<Value> {
        integer(u128::from(v), false)
    }

    fn serialize_u128(self, v: u128) -> Result<Value> {
        integer(v, false)
    }

    fn serialize_f32(self, v: f32) -> Result<Value> {
        Ok(Value::Number(f64::from(v)))
    }

    fn serialize_f64(self, v: f64) -> Result<Value> {
        Ok(Value::Number(v))
    }

    fn serialize_char(self, v: char) -> Result<Value> {
        let mut buf = [0u16; 2];
        Ok(Value::String(Utf16String::from_units(
            v.encode_utf16(&mut buf).to_vec(),
        )))
    }

    fn serialize_str(self, v: &str) -> Result<Value> {
        Ok(Value::string(v))
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<Value> {
        Ok(Value::Binary(v.to_vec()))
    }

    fn serialize_none(self) -> Result<Value> {
        Ok(Value::Null)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Value> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<Value> {
        Ok(Value::Null)
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<Value> {
        Ok(Value::Null)
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Value> {
        Ok(Value::string(variant))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Value> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<Value> {
        let mut map = Object::with_capacity(1);
        map.insert(
            Utf16String::from(variant),
            value.serialize(ValueSerializer)?,
        );
        Ok(Value::Object(map))
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<SerializeArray> {
        Ok(SerializeArray(Vec::with_capacity(len.unwrap_or(0))))
    }

    fn serialize_tuple(self, len: usize) -> Result<SerializeArray> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SerializeArray> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<SerializeArrayVariant> {
        Ok(SerializeArrayVariant {
            variant,
            items: Vec::with_capacity(len),
        })
    }

    fn serialize_map(self, len: Option<usize>) -> Result<SerializeObject> {
        Ok(SerializeObject {
            map: Object::with_capacity(len.unwrap_or(0)),
            next_key: None,
        })
    }

    fn serialize_struct(self, _name: &'static str, len: usize) -> Result<SerializeObject> {
        self.serialize_map(Some(len))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<SerializeObjectVariant> {
        Ok(SerializeObjectVariant {
            variant,
            map: Object::with_capacity(len),
        })
    }
}

struct SerializeArray(Vec<Value>);

impl ser::SerializeSeq for SerializeArray {
    type Ok = Value;
    type Error = Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.0.push(value.serialize(ValueSerializer)?);
        Ok(())
    }

    fn end(self) -> Result<Value> {
        Ok(Value::Array(self.0))
    }
}

impl ser::SerializeTuple for SerializeArray {
    type Ok = Value;
    type Error = Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<Value> {
        ser::SerializeSeq::end(self)
    }
}

impl ser::SerializeTupleStruct for SerializeArray {
    type Ok = Value;
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        ser::SerializeSeq::serialize_element(self, value)
    }

    fn end(self) -> Result<Value> {
        ser::SerializeSeq::end(self)
    }
}

struct SerializeArrayVariant {
    variant: &'static str,
    items: Vec<Value>,
}

impl ser::SerializeTupleVariant for SerializeArrayVariant {
    type Ok = Value;
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        self.items.push(value.serialize(ValueSerializer)?);
        Ok(())
    }

    fn end(self) -> Result<Value> {
        let mut map = Object::with_capacity(1);
        map.insert(Utf16String::from(self.variant), Value::Array(self.items));
        Ok(Value::Object(map))
    }
}

struct SerializeObject {
    map: Object,
    next_key: Option<Utf16String>,
}

impl ser::SerializeMap for SerializeObject {
    type Ok = Value;
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<()> {
        self.next_key = Some(key.serialize(KeySerializer)?);
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<()> {
        let key = self
            .next_key
            .take()
            .ok_or_else(|| Error::Data("a map value was serialized before its key".into()))?;
        self.map.insert(key, value.serialize(ValueSerializer)?);
        Ok(())
    }

    fn end(self) -> Result<Value> {
        Ok(Value::Object(self.map))
    }
}

impl ser::SerializeStruct for SerializeObject {
    type Ok = Value;
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.map
            .insert(Utf16String::from(key), value.serialize(ValueSerializer)?);
        Ok(())
    }

    fn end(self) -> Result<Value> {
        Ok(Value::Object(self.map))
    }
}

struct SerializeObjectVariant {
    variant: &'static str,
    map: Object,
}

impl ser::SerializeStructVariant for SerializeObjectVariant {
    type Ok = Value;
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<()> {
        self.map
            .insert(Utf16String::from(key), value.serialize(ValueSerializer)?);
        Ok(())
    }

    fn end(self) -> Result<Value> {
        let mut outer = Object::with_capacity(1);
        outer.insert(Utf16String::from(self.variant), Value::Object(self.map));
        Ok(Value::Object(outer))
    }
}

/// Serializes a map key to a property name: strings and chars as they are, integers as their
/// decimal text (as JavaScript names array-like properties), unit variants by name.
pub(crate) struct KeySerializer;

fn bad_key(kind: &str) -> Error {
    Error::Data(format!(
        "a map key must be a string, a char or an integer, not {kind}"
    ))
}

fn decimal(n: impl fmt::Display) -> Result<Utf16String> {
    Ok(Utf16String::from(n.to_string()))
}

impl ser::Serializer for KeySerializer {
    type Ok = Utf16String;
    type Error = Error;
    type SerializeSeq = Impossible<Utf16String, Error>;
    type SerializeTuple = Impossible<Utf16String, Error>;
    type SerializeTupleStruct = Impossible<Utf16String, Error>;
    type SerializeTupleVariant = Impossible<Utf16String, Error>;
    type SerializeMap = Impossible<Utf16String, Error>;
    type SerializeStruct = Impossible<Utf16String, Error>;
    type SerializeStructVariant = Impossible<Utf16String, Error>;

    fn serialize_bool(self, _v: bool) -> Result<Utf16String> {
        Err(bad_key("a bool"))
    }

    fn serialize_i8(self, v: i8) -> Result<Utf16String> {
        decimal(v)
    }

    fn serialize_i16(self, v: i16) -> Result<Utf16String> {
        decimal(v)
    }

    fn serialize_i32(self, v: i32) -> Result<Utf16String> {
        decimal(v)
    }

    fn serialize_i64(self, v: i64) -> Result<Utf16String> {
        decimal(v)
    }

    fn serialize_i128(self, v: i128) -> Result<Utf16String> {
        decimal(v)
    }

    fn serialize_u8(self, v: u8) -> Result<Utf16String> {
        decimal(v)
    }

    fn serialize_u16(self, v: u16) -> Result<Utf16String> {
        decimal(v)
    }

    fn serialize_u32(self, v: u32) -> Result<Utf16String> {
        decimal(v)
    }

    fn serialize_u64(self, v: u64) -> Result<Utf16String> {
        decimal(v)
    }

    fn serialize_u128(self, v: u128) -> Result<Utf16String> {
        decimal(v)
    }

    fn serialize_f32(self, _v: f32) -> Result<Utf16String> {
        Err(bad_key("a float"))
    }

    fn serialize_f64(self, _v: f64) -> Result<Utf16String> {
        Err(bad_key("a float"))
    }

    fn serialize_char(self, v: char) -> Result<Utf16String> {
        let mut buf = [0u16; 2];
        Ok(Utf16String::from_units(v.encode_utf16(&mut buf).to_vec()))
    }

    fn serialize_str(self, v: &str) -> Result<Utf16String> {
        Ok(Utf16String::from(v))
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<Utf16String> {
        Err(bad_key("bytes"))
    }

    fn serialize_none(self) -> Result<Utf16String> {
        Err(bad_key("None"))
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<Utf16String> {
        Err(bad_key("an Option"))
    }

    fn serialize_unit(self) -> Result<Utf16String> {
        Err(bad_key("()"))
    }

    fn serialize_unit_struct(self, name: &'static str) -> Result<Utf16String> {
        Err(bad_key(&format!("the unit struct {name}")))
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<Utf16String> {
        Ok(Utf16String::from(variant))
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<Utf16String> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _value: &T,
    ) -> Result<Utf16String> {
        Err(bad_key(&format!("the enum variant {variant} with data")))
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq> {
        Err(bad_key("a sequence"))
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple> {
        Err(bad_key("a tuple"))
    }

    fn serialize_tuple_struct(
        self,
        name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct> {
        Err(bad_key(&format!("the tuple struct {name}")))
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant> {
        Err(bad_key(&format!("the enum variant {variant} with data")))
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap> {
        Err(bad_key("a map"))
    }

    fn serialize_struct(self, name: &'static str, _len: usize) -> Result<Self::SerializeStruct> {
        Err(bad_key(&format!("the struct {name}")))
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant> {
        Err(bad_key(&format!("the enum variant {variant} with data")))
    }
}

/// Reads a [`Value`] through serde.
struct ValueDeserializer(Value);

pub(crate) fn rust_string(s: Utf16String) -> Result<String> {
    s.to_string().ok_or_else(|| {
        Error::Type(format!(
            "the string {s:?} holds a lone surrogate, which a Rust string cannot hold"
        ))
    })
}

/// The kind of a value, for error messages.
fn unexpected(value: &Value) -> de::Unexpected<'_> {
    match value {
        Value::Undefined => de::Unexpected::Other("undefined"),
        Value::Null => de::Unexpected::Unit,
        Value::Bool(b) => de::Unexpected::Bool(*b),
        Value::Number(n) => de::Unexpected::Float(*n),
        Value::String(_) => de::Unexpected::Other("a string"),
        Value::Date(_) => de::Unexpected::Other("a date"),
        Value::Binary(b) => de::Unexpected::Bytes(b),
        Value::Array(_) => de::Unexpected::Seq,
        Value::Object(_) => de::Unexpected::Map,
    }
}

fn visit_array<'de, V: Visitor<'de>>(items: Vec<Value>, visitor: V) -> Result<V::Value> {
    let len = items.len();
    let mut access = SeqAccess(items.into_iter());
    let out = visitor.visit_seq(&mut access)?;
    if access.0.len() != 0 {
        return Err(de::Error::invalid_length(
            len,
            &"fewer elements in the array",
        ));
    }
    Ok(out)
}

pub(crate) fn visit_bytes_as_seq<'de, V: Visitor<'de>>(
    bytes: impl ExactSizeIterator<Item = u8>,
    visitor: V,
) -> Result<V::Value> {
    let len = bytes.len();
    let mut access = de::value::SeqDeserializer::new(bytes);
    let out = visitor.visit_seq(&mut access)?;
    access
        .end()
        .map_err(|_: Error| de::Error::invalid_length(len, &"fewer bytes"))?;
    Ok(out)
}

fn visit_object<'de, V: Visitor<'de>>(map: Object, visitor: V) -> Result<V::Value> {
    let len = map.len();
    let mut access = MapAccess {
        iter: map.into_iter(),
        value: None,
    };
    let out = visitor.visit_map(&mut access)?;
    if access.iter.len() != 0 {
        return Err(de::Error::invalid_length(
            len,
            &"fewer properties in the object",
        ));
    }
    Ok(out)
}

/// 2^64 and 2^63 as `f64`, the exclusive bounds of the integer visitors.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;
const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;

/// Visits a Number: an integer as `u64` or `i64` when it fits, anything else as `f64`.
pub(crate) fn visit_number<'de, V: Visitor<'de>>(n: f64, visitor: V) -> Result<V::Value> {
    let integral = n.fract() == 0.0 && !(n == 0.0 && n.is_sign_negative());
    if integral && (0.0..TWO_POW_64).contains(&n) {
        // Integral and in range, so the conversion is exact.
        visitor.visit_u64(n as u64)
    } else if integral && (-TWO_POW_63..0.0).contains(&n) {
        visitor.visit_i64(n as i64)
    } else {
        visitor.visit_f64(n)
    }
}

impl<'de> de::Deserializer<'de> for ValueDeserializer {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            Value::Undefined => visitor.visit_none(),
            Value::Null => visitor.visit_unit(),
            Value::Bool(b) => visitor.visit_bool(b),
            Value::Number(n) => visit_number(n, visitor),
            Value::String(s) => visitor.visit_string(rust_string(s)?),
            Value::Date(ms) => visitor.visit_f64(ms),
            Value::Binary(bytes) => visitor.visit_byte_buf(bytes),
            Value::Array(items) => visit_array(items, visitor),
            Value::Object(map) => visit_object(map, visitor),
        }
    }

    fn deserialize_f32<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        self.deserialize_f64(visitor)
    }

    fn deserialize_f64<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            Value::Number(n) | Value::Date(n) => visitor.visit_f64(n),
            other => ValueDeserializer(other).deserialize_any(visitor),
        }
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            Value::Undefined | Value::Null => visitor.visit_none(),
            other => visitor.visit_some(ValueDeserializer(other)),
        }
    }

    fn deserialize_unit<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            Value::Undefined | Value::Null => visitor.visit_unit(),
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

    fn deserialize_seq<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            Value::Binary(bytes) => visit_bytes_as_seq(bytes.into_iter(), visitor),
            other => ValueDeserializer(other).deserialize_any(visitor),
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
        self,
        name: &'static str,
        _variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match self.0 {
            Value::String(s) => visitor.visit_enum(EnumAccess {
                variant: rust_string(s)?,
                value: None,
            }),
            Value::Object(map) => {
                let mut members = map.into_iter();
                match (members.next(), members.next()) {
                    (Some((variant, value)), None) => visitor.visit_enum(EnumAccess {
                        variant: rust_string(variant)?,
                        value: Some(value),
                    }),
                    _ => Err(de::Error::invalid_type(
                        de::Unexpected::Map,
                        &format!("a {name} variant name or an object with one property").as_str(),
                    )),
                }
            }
            other => Err(de::Error::invalid_type(
                unexpected(&other),
                &format!("a {name} variant name or an object with one property").as_str(),
            )),
        }
    }

    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
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

struct SeqAccess(std::vec::IntoIter<Value>);

impl<'de> de::SeqAccess<'de> for SeqAccess {
    type Error = Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<Option<T::Value>> {
        match self.0.next() {
            Some(value) => seed.deserialize(ValueDeserializer(value)).map(Some),
            None => Ok(None),
        }
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.0.len())
    }
}

struct MapAccess {
    iter: crate::object::IntoIter,
    value: Option<Value>,
}

impl<'de> de::MapAccess<'de> for MapAccess {
    type Error = Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(&mut self, seed: K) -> Result<Option<K::Value>> {
        match self.iter.next() {
            Some((name, value)) => {
                self.value = Some(value);
                seed.deserialize(KeyDeserializer(Cow::Owned(rust_string(name)?)))
                    .map(Some)
            }
            None => Ok(None),
        }
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(&mut self, seed: V) -> Result<V::Value> {
        let value = self
            .value
            .take()
            .ok_or_else(|| Error::Type("a map value was read before its key".into()))?;
        seed.deserialize(ValueDeserializer(value))
    }

    fn size_hint(&self) -> Option<usize> {
        Some(self.iter.len())
    }
}

/// Reads a property name as a map key: as a string, or as the integer its decimal text spells
/// for integer keys. A borrowed name is visited as borrowed.
pub(crate) struct KeyDeserializer<'de>(pub(crate) Cow<'de, str>);

macro_rules! key_integer {
    ($($method:ident => $visit:ident: $ty:ty),* $(,)?) => {
        $(
            fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
                match self.0.parse::<$ty>() {
                    Ok(n) => visitor.$visit(n),
                    Err(_) => Err(de::Error::invalid_value(
                        de::Unexpected::Str(&self.0),
                        &"a property name that is an integer's decimal text",
                    )),
                }
            }
        )*
    };
}

impl<'de> de::Deserializer<'de> for KeyDeserializer<'de> {
    type Error = Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        match self.0 {
            Cow::Borrowed(s) => visitor.visit_borrowed_str(s),
            Cow::Owned(s) => visitor.visit_string(s),
        }
    }

    key_integer! {
        deserialize_i8 => visit_i8: i8,
        deserialize_i16 => visit_i16: i16,
        deserialize_i32 => visit_i32: i32,
        deserialize_i64 => visit_i64: i64,
        deserialize_i128 => visit_i128: i128,
        deserialize_u8 => visit_u8: u8,
        deserialize_u16 => visit_u16: u16,
        deserialize_u32 => visit_u32: u32,
        deserialize_u64 => visit_u64: u64,
        deserialize_u128 => visit_u128: u128,
    }

    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value> {
        visitor.visit_some(self)
    }

    fn deserialize_newtype_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        visitor: V,
    ) -> Result<V::Value> {
        visitor.visit_newtype_struct(self)
    }

    fn deserialize_enum<V: Visitor<'de>>(
        self,
        name: &'static str,
        variants: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        let inner: de::value::CowStrDeserializer<Error> = self.0.into_deserializer();
        inner.deserialize_enum(name, variants, visitor)
    }

    serde::forward_to_deserialize_any! {
        bool f32 f64 char str string bytes byte_buf unit unit_struct seq tuple tuple_struct
        map struct identifier ignored_any
    }
}

struct EnumAccess {
    variant: String,
    value: Option<Value>,
}

impl<'de> de::EnumAccess<'de> for EnumAccess {
    type Error = Error;
    type Variant = VariantAccess;

    fn variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<(T::Value, VariantAccess)> {
        let name: de::value::StringDeserializer<Error> = self.variant.into_deserializer();
        let variant = seed.deserialize(name)?;
        Ok((variant, VariantAccess(self.value)))
    }
}

struct VariantAccess(Option<Value>);

impl<'de> de::VariantAccess<'de> for VariantAccess {
    type Error = Error;

    fn unit_variant(self) -> Result<()> {
        match self.0 {
            None | Some(Value::Null) => Ok(()),
            Some(other) => Err(de::Error::invalid_type(
                unexpected(&other),
                &"a unit variant",
            )),
        }
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value> {
        match self.0 {
            Some(value) => seed.deserialize(ValueDeserializer(value)),
            None => Err(de::Error::invalid_type(
                de::Unexpected::UnitVariant,
                &"a newtype variant",
            )),
        }
    }

    fn tuple_variant<V: Visitor<'de>>(self, _len: usize, visitor: V) -> Result<V::Value> {
        match self.0 {
            Some(Value::Array(items)) => visit_array(items, visitor),
            Some(other) => Err(de::Error::invalid_type(
                unexpected(&other),
                &"a tuple variant",
            )),
            None => Err(de::Error::invalid_type(
                de::Unexpected::UnitVariant,
                &"a tuple variant",
            )),
        }
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        _fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value> {
        match self.0 {
            Some(Value::Object(map)) => visit_object(map, visitor),
            Some(Value::Array(items)) => visit_array(items, visitor),
            Some(other) => Err(de::Error::invalid_type(
                unexpected(&other),
                &"a struct variant",
            )),
            None => Err(de::Error::invalid_type(
                de::Unexpected::UnitVariant,
                &"a struct variant",
            )),
        }
    }
}

impl Serialize for Value {
    /// Serializes as the nearest serde data: `Undefined` as `None`, `Null` as `()`, a `Date` as
    /// its milliseconds (`f64`), a `Binary` as bytes, a string with a lone surrogate with U+FFFD
    /// in its place.
    fn serialize<S: ser::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use ser::{SerializeMap as _, SerializeSeq as _};
        match self {
            Value::Undefined => serializer.serialize_none(),
            Value::Null => serializer.serialize_unit(),
            Value::Bool(b) => serializer.serialize_bool(*b),
            Value::Number(n) | Value::Date(n) => serializer.serialize_f64(*n),
            Value::String(s) => serializer.serialize_str(&s.to_string_lossy()),
            Value::Binary(bytes) => serializer.serialize_bytes(bytes),
            Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Value::Object(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                for (name, item) in map {
                    out.serialize_entry(&name.to_string_lossy(), item)?;
                }
                out.end()
            }
        }
    }
}

impl<'de> de::Deserialize<'de> for Value {
    /// Deserializes any self-describing data: `None` as `Undefined`, `()` as `Null`, integers
    /// and floats as `Number` (integers beyond ±2^53 rounded to the nearest `f64`), strings as
    /// `String`, bytes as `Binary`, sequences as `Array` and maps (string keys) as `Object`.
    fn deserialize<D: de::Deserializer<'de>>(deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }
}

struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any value")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }

    fn visit_i128<E>(self, v: i128) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }

    fn visit_u128<E>(self, v: u128) -> Result<Value, E> {
        Ok(Value::Number(v as f64))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::Number(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::string(v))
    }

    fn visit_bytes<E>(self, v: &[u8]) -> Result<Value, E> {
        Ok(Value::Binary(v.to_vec()))
    }

    fn visit_byte_buf<E>(self, v: Vec<u8>) -> Result<Value, E> {
        Ok(Value::Binary(v))
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Undefined)
    }

    fn visit_some<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_newtype_struct<D: de::Deserializer<'de>>(
        self,
        deserializer: D,
    ) -> Result<Value, D::Error> {
        deserializer.deserialize_any(ValueVisitor)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        // The hint comes from the input, so it only caps, never raises, the allocation.
        let mut items = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(4096));
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut access: A) -> Result<Value, A::Error> {
        let mut map = Object::with_capacity(access.size_hint().unwrap_or(0).min(4096));
        while let Some((name, item)) = access.next_entry::<String, Value>()? {
            map.insert(Utf16String::from(name), item);
        }
        Ok(Value::Object(map))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashMap};

    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::value_codec::testing::same_value;

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    enum Shape {
        Point,
        Circle(f64),
        Rect(u32, u32),
        Poly { sides: u8, name: String },
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Inner {
        tags: Vec<String>,
        weight: Option<f64>,
    }

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Record {
        id: u64,
        score: f64,
        name: String,
        nested: Vec<Inner>,
        maybe: Option<i32>,
        shapes: Vec<Shape>,
        counts: HashMap<String, u32>,
        by_number: BTreeMap<u32, String>,
        bytes: Vec<u8>,
        letter: char,
        unit: (),
        pair: (i8, bool),
    }

    fn record() -> Record {
        Record {
            id: 9_007_199_254_740_992,
            score: -0.0,
            name: "né\u{1D11E}".into(),
            nested: vec![
                Inner {
                    tags: vec!["a".into(), String::new()],
                    weight: Some(1.5),
                },
                Inner {
                    tags: vec![],
                    weight: None,
                },
            ],
            maybe: Some(-7),
            shapes: vec![
                Shape::Point,
                Shape::Circle(2.5),
                Shape::Rect(3, 4),
                Shape::Poly {
                    sides: 6,
                    name: "hex".into(),
                },
            ],
            counts: HashMap::from([("x".to_string(), 1), ("y".to_string(), 2)]),
            by_number: BTreeMap::from([(2, "two".to_string()), (10, "ten".to_string())]),
            bytes: vec![0, 255],
            letter: 'z',
            unit: (),
            pair: (-3, true),
        }
    }

    #[test]
    fn struct_round_trips() {
        let r = record();
        let v = to_value(&r).unwrap();
        let back: Record = from_value(v.clone()).unwrap();
        assert_eq!(back, r);
        assert!(back.score.is_sign_negative());
        // Field order and shapes.
        let Value::Object(map) = &v else {
            panic!("{v:?}")
        };
        let names: Vec<String> = map.keys().map(|k| k.to_string_lossy()).collect();
        assert_eq!(
            names,
            [
                "id",
                "score",
                "name",
                "nested",
                "maybe",
                "shapes",
                "counts",
                "by_number",
                "bytes",
                "letter",
                "unit",
                "pair"
            ]
        );
        assert_eq!(v.get("id"), Some(&Value::Number(9_007_199_254_740_992.0)));
        assert_eq!(v.get("unit"), Some(&Value::Null));
        assert_eq!(
            crate::text::value_to_text(v.get("shapes").unwrap()),
            r#"["Point",{"Circle":2.5},{"Rect":[3,4]},{"Poly":{"sides":6,"name":"hex"}}]"#
        );
        assert_eq!(
            crate::text::value_to_text(v.get("by_number").unwrap()),
            r#"{"2":"two","10":"ten"}"#
        );
        assert_eq!(
            v.get("nested").and_then(|n| match n {
                Value::Array(items) => items[1].get("weight"),
                _ => None,
            }),
            Some(&Value::Null)
        );
        // `Vec<u8>` serializes as a sequence, but also reads from a Binary.
        let mut v = v;
        if let Value::Object(map) = &mut v {
            map.insert(Utf16String::from("bytes"), Value::Binary(vec![0, 255]));
        }
        assert_eq!(from_value::<Record>(v).unwrap(), r);
    }

    #[test]
    fn integers_beyond_two_pow_53_are_data_errors() {
        assert_eq!(to_value(&u64::MAX).unwrap_err().name(), "DataError");
        assert_eq!(to_value(&(i64::MIN)).unwrap_err().name(), "DataError");
        assert_eq!(
            to_value(&((1u64 << 53) + 1)).unwrap_err().name(),
            "DataError"
        );
        assert_eq!(
            to_value(&(-(1i64 << 53) - 1)).unwrap_err().name(),
            "DataError"
        );
        assert_eq!(
            to_value(&(1u64 << 53)).unwrap(),
            Value::Number(9007199254740992.0)
        );
        assert_eq!(
            to_value(&-(1i128 << 53)).unwrap(),
            Value::Number(-9007199254740992.0)
        );
        assert_eq!(to_value(&u128::MAX).unwrap_err().name(), "DataError");
    }

    #[test]
    fn scalars() {
        assert_eq!(to_value(&true).unwrap(), Value::Bool(true));
        assert_eq!(to_value(&1.5f32).unwrap(), Value::Number(1.5));
        let nan = to_value(&f64::NAN).unwrap();
        assert!(same_value(&nan, &Value::Number(f64::NAN), true));
        assert_eq!(to_value(&'é').unwrap(), Value::string("é"));
        assert_eq!(to_value(&None::<u8>).unwrap(), Value::Null);
        assert_eq!(to_value(&Some(3u8)).unwrap(), Value::Number(3.0));
        assert_eq!(
            to_value(&Bytes(&[1, 2])).unwrap(),
            Value::Binary(vec![1, 2])
        );
        assert_eq!(from_value::<u32>(Value::Number(7.0)).unwrap(), 7);
        assert_eq!(from_value::<i64>(Value::Number(-7.0)).unwrap(), -7);
        assert_eq!(from_value::<f64>(Value::Number(7.0)).unwrap(), 7.0);
        assert_eq!(from_value::<f64>(Value::Date(5.0)).unwrap(), 5.0);
        assert!(from_value::<f64>(Value::Number(-0.0))
            .unwrap()
            .is_sign_negative());
        assert_eq!(from_value::<Option<u8>>(Value::Undefined).unwrap(), None);
        assert_eq!(from_value::<()>(Value::Null).unwrap(), ());
        assert_eq!(from_value::<i128>(Value::Number(-2.0)).unwrap(), -2);
    }

    /// Bytes that serialize through `serialize_bytes`.
    struct Bytes<'a>(&'a [u8]);

    impl Serialize for Bytes<'_> {
        fn serialize<S: ser::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.serialize_bytes(self.0)
        }
    }

    #[test]
    fn mismatches_are_type_errors() {
        let cases = [
            from_value::<u32>(Value::Number(1.5)).map(|_| ()),
            from_value::<u8>(Value::Number(256.0)).map(|_| ()),
            from_value::<u32>(Value::Number(-1.0)).map(|_| ()),
            from_value::<String>(Value::Number(1.0)).map(|_| ()),
            from_value::<bool>(Value::Null).map(|_| ()),
            from_value::<Vec<u8>>(Value::string("x")).map(|_| ()),
            from_value::<Record>(Value::Object(Object::default())).map(|_| ()),
            from_value::<Shape>(Value::string("Hexagon")).map(|_| ()),
            from_value::<(u8, u8)>(Value::Array(vec![1.into()])).map(|_| ()),
            from_value::<(u8,)>(Value::Array(vec![1.into(), 2.into()])).map(|_| ()),
            from_value::<String>(Value::String(Utf16String::from_units(vec![0xD800]))).map(|_| ()),
            from_value::<()>(Value::Bool(false)).map(|_| ()),
        ];
        for (i, case) in cases.into_iter().enumerate() {
            assert_eq!(case.unwrap_err().name(), "TypeError", "case {i}");
        }
    }

    #[test]
    fn map_keys() {
        let m = HashMap::from([(-3i64, true)]);
        assert_eq!(
            crate::text::value_to_text(&to_value(&m).unwrap()),
            r#"{"-3":true}"#
        );
        assert_eq!(
            from_value::<HashMap<i64, bool>>(to_value(&m).unwrap()).unwrap(),
            m
        );
        let bad = HashMap::from([((1, 2), true)]);
        assert_eq!(to_value(&bad).unwrap_err().name(), "DataError");
        let floats = BTreeMap::from([(vec![1u8], 1)]);
        assert_eq!(to_value(&floats).unwrap_err().name(), "DataError");
        let not_int = Value::Object(Object::from_iter([(Utf16String::from("x"), Value::Null)]));
        assert_eq!(
            from_value::<HashMap<u8, ()>>(not_int).unwrap_err().name(),
            "TypeError"
        );
    }

    #[test]
    fn value_inside_user_types() {
        #[derive(Debug, Serialize, Deserialize, PartialEq)]
        struct Holder {
            any: Value,
        }
        let any = Value::Array(vec![
            Value::Null,
            Value::Undefined,
            Value::string("s"),
            Value::Number(2.5),
            Value::Bool(false),
            Value::Binary(vec![1]),
            Value::Object(Object::from_iter([(
                Utf16String::from("k"),
                Value::from(1),
            )])),
        ]);
        let holder = Holder { any: any.clone() };
        let back: Holder = from_value(to_value(&holder).unwrap()).unwrap();
        // `Undefined` serializes as `None`, which this bridge writes as `Null`.
        let mut expected = any;
        if let Value::Array(items) = &mut expected {
            items[1] = Value::Null;
        }
        assert_eq!(back.any, expected);
        // Through serde_json too.
        let json = serde_json::to_string(&Value::Array(vec![
            Value::Date(3.0),
            Value::string("x"),
            Value::Null,
        ]))
        .unwrap();
        assert_eq!(json, r#"[3.0,"x",null]"#);
        let read: Value = serde_json::from_str(r#"{"a":[1,-2,0.5,null,true]}"#).unwrap();
        assert_eq!(
            crate::text::value_to_text(&read),
            r#"{"a":[1,-2,0.5,null,true]}"#
        );
    }
}
