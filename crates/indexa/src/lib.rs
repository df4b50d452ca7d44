//! Indexa: an embeddable database with IndexedDB's data model, durable on SQLite.
//!
//! The data model and every algorithm follow W3C "Indexed Database API 3.0"
//! (<https://www.w3.org/TR/IndexedDB-3/>) and the seed documents in `shared/seeds`: keys and
//! their order, key paths, key generators, object stores, indexes (unique, multiEntry,
//! compound), key ranges, cursors and transactions. Each database is one SQLite file.
//!
//! ```
//! use indexa::{Factory, Key, KeyPath, KeyRange, Query, TransactionMode, Value};
//!
//! # fn main() -> indexa::Result<()> {
//! let factory = Factory::temporary()?; // or Factory::open_dir("data")?
//! let db = factory.open("library", Some(1), |tx, _old, _new| {
//!     let books = tx.create_object_store("books", Some(KeyPath::parse("isbn")?), false)?;
//!     books.create_index("by_author", KeyPath::parse("author")?, false, false)?;
//!     Ok(())
//! })?;
//!
//! let tx = db.transaction(&["books"], TransactionMode::ReadWrite)?;
//! let books = tx.object_store("books")?;
//! books.put(indexa::parse_value(r#"{"isbn":"978-84","author":"Cortázar","title":"Rayuela"}"#)?, None)?;
//! tx.commit()?;
//!
//! let tx = db.transaction(&["books"], TransactionMode::ReadOnly)?;
//! let by_author = tx.object_store("books")?.index("by_author")?;
//! let found = by_author.get_all(Query::from(KeyRange::prefix("Cort")))?;
//! assert_eq!(found[0].get("title"), Some(&Value::from("Rayuela")));
//! assert_eq!(by_author.get_key(Key::from("Cortázar"))?, Some(Key::from("978-84")));
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

mod backend;
mod connection_lock;
mod cursor;
mod database;
mod error;
mod factory;
mod index;
mod key;
mod key_encoding;
mod key_generator;
mod key_path;
mod key_range;
pub mod object;
mod object_store;
mod query;
mod schema;
pub mod sqlite_layout;
mod text;
mod transaction;
mod utf16;
mod value;
mod value_codec;
mod value_codec_serde;
mod value_serde;
mod version_change;

pub use cursor::{Cursor, CursorDirection};
pub use database::Database;
pub use error::{Error, Result};
pub use factory::{DatabaseInfo, DatabaseScan, Factory, DEFAULT_LOCK_TIMEOUT, MAX_VERSION};
pub use index::Index;
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
pub use object::{Object, PropertyHasher, INDEXED_FROM};
pub use object_store::ObjectStore;
pub use query::{Query, Record};
pub use text::{
    key_to_text, parse_key, parse_value, value_to_text, write_value, MAX_TEXT_DEPTH,
    STRUCTURED_CLONE_FIELD,
};
pub use transaction::{Durability, Transaction, TransactionMode};
pub use utf16::Utf16String;
pub use value::{time_clip, Value};
pub use value_codec::{
    decode_value, encode_value, encode_value_into, visit_value, RecordVisitor, StoredText,
    ValueVisitor, MAX_VALUE_DEPTH, VALUE_FORMAT_VERSION,
};
pub use value_codec_serde::decode_value_as;
pub use value_serde::{from_value, to_value};
pub use version_change::VersionChange;
