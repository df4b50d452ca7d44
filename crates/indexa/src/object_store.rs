//! Object stores (`IDBObjectStore`): storing, reading and deleting records.
//!
//! Source: <https://www.w3.org/TR/IndexedDB-3/#object-store-interface> and seed 000.

use serde::de::DeserializeOwned;
use serde::Serialize;
use smallvec::SmallVec;

use crate::backend::{read_record_as, Rows, StorageConnection};
use crate::cursor::{Cursor, CursorDirection, CursorSource};
use crate::error::{Error, Result};
use crate::index::{index_keys, Index};
use crate::key::Key;
use crate::key_encoding::{decode_key, encode_key, write_key, KeyBytes};
use crate::key_generator::KeyGenerator;
use crate::key_path::{
    check_that_a_key_could_be_injected_into_a_value, extract_encoded_index_keys_from_stored_value,
    extract_key_from_stored_value_using_key_path, extract_key_from_value_using_key_path,
    inject_key_into_value_using_key_path, IndexKeys, KeyPath, KeyPathExtraction,
};
use crate::key_range::{EncodedRange, KeyRange};
use crate::query::{Query, Record};
use crate::schema::{key_path_to_stored, IndexMeta, StoreMeta};
use crate::transaction::Transaction;
use crate::utf16::Utf16String;
use crate::value::Value;
use crate::value_codec::{
    decode_value, encode_value, visit_value, RecordVisitor, ValueVisitor, MAX_VALUE_DEPTH,
};
use crate::value_codec_serde::{decode_value_as, encode_serialized, StoredValue};
use crate::value_serde::to_value;

/// An object store as seen by one transaction. Obtained from
/// [`Transaction::object_store`] or [`Transaction::create_object_store`].
#[derive(Debug, Clone, Copy)]
pub struct ObjectStore<'t> {
    tx: &'t Transaction,
    id: i64,
}

/// The error of a request on an object store that was deleted.
fn store_deleted() -> Error {
    Error::InvalidState("the object store has been deleted".into())
}

impl<'t> ObjectStore<'t> {
    pub(crate) fn new(tx: &'t Transaction, id: i64) -> ObjectStore<'t> {
        ObjectStore { tx, id }
    }

    /// Runs `f` with this store's definition.
    fn with_meta<R>(&self, f: impl FnOnce(&StoreMeta) -> Result<R>) -> Result<R> {
        let schema = self.tx.schema();
        let meta = schema.store_by_id(self.id).ok_or_else(store_deleted)?;
        f(meta)
    }

    /// The store's name, with any lone surrogate replaced by U+FFFD (see
    /// [`ObjectStore::name_utf16`]).
    ///
    /// # Errors
    /// [`Error::InvalidState`] if the store was deleted.
    pub fn name(&self) -> Result<String> {
        self.with_meta(|m| Ok(m.name.to_string_lossy()))
    }

    /// The store's name exactly (`IDBObjectStore.name`).
    ///
    /// # Errors
    /// [`Error::InvalidState`] if the store was deleted.
    pub fn name_utf16(&self) -> Result<Utf16String> {
        self.with_meta(|m| Ok(m.name.clone()))
    }

    /// The key path; `None` for out-of-line keys.
    ///
    /// # Errors
    /// [`Error::InvalidState`] if the store was deleted.
    pub fn key_path(&self) -> Result<Option<KeyPath>> {
        self.with_meta(|m| Ok(m.key_path.clone()))
    }

    /// True when the store has a key generator (`autoIncrement`).
    ///
    /// # Errors
    /// [`Error::InvalidState`] if the store was deleted.
    pub fn auto_increment(&self) -> Result<bool> {
        self.with_meta(|m| Ok(m.auto_increment))
    }

    /// The key generator's current number (the next generated key), or `None` without a
    /// key generator. Not in the spec's API; for inspection tools.
    ///
    /// # Errors
    /// [`Error::InvalidState`] if the store was deleted; [`Error::TransactionInactive`] after
    /// the transaction ended.
    pub fn current_number(&self) -> Result<Option<u64>> {
        if !self.auto_increment()? {
            return Ok(None);
        }
        Ok(Some(self.tx.key_generator(self.id)?.current_number()))
    }

    /// Names of the store's indexes, sorted in code-unit order, each with any lone surrogate
    /// replaced by U+FFFD (see [`ObjectStore::index_names_utf16`]).
    ///
    /// # Errors
    /// [`Error::InvalidState`] if the store was deleted.
    pub fn index_names(&self) -> Result<Vec<String>> {
        self.with_meta(|m| Ok(m.indexes.keys().map(Utf16String::to_string_lossy).collect()))
    }

    /// Names of the store's indexes exactly, sorted in code-unit order (`indexNames`).
    ///
    /// # Errors
    /// [`Error::InvalidState`] if the store was deleted.
    pub fn index_names_utf16(&self) -> Result<Vec<Utf16String>> {
        self.with_meta(|m| Ok(m.indexes.keys().cloned().collect()))
    }

    /// The index `name` (`IDBObjectStore.index`).
    ///
    /// # Errors
    /// [`Error::InvalidState`] if the store was deleted; [`Error::TransactionInactive`] after
    /// the transaction ended; [`Error::NotFound`] if there is no such index.
    pub fn index(&self, name: impl Into<Utf16String>) -> Result<Index<'t>> {
        let name = &name.into();
        self.tx.check_active()?;
        let index_id = self.with_meta(|m| Ok(m.index(name)?.id))?;
        Ok(Index::new(self.tx, self.id, index_id))
    }

