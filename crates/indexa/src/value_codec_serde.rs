//! Typed reads: a [`serde::Deserializer`] over a stored value's bytes (the value codec,
//! `value_codec.rs`), so a record decodes straight into the caller's type without building a
//! [`Value`](crate::Value) first.
//!
//! [`decode_value_as::<T>(bytes)`](decode_value_as) gives exactly what
//! [`from_value::<T>`](crate::from_value)`(`[`decode_value`](crate::decode_value)`(bytes)?)`
//! gives — the same mapping (`value_serde.rs`'s module docs), the same kinds of error, and the
//! same bytes refused as corrupt — with strings, binaries and property names borrowed from the
//! stored bytes while the type reads them. Properties the type ignores are checked and skipped
//! without being built.

use std::borrow::Cow;

use serde::de::{self, DeserializeOwned, DeserializeSeed, Visitor};

use crate::error::{Error, Result};
use crate::value_codec::{
    corrupt, PropertyNames, Reader, TAG_ARRAY, TAG_BINARY, TAG_DATE, TAG_FALSE, TAG_NULL,
    TAG_NUMBER, TAG_OBJECT, TAG_SMALL_INT, TAG_STRING, TAG_TRUE, TAG_UNDEFINED,
};
use crate::value_serde::{rust_string, visit_bytes_as_seq, visit_number, KeyDeserializer};

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
    /// A string: its text when it is UTF-8, else its code units (it holds a lone surrogate).
    String(std::result::Result<&'a str, crate::Utf16String>),
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
            TAG_ARRAY => Head::Array(r.container(TAG_ARRAY, self.depth)?),
            TAG_OBJECT => Head::Object(r.container(TAG_OBJECT, self.depth)?),
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
            Head::String(Err(units)) => visitor.visit_string(rust_string(units)?),
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
                    Err(units) => rust_string(units)?,
                },
                value: None,
            }),
            Head::Object(1) => {
                let members = self.members();
                let variant = match members.reader.text()? {
                    Ok(s) => s.to_owned(),
                    Err(units) => rust_string(units)?,
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
            Err(units) => Cow::Owned(rust_string(units)?),
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use proptest::prelude::*;
    use serde::de::IgnoredAny;
    use serde::{Deserialize, Serialize};

    use super::*;
    use crate::value_codec::testing::{same_value, value};
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
        // A repeated property name, an unknown tag, trailing bytes, another version.
        for bytes in [
            vec![1, 0x0A, 2, 1, b'a', 1, 1, b'a', 1],
            vec![1, 0x0B],
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
}
