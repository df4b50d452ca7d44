//! The SQLite file's layout (format version [`SQLITE_FORMAT_VERSION`]), for tools that read a
//! database file directly, such as `indexa check`: which table holds an object store's
//! records ([`record_table`]) and which an index's entries ([`index_table`]), and how a key is
//! stored in a key column. `docs/format.md` describes every table.
//!
//! A key column holds a number key as an SQLite number, an `INTEGER` when it is a whole
//! number in the 64-bit range and a `REAL` otherwise, and every other key as a `BLOB` of its
//! key encoding ([`crate::encode_key`]). SQLite compares `INTEGER` and `REAL` values as the
//! numbers they are and orders every number before every `BLOB`, and numbers come first in
//! key order (number < date < string < binary < array), so the column's order is key order.
//! Number keys (generated keys above all) compare as numbers instead of as bytes, small ones
//! take a byte or two, and a table whose keys are all whole numbers can key its rows by them
//! (its row ids).

use rusqlite::types::{FromSql, FromSqlError, FromSqlResult, ToSql, ToSqlOutput, ValueRef};

use crate::key_encoding::{from_sortable_bits, sortable_bits};

/// Version of the SQLite table layout: 4 since each index's entries have a table of their own
/// (3: every index's entries in one `index_entry` table, keyed by index id first; number keys
/// stored as SQLite numbers and an object store's records starting in a row id table since 3;
/// 2: number keys as integers made from their encoding, every record table `WITHOUT ROWID`; 1:
/// every record in one `record` table, keys as blobs). Files of versions 1 to 3 are upgraded
/// when they are opened.
pub const SQLITE_FORMAT_VERSION: i64 = 4;

/// The key encoding's tag of a number key (`docs/format.md`).
const NUMBER_TAG: u8 = 0x10;

/// 2^63: the whole numbers from −2^63 up to (not including) this are stored as `INTEGER`s.
const INTEGER_END: f64 = 9_223_372_036_854_775_808.0;

/// The name of the table holding the records of the object store with id `store_id`:
/// `record_<id>`, with columns `key` (a key column) and `value` (the value codec).
pub fn record_table(store_id: i64) -> String {
    format!("record_{store_id}")
}

/// The name of the table holding the entries of the index with id `index_id`: `index_<id>`,
/// with columns `key` (the index key) and `primary_key` (its record's key), both key columns,
/// clustered on (`key`, `primary_key`).
pub fn index_table(index_id: i64) -> String {
    format!("index_{index_id}")
}

/// An encoded key ([`crate::encode_key`]) bound as a key column's value: a number key as an
/// SQLite number, any other bytes as a `BLOB`. Bounds of key ranges that are not whole keys
/// (the ends of a string prefix range) start with the string tag and are bound as blobs.
#[derive(Debug, Clone, Copy)]
pub struct SqlKey<'a>(pub &'a [u8]);

/// The key encoding of the number key that layout version 2 stored as the integer `i`: its
/// 8 encoded bytes with the top bit flipped (`docs/format.md`, "Key columns"), read by the
/// upgrade.
pub(crate) fn version_2_number_key(i: i64) -> [u8; 9] {
    let mut encoded = [NUMBER_TAG; 9];
    encoded[1..].copy_from_slice(&((i as u64) ^ (1 << 63)).to_be_bytes());
    encoded
}

/// A number key as a key column holds it.
#[derive(Debug, Clone, Copy, PartialEq)]
enum SqlNumber {
    Integer(i64),
    Real(f64),
}

impl SqlKey<'_> {
    /// Whether the key is stored as an SQLite number (it is a number key's encoding). A key
    /// column holding such bytes as a `BLOB` is not canonical: lookups, which bind the number,
    /// never find it.
    pub fn is_number(self) -> bool {
        stored_number(self.0).is_some()
    }

    /// The key column's value: an `INTEGER` or `REAL` for a number key, else the bytes.
    pub fn to_sql_value(self) -> rusqlite::types::Value {
        match stored_number(self.0) {
            Some(SqlNumber::Integer(i)) => rusqlite::types::Value::Integer(i),
            Some(SqlNumber::Real(r)) => rusqlite::types::Value::Real(r),
            None => rusqlite::types::Value::Blob(self.0.to_vec()),
        }
    }
}