    /// Checks the store still exists (else InvalidStateError), then that the transaction is
    /// active — the order of the spec's steps for every request.
    fn check_usable(&self) -> Result<()> {
        if !self.tx.source_exists(self.id, None) {
            return Err(store_deleted());
        }
        self.tx.check_active()
    }

    /// The connection for a read, after [`ObjectStore::check_usable`].
    fn read_conn(&self) -> Result<std::cell::Ref<'t, dyn StorageConnection>> {
        self.check_usable()?;
        self.tx.conn()
    }

    // ---- writes ----

    /// Adds a record (`IDBObjectStore.add`); returns its key.
    ///
    /// `key`: the out-of-line key, or `None` (for in-line keys, or to use the key generator).
    ///
    /// # Errors
    /// - [`Error::Constraint`]: a record with this key exists, a unique index already holds
    ///   one of the record's index keys, or the key generator is exhausted.
    /// - [`Error::Data`]: the value nests deeper than [`crate::MAX_VALUE_DEPTH`] − 1 levels;
    ///   `key` given for in-line keys; no key for out-of-line keys without a
    ///   generator; the key path yields no valid key (and no generator can supply one); a
    ///   generated key cannot be injected (a primitive or array in the way, seed 000).
    /// - [`Error::ReadOnly`], [`Error::TransactionInactive`], [`Error::InvalidState`] (store
    ///   deleted); [`Error::Unknown`]/[`Error::QuotaExceeded`] on storage failure (which
    ///   aborts the transaction).
    ///
    /// Any error leaves the store, its indexes and its key generator unchanged.
    pub fn add(&self, value: Value, key: Option<Key>) -> Result<Key> {
        self.store_a_record(NewValue::Tree(value), key, true)
    }

    /// Stores a record, replacing any with the same key (`IDBObjectStore.put`); returns its
    /// key.
    ///
    /// # Errors
    /// As [`ObjectStore::add`], except that an existing record is replaced, not an error.
    pub fn put(&self, value: Value, key: Option<Key>) -> Result<Key> {
        self.store_a_record(NewValue::Tree(value), key, false)
    }

    /// Adds a record whose value is any `Serialize` type: [`ObjectStore::add`] with
    /// [`to_value`](crate::to_value)`(value)?`, the same record stored and the same errors,
    /// but written straight to the stored form without building a [`Value`] (key paths are
    /// evaluated on the stored bytes). A value that needs a generated key injected into it
    /// (in-line keys with a key generator, the key path's property absent) is built as a
    /// [`Value`] for that. Where only [`to_value`](crate::to_value) gives the record or the
    /// error exactly (an error, a repeated property name, nesting near the limit), `value` is
    /// serialized a second time, through it.
    ///
    /// # Errors
    /// As [`ObjectStore::add`], and as [`to_value`](crate::to_value) ([`Error::Data`]: an
    /// integer beyond ±2^53, a map key that cannot be a property name).
    pub fn add_as<T: Serialize + ?Sized>(&self, value: &T, key: Option<Key>) -> Result<Key> {
        self.store_a_record(NewValue::serialized(value)?, key, true)
    }

    /// Stores a record whose value is any `Serialize` type, replacing any with the same key:
    /// [`ObjectStore::put`] as [`ObjectStore::add_as`] is to [`ObjectStore::add`].
    ///
    /// # Errors
    /// As [`ObjectStore::add_as`], except that an existing record is replaced, not an error.
    pub fn put_as<T: Serialize + ?Sized>(&self, value: &T, key: Option<Key>) -> Result<Key> {
        self.store_a_record(NewValue::serialized(value)?, key, false)
    }

    /// Determines the key (`put()`/`add()` steps, then "store a record into an object store":
    /// <https://www.w3.org/TR/IndexedDB-3/#store-a-record-into-an-object-store>), checks every
    /// constraint, and only then writes.
    fn store_a_record(
        &self,
        mut value: NewValue,
        key: Option<Key>,
        no_overwrite: bool,
    ) -> Result<Key> {
        self.tx.check_writable()?;
        self.with_meta(|meta| {
            let mut generator = if meta.auto_increment {
                Some(self.tx.key_generator(meta.id)?)
            } else {
                None
            };
            // A generated key is above every numeric key the store has ever held (explicit
            // numeric keys push the current number past themselves), so no record has it.
            let mut generated = false;
            let key = match (&meta.key_path, key) {
                (Some(_), Some(_)) => {
                    return Err(Error::Data(
                        "the object store uses in-line keys and a key was given".into(),
                    ))
                }
                (Some(kp), None) => match value.extract_key(kp)? {
                    KeyPathExtraction::Key(k) => {
                        if let Some(g) = generator.as_mut() {
                            g.possibly_update_key_generator(&k);
                        }
                        k
                    }
                    KeyPathExtraction::Invalid => {
                        return Err(Error::Data(format!(
                            "key path {kp} yielded a value that is not a valid key"
                        )))
                    }
                    KeyPathExtraction::Failure => match generator.as_mut() {
                        None => return Err(Error::Data(format!("key path {kp} yielded no key"))),
                        Some(g) => {
                            let mut tree = value.into_tree()?;
                            if !check_that_a_key_could_be_injected_into_a_value(&tree, kp) {
                                return Err(Error::Data(format!(
                                    "a generated key cannot be injected into this value at key path {kp}"
                                )));
                            }
                            let k = g.generate_key()?;
                            inject_key_into_value_using_key_path(&mut tree, &k, kp)?;
                            value = NewValue::Tree(tree);
                            generated = true;
                            k
                        }
                    },
                },
                (None, Some(k)) => {
                    if let Some(g) = generator.as_mut() {
                        g.possibly_update_key_generator(&k);
                    }
                    k
                }
                (None, None) => match generator.as_mut() {
                    Some(g) => {
                        generated = true;
                        g.generate_key()?
                    }
                    None => {
                        return Err(Error::Data(
                            "the object store uses out-of-line keys and has no key generator, and no key was given".into(),
                        ))
                    }
                },
            };
            // Checked after injection, which may have added levels.
            if value.nests_too_deep() {
                return Err(Error::Data(format!(
                    "the value nests arrays and objects deeper than {} levels",
                    MAX_VALUE_DEPTH - 1
                )));
            }
            let mut encoded_key = KeyBytes::new();
            write_key(&key, &mut encoded_key);
            // Filled in place: collected through a `Result`, the array (a few hundred bytes)
            // was copied once more per record written.
            let mut new_entries: SmallVec<[(&IndexMeta, IndexKeys); 4]> = SmallVec::new();
            for ix in meta.indexes.values() {
                new_entries.push((ix, value.index_keys(ix)?));
            }
            let encoded_value = value.encoded();

            // Checks, before any write.
            let conn = self.tx.conn()?;
            // `add` needs only to know that no record has the key; `put` over indexes needs
            // the record it replaces, to remove its index entries.
            let old_value = if generated {
                None
            } else if no_overwrite {
                if conn.record_exists(meta.id, &encoded_key)? {
                    return Err(key_exists(&key));
                }
                None
            } else if meta.indexes.is_empty() {
                None
            } else {
                read_record_as(&*conn, meta.id, &encoded_key, decode_value)?
            };
            for (ix, keys) in &new_entries {
                if ix.unique {
                    for k in keys {
                        if conn.index_key_taken(ix.id, k, &encoded_key)? {
                            return Err(Error::Constraint(format!(
                                "unique index {:?} already has a record with key {}",
                                ix.name,
                                describe_encoded(k)
                            )));
                        }
                    }
                }
            }
            let old_entries: Vec<(i64, IndexKeys)> = old_value
                .as_ref()
                .map(|old| {
                    meta.indexes
                        .values()
                        .map(|ix| (ix.id, index_keys(ix, old)))
                        .collect()
                })
                .unwrap_or_default();
            drop(conn);

            // An index whose keys the new value keeps has its entries left as they are.
            let unchanged = |i: usize| old_entries.get(i).is_some_and(|(_, keys)| *keys == new_entries[i].1);

            // Writes.
            self.tx.mutate(|conn| {
                for (i, (index_id, keys)) in old_entries.iter().enumerate() {
                    if unchanged(i) {
                        continue;
                    }
                    for k in keys {
                        conn.delete_index_entry(*index_id, k, &encoded_key)?;
                    }
                }
                if generated {
                    // A plain insert: should a record have the key after all, this fails
                    // (and aborts) instead of replacing it.
                    conn.insert_record(meta.id, &encoded_key, &encoded_value)?;
                } else {
                    conn.put_record(meta.id, &encoded_key, &encoded_value)?;
                }
                let mut entries: SmallVec<[(i64, &[u8]); 8]> = SmallVec::new();
                for (i, (ix, keys)) in new_entries.iter().enumerate() {
                    if !unchanged(i) {
                        entries.extend(keys.iter().map(|k| (ix.id, k.as_slice())));
                    }
                }
                conn.insert_index_entries(&encoded_key, &entries)
            })?;
            if let Some(g) = generator {
                self.tx.set_key_generator(meta.id, g);
            }
            Ok(key)
        })
    }

    /// Deletes the records whose keys are in `range` (`IDBObjectStore.delete`); a key
    /// converts into a one-key range. The key generator is never affected.
    ///
    /// # Errors
    /// [`Error::ReadOnly`], [`Error::TransactionInactive`], [`Error::InvalidState`] (store
    /// deleted), [`Error::Unknown`] on storage failure (which aborts the transaction).
    pub fn delete(&self, range: impl Into<KeyRange>) -> Result<()> {
        self.tx.check_writable()?;
        let range = range.into().encoded();
        self.with_meta(|meta| self.delete_encoded(meta, &range))
    }

    /// Deletes records in an encoded range with their index entries.
    pub(crate) fn delete_encoded(&self, meta: &StoreMeta, range: &EncodedRange) -> Result<()> {
        let old_entries = if meta.indexes.is_empty() {
            Vec::new()
        } else {
            let conn = self.tx.conn()?;
            let records = conn.select_records(meta.id, range, false, 0, true)?;
            let mut entries = Vec::new();
            for (key, _, value) in records.iter() {
                let value = decode_value(value.unwrap_or_default())?;
                for ix in meta.indexes.values() {
                    for k in index_keys(ix, &value) {
                        entries.push((ix.id, k, key.to_vec()));
                    }
                }
            }
            entries
        };
        self.tx.mutate(|conn| {
            for (index_id, k, pk) in &old_entries {
                conn.delete_index_entry(*index_id, k, pk)?;
            }
            conn.delete_records(meta.id, range)
        })
    }

    /// Deletes every record (`IDBObjectStore.clear`). The key generator is not reset
    /// (seed 000).
    ///
    /// # Errors
    /// As [`ObjectStore::delete`].
    pub fn clear(&self) -> Result<()> {
        self.tx.check_writable()?;
        self.with_meta(|meta| {
            let index_ids: Vec<i64> = meta.indexes.values().map(|ix| ix.id).collect();
            self.tx
                .mutate(|conn| conn.clear_records(meta.id, &index_ids))
        })
    }

    // ---- reads ----

    /// The value of the first record in `range` (`IDBObjectStore.get`), or `None`.
    ///
    /// # Errors
    /// [`Error::TransactionInactive`], [`Error::InvalidState`] (store deleted),
    /// [`Error::Unknown`] on storage failure.
    pub fn get(&self, range: impl Into<KeyRange>) -> Result<Option<Value>> {
        self.get_decoded(range.into(), decode_value)
    }

    /// As [`ObjectStore::get`], the value decoded straight into `T` (the mapping of
    /// [`crate::from_value`]) without building a [`Value`]: the typed read path.
    ///
    /// # Errors
    /// As [`ObjectStore::get`]; [`Error::Type`] when the value does not have the shape `T`
    /// expects.
    pub fn get_as<T: DeserializeOwned>(&self, range: impl Into<KeyRange>) -> Result<Option<T>> {
        self.get_decoded(range.into(), decode_value_as)
    }

    /// As [`ObjectStore::get`], the value reported to `visitor` straight from its stored bytes
    /// (see [`crate::visit_value`]) without building a [`Value`]; `Ok(false)` when no record is
    /// in `range`.
    ///
    /// # Errors
    /// As [`ObjectStore::get`]; for a damaged value, the visitor may have been given part of it.
    pub fn get_with(
        &self,
        range: impl Into<KeyRange>,
        visitor: &mut impl ValueVisitor,
    ) -> Result<bool> {
        Ok(self
            .get_decoded(range.into(), |bytes| visit_value(bytes, visitor))?
            .is_some())
    }

    /// The first record in `range`, its value's bytes given to `decode`.
    fn get_decoded<R>(
        &self,
        range: KeyRange,
        decode: impl FnOnce(&[u8]) -> Result<R>,
    ) -> Result<Option<R>> {
        let conn = self.read_conn()?;
        match range.as_only() {
            Some(key) => read_record_as(&*conn, self.id, &encode_key(key), decode),
            None => conn
                .select_records(self.id, &range.encoded(), false, 1, true)?
                .iter()
                .next()
                .map(|(_, _, v)| decode(v.unwrap_or_default()))
                .transpose(),
        }
    }

    /// The key of the first record in `range` (`IDBObjectStore.getKey`), or `None`.
    ///
    /// # Errors
    /// As [`ObjectStore::get`].
    pub fn get_key(&self, range: impl Into<KeyRange>) -> Result<Option<Key>> {
        let range = range.into();
        let conn = self.read_conn()?;
        conn.select_records(self.id, &range.encoded(), false, 1, false)?
            .iter()
            .next()
            .map(|(k, _, _)| decode_key(k).map_err(corrupt))
            .transpose()
    }

    /// Values of the records matching `query`, in key order (`IDBObjectStore.getAll`).
    ///
    /// # Errors
    /// As [`ObjectStore::get`].
    pub fn get_all(&self, query: impl Into<Query>) -> Result<Vec<Value>> {
        // Only the values: the keys are neither decoded nor copied.
        self.select(query.into(), true)?
            .values()
            .map(decode_value)
            .collect()
    }

    /// As [`ObjectStore::get_all`], each value decoded straight into `T` (the mapping of
    /// [`crate::from_value`]) without building a [`Value`].
    ///
    /// # Errors
    /// As [`ObjectStore::get`]; [`Error::Type`] when a value does not have the shape `T`
    /// expects.
    pub fn get_all_as<T: DeserializeOwned>(&self, query: impl Into<Query>) -> Result<Vec<T>> {
        self.select(query.into(), true)?
            .values()
            .map(decode_value_as)
            .collect()
    }

    /// As [`ObjectStore::get_all`], each value reported to `visitor` straight from its stored
    /// bytes (see [`crate::visit_value`]), one after the other in key order, without building
    /// a [`Value`]; returns how many values it reported.
    ///
    /// # Errors
    /// As [`ObjectStore::get`]; for a damaged value, the visitor may have been given the
    /// values before it and part of it.
    pub fn get_all_with(
        &self,
        query: impl Into<Query>,
        visitor: &mut impl ValueVisitor,
    ) -> Result<usize> {
        self.select(query.into(), true)?.visit_values(visitor)
    }

    /// The stored records matching `query`, with or without their values.
    fn select(&self, query: Query, with_values: bool) -> Result<Rows> {
        let conn = self.read_conn()?;
        conn.select_records(
            self.id,
            &encoded_or_all(&query.range),
            query.direction.is_reverse(),
            query.limit(),
            with_values,
        )
    }

    /// Keys of the records matching `query` (`IDBObjectStore.getAllKeys`).
    ///
    /// # Errors
    /// As [`ObjectStore::get`].
    pub fn get_all_keys(&self, query: impl Into<Query>) -> Result<Vec<Key>> {
        self.select(query.into(), false)?
            .iter()
            .map(|(k, _, _)| decode_key(k).map_err(corrupt))
            .collect()
    }

    /// Records (key and value) matching `query` (`IDBObjectStore.getAllRecords`).
    ///
    /// # Errors
    /// As [`ObjectStore::get`].
    pub fn get_all_records(&self, query: impl Into<Query>) -> Result<Vec<Record>> {
        self.select(query.into(), true)?
            .iter()
            .map(|(k, _, v)| {
                let key = decode_key(k).map_err(corrupt)?;
                Ok(Record {
                    primary_key: key.clone(),
                    key,
                    value: decode_value(v.unwrap_or_default())?,
                })
            })
            .collect()
    }

    /// As [`ObjectStore::get_all_records`], each record reported to `visitor` straight from
    /// its stored bytes, one after the other in key order: its key twice (key and primary
    /// key), then its value (see [`crate::visit_value`]), without building a [`Value`] or a
    /// [`Key`] beyond the record's; returns how many records it reported.
    ///
    /// # Errors
    /// As [`ObjectStore::get`]; for a damaged record, the visitor may have been given the
    /// records before it and part of it.
    pub fn get_all_records_with(
        &self,
        query: impl Into<Query>,
        visitor: &mut impl RecordVisitor,
    ) -> Result<usize> {
        self.select(query.into(), true)?.visit_records(visitor)
    }

    /// Number of records in `range` (`IDBObjectStore.count`); `None` counts all.
    ///
    /// # Errors
    /// As [`ObjectStore::get`].
    pub fn count(&self, range: Option<KeyRange>) -> Result<u64> {
        let conn = self.read_conn()?;
        conn.count_records(self.id, &encoded_or_all(&range))
    }

    /// Opens a cursor over the records in `range` (`IDBObjectStore.openCursor`), positioned
    /// on the first record in `direction` (or already past the end).
    ///
    /// # Errors
    /// As [`ObjectStore::get`].
    pub fn open_cursor(
        &self,
        range: Option<KeyRange>,
        direction: CursorDirection,
    ) -> Result<Cursor> {
        self.check_usable()?;
        Cursor::open(
            self.tx,
            CursorSource::store(self.id),
            range,
            direction,
            false,
        )
    }

    /// As [`ObjectStore::open_cursor`], without values (`openKeyCursor`).
    ///
    /// # Errors
    /// As [`ObjectStore::get`].
    pub fn open_key_cursor(
        &self,
        range: Option<KeyRange>,
        direction: CursorDirection,
    ) -> Result<Cursor> {
        self.check_usable()?;
        Cursor::open(
            self.tx,
            CursorSource::store(self.id),
            range,
            direction,
            true,
        )
    }

    // ---- versionchange ----

    /// Sets the key generator's current number (the next generated key); upgrade only. Not
    /// in the spec's API: it lets a restore give a store back the generator state it had,
    /// which may lie above every key the store still holds (records deleted after their keys
    /// were generated).
    ///
    /// # Errors
    /// [`Error::InvalidState`] outside an upgrade, if the store was deleted or has no key
    /// generator; [`Error::TransactionInactive`]; [`Error::Data`] unless
    /// `1 <= current_number <= 2^53 + 1`.
    pub fn set_current_number(&self, current_number: u64) -> Result<()> {
        self.tx.check_upgrade()?;
        if !self.auto_increment()? {
            return Err(Error::InvalidState(
                "the object store has no key generator".into(),
            ));
        }
        let generator = KeyGenerator::with_current_number(current_number)
            .map_err(|e| Error::Data(e.message().to_owned()))?;
        // Read first, so the transaction knows the stored number and marks the change.
        self.tx.key_generator(self.id)?;
        self.tx.set_key_generator(self.id, generator);
        Ok(())
    }

    /// Renames the store (setting `IDBObjectStore.name`); upgrade only. Renaming to the
    /// current name does nothing.
    ///
    /// # Errors
    /// [`Error::InvalidState`] outside an upgrade or if the store was deleted;
    /// [`Error::TransactionInactive`]; [`Error::Constraint`] if another store has `name`.
    pub fn rename(&self, name: impl Into<Utf16String>) -> Result<()> {
        let name = &name.into();
        self.tx.check_upgrade()?;
        let old = self.name_utf16()?;
        if old == *name {
            return Ok(());
        }
        if self.tx.schema().stores.contains_key(name) {
            return Err(Error::Constraint(format!(
                "an object store named {name:?} already exists"
            )));
        }
        self.tx.mutate(|conn| conn.rename_store(self.id, name))?;
        self.tx
            .edit_schema(|schema| schema.rename_store(&old, name));
        Ok(())
    }

    /// Creates an index (`IDBObjectStore.createIndex`) and fills it from the existing
    /// records; upgrade only. Records whose key path yields no valid key are left out.
    ///
    /// # Errors
    /// - [`Error::InvalidState`] outside an upgrade or if the store was deleted;
    ///   [`Error::TransactionInactive`].
    /// - [`Error::Constraint`] if the store already has an index `name`.
    /// - [`Error::InvalidAccess`] for `multi_entry` with an array key path.
    /// - [`Error::Constraint`] if `unique` and existing records share an index key: then the
    ///   whole upgrade transaction is aborted, as the spec requires.
    pub fn create_index(
        &self,
        name: impl Into<Utf16String>,
        key_path: KeyPath,
        unique: bool,
        multi_entry: bool,
    ) -> Result<Index<'t>> {
        let name = &name.into();
        self.tx.check_upgrade()?;
        let store_name = self.name_utf16()?;
        if self.with_meta(|m| Ok(m.indexes.contains_key(name)))? {
            return Err(Error::Constraint(format!(
                "object store {store_name:?} already has an index named {name:?}"
            )));
        }
        if multi_entry && key_path.is_compound() {
            return Err(Error::InvalidAccess(
                "a multiEntry index cannot have an array key path".into(),
            ));
        }
        let meta = IndexMeta {
            id: 0,
            name: name.clone(),
            key_path,
            unique,
            multi_entry,
        };
        let stored = key_path_to_stored(&meta.key_path);
        let id = self.tx.mutate(|conn| {
            let id = conn.insert_index(self.id, name, (&stored.0, stored.1), unique, multi_entry)?;
            let records = conn.select_records(self.id, &EncodedRange::all(), false, 0, true)?;
            for (pk, _, value) in records.iter() {
                let value = decode_value(value.unwrap_or_default())?;
                let keys = index_keys(&meta, &value);
                for k in &keys {
                    if unique && conn.index_key_taken(id, k, pk)? {
                        return Err(Error::Constraint(format!(
                            "cannot create unique index {name:?}: key {} is not unique; the upgrade is aborted",
                            describe_encoded(k)
                        )));
                    }
                }
                let entries: Vec<(i64, &[u8])> = keys.iter().map(|k| (id, k.as_slice())).collect();
                conn.insert_index_entries(pk, &entries)?;
            }
            Ok(id)
        })?;
        self.tx.edit_schema(|schema| {
            if let Some(store) = schema.store_mut(&store_name) {
                store.insert_index(IndexMeta { id, ..meta });
            }
        });
        Ok(Index::new(self.tx, self.id, id))
    }

    /// Deletes the index `name` (`IDBObjectStore.deleteIndex`); upgrade only.
    ///
    /// # Errors
    /// [`Error::InvalidState`] outside an upgrade or if the store was deleted;
    /// [`Error::TransactionInactive`]; [`Error::NotFound`] if there is no such index.
    pub fn delete_index(&self, name: impl Into<Utf16String>) -> Result<()> {
        let name = &name.into();
        self.tx.check_upgrade()?;
        let (store_name, index_id) = self.with_meta(|m| Ok((m.name.clone(), m.index(name)?.id)))?;
        self.tx.mutate(|conn| conn.delete_index(index_id))?;
        self.tx.edit_schema(|schema| {
            if let Some(store) = schema.store_mut(&store_name) {
                store.remove_index(name);
            }
        });
        Ok(())
    }
}

