//! The storage boundary: the operations the engine asks of a database's storage, and the
//! rows they exchange. Each backend owns its own tables; everything above this module (key
//! paths, key generators, cursors, transactions, errors, the value codec and the key
//! encoding) is shared.
//!
//! Keys cross the boundary in the order-preserving key encoding ([`crate::encode_key`]) and
//! values in the value codec ([`crate::encode_value`]): a backend compares keys bytewise and
//! never interprets them. A connection runs one transaction at a time, on one thread at a
//! time; the engine serialises its use.
//!
//! Backends: [`sqlite`] (one SQLite file per database, the embedded default) and
//! [`postgres`] (a schema per database on a PostgreSQL server, shared by processes and hosts).

pub(crate) mod postgres;
pub(crate) mod postgres_session;
pub(crate) mod sqlite;

use std::path::PathBuf;
use std::sync::Arc;

use crate::error::Result;
use crate::key_range::EncodedRange;
use crate::utf16::Utf16String;

/// The stored name and version of a database.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DatabaseRow {
    pub name: Utf16String,
    pub version: u64,
}

/// Stored description of an object store.
#[derive(Debug, Clone)]
pub(crate) struct StoreRow {
    pub id: i64,
    pub name: Utf16String,
    pub key_path: Option<(String, bool)>,
    pub auto_increment: bool,
}

/// Stored description of an index.
#[derive(Debug, Clone)]
pub(crate) struct IndexRow {
    pub id: i64,
    pub store_id: i64,
    pub name: Utf16String,
    pub key_path: (String, bool),
    pub unique: bool,
    pub multi_entry: bool,
}

/// Records or index entries read together, in order, with their bytes in one buffer: one
/// allocation per read instead of one per key and value. Each row is its encoded key,
/// then (index entries) its encoded primary key, then (when asked for) the record's stored
/// value.
#[derive(Debug)]
pub(crate) struct Rows {
    bytes: Vec<u8>,
    /// Per row, where in `bytes` its key ends, its primary key ends and its value ends (the
    /// row starts where the one before ends).
    ends: Vec<[usize; 3]>,
    with_primary_key: bool,
    with_value: bool,
}

impl Rows {
    /// No rows yet; each row to come will have a primary key when `with_primary_key` (index
    /// entries) and a value when `with_value`.
    pub(crate) fn new(with_primary_key: bool, with_value: bool) -> Rows {
        Rows {
            bytes: Vec::new(),
            ends: Vec::new(),
            with_primary_key,
            with_value,
        }
    }

    /// Appends a row; `primary_key` and `value` are ignored unless the batch has them.
    pub(crate) fn push(&mut self, key: &[u8], primary_key: &[u8], value: &[u8]) {
        self.bytes.extend_from_slice(key);
        let key_end = self.bytes.len();
        if self.with_primary_key {
            self.bytes.extend_from_slice(primary_key);
        }
        let primary_key_end = self.bytes.len();
        if self.with_value {
            self.bytes.extend_from_slice(value);
        }
        self.ends.push([key_end, primary_key_end, self.bytes.len()]);
    }

    /// Makes room for `more` rows of the average size of those in so far (at most
    /// [`Rows::RESERVED_AT_MOST`] rows and [`Rows::RESERVED_BYTES_AT_MOST`] bytes): a read
    /// that expects many rows reserves once after its first, instead of growing its buffers
    /// by doubling and copying them each time. Large rows reserve no more than the cap, so
    /// a read holds no more than it has read plus the cap.
    pub(crate) fn reserve_like_so_far(&mut self, more: usize) {
        let more = more.min(Self::RESERVED_AT_MOST);
        if let Some(average) = self.bytes.len().checked_div(self.len()) {
            self.bytes.reserve_exact(
                average
                    .saturating_mul(more)
                    .min(Self::RESERVED_BYTES_AT_MOST),
            );
            self.ends.reserve_exact(more);
        }
    }

    /// The most rows [`Rows::reserve_like_so_far`] makes room for.
    const RESERVED_AT_MOST: usize = 1024;