/// How a number key's encoding is stored; `None` for any other bytes.
fn stored_number(encoded: &[u8]) -> Option<SqlNumber> {
    match encoded {
        [NUMBER_TAG, bits @ ..] => {
            let bits: [u8; 8] = bits.try_into().ok()?;
            Some(sql_number(from_sortable_bits(u64::from_be_bytes(bits))))
        }
        _ => None,
    }
}

/// A number as a key column stores it: a whole number from −2^63 up to 2^63 as an
/// `INTEGER`, anything else (fractions, ±Infinity, larger numbers) as a `REAL`.
fn sql_number(n: f64) -> SqlNumber {
    // `as` saturates (and takes NaN to 0), so the integer is `n` exactly only when `n` is a
    // whole number in range; 2^63 itself saturates to i64::MAX, which converts back to 2^63.
    let i = n as i64;
    if n < INTEGER_END && i as f64 == n {
        SqlNumber::Integer(i)
    } else {
        SqlNumber::Real(n)
    }
}

impl ToSql for SqlKey<'_> {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        Ok(match stored_number(self.0) {
            Some(SqlNumber::Integer(i)) => ToSqlOutput::from(i),
            Some(SqlNumber::Real(r)) => ToSqlOutput::from(r),
            None => ToSqlOutput::Borrowed(ValueRef::Blob(self.0)),
        })
    }
}

/// A key read from a key column, as its key encoding: an `INTEGER` or `REAL` becomes the
/// number key's 9 bytes, a `BLOB` is taken as it is. Any other type, an `INTEGER` that is not
/// exactly a double or a NaN `REAL`, is a damaged file ([`FromSqlError::InvalidType`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredKey(pub Vec<u8>);

impl FromSql for StoredKey {
    fn column_result(value: ValueRef<'_>) -> FromSqlResult<Self> {
        Ok(StoredKey(ColumnKey::of(value)?.as_bytes().to_vec()))
    }
}

/// Whether a key column's value is stored the one way its key is ([`SqlKey`]): false for a
/// number key's encoding held as a `BLOB` and for a whole number held as a `REAL` that fits
/// an `INTEGER`. Lookups, which bind the canonical form, do not find such values.
pub fn is_canonical_column(value: ValueRef<'_>) -> bool {
    match value {
        ValueRef::Blob(b) => !SqlKey(b).is_number(),
        ValueRef::Real(r) => matches!(sql_number(r), SqlNumber::Real(_)),
        _ => true,
    }
}

/// A key column's value as its key encoding, read in place: a number key's 9 bytes made from
/// the number, any other key the `BLOB` as SQLite holds it (as [`StoredKey`], without a
/// copy).
pub(crate) enum ColumnKey<'a> {
    Number([u8; 9]),
    Other(&'a [u8]),
}