/// A record's value on its way to storage: as the engine holds it ([`ObjectStore::add`],
/// [`ObjectStore::put`]), or already in its stored form, written from serde
/// ([`ObjectStore::add_as`], [`ObjectStore::put_as`]), on which key paths are evaluated in
/// place.
enum NewValue {
    Tree(Value),
    Encoded(StoredValue),
}

impl NewValue {
    /// `value` written from serde, or built as a [`Value`] where only that gives its stored
    /// form exactly (see [`encode_serialized`]).
    fn serialized<T: Serialize + ?Sized>(value: &T) -> Result<NewValue> {
        match encode_serialized(value) {
            Some(stored) => Ok(NewValue::Encoded(stored)),
            None => to_value(value).map(NewValue::Tree),
        }
    }

    /// The value as a [`Value`], built from the stored form if need be (to inject a key).
    fn into_tree(self) -> Result<Value> {
        match self {
            NewValue::Tree(value) => Ok(value),
            NewValue::Encoded(stored) => decode_value(&stored.bytes),
        }
    }

    fn extract_key(&self, key_path: &KeyPath) -> Result<KeyPathExtraction> {
        match self {
            NewValue::Tree(v) => Ok(extract_key_from_value_using_key_path(v, key_path, false)),
            NewValue::Encoded(s) => extract_key_from_stored_value_using_key_path(s, key_path),
        }
    }

