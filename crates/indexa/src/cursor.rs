//! Cursors (`IDBCursor`, `IDBCursorWithValue`) as resumable state.
//!
//! Source: <https://www.w3.org/TR/IndexedDB-3/#cursor-interface> and "iterate a cursor"
//! (<https://www.w3.org/TR/IndexedDB-3/#iterate-a-cursor>).
//!
//! A [`Cursor`] holds only its position; every step takes the [`Transaction`] it was opened
//! in, so a caller (such as a JavaScript binding) can advance it one request at a time.

use std::str::FromStr;
use std::sync::{Arc, OnceLock};

use serde::de::DeserializeOwned;

use crate::backend::{IndexStep, Rows, StorageConnection};
use crate::error::{Error, Result};
use crate::key::Key;
use crate::key_encoding::{decode_key, encode_key};
use crate::key_path::{extract_key_from_value_using_key_path, KeyPathExtraction};
use crate::key_range::{EncodedRange, KeyRange};
use crate::object_store::{corrupt, encoded_or_all, ObjectStore};
use crate::transaction::Transaction;
use crate::value::Value;
use crate::value_codec::{check_value, decode_value, visit_value, ValueVisitor};
use crate::value_codec_serde::decode_value_as;

/// A cursor's direction (`IDBCursorDirection`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum CursorDirection {
    /// Ascending; every record (index entry).
    #[default]
    Next,
    /// Ascending; for an index, only the first entry (lowest primary key) of each index key.
    NextUnique,
    /// Descending; every record (index entry).
    Prev,
    /// Descending; for an index, one entry per index key: the one with the lowest primary
    /// key.
    PrevUnique,
}

impl CursorDirection {
    /// The spec's name: `next`, `nextunique`, `prev` or `prevunique`.
    pub fn as_str(self) -> &'static str {
        match self {
            CursorDirection::Next => "next",
            CursorDirection::NextUnique => "nextunique",
            CursorDirection::Prev => "prev",
            CursorDirection::PrevUnique => "prevunique",
        }
    }

    /// True for `prev` and `prevunique`.
    pub fn is_reverse(self) -> bool {
        matches!(self, CursorDirection::Prev | CursorDirection::PrevUnique)
    }

    /// True for `nextunique` and `prevunique`.
    pub fn is_unique(self) -> bool {
        matches!(
            self,
            CursorDirection::NextUnique | CursorDirection::PrevUnique
        )
    }
}

impl FromStr for CursorDirection {
    type Err = Error;

    /// Parses the spec's name.
    ///
    /// # Errors
    /// [`Error::Type`] for anything else.
    fn from_str(s: &str) -> Result<CursorDirection> {
        match s {
            "next" => Ok(CursorDirection::Next),
            "nextunique" => Ok(CursorDirection::NextUnique),
            "prev" => Ok(CursorDirection::Prev),
            "prevunique" => Ok(CursorDirection::PrevUnique),
            other => Err(Error::Type(format!(
                "{other:?} is not a cursor direction (next, nextunique, prev, prevunique)"
            ))),
        }
    }
}

/// What a cursor iterates: an object store, or one of its indexes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CursorSource {
    store_id: i64,
    index_id: Option<i64>,
}

impl CursorSource {
    pub fn store(store_id: i64) -> CursorSource {
        CursorSource {
            store_id,
            index_id: None,
        }
    }

    pub fn index(store_id: i64, index_id: i64) -> CursorSource {
        CursorSource {
            store_id,
            index_id: Some(index_id),
        }
    }
}

/// The record a cursor is on.
#[derive(Debug, Clone)]
struct Position {
    key: Key,
    primary_key: Key,
    /// The row read: the encoded keys and the stored value's bytes.
    row: Row,
    /// The value decoded (which checks the bytes): when the cursor moved here, or, on a
    /// cursor read with [`Cursor::value_as`] or [`Cursor::visit_value`], by the first
    /// [`Cursor::value`] at this position.
    decoded: OnceLock<Value>,
}

/// A row a cursor read: row `index` of rows read together, which it shares.
#[derive(Debug, Clone)]
struct Row {
    rows: Arc<Rows>,
    index: usize,
}

impl Row {
    /// The first of `rows`, if any.
    fn first(rows: Rows) -> Option<Row> {
        (!rows.is_empty()).then(|| Row {
            rows: Arc::new(rows),
            index: 0,
        })
    }

