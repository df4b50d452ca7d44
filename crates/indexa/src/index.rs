//! Indexes (`IDBIndex`): ordered projections of a store's records onto index keys.
//!
//! Source: <https://www.w3.org/TR/IndexedDB-3/#index-construct> and seed 003 ("Índices").

use serde::de::DeserializeOwned;

use crate::backend::Rows;
use crate::cursor::{Cursor, CursorDirection, CursorSource};
use crate::error::{Error, Result};
use crate::key::Key;
use crate::key_encoding::decode_key;
use crate::key_path::{extract_encoded_index_keys, IndexKeys, KeyPath};
use crate::key_range::KeyRange;
use crate::object_store::{corrupt, encoded_or_all, ObjectStore};
use crate::query::{Query, Record};
use crate::schema::IndexMeta;
use crate::transaction::Transaction;
use crate::utf16::Utf16String;
use crate::value::Value;
use crate::value_codec::{decode_value, visit_value, RecordVisitor, ValueVisitor};
use crate::value_codec_serde::decode_value_as;

/// The encoded index keys a record value has in an index: none when the key path yields no
/// valid key; one per distinct valid member for a multiEntry index over an array; else one.
pub(crate) fn index_keys(index: &IndexMeta, value: &Value) -> IndexKeys {
    extract_encoded_index_keys(value, &index.key_path, index.multi_entry)
}

/// An index as seen by one transaction; from [`ObjectStore::index`] or
/// [`ObjectStore::create_index`].
#[derive(Debug, Clone, Copy)]
pub struct Index<'t> {
    tx: &'t Transaction,
    store_id: i64,
    id: i64,
}

/// The error of a request on an index that was deleted.
fn index_deleted() -> Error {
    Error::InvalidState("the index has been deleted".into())
}

impl<'t> Index<'t> {
    pub(crate) fn new(tx: &'t Transaction, store_id: i64, id: i64) -> Index<'t> {
        Index { tx, store_id, id }
    }

    fn with_meta<R>(&self, f: impl FnOnce(&IndexMeta) -> Result<R>) -> Result<R> {
        let schema = self.tx.schema();
        let meta = schema
            .store_by_id(self.store_id)
            .and_then(|s| s.index_by_id(self.id))
            .ok_or_else(index_deleted)?;
        f(meta)
    }

    /// The index's name, with any lone surrogate replaced by U+FFFD (see
    /// [`Index::name_utf16`]).
    ///
    /// # Errors
    /// [`Error::InvalidState`] if the index was deleted.
    pub fn name(&self) -> Result<String> {
        self.with_meta(|m| Ok(m.name.to_string_lossy()))
    }

    /// The index's name exactly (`IDBIndex.name`).
    ///
    /// # Errors
    /// [`Error::InvalidState`] if the index was deleted.
    pub fn name_utf16(&self) -> Result<Utf16String> {
        self.with_meta(|m| Ok(m.name.clone()))
    }

    /// The key path.
    ///
    /// # Errors
    /// [`Error::InvalidState`] if the index was deleted.
    pub fn key_path(&self) -> Result<KeyPath> {
        self.with_meta(|m| Ok(m.key_path.clone()))
    }

    /// True for a unique index.
    ///
    /// # Errors
    /// [`Error::InvalidState`] if the index was deleted.
    pub fn unique(&self) -> Result<bool> {
        self.with_meta(|m| Ok(m.unique))
    }

    /// True for a multiEntry index.
    ///
    /// # Errors
    /// [`Error::InvalidState`] if the index was deleted.
    pub fn multi_entry(&self) -> Result<bool> {
        self.with_meta(|m| Ok(m.multi_entry))
    }

    /// The object store the index belongs to.
    pub fn object_store(&self) -> ObjectStore<'t> {
        ObjectStore::new(self.tx, self.store_id)
    }

    /// Checks the index still exists, then that the transaction is active (the order of the
    /// spec's steps for every request).
    fn check_usable(&self) -> Result<()> {
        if !self.tx.source_exists(self.store_id, Some(self.id)) {
            return Err(index_deleted());
        }
        self.tx.check_active()
    }

