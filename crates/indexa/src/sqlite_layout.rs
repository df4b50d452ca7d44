//! The SQLite file's layout (format version [`SQLITE_FORMAT_VERSION`]), for tools that read a
//! database file directly, such as `indexa check`: which table holds an object store's
//! records, and how a key is stored in a key column. `docs/format.md` describes every table.
//!
//! A key column holds a number key as an SQLite `INTEGER` and every other key as a `BLOB` of
//! its key encoding ([`crate::encode_key`]). The integer is the number's 8 encoded bytes read
//! as a big-endian `u64` with its top bit flipped, so signed integer order is number order.
//! SQLite orders every `INTEGER` before every `BLOB`, and numbers come first in key order
//! (number < date < string < binary < array), so the column's order is still key order, and
//! number keys (generated keys above all) compare as integers instead of as bytes.

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

/// Version of the SQLite table layout: 2 since object stores have tables of their own and
/// number keys are stored as integers (version 1 kept every record in one `record` table,
/// keys as blobs). Files of version 1 are upgraded when they are opened.
pub const SQLITE_FORMAT_VERSION: i64 = 2;

/// The key encoding's tag of a number key (`docs/format.md`).
const NUMBER_TAG: u8 = 0x10;

/// Flips the top bit: the encoding's unsigned order becomes signed integer order.
const SIGN: u64 = 1 << 63;

/// The name of the table holding the records of the object store with id `store_id`:
/// `record_<id>`, with columns `key` (a key column) and `value` (the value codec).
pub fn record_table(store_id: i64) -> String {
    format!("record_{store_id}")
}

/// An encoded key ([`crate::encode_key`]) bound as a key column's value: a number key as an
/// `INTEGER`, any other bytes as a `BLOB`. Bounds of key ranges that are not whole keys (the
/// ends of a string prefix range) start with the string tag and are bound as blobs.
#[derive(Debug, Clone, Copy)]
pub struct SqlKey<'a>(pub &'a [u8]);

impl SqlKey<'_> {
    /// Whether the key is stored as an `INTEGER` (it is a number key's encoding). A key column
    /// holding such bytes as a `BLOB` is not canonical: lookups, which bind the integer, never
    /// find it.
    pub fn is_integer(self) -> bool {
        number_as_integer(self.0).is_some()
    }

    /// The key column's value: an `INTEGER` for a number key, else the bytes.
    pub fn to_sql_value(self) -> rusqlite::types::Value {
        match number_as_integer(self.0) {
            Some(i) => rusqlite::types::Value::Integer(i),
            None => rusqlite::types::Value::Blob(self.0.to_vec()),
        }
    }
}

/// The integer a number key's encoding is stored as; `None` for any other bytes.
fn number_as_integer(encoded: &[u8]) -> Option<i64> {
    match encoded {
        [NUMBER_TAG, bits @ ..] => {
            let bits: [u8; 8] = bits.try_into().ok()?;
            Some((u64::from_be_bytes(bits) ^ SIGN) as i64)
        }
        _ => None,
    }
}

impl ToSql for SqlKey<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match number_as_integer(self.0) {
            Some(i) => ToSqlOutput::from(i),
            None => ToSqlOutput::Borrowed(ValueRef::Blob(self.0)),
        })
    }
}

/// A key read from a key column, as its key encoding: an `INTEGER` becomes the number key's
/// 9 bytes, a `BLOB` is taken as it is. Any other type is a damaged file
/// ([`FromSqlError::InvalidType`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredKey(pub Vec<u8>);

impl FromSql for StoredKey {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        Ok(StoredKey(ColumnKey::of(value)?.as_bytes().to_vec()))
    }
}

/// A key column's value as its key encoding, read in place: a number key's 9 bytes made from
/// the `INTEGER`, any other key the `BLOB` as SQLite holds it (as [`StoredKey`], without a
/// copy).
pub(crate) enum ColumnKey<'a> {
    Number([u8; 9]),
    Other(&'a [u8]),
}