    fn encoded_key(&self) -> &[u8] {
        self.rows.row(self.index).0
    }

    /// The encoded primary key: a store cursor's row holds it once, as its key.
    fn encoded_primary_key(&self) -> &[u8] {
        let (key, primary_key, _) = self.rows.row(self.index);
        primary_key.unwrap_or(key)
    }

    /// The stored value's bytes, when they were read.
    fn value(&self) -> Option<&[u8]> {
        self.rows.row(self.index).2
    }
}

/// Decodes a row into a position. The value is decoded unless `typed`: a typed read decodes
/// (and so checks) the bytes itself, so checking them here too would read every value twice.
fn position_of(row: Row, typed: bool) -> Result<Position> {
    let (encoded_key, encoded_primary_key, value) = row.rows.row(row.index);
    let key = decode_key(encoded_key).map_err(corrupt)?;
    let primary_key = match encoded_primary_key {
        None => key.clone(),
        Some(pk) => decode_key(pk).map_err(corrupt)?,
    };
    // Made full rather than set: setting a cell goes through its synchronisation.
    let decoded = match (value, typed) {
        (Some(bytes), false) => OnceLock::from(decode_value(bytes)?),
        _ => OnceLock::new(),
    };
    Ok(Position {
        key,
        primary_key,
        row,
        decoded,
    })
}

/// A cursor: a position in an object store or index, in a range and a direction.
///
/// Opened on its first record by `open_cursor`/`open_key_cursor` of [`ObjectStore`] or
/// [`crate::Index`]. [`Cursor::key`] is `None` once it has run past the end; from then on
/// moving it is an [`Error::InvalidState`].
#[derive(Debug, Clone)]
pub struct Cursor {
    serial: u64,
    source: CursorSource,
    range: EncodedRange,
    direction: CursorDirection,
    key_only: bool,
    position: Option<Position>,
    ahead: ReadAhead,
    /// Set once [`Cursor::value_as`] or [`Cursor::visit_value`] is called: steps then leave
    /// values undecoded.
    typed: OnceLock<()>,
}

/// The most rows a cursor reads ahead in one query.
const MAX_READ_AHEAD: u32 = 256;

/// About how many bytes of rows (keys and values) a cursor holds read ahead: after a batch,
/// the next one asks for no more rows than this many bytes at that batch's mean row size (and
/// at least one row), so large values are read a few at a time.
const READ_AHEAD_BYTES: usize = 1 << 20;

/// The size of the batch after one of `rows` rows holding `bytes` bytes, when the doubling
/// asked for `doubled`: capped by [`READ_AHEAD_BYTES`] at the batch's mean row size.
fn next_batch_size(doubled: u32, rows: usize, bytes: usize) -> u32 {
    if rows == 0 || bytes == 0 {
        return doubled;
    }
    let fits = READ_AHEAD_BYTES / bytes.div_ceil(rows);
    doubled.min(u32::try_from(fits).unwrap_or(u32::MAX)).max(1)
}

/// Rows beyond the position, read in one query for plain steps (`continue()` without a key,
/// `advance`), so a scan costs one SQL query per batch instead of one per record. Valid only
/// while the transaction has written nothing since they were read ([`Transaction::writes`]).
#[derive(Debug, Clone, Default)]
struct ReadAhead {
    /// The rows of the last read, those before `next` already used.
    rows: Option<Arc<Rows>>,
    next: usize,
    /// The transaction's write count when `rows` were read.
    writes: u64,
    /// True when the last read reached the end of the range: nothing lies beyond `rows`.
    at_end: bool,
    /// How many rows the next read asks for; doubles up to [`MAX_READ_AHEAD`], so a cursor
    /// used for a record or two reads little.
    next_batch: u32,
}

impl ReadAhead {
    /// The next row read ahead, if any is left. The rows are let go with the last one, so a
    /// cursor past its end holds none.
    fn pop(&mut self) -> Option<Row> {
        let rows = self.rows.as_ref()?;
        if self.next >= rows.len() {
            self.rows = None;
            return None;
        }
        let row = Row {
            rows: Arc::clone(rows),
            index: self.next,
        };
        self.next += 1;
        if self.next == rows.len() {
            self.rows = None;
        }
        Some(row)
    }

