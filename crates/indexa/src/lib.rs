//! Indexa: an embeddable database with IndexedDB's data model, durable on SQLite.
#![warn(missing_docs)]

mod error;
mod key;
mod text;
mod utf16;
mod value;
mod value_codec;
mod value_serde;

pub use error::{Error, Result};
pub use key::{compare_two_keys, convert_value_to_key, Key};
pub use text::{key_to_text, parse_key, parse_value, value_to_text, write_value, MAX_TEXT_DEPTH};
pub use utf16::Utf16String;
pub use value::{Object, Value};
pub use value_codec::{
    decode_value, encode_value, encode_value_into, MAX_VALUE_DEPTH, VALUE_FORMAT_VERSION,
};
pub use value_serde::{from_value, to_value};