impl<'a> ColumnKey<'a> {
    /// Reads a key column's value; any type but `INTEGER`, `REAL` and `BLOB`, an `INTEGER`
    /// that is not exactly a double or a NaN `REAL` is a damaged file
    /// ([`FromSqlError::InvalidType`]).
    pub(crate) fn of(value: ValueRef<'a>) -> FromSqlResult<ColumnKey<'a>> {
        let number = match value {
            ValueRef::Integer(i) => {
                let n = i as f64;
                if n >= INTEGER_END || n as i64 != i {
                    return Err(FromSqlError::InvalidType);
                }
                n
            }
            ValueRef::Real(r) if !r.is_nan() => r,
            ValueRef::Blob(b) => return Ok(ColumnKey::Other(b)),
            _ => return Err(FromSqlError::InvalidType),
        };
        let mut bytes = [NUMBER_TAG; 9];
        bytes[1..].copy_from_slice(&sortable_bits(number).to_be_bytes());
        Ok(ColumnKey::Number(bytes))
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
    fn number_keys_are_sqlite_numbers() {
        let cases = [
            (f64::NEG_INFINITY, SqlNumber::Real(f64::NEG_INFINITY)),
            (-1.0, SqlNumber::Integer(-1)),
            (-0.0, SqlNumber::Integer(0)),
            (0.5, SqlNumber::Real(0.5)),
            (7.0, SqlNumber::Integer(7)),
            (-9_223_372_036_854_775_808.0, SqlNumber::Integer(i64::MIN)),
            (
                -9_223_372_036_854_777_856.0,
                SqlNumber::Real(-9_223_372_036_854_777_856.0),
            ),
            (
                9_223_372_036_854_775_808.0,
                SqlNumber::Real(9_223_372_036_854_775_808.0),
            ),
            (f64::INFINITY, SqlNumber::Real(f64::INFINITY)),
        ];
        for (n, expected) in cases {
            let encoded = encode_key(&Key::Number(n));
            assert_eq!(stored_number(&encoded), Some(expected), "{n}");
            assert!(SqlKey(&encoded).is_number(), "{n}");
        }
        for other in [
            Key::from("a"),
            Key::Date(0.0),
            Key::Array(vec![Key::Number(1.0)]),
        ] {
            assert_eq!(stored_number(&encode_key(&other)), None);
            assert!(!SqlKey(&encode_key(&other)).is_number());
        }
    }

    /// A key column's value that no key is stored as is refused (damage), and one stored
    /// another way than its key's is not canonical.
    #[test]
    fn column_values_of_no_key_are_refused() {
        for value in [
            ValueRef::Integer(i64::MAX),
            ValueRef::Integer((1 << 53) + 1),
            ValueRef::Real(f64::NAN),
            ValueRef::Text(b"1"),
            ValueRef::Null,
        ] {
            assert!(StoredKey::column_result(value).is_err(), "{value:?}");
        }
        let one = encode_key(&Key::Number(1.0));
        assert!(!is_canonical_column(ValueRef::Blob(&one)));
        assert!(!is_canonical_column(ValueRef::Real(1.0)));
        assert!(is_canonical_column(ValueRef::Real(1.5)));
        assert!(is_canonical_column(ValueRef::Integer(1)));
        assert!(is_canonical_column(ValueRef::Blob(&encode_key(
            &Key::from("a")
        ))));
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
            Key::Number(9007199254740992.0),
            Key::Number(9007199254740994.0),
            Key::Number(1e300),
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

    /// Any double, whole numbers (small and across the 64-bit range) more often than
    /// chance would give them.
    fn number() -> impl Strategy<Value = f64> {
        prop_oneof![
            any::<f64>(),
            (-1e6..1e6f64).prop_map(f64::trunc),
            any::<i64>().prop_map(|i| i as f64),
        ]
    }

    proptest! {
        /// Any number key goes to an SQLite number and back to the same bytes, and SQLite's
        /// order of those numbers is the encodings' byte order.
        #[test]
        fn number_keys_round_trip_in_order(a in number(), b in number()) {
            prop_assume!(!a.is_nan() && !b.is_nan());
            let conn = Connection::open_in_memory().unwrap();
            let (ea, eb) = (encode_key(&Key::Number(a)), encode_key(&Key::Number(b)));
            let (order, back): (i64, StoredKey) = conn
                .query_row(
                    "SELECT (?1 > ?2) - (?1 < ?2), ?1",
                    [SqlKey(&ea), SqlKey(&eb)],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap();
            prop_assert_eq!(order.cmp(&0), ea.cmp(&eb));
            prop_assert_eq!(back.0, ea);
        }
    }
}