    /// Forgets the rows read ahead, so the next plain step reads again.
    fn clear(&mut self) {
        self.rows = None;
        self.at_end = false;
    }
}

impl Cursor {
    pub(crate) fn open(
        tx: &Transaction,
        source: CursorSource,
        range: Option<KeyRange>,
        direction: CursorDirection,
        key_only: bool,
    ) -> Result<Cursor> {
        tx.check_active()?;
        let mut cursor = Cursor {
            serial: tx.serial(),
            source,
            range: encoded_or_all(&range),
            direction,
            key_only,
            position: None,
            typed: OnceLock::new(),
            ahead: ReadAhead {
                next_batch: 1,
                ..ReadAhead::default()
            },
        };
        cursor.iterate(tx, None, None, 1)?;
        Ok(cursor)
    }

    /// The key at the position (the index key for an index cursor); `None` past the end.
    pub fn key(&self) -> Option<&Key> {
        self.position.as_ref().map(|p| &p.key)
    }

    /// The primary key at the position (`IDBCursor.primaryKey`); `None` past the end.
    pub fn primary_key(&self) -> Option<&Key> {
        self.position.as_ref().map(|p| &p.primary_key)
    }

    /// The value at the position; `Ok(None)` past the end and for key cursors. (On a cursor
    /// read with [`Cursor::value_as`] or [`Cursor::visit_value`], decoded on the first call at
    /// each position.)
    ///
    /// # Errors
    /// Only on a cursor read with [`Cursor::value_as`] or [`Cursor::visit_value`], whose steps
    /// leave values unchecked: [`Error::Unknown`] (`corrupt value: …`) when the stored bytes
    /// are not a valid value.
    /// On other cursors a step over such a record fails instead.
    pub fn value(&self) -> Result<Option<&Value>> {
        let Some(position) = self.position.as_ref() else {
            return Ok(None);
        };
        let Some(bytes) = position.row.value() else {
            return Ok(None);
        };
        if let Some(value) = position.decoded.get() {
            return Ok(Some(value));
        }
        let value = decode_value(bytes)?;
        Ok(Some(position.decoded.get_or_init(|| value)))
    }

    /// The value at the position decoded straight into `T` (the mapping of
    /// [`crate::from_value`]), without building a [`Value`]; `Ok(None)` past the end and for
    /// key cursors. From the first call on, the cursor's later steps leave values unchecked
    /// and undecoded, this method (or [`Cursor::value`]) decoding and checking each.
    ///
    /// # Errors
    /// [`Error::Unknown`] (`corrupt value: …`) when the stored bytes are not a valid value,
    /// even where `T` would also refuse them; otherwise [`Error::Type`] when the value does
    /// not have the shape `T` expects.
    pub fn value_as<T: DeserializeOwned>(&self) -> Result<Option<T>> {
        // Already set after the first call; either way the cursor is now a typed reader.
        let _ = self.typed.set(());
        let Some(bytes) = self.position.as_ref().and_then(|p| p.row.value()) else {
            return Ok(None);
        };
        match decode_value_as(bytes) {
            Ok(value) => Ok(Some(value)),
            Err(e) => {
                // `T` may have refused the value before its decoding reached a corrupt byte.
                check_value(bytes)?;
                Err(e)
            }
        }
    }

    /// Reports the value at the position to `visitor` straight from its stored bytes (see
    /// [`visit_value`](crate::visit_value)), without building a [`Value`]; `Ok(false)` past the
    /// end and for key cursors. As with [`Cursor::value_as`], from the first call on the
    /// cursor's later steps leave values unchecked and undecoded, this method (or
    /// [`Cursor::value`]) checking each as it reads it.
    ///
    /// # Errors
    /// [`Error::Unknown`] (`corrupt value: …`) when the stored bytes are not a valid value; the
    /// visitor may have been given the part read before the fault.
    pub fn visit_value(&self, visitor: &mut impl ValueVisitor) -> Result<bool> {
        // Already set after the first call; either way the cursor now reads values on demand.
        let _ = self.typed.set(());
        let Some(bytes) = self.position.as_ref().and_then(|p| p.row.value()) else {
            return Ok(false);
        };
        visit_value(bytes, visitor)?;
        Ok(true)
    }

    /// The cursor's direction.
    pub fn direction(&self) -> CursorDirection {
        self.direction
    }