impl<'a> ColumnKey<'a> {
    /// Reads a key column's value; any type but `INTEGER` and `BLOB` is a damaged file
    /// ([`FromSqlError::InvalidType`]).
    pub(crate) fn of(value: ValueRef<'a>) -> FromSqlResult<ColumnKey<'a>> {
        match value {
            ValueRef::Integer(i) => {
                let mut bytes = [NUMBER_TAG; 9];
                bytes[1..].copy_from_slice(&((i as u64) ^ SIGN).to_be_bytes());
                Ok(ColumnKey::Number(bytes))
            }
            ValueRef::Blob(b) => Ok(ColumnKey::Other(b)),
            _ => Err(FromSqlError::InvalidType),
        }
    }

    /// The key's encoding.
    pub(crate) fn as_bytes(&self) -> &[u8] {
        match self {
            ColumnKey::Number(bytes) => bytes,
            ColumnKey::Other(bytes) => bytes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{encode_key, Key};
    use proptest::prelude::*;
    use rusqlite::Connection;

    #[test]
    fn number_keys_are_integers_in_key_order() {
        let cases = [
            (f64::NEG_INFINITY, i64::MIN + 0x000F_FFFF_FFFF_FFFF),
            (-1.0, -0x3FF0_0000_0000_0001),
            (0.0, 0),
            (1.0, 0x3FF0_0000_0000_0000),
            (f64::INFINITY, 0x7FF0_0000_0000_0000),
        ];
        for (n, expected) in cases {
            let encoded = encode_key(&Key::Number(n));
            assert_eq!(number_as_integer(&encoded), Some(expected), "{n}");
            assert!(SqlKey(&encoded).is_integer(), "{n}");
        }
        for other in [
            Key::from("a"),
            Key::Date(0.0),
            Key::Array(vec![Key::Number(1.0)]),
        ] {
            assert_eq!(number_as_integer(&encode_key(&other)), None);
            assert!(!SqlKey(&encode_key(&other)).is_integer());
        }
    }

    /// SQLite orders a key column as the keys: stored, read back in `ORDER BY key` order and
    /// decoded, any keys come out sorted by "compare two keys" and unchanged.
    #[test]
    fn a_key_column_orders_as_the_keys() {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch("CREATE TABLE t (key BLOB NOT NULL PRIMARY KEY) WITHOUT ROWID")
            .unwrap();
        let keys = [
            Key::Number(f64::NEG_INFINITY),
            Key::Number(-1.5),
            Key::Number(0.0),
            Key::Number(2.0),
            Key::Number(9007199254740993.0),
            Key::Number(f64::INFINITY),
            Key::Date(-1.0),
            Key::from(""),
            Key::from("a"),
            Key::Binary(vec![0]),
            Key::Array(vec![]),
            Key::Array(vec![Key::Number(1.0)]),
        ];
        for k in keys.iter().rev() {
            conn.execute("INSERT INTO t VALUES (?1)", [SqlKey(&encode_key(k))])
                .unwrap();
        }
        let read: Vec<Vec<u8>> = conn
            .prepare("SELECT key FROM t ORDER BY key")
            .unwrap()
            .query_map([], |r| Ok(r.get::<_, StoredKey>(0)?.0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let expected: Vec<Vec<u8>> = keys.iter().map(encode_key).collect();
        assert_eq!(read, expected);
    }

    proptest! {
        /// Any number key goes to an integer and back to the same bytes, and integer order is
        /// the encodings' byte order.
        #[test]
        fn number_keys_round_trip_in_order(a in any::<f64>(), b in any::<f64>()) {
            prop_assume!(!a.is_nan() && !b.is_nan());
            let (ea, eb) = (encode_key(&Key::Number(a)), encode_key(&Key::Number(b)));
            let (ia, ib) = (number_as_integer(&ea).unwrap(), number_as_integer(&eb).unwrap());
            prop_assert_eq!(ia.cmp(&ib), ea.cmp(&eb));
            let back = StoredKey::column_result(ValueRef::Integer(ia)).unwrap();
            prop_assert_eq!(back.0, ea);
        }
    }
}
