//! Indexa: an embeddable database with IndexedDB's data model, durable on SQLite.
#![warn(missing_docs)]

mod error;
mod key;
mod key_encoding;
mod key_generator;
mod key_path;
mod key_range;
mod utf16;
mod value;

pub use error::{Error, Result};
pub use key::{compare_two_keys, convert_value_to_key, Key};
pub use key_encoding::{
    decode_key, encode_key, encode_key_into, KEY_ENCODING_VERSION, MAX_KEY_DEPTH,
};
pub use key_generator::{KeyGenerator, MAX_GENERATED_KEY};
pub use key_path::{
    check_that_a_key_could_be_injected_into_a_value, convert_value_to_multi_entry_key,
    evaluate_key_path_on_value, extract_key_from_value_using_key_path,
    inject_key_into_value_using_key_path, KeyPath, KeyPathExtraction,
};
pub use key_range::KeyRange;
pub use utf16::Utf16String;
pub use value::{Object, Value};