    /// True for a cursor opened without values (`openKeyCursor`).
    pub fn is_key_cursor(&self) -> bool {
        self.key_only
    }

    /// True once the cursor has run past the end.
    pub fn is_done(&self) -> bool {
        self.position.is_none()
    }

    /// Checks shared by every move and write: the transaction is active and this cursor's,
    /// and the source exists (whether the cursor is on a record is [`Cursor::check_positioned`]).
    fn check_usable(&self, tx: &Transaction) -> Result<()> {
        tx.check_active()?;
        if tx.serial() != self.serial {
            return Err(Error::InvalidState(
                "the cursor belongs to another transaction".into(),
            ));
        }
        if tx.source_exists(self.source.store_id, self.source.index_id) {
            return Ok(());
        }
        Err(Error::InvalidState(
            if tx.source_exists(self.source.store_id, None) {
                "the cursor's index was deleted"
            } else {
                "the cursor's object store was deleted"
            }
            .into(),
        ))
    }

    fn check_positioned(&self) -> Result<&Position> {
        self.position
            .as_ref()
            .ok_or_else(|| Error::InvalidState("the cursor is past its end".into()))
    }

    /// Moves to the next record, or to the first at or beyond `key` in the cursor's direction
    /// (`IDBCursor.continue`).
    ///
    /// # Errors
    /// [`Error::TransactionInactive`]; [`Error::InvalidState`] if the cursor is past its end,
    /// its source was deleted, or `tx` is not its transaction; [`Error::Data`] if `key` is not
    /// beyond the current key in the cursor's direction.
    pub fn continue_key(&mut self, tx: &Transaction, key: Option<&Key>) -> Result<()> {
        self.check_usable(tx)?;
        let position = self.check_positioned()?;
        let target = key.map(encode_key);
        if let Some(t) = &target {
            let behind = if self.direction.is_reverse() {
                t.as_slice() >= position.row.encoded_key()
            } else {
                t.as_slice() <= position.row.encoded_key()
            };
            if behind {
                return Err(Error::Data(
                    "the key is not beyond the cursor's position in its direction".into(),
                ));
            }
        }
        self.iterate(tx, target.as_deref(), None, 1)
    }

    /// Moves an index cursor to the first entry at or beyond (`key`, `primary_key`)
    /// (`IDBCursor.continuePrimaryKey`).
    ///
    /// # Errors
    /// [`Error::TransactionInactive`]; [`Error::InvalidState`] as for
    /// [`Cursor::continue_key`]; [`Error::InvalidAccess`] for an object store cursor or a
    /// `*unique` direction; [`Error::Data`] if (`key`, `primary_key`) is not strictly beyond
    /// the position in the cursor's direction.
    pub fn continue_primary_key(
        &mut self,
        tx: &Transaction,
        key: &Key,
        primary_key: &Key,
    ) -> Result<()> {
        self.check_usable(tx)?;
        if self.source.index_id.is_none() {
            return Err(Error::InvalidAccess(
                "continuePrimaryKey needs an index cursor".into(),
            ));
        }
        if self.direction.is_unique() {
            return Err(Error::InvalidAccess(
                "continuePrimaryKey needs the direction next or prev".into(),
            ));
        }
        let position = self.check_positioned()?;
        let k = encode_key(key);
        let pk = encode_key(primary_key);
        let target = (k.as_slice(), pk.as_slice());
        let here = (
            position.row.encoded_key(),
            position.row.encoded_primary_key(),
        );
        let behind = if self.direction.is_reverse() {
            target >= here
        } else {
            target <= here
        };
        if behind {
            return Err(Error::Data(
                "the key and primary key are not beyond the cursor's position in its direction"
                    .into(),
            ));
        }
        self.iterate(tx, Some(&k), Some(&pk), 1)
    }

    /// Moves `count` records on (`IDBCursor.advance`).
    ///
    /// # Errors
    /// [`Error::Type`] if `count` is 0; otherwise as [`Cursor::continue_key`].
    pub fn advance(&mut self, tx: &Transaction, count: u32) -> Result<()> {
        if count == 0 {
            return Err(Error::Type("advance() needs a count above 0".into()));
        }
        self.check_usable(tx)?;
        self.check_positioned()?;
        self.iterate(tx, None, None, count)
    }