    /// The most bytes [`Rows::reserve_like_so_far`] makes room for (1 MiB, as much as a
    /// cursor reads ahead).
    const RESERVED_BYTES_AT_MOST: usize = 1 << 20;

    /// Frees the buffers' room beyond the rows, once the last row is in (a buffer grown by
    /// doubling can hold twice what it needs).
    pub(crate) fn shrink_to_fit(&mut self) {
        self.bytes.shrink_to_fit();
        self.ends.shrink_to_fit();
    }

    /// Whether the rows have a primary key and whether they have a value.
    pub(crate) fn holds(&self) -> (bool, bool) {
        (self.with_primary_key, self.with_value)
    }

    /// How many rows there are.
    pub(crate) fn len(&self) -> usize {
        self.ends.len()
    }

    /// True when there is no row.
    pub(crate) fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// Every row, in order, as [`Rows::row`] gives it.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&[u8], Option<&[u8]>, Option<&[u8]>)> {
        (0..self.len()).map(|i| self.row(i))
    }

    /// Every row's stored value, in order (empty for rows read without values).
    pub(crate) fn values(&self) -> impl Iterator<Item = &[u8]> {
        self.iter().map(|(_, _, value)| value.unwrap_or_default())
    }

    /// Reports every row's stored value to `visitor`, in order (see
    /// [`crate::visit_value`]); returns how many rows there are.
    ///
    /// # Errors
    /// [`crate::Error::Unknown`] for a damaged value; the visitor may have been given the
    /// values before it and part of it.
    pub(crate) fn visit_values(&self, visitor: &mut impl crate::ValueVisitor) -> Result<usize> {
        for value in self.values() {
            crate::visit_value(value, visitor)?;
        }
        Ok(self.len())
    }

    /// Reports every row to `visitor`, in order: its key and primary key (a record's key is
    /// its primary key), then its stored value (see [`crate::visit_value`]); returns how many
    /// rows there are.
    ///
    /// # Errors
    /// [`crate::Error::Unknown`] for a damaged key or value; the visitor may have been given
    /// the rows before it and part of it.
    pub(crate) fn visit_records(&self, visitor: &mut impl crate::RecordVisitor) -> Result<usize> {
        let decode = |k| crate::decode_key(k).map_err(crate::object_store::corrupt);
        for (key, primary_key, value) in self.iter() {
            let key = decode(key)?;
            match primary_key {
                Some(primary_key) => visitor.record(&key, &decode(primary_key)?),
                None => visitor.record(&key, &key),
            }
            crate::visit_value(value.unwrap_or_default(), visitor)?;
        }
        Ok(self.len())
    }

    /// The bytes of every row together.
    pub(crate) fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// Row `i`: its encoded key, encoded primary key (`None` for records, whose key is the
    /// primary key) and stored value (`None` when not asked for).
    ///
    /// # Panics
    /// When `i` is not below [`Rows::len`].
    pub(crate) fn row(&self, i: usize) -> (&[u8], Option<&[u8]>, Option<&[u8]>) {
        let start = if i == 0 { 0 } else { self.ends[i - 1][2] };
        let [key_end, primary_key_end, end] = self.ends[i];
        (
            &self.bytes[start..key_end],
            self.with_primary_key
                .then(|| &self.bytes[key_end..primary_key_end]),
            self.with_value.then(|| &self.bytes[primary_key_end..end]),
        )
    }
}

/// Where an index cursor looks for its next entry.
pub(crate) struct IndexStep<'a> {
    /// Entries must be strictly beyond this (key, primary key) position in the direction.
    pub after: Option<(&'a [u8], &'a [u8])>,
    /// With unique directions: entries must have a key strictly beyond this one.
    pub after_key: Option<&'a [u8]>,
    /// Entries must have a key at or beyond this one.
    pub target: Option<&'a [u8]>,
    /// With `target`: entries with key equal to the target must have a primary key at or
    /// beyond this one (`continuePrimaryKey`).
    pub target_primary_key: Option<&'a [u8]>,
}