    /// The value of the first record (in index order: index key, then primary key) whose
    /// index key is in `range` (`IDBIndex.get`), or `None`.
    ///
    /// # Errors
    /// [`Error::TransactionInactive`]; [`Error::InvalidState`] if the index was deleted;
    /// [`Error::Unknown`] on storage failure.
    pub fn get(&self, range: impl Into<KeyRange>) -> Result<Option<Value>> {
        Ok(self.get_all(Query::from(range.into()).count(1))?.pop())
    }

    /// As [`Index::get`], the value decoded straight into `T` (the mapping of
    /// [`crate::from_value`]) without building a [`Value`]: the typed read path.
    ///
    /// # Errors
    /// As [`Index::get`]; [`Error::Type`] when the value does not have the shape `T` expects.
    pub fn get_as<T: DeserializeOwned>(&self, range: impl Into<KeyRange>) -> Result<Option<T>> {
        Ok(self.get_all_as(Query::from(range.into()).count(1))?.pop())
    }

    /// As [`Index::get`], the value reported to `visitor` straight from its stored bytes (see
    /// [`crate::visit_value`]) without building a [`Value`]; `Ok(false)` when no record's
    /// index key is in `range`.
    ///
    /// # Errors
    /// As [`Index::get`]; for a damaged value, the visitor may have been given part of it.
    pub fn get_with(
        &self,
        range: impl Into<KeyRange>,
        visitor: &mut impl ValueVisitor,
    ) -> Result<bool> {
        match self
            .rows(Query::from(range.into()).count(1), true)?
            .iter()
            .next()
        {
            Some((_, _, value)) => {
                visit_value(value.unwrap_or_default(), visitor)?;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// As [`Index::get_all`], each value decoded straight into `T` without building a
    /// [`Value`].
    ///
    /// # Errors
    /// As [`Index::get_as`].
    pub fn get_all_as<T: DeserializeOwned>(&self, query: impl Into<Query>) -> Result<Vec<T>> {
        self.rows(query.into(), true)?
            .values()
            .map(decode_value_as)
            .collect()
    }

    /// As [`Index::get_all`], each value reported to `visitor` straight from its stored bytes
    /// (see [`crate::visit_value`]), one after the other in index order, without building a
    /// [`Value`]; returns how many values it reported.
    ///
    /// # Errors
    /// As [`Index::get`]; for a damaged value, the visitor may have been given the values
    /// before it and part of it.
    pub fn get_all_with(
        &self,
        query: impl Into<Query>,
        visitor: &mut impl ValueVisitor,
    ) -> Result<usize> {
        self.rows(query.into(), true)?.visit_values(visitor)
    }

    /// The primary key of the first record whose index key is in `range`
    /// (`IDBIndex.getKey`), or `None`.
    ///
    /// # Errors
    /// As [`Index::get`].
    pub fn get_key(&self, range: impl Into<KeyRange>) -> Result<Option<Key>> {
        Ok(self.get_all_keys(Query::from(range.into()).count(1))?.pop())
    }

    /// Values of the records matching `query`, in index order (`IDBIndex.getAll`).
    ///
    /// # Errors
    /// As [`Index::get`].
    pub fn get_all(&self, query: impl Into<Query>) -> Result<Vec<Value>> {
        // Only the values: the index keys and primary keys are not decoded.
        self.rows(query.into(), true)?
            .values()
            .map(decode_value)
            .collect()
    }

    /// Primary keys of the records matching `query`, in index order
    /// (`IDBIndex.getAllKeys`).
    ///
    /// # Errors
    /// As [`Index::get`].
    pub fn get_all_keys(&self, query: impl Into<Query>) -> Result<Vec<Key>> {
        self.rows(query.into(), false)?
            .iter()
            .map(|(_, pk, _)| decode_key(pk.unwrap_or_default()).map_err(corrupt))
            .collect()
    }

    /// Index key, primary key and value of the records matching `query`
    /// (`IDBIndex.getAllRecords`).
    ///
    /// # Errors
    /// As [`Index::get`].
    pub fn get_all_records(&self, query: impl Into<Query>) -> Result<Vec<Record>> {
        self.rows(query.into(), true)?
            .iter()
            .map(|(k, pk, v)| {
                Ok(Record {
                    key: decode_key(k).map_err(corrupt)?,
                    primary_key: decode_key(pk.unwrap_or_default()).map_err(corrupt)?,
                    value: decode_value(v.unwrap_or_default())?,
                })
            })
            .collect()
    }

    /// As [`Index::get_all_records`], each record reported to `visitor` straight from its
    /// stored bytes, one after the other in index order: its index key and primary key, then
    /// its value (see [`crate::visit_value`]), without building a [`Value`]; returns how many
    /// records it reported.
    ///
    /// # Errors
    /// As [`Index::get`]; for a damaged entry or value, the visitor may have been given the
    /// records before it and part of it.
    pub fn get_all_records_with(
        &self,
        query: impl Into<Query>,
        visitor: &mut impl RecordVisitor,
    ) -> Result<usize> {
        self.rows(query.into(), true)?.visit_records(visitor)
    }

    /// The stored entries matching `query` (index key, primary key, value bytes).
    fn rows(&self, query: Query, with_values: bool) -> Result<Rows> {
        self.check_usable()?;
        let conn = self.tx.conn()?;
        conn.select_index_entries(
            self.id,
            self.store_id,
            &encoded_or_all(&query.range),
            query.direction.is_reverse(),
            query.direction.is_unique(),
            query.limit(),
            with_values,
        )
    }

    /// Number of records whose index key is in `range` (`IDBIndex.count`); a multiEntry
    /// record counts once per matching member. `None` counts all entries.
    ///
    /// # Errors
    /// As [`Index::get`].
    pub fn count(&self, range: Option<KeyRange>) -> Result<u64> {
        self.check_usable()?;
        let conn = self.tx.conn()?;
        conn.count_index_entries(self.id, &encoded_or_all(&range))
    }

    /// Opens a cursor over the index (`IDBIndex.openCursor`), positioned on the first entry
    /// in `direction` (or already past the end).
    ///
    /// # Errors
    /// As [`Index::get`].
    pub fn open_cursor(
        &self,
        range: Option<KeyRange>,
        direction: CursorDirection,
    ) -> Result<Cursor> {
        self.check_usable()?;
        Cursor::open(
            self.tx,
            CursorSource::index(self.store_id, self.id),
            range,
            direction,
            false,
        )
    }

    /// As [`Index::open_cursor`], without values (`IDBIndex.openKeyCursor`).
    ///
    /// # Errors
    /// As [`Index::get`].
    pub fn open_key_cursor(
        &self,
        range: Option<KeyRange>,
        direction: CursorDirection,
    ) -> Result<Cursor> {
        self.check_usable()?;
        Cursor::open(
            self.tx,
            CursorSource::index(self.store_id, self.id),
            range,
            direction,
            true,
        )
    }

    /// Renames the index (setting `IDBIndex.name`); upgrade only. The same name does nothing.
    ///
    /// # Errors
    /// [`Error::InvalidState`] outside an upgrade or if the index was deleted;
    /// [`Error::TransactionInactive`]; [`Error::Constraint`] if the store has another index
    /// called `name`.
    pub fn rename(&self, name: impl Into<Utf16String>) -> Result<()> {
        let name = &name.into();
        self.tx.check_upgrade()?;
        let old = self.name_utf16()?;
        if old == *name {
            return Ok(());
        }
        let store_name = self.object_store().name_utf16()?;
        if self.object_store().index_names_utf16()?.contains(name) {
            return Err(Error::Constraint(format!(
                "object store {store_name:?} already has an index named {name:?}"
            )));
        }
        self.tx.mutate(|conn| conn.rename_index(self.id, name))?;
        self.tx.edit_schema(|schema| {
            if let Some(store) = schema.store_mut(&store_name) {
                store.rename_index(&old, name);
            }
        });
        Ok(())
    }
}