    /// Replaces the record at the position (`IDBCursor.update`); returns its key. The
    /// cursor's own position and value stay as they were.
    ///
    /// # Errors
    /// [`Error::TransactionInactive`]; [`Error::ReadOnly`]; [`Error::InvalidState`] past the
    /// end, for a key cursor, or as for [`Cursor::continue_key`]; [`Error::Data`] if the
    /// store uses in-line keys and `value`'s key is not the record's key; otherwise as
    /// [`ObjectStore::put`].
    pub fn update(&self, tx: &Transaction, value: Value) -> Result<Key> {
        self.check_usable(tx)?;
        tx.check_writable()?;
        let position = self.check_positioned()?;
        if self.key_only {
            return Err(Error::InvalidState(
                "a key cursor has no value to update".into(),
            ));
        }
        let store = ObjectStore::new(tx, self.source.store_id);
        match store.key_path()? {
            Some(kp) => {
                match extract_key_from_value_using_key_path(&value, &kp, false) {
                    KeyPathExtraction::Key(k) if k == position.primary_key => {}
                    _ => {
                        return Err(Error::Data(format!(
                            "the value's key at key path {kp} must equal the cursor's primary key"
                        )))
                    }
                }
                store.put(value, None)
            }
            None => store.put(value, Some(position.primary_key.clone())),
        }
    }

    /// Deletes the record at the position (`IDBCursor.delete`). The cursor's position and
    /// value stay as they were.
    ///
    /// # Errors
    /// [`Error::TransactionInactive`]; [`Error::ReadOnly`]; [`Error::InvalidState`] past the
    /// end, for a key cursor, or as for [`Cursor::continue_key`].
    pub fn delete(&self, tx: &Transaction) -> Result<()> {
        self.check_usable(tx)?;
        tx.check_writable()?;
        let position = self.check_positioned()?;
        if self.key_only {
            return Err(Error::InvalidState("a key cursor cannot delete".into()));
        }
        ObjectStore::new(tx, self.source.store_id).delete(position.primary_key.clone())
    }

    /// Iterates the cursor `count` times (<https://www.w3.org/TR/IndexedDB-3/#iterate-a-cursor>),
    /// the first step bounded below by `key` (and `primary_key`).
    fn iterate(
        &mut self,
        tx: &Transaction,
        key: Option<&[u8]>,
        primary_key: Option<&[u8]>,
        count: u32,
    ) -> Result<()> {
        // The old position is kept aside (not cloned) and put back should the step fail,
        // with the rows read ahead dropped (the failed step may have used some of them).
        let old = self.position.take();
        let found = self
            .find(tx, old.as_ref(), key, primary_key, count)
            .and_then(|found| {
                found
                    .map(|row| position_of(row, self.typed.get().is_some()))
                    .transpose()
            });
        match found {
            Ok(position) => {
                self.position = position;
                Ok(())
            }
            Err(e) => {
                self.position = old;
                self.ahead.clear();
                Err(e)
            }
        }
    }

    /// The row `count` steps beyond `old` (the first at or beyond `key`/`primary_key` when
    /// given), or `None` past the end.
    fn find(
        &mut self,
        tx: &Transaction,
        old: Option<&Position>,
        key: Option<&[u8]>,
        primary_key: Option<&[u8]>,
        count: u32,
    ) -> Result<Option<Row>> {
        let conn = tx.conn()?;
        let mut last: Option<Row> = None;
        for step in 0..count {
            let (key, primary_key) = if step == 0 {
                (key, primary_key)
            } else {
                (None, None)
            };
            let here = last.as_ref().or(old.map(|p| &p.row));
            let here = here.map(|r| (r.encoded_key(), r.encoded_primary_key()));
            let next = if key.is_none() && !self.direction.is_unique() {
                self.next_read_ahead(&*conn, tx.writes(), here)?
            } else {
                self.ahead.clear();
                Row::first(self.step(&*conn, here, key, primary_key, 1)?)
            };
            match next {
                None => return Ok(None),
                Some(row) => last = Some(row),
            }
        }
        Ok(last)
    }