/// A connection to one database's storage. Every method but the transaction control runs
/// inside the transaction begun by [`StorageConnection::begin_read`] or
/// [`StorageConnection::begin_write`]. Failures are [`crate::Error::Unknown`] (I/O, a lost
/// server) or [`crate::Error::QuotaExceeded`] (storage full).
pub(crate) trait StorageConnection: Send {
    // ---- transactions ----

    /// Starts a reading transaction: every read until it ends sees one consistent snapshot.
    fn begin_read(&self) -> Result<()>;
    /// Starts a writing transaction, excluding every other writer of the database (in any
    /// process or host) until it ends; `durable`: a commit is on stable storage when
    /// [`StorageConnection::commit`] returns (durability `strict`/`default`).
    fn begin_write(&self, durable: bool) -> Result<()>;
    /// As [`StorageConnection::begin_write`], without waiting for another writer: `false`,
    /// with no transaction started, when another connection holds the write lock now.
    fn try_begin_write(&self, durable: bool) -> Result<bool>;
    /// Commits the running transaction.
    fn commit(&self) -> Result<()>;
    /// Commits the running transaction without the storage's own upkeep that may follow a
    /// commit and flush to disk (SQLite's automatic checkpoint); the next plain
    /// [`StorageConnection::commit`] does it. Storage without such upkeep just commits.
    fn commit_without_checkpoint(&self) -> Result<()> {
        self.commit()
    }
    /// Rolls back the running transaction; without one, does nothing.
    fn rollback(&self);
    /// Frees what the connection caches and can read again (SQLite's page cache), for a
    /// connection kept idle between transactions. Storage without such a cache does nothing.
    fn release_memory(&self) -> Result<()> {
        Ok(())
    }
    /// Whether a transaction is still open on the connection (one whose end failed): such a
    /// connection is closed rather than kept for the next transaction. Storage that cannot
    /// tell says no.
    fn in_transaction(&self) -> bool {
        false
    }
    /// Opens a savepoint inside the running transaction (savepoints nest).
    fn savepoint(&self) -> Result<()>;
    /// Keeps the changes since the innermost savepoint and closes it.
    fn release_savepoint(&self) -> Result<()>;
    /// Undoes the changes since the innermost savepoint and closes it.
    fn rollback_to_savepoint(&self) -> Result<()>;

    // ---- database name and version ----

    /// Creates the storage of a new database named `name` (version 0), or checks that an
    /// existing one is of this build's layout and belongs to `name`. Runs its own transaction.
    fn initialize(&self, name: &Utf16String) -> Result<DatabaseRow>;
    /// The stored database version.
    fn read_version(&self) -> Result<u64>;
    /// Sets the database version (upgrade).
    fn write_version(&self, version: u64) -> Result<()>;

    // ---- schema ----

    /// Every object store, by name.
    fn load_stores(&self) -> Result<Vec<StoreRow>>;
    /// Every index, by name.
    fn load_indexes(&self) -> Result<Vec<IndexRow>>;
    /// Creates an object store (current number 1) and returns its id, never one used before.
    fn insert_store(
        &self,
        name: &Utf16String,
        key_path: Option<(&str, bool)>,
        auto_increment: bool,
    ) -> Result<i64>;
    /// Deletes an object store with its records, indexes and index entries.
    fn delete_store(&self, store_id: i64) -> Result<()>;
    fn rename_store(&self, store_id: i64, name: &Utf16String) -> Result<()>;
    /// Creates an index (with no entries) and returns its id, never one used before.
    fn insert_index(
        &self,
        store_id: i64,
        name: &Utf16String,
        key_path: (&str, bool),
        unique: bool,
        multi_entry: bool,
    ) -> Result<i64>;
    /// Deletes an index with its entries.
    fn delete_index(&self, index_id: i64) -> Result<()>;
    fn rename_index(&self, index_id: i64, name: &Utf16String) -> Result<()>;

    // ---- key generator ----

    /// The key generator's current number of an object store.
    fn read_current_number(&self, store_id: i64) -> Result<u64>;
    /// Sets it, in the running transaction (so it commits or rolls back with the records).
    fn write_current_number(&self, store_id: i64, n: u64) -> Result<()>;

