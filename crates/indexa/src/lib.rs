//! Indexa: an embeddable database with IndexedDB's data model, durable on SQLite.
#![warn(missing_docs)]

mod error;
mod key;
mod key_encoding;
mod utf16;
mod value;

pub use error::{Error, Result};
pub use key::{compare_two_keys, convert_value_to_key, Key};
pub use key_encoding::{decode_key, encode_key, encode_key_into, KEY_ENCODING_VERSION, MAX_KEY_DEPTH};
pub use utf16::Utf16String;
pub use value::{Object, Value};