    /// The next row of a plain step in `next`/`prev` direction, from the rows read ahead
    /// when they are still valid, else from a new read of the next batch.
    fn next_read_ahead(
        &mut self,
        conn: &dyn StorageConnection,
        writes: u64,
        here: Option<(&[u8], &[u8])>,
    ) -> Result<Option<Row>> {
        if self.ahead.writes == writes {
            if let Some(row) = self.ahead.pop() {
                return Ok(Some(row));
            }
            if self.ahead.at_end {
                return Ok(None);
            }
        }
        let batch = self.ahead.next_batch.clamp(1, MAX_READ_AHEAD);
        self.ahead.next_batch = (batch * 2).min(MAX_READ_AHEAD);
        let rows = self.step(conn, here, None, None, batch)?;
        self.ahead.next_batch = next_batch_size(self.ahead.next_batch, rows.len(), rows.byte_len());
        self.ahead.at_end = rows.len() < batch as usize;
        self.ahead.writes = writes;
        self.ahead.rows = Some(Arc::new(rows));
        self.ahead.next = 0;
        Ok(self.ahead.pop())
    }

    /// Reads up to `limit` rows beyond `here` in the cursor's direction, the first at or
    /// beyond `key` (and `primary_key`) when given.
    fn step(
        &self,
        conn: &dyn StorageConnection,
        here: Option<(&[u8], &[u8])>,
        key: Option<&[u8]>,
        primary_key: Option<&[u8]>,
        limit: u32,
    ) -> Result<Rows> {
        let descending = self.direction.is_reverse();
        let with_value = !self.key_only;
        let Some(index_id) = self.source.index_id else {
            return conn.step_store(
                self.source.store_id,
                &self.range,
                descending,
                here.map(|(k, _)| k),
                key,
                with_value,
                limit,
            );
        };
        let step = if self.direction.is_unique() {
            IndexStep {
                after: None,
                after_key: here.map(|(k, _)| k),
                target: key,
                target_primary_key: None,
            }
        } else {
            IndexStep {
                after: here,
                after_key: None,
                target: key,
                target_primary_key: primary_key,
            }
        };
        let entries = conn.step_index(
            index_id,
            self.source.store_id,
            &self.range,
            descending,
            &step,
            with_value,
            limit,
        )?;
        if self.direction != CursorDirection::PrevUnique {
            return Ok(entries);
        }
        // prevunique lands on the lowest primary key of the index key found.
        let mut out = Rows::new(true, with_value);
        for (k, _, _) in entries.iter() {
            let first = conn.first_entry_with_key(index_id, self.source.store_id, k, with_value)?;
            if !first.is_empty() {
                let (k, pk, v) = first.row(0);
                out.push(k, pk.unwrap_or_default(), v.unwrap_or_default());
            }
        }
        out.shrink_to_fit();
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_ahead_lets_its_rows_go_with_the_last_one() {
        let mut rows = Rows::new(false, true);
        rows.push(b"\x30a", b"", b"\x01");
        rows.push(b"\x30b", b"", b"\x02");
        let mut ahead = ReadAhead {
            rows: Some(Arc::new(rows)),
            ..ReadAhead::default()
        };
        let first = ahead.pop().unwrap();
        assert_eq!(
            (first.encoded_key(), first.value()),
            (&b"\x30a"[..], Some(&b"\x01"[..]))
        );
        assert!(ahead.rows.is_some());
        let second = ahead.pop().unwrap();
        assert_eq!(second.encoded_primary_key(), b"\x30b");
        // The batch lives on only in the rows handed out.
        assert!(ahead.rows.is_none());
        assert_eq!(Arc::strong_count(&second.rows), 2);
        assert!(ahead.pop().is_none());
        // An empty read holds nothing either.
        let mut empty = ReadAhead {
            rows: Some(Arc::new(Rows::new(false, true))),
            ..ReadAhead::default()
        };
        assert!(empty.pop().is_none());
        assert!(empty.rows.is_none());
    }

    #[test]
    fn read_ahead_batches_shrink_for_large_rows() {
        // Small rows: the doubling decides.
        assert_eq!(next_batch_size(256, 128, 128 * 100), 256);
        assert_eq!(next_batch_size(4, 2, 200), 4);
        // Nothing read: unchanged.
        assert_eq!(next_batch_size(8, 0, 0), 8);
        // 64 KiB rows: 16 fit in 1 MiB.
        assert_eq!(next_batch_size(256, 128, 128 << 16), 16);
        // Rows over 1 MiB: one at a time.
        assert_eq!(next_batch_size(2, 1, 5 << 20), 1);
    }
}