    // ---- records ----

    /// Gives the value bytes of the record with the encoded key `key` to `read` (which may
    /// decode them into any type, see [`read_record_as`]); false when there is no such
    /// record.
    fn read_record(
        &self,
        store_id: i64,
        key: &[u8],
        read: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<bool>;
    fn record_exists(&self, store_id: i64, key: &[u8]) -> Result<bool>;
    /// Writes a record, replacing any record with the same key.
    fn put_record(&self, store_id: i64, key: &[u8], value: &[u8]) -> Result<()>;
    /// Writes a new record; fails when a record with the key exists.
    fn insert_record(&self, store_id: i64, key: &[u8], value: &[u8]) -> Result<()>;
    /// Deletes every record of a store and every entry of `index_ids` (its indexes).
    fn clear_records(&self, store_id: i64, index_ids: &[i64]) -> Result<()>;
    /// Records of a store in a key range, ascending or descending, at most `limit` (0 = all).
    fn select_records(
        &self,
        store_id: i64,
        range: &EncodedRange,
        descending: bool,
        limit: u32,
        with_values: bool,
    ) -> Result<Rows>;
    fn count_records(&self, store_id: i64, range: &EncodedRange) -> Result<u64>;
    /// Deletes the records of a store in a range (index entries are the caller's business).
    fn delete_records(&self, store_id: i64, range: &EncodedRange) -> Result<()>;
    /// The next records of a store cursor, at most `limit` (at least 1): the first (or,
    /// `descending`, last) records in `range` strictly beyond `after` and at or beyond
    /// `target`, in the cursor's order.
    #[allow(clippy::too_many_arguments)]
    fn step_store(
        &self,
        store_id: i64,
        range: &EncodedRange,
        descending: bool,
        after: Option<&[u8]>,
        target: Option<&[u8]>,
        with_value: bool,
        limit: u32,
    ) -> Result<Rows>;

    // ---- index entries ----

    /// True when the index has an entry with `key` whose primary key is not `primary_key`.
    fn index_key_taken(&self, index_id: i64, key: &[u8], primary_key: &[u8]) -> Result<bool>;
    /// Writes the index entries `(index id, encoded index key)` of the record with the
    /// encoded primary key `primary_key` (an entry already there is kept).
    fn insert_index_entries(&self, primary_key: &[u8], entries: &[(i64, &[u8])]) -> Result<()>;
    fn delete_index_entry(&self, index_id: i64, key: &[u8], primary_key: &[u8]) -> Result<()>;
    /// Entries of an index in a key range, in index order (key, then primary key), ascending
    /// or descending; with `unique`, only the entry with the lowest primary key of each index
    /// key. At most `limit` (0 = all); `with_values` joins the records' values.
    #[allow(clippy::too_many_arguments)]
    fn select_index_entries(
        &self,
        index_id: i64,
        store_id: i64,
        range: &EncodedRange,
        descending: bool,
        unique: bool,
        limit: u32,
        with_values: bool,
    ) -> Result<Rows>;
    fn count_index_entries(&self, index_id: i64, range: &EncodedRange) -> Result<u64>;
    /// The next entries of an index cursor in `range` (see [`IndexStep`]), at most `limit`
    /// (at least 1), in the cursor's order.
    #[allow(clippy::too_many_arguments)]
    fn step_index(
        &self,
        index_id: i64,
        store_id: i64,
        range: &EncodedRange,
        descending: bool,
        step: &IndexStep<'_>,
        with_value: bool,
        limit: u32,
    ) -> Result<Rows>;
    /// The entry with the lowest primary key among those with index key `key` (no row when
    /// there is none).
    fn first_entry_with_key(
        &self,
        index_id: i64,
        store_id: i64,
        key: &[u8],
        with_value: bool,
    ) -> Result<Rows>;

    /// The SQLite connection underneath, for tests of SQLite's settings.
    #[cfg(test)]
    fn sqlite(&self) -> Option<&rusqlite::Connection> {
        None
    }
}

/// A connection of any backend, as the engine holds it.
pub(crate) type Connection = Box<dyn StorageConnection>;

/// The record with the encoded key `key`, its value bytes decoded by `decode`; `None` when
/// there is no such record.
pub(crate) fn read_record_as<R>(
    conn: &dyn StorageConnection,
    store_id: i64,
    key: &[u8],
    decode: impl FnOnce(&[u8]) -> Result<R>,
) -> Result<Option<R>> {
    let mut decode = Some(decode);
    let mut out = None;
    conn.read_record(store_id, key, &mut |bytes| {
        if let Some(decode) = decode.take() {
            out = Some(decode(bytes)?);
        }
        Ok(())
    })?;
    Ok(out)
}

/// Where one database's storage is, to open connections to it.
#[derive(Debug, Clone)]
pub(crate) enum Place {
    /// A SQLite file.
    File(PathBuf),
    /// The database with this catalog id on a PostgreSQL server.
    Postgres(Arc<postgres::Server>, i32),
}

impl Place {
    /// A new connection to the database.
    pub fn connect(&self) -> Result<Connection> {
        match self {
            Place::File(path) => sqlite::open(path),
            Place::Postgres(server, id) => server.open(*id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn room_is_made_for_rows_like_those_so_far() {
        let mut rows = Rows::new(false, true);
        rows.reserve_like_so_far(100);
        assert_eq!(rows.bytes.capacity(), 0, "no row yet: no size to go by");
        rows.push(b"\x30k1", b"", b"\x01v1234");
        rows.reserve_like_so_far(100);
        assert_eq!(rows.bytes.capacity(), 101 * 9);
        assert_eq!(rows.ends.capacity(), 101);
        rows.reserve_like_so_far(usize::MAX);
        assert_eq!(rows.bytes.capacity(), (Rows::RESERVED_AT_MOST + 1) * 9);
        rows.push(b"\x30k2", b"", b"\x01v");
        rows.shrink_to_fit();
        assert_eq!(rows.row(1), (&b"\x30k2"[..], None, Some(&b"\x01v"[..])));
        assert_eq!(rows.bytes.capacity(), rows.byte_len());
        // A large first row reserves no more than the cap in bytes.
        let mut rows = Rows::new(false, true);
        rows.push(b"\x30k1", b"", &vec![1; 4 << 20]);
        let before = rows.bytes.capacity();
        rows.reserve_like_so_far(1023);
        assert_eq!(
            rows.bytes.capacity(),
            before.max(rows.byte_len() + Rows::RESERVED_BYTES_AT_MOST)
        );
    }

    #[test]
    fn rows_give_back_the_parts_they_hold() {
        let mut entries = Rows::new(true, true);
        entries.push(b"\x30k1", b"\x10p1", b"\x01v1");
        entries.push(b"\x30k22", b"\x10p22", b"\x01");
        assert_eq!(entries.len(), 2);
        assert_eq!(entries.byte_len(), 3 + 3 + 3 + 4 + 4 + 1);
        assert_eq!(
            entries.row(0),
            (&b"\x30k1"[..], Some(&b"\x10p1"[..]), Some(&b"\x01v1"[..]))
        );
        assert_eq!(
            entries.row(1),
            (&b"\x30k22"[..], Some(&b"\x10p22"[..]), Some(&b"\x01"[..]))
        );
        // Rows without primary keys or values ignore what is passed for them.
        let mut keys = Rows::new(false, false);
        keys.push(b"\x30a", b"ignored", b"ignored");
        keys.push(b"\x30b", b"", b"");
        let all: Vec<_> = keys.iter().collect();
        assert_eq!(
            all,
            [(&b"\x30a"[..], None, None), (&b"\x30b"[..], None, None)]
        );
        // A value that is empty (a damaged record) is still a value, for decoding to refuse.
        let mut damaged = Rows::new(false, true);
        damaged.push(b"\x30a", b"", b"");
        assert_eq!(damaged.row(0), (&b"\x30a"[..], None, Some(&b""[..])));
    }
}