    fn index_keys(&self, index: &IndexMeta) -> Result<IndexKeys> {
        match self {
            NewValue::Tree(v) => Ok(index_keys(index, v)),
            NewValue::Encoded(s) => {
                extract_encoded_index_keys_from_stored_value(s, &index.key_path, index.multi_entry)
            }
        }
    }

    /// Deeper than a stored value may nest ([`MAX_VALUE_DEPTH`] − 1 levels); the stored form
    /// written from serde never is (see [`encode_serialized`]).
    fn nests_too_deep(&self) -> bool {
        match self {
            NewValue::Tree(v) => v.nests_deeper_than(MAX_VALUE_DEPTH - 1),
            NewValue::Encoded(_) => false,
        }
    }

    fn encoded(self) -> Vec<u8> {
        match self {
            NewValue::Tree(v) => encode_value(&v),
            NewValue::Encoded(stored) => stored.bytes,
        }
    }
}

fn key_exists(key: &Key) -> Error {
    Error::Constraint(format!(
        "a record with key {} already exists",
        describe(key)
    ))
}

/// A key for error messages, in the text form.
pub(crate) fn describe(key: &Key) -> String {
    crate::text::key_to_text(key)
}

fn describe_encoded(bytes: &[u8]) -> String {
    decode_key(bytes).map_or_else(|_| "(unreadable)".to_owned(), |k| describe(&k))
}

/// A stored key that does not decode means a damaged file.
pub(crate) fn corrupt(e: Error) -> Error {
    Error::Unknown(format!("stored key is corrupt: {}", e.message()))
}

pub(crate) fn encoded_or_all(range: &Option<KeyRange>) -> EncodedRange {
    range
        .as_ref()
        .map_or_else(EncodedRange::all, KeyRange::encoded)
}
