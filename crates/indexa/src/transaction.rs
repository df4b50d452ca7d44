//! Transactions (`IDBTransaction`): scope, mode, durability, commit and abort.
//!
//! Source: <https://www.w3.org/TR/IndexedDB-3/#transaction-construct>. Each transaction is
//! one SQLite transaction, so aborting rolls back data, schema and key generators alike.

use std::cell::{Cell, Ref, RefCell};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::backend::{Connection, StorageConnection};
use crate::connection_lock::{Exclusive, Hold};
use crate::database::{ConnectionKind, DatabaseShared};
use crate::error::{Error, Result};
use crate::key_generator::KeyGenerator;
use crate::key_path::KeyPath;
use crate::object_store::ObjectStore;
use crate::schema::{key_path_to_stored, Schema, StoreMeta};
use crate::utf16::Utf16String;

/// A transaction's mode (`IDBTransactionMode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TransactionMode {
    /// Reads only; runs concurrently with other transactions on a file database.
    ReadOnly,
    /// Reads and writes records; one at a time per database.
    ReadWrite,
    /// An upgrade: may also change object stores and indexes. Started only by
    /// [`crate::Factory::open`].
    VersionChange,
}

impl TransactionMode {
    /// The spec's name: `readonly`, `readwrite` or `versionchange`.
    pub fn as_str(self) -> &'static str {
        match self {
            TransactionMode::ReadOnly => "readonly",
            TransactionMode::ReadWrite => "readwrite",
            TransactionMode::VersionChange => "versionchange",
        }
    }
}

/// How hard a commit works to survive a power loss (`IDBTransactionDurability`).
///
/// Every mode survives a crash of the process once [`Transaction::commit`] returned; they
/// differ on power loss or an operating-system crash (see RELIABILITY.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Durability {
    /// The default: the same as [`Durability::Strict`] in Indexa.
    #[default]
    Default,
    /// The commit is on stable storage when `commit` returns (SQLite `synchronous=FULL`: the
    /// write-ahead log is fsync'd at every commit).
    Strict,
    /// The commit may be lost on power loss until the next checkpoint (SQLite
    /// `synchronous=NORMAL` in WAL mode), but never half-applied.
    Relaxed,
}

impl Durability {
    /// The spec's name: `default`, `strict` or `relaxed`.
    pub fn as_str(self) -> &'static str {
        match self {
            Durability::Default => "default",
            Durability::Strict => "strict",
            Durability::Relaxed => "relaxed",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Outcome {
    Active,
    Committed,
    Aborted,
}

struct State {
    outcome: Outcome,
    /// The schema at the start, which an abort restores (spec: "abort an upgrade
    /// transaction" gives handles their old names back).
    initial_schema: Arc<Schema>,
    schema: Arc<Schema>,
    /// Key generators read or changed in this transaction, with a dirty flag, by object store
    /// id (a few at most: an ordered map finds one faster than hashing its id).
    generators: BTreeMap<i64, (KeyGenerator, bool)>,
}

static NEXT_SERIAL: AtomicU64 = AtomicU64::new(1);

/// A transaction: every read and write happens inside one.
///
/// Get object stores with [`Transaction::object_store`]; end with [`Transaction::commit`] or
/// [`Transaction::abort`]. Dropping an unfinished transaction aborts it. After it ended, every
/// request fails with [`Error::TransactionInactive`].
///
/// A request that fails (e.g. [`Error::Constraint`] from a unique index) changes nothing and
/// leaves the transaction usable: whether to abort is the caller's choice, like
/// `preventDefault()` in seed 000. A storage failure in the middle of a write
/// ([`Error::Unknown`], [`Error::QuotaExceeded`]) aborts the transaction, so nothing
/// half-written can ever commit.
pub struct Transaction {
    shared: Arc<DatabaseShared>,
    mode: TransactionMode,
    durability: Durability,
    /// `None`: every object store of the database.
    scope: Option<Vec<Utf16String>>,
    serial: u64,
    start_version: u64,
    conn: RefCell<Option<(Connection, ConnectionKind)>>,
    state: RefCell<State>,
    /// How many times records or the schema were written through [`Transaction::mutate`];
    /// cursors keep rows read ahead only while it is unchanged.
    writes: Cell<u64>,
    /// The cross-process connection lock while the transaction runs: shared, and for an
    /// upgrade also exclusive.
    locks: RefCell<Option<(Hold, Option<Exclusive>)>>,
}

impl std::fmt::Debug for Transaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Transaction")
            .field("database", &self.shared.name)
            .field("mode", &self.mode)
            .field("durability", &self.durability)
            .field("scope", &self.object_store_names())
            .finish()
    }
}

impl Transaction {
    pub(crate) fn begin(
        shared: Arc<DatabaseShared>,
        scope: Option<Vec<Utf16String>>,
        mode: TransactionMode,
        durability: Durability,
    ) -> Result<Transaction> {
        Self::begin_locked(shared, scope, mode, durability, None)
    }

    /// As `begin`, keeping `exclusive` (an upgrade's exclusive connection lock) until the
    /// transaction ends.
    pub(crate) fn begin_locked(
        shared: Arc<DatabaseShared>,
        scope: Option<Vec<Utf16String>>,
        mode: TransactionMode,
        durability: Durability,
        exclusive: Option<Exclusive>,
    ) -> Result<Transaction> {
        let hold = shared.hold()?;
        let (conn, kind) = shared.take_connection(mode)?;
        // A readonly transaction commits nothing, so its durability does not matter.
        let begun = match kind {
            ConnectionKind::Writer => conn.begin_write(durability != Durability::Relaxed),
            ConnectionKind::Reader => conn.begin_read(),
        };
        Self::begun(
            shared,
            scope,
            mode,
            durability,
            (hold, exclusive),
            (conn, kind),
            begun,
        )
    }

    /// As `begin`, without waiting for the writer (see
    /// [`crate::Database::try_transaction_with_durability`]): `None` when it would.
    pub(crate) fn try_begin(
        shared: Arc<DatabaseShared>,
        scope: Option<Vec<Utf16String>>,
        mode: TransactionMode,
        durability: Durability,
    ) -> Result<Option<Transaction>> {
        let hold = shared.hold()?;
        let Some((conn, kind)) = shared.try_take_connection(mode)? else {
            return Ok(None);
        };
        let begun = match kind {
            ConnectionKind::Writer => conn.try_begin_write(durability != Durability::Relaxed),
            ConnectionKind::Reader => conn.begin_read().map(|()| true),
        };
        match begun {
            Ok(false) => {
                shared.return_connection(conn, kind);
                Ok(None)
            }
            begun => Self::begun(
                shared,
                scope,
                mode,
                durability,
                (hold, None),
                (conn, kind),
                begun.map(|_| ()),
            )
            .map(Some),
        }
    }

    /// The transaction whose storage transaction `begun` started on `conn` (or failed to):
    /// reads the stored version, reloads the schema when another process upgraded the
    /// database, and checks `scope` against it. Every failure gives `conn` back.
    fn begun(
        shared: Arc<DatabaseShared>,
        scope: Option<Vec<Utf16String>>,
        mode: TransactionMode,
        durability: Durability,
        (hold, exclusive): (Hold, Option<Exclusive>),
        (conn, kind): (Connection, ConnectionKind),
        begun: Result<()>,
    ) -> Result<Transaction> {
        let started = begun.and_then(|()| conn.read_version());
        let version = match started {
            Ok(v) => v,
            Err(e) => {
                conn.rollback();
                shared.return_connection(conn, kind);
                return Err(e);
            }
        };
        // Another process may have upgraded the database: reload the schema then.
        let mut schema = shared.schema();
        if schema.version != version {
            match Schema::load(&*conn, version) {
                Ok(s) => {
                    schema = Arc::new(s);
                    shared.set_schema(schema.clone());
                }
                Err(e) => {
                    conn.rollback();
                    shared.return_connection(conn, kind);
                    return Err(e);
                }
            }
        }
        if let Some(names) = &scope {
            for name in names {
                if let Err(e) = schema.store(name) {
                    conn.rollback();
                    shared.return_connection(conn, kind);
                    return Err(e);
                }
            }
        }
        Ok(Transaction {
            shared,
            mode,
            durability,
            scope,
            serial: NEXT_SERIAL.fetch_add(1, Ordering::Relaxed),
            start_version: version,
            conn: RefCell::new(Some((conn, kind))),
            writes: Cell::new(0),
            locks: RefCell::new(Some((hold, exclusive))),
            state: RefCell::new(State {
                outcome: Outcome::Active,
                initial_schema: schema.clone(),
                schema,
                generators: BTreeMap::new(),
            }),
        })
    }

    /// The transaction's mode.
    pub fn mode(&self) -> TransactionMode {
        self.mode
    }

    /// The transaction's durability.
    pub fn durability(&self) -> Durability {
        self.durability
    }

    /// The name of the database.
    pub fn database_name(&self) -> &str {
        &self.shared.name
    }

    /// The object stores in scope, sorted in code-unit order, each with any lone surrogate
    /// replaced by U+FFFD (see [`Transaction::object_store_names_utf16`]).
    pub fn object_store_names(&self) -> Vec<String> {
        self.object_store_names_utf16()
            .iter()
            .map(Utf16String::to_string_lossy)
            .collect()
    }

    /// The object stores in scope, exactly, sorted in code-unit order
    /// (`IDBTransaction.objectStoreNames`). A versionchange transaction's scope is every
    /// object store, including those it creates.
    pub fn object_store_names_utf16(&self) -> Vec<Utf16String> {
        let state = self.state.borrow();
        match &self.scope {
            Some(names) => {
                let mut names: Vec<Utf16String> = names
                    .iter()
                    .filter(|n| state.schema.stores.contains_key(*n))
                    .cloned()
                    .collect();
                names.sort();
                names.dedup();
                names
            }
            None => state.schema.stores.keys().cloned().collect(),
        }
    }

    /// The object store `name` (`IDBTransaction.objectStore`).
    ///
    /// # Errors
    /// [`Error::TransactionInactive`] after commit or abort; [`Error::NotFound`] if `name`
    /// is not an object store in the transaction's scope.
    pub fn object_store(&self, name: impl Into<Utf16String>) -> Result<ObjectStore<'_>> {
        let name = &name.into();
        self.check_active()?;
        if let Some(scope) = &self.scope {
            if !scope.iter().any(|n| n == name) {
                return Err(Error::NotFound(format!(
                    "object store {name:?} is not in the transaction's scope"
                )));
            }
        }
        let id = self.state.borrow().schema.store(name)?.id;
        Ok(ObjectStore::new(self, id))
    }

    /// Commits (`IDBTransaction.commit`): all changes become visible and durable as the
    /// [`Durability`] says.
    ///
    /// # Errors
    /// [`Error::InvalidState`] if already committed or aborted; [`Error::Unknown`] or
    /// [`Error::QuotaExceeded`] if storage fails, in which case the transaction is aborted.
    pub fn commit(&self) -> Result<()> {
        self.commit_with(|c| c.commit())
    }

    /// As [`Transaction::commit`], but leaves the storage's upkeep that may follow a commit
    /// and flush to disk (SQLite's automatic checkpoint of its log) to the next plain commit
    /// of the database's writer, so that a relaxed commit never waits for a flush. Without
    /// such a plain commit the log keeps growing: callers make one every so often.
    ///
    /// # Errors
    /// As [`Transaction::commit`].
    pub fn commit_without_checkpoint(&self) -> Result<()> {
        self.commit_with(|c| c.commit_without_checkpoint())
    }

    fn commit_with(&self, commit: impl FnOnce(&dyn StorageConnection) -> Result<()>) -> Result<()> {
        // Step 1 of IDBTransaction.commit(): a finished transaction is InvalidStateError.
        if self.is_finished() {
            return Err(Error::InvalidState(
                "the transaction has already finished".into(),
            ));
        }
        let result = self.write_generators().and_then(|()| {
            let conn = self.conn.borrow();
            let (c, _) = conn
                .as_ref()
                .ok_or_else(|| Error::TransactionInactive("the transaction has finished".into()))?;
            commit(&**c)
        });
        match result {
            Ok(()) => {
                let mut state = self.state.borrow_mut();
                state.outcome = Outcome::Committed;
                if self.mode == TransactionMode::VersionChange {
                    self.shared.set_schema(state.schema.clone());
                }
                drop(state);
                self.release();
                Ok(())
            }
            Err(e) => {
                self.abort();
                Err(e)
            }
        }
    }

    fn write_generators(&self) -> Result<()> {
        let state = self.state.borrow();
        let conn = self.conn.borrow();
        let Some((c, _)) = conn.as_ref() else {
            return Ok(());
        };
        for (store_id, (generator, dirty)) in &state.generators {
            if *dirty {
                c.write_current_number(*store_id, generator.current_number())?;
            }
        }
        Ok(())
    }

    /// Aborts (`IDBTransaction.abort`): every change of the transaction is undone — records,
    /// object stores, indexes, key generators and, for an upgrade, the version. Does nothing
    /// if the transaction already finished.
    pub fn abort(&self) {
        {
            let mut state = self.state.borrow_mut();
            if state.outcome != Outcome::Active {
                return;
            }
            state.outcome = Outcome::Aborted;
            state.schema = state.initial_schema.clone();
        }
        if let Some((c, _)) = self.conn.borrow().as_ref() {
            c.rollback();
        }
        self.release();
    }

    /// Gives the connection back and drops the locks. While the connection is in use further
    /// up the stack (a request's visitor made a write that failed and aborted the
    /// transaction), both are kept until the transaction is dropped.
    fn release(&self) {
        let Ok(mut conn) = self.conn.try_borrow_mut() else {
            return;
        };
        if let Some((conn, kind)) = conn.take() {
            self.shared.return_connection(conn, kind);
        }
        self.locks.borrow_mut().take();
    }

    /// Runs `f` as one request: if it returns an error, every change it made — records,
    /// index entries, key generators and, in an upgrade, object stores and indexes — is
    /// undone and the transaction stays usable (like a failed request whose error event
    /// called `preventDefault()`). Single requests ([`ObjectStore::put`] …) are already
    /// atomic; this groups several, e.g. the steps of a cursor walk.
    ///
    /// # Errors
    /// The error of `f`; [`Error::TransactionInactive`] if the transaction has finished;
    /// [`Error::Unknown`] if storage fails to open or close the savepoint (the transaction is
    /// then aborted). If `f` itself finished the transaction, its result is returned as is.
    pub fn atomically<R>(&self, f: impl FnOnce(&Transaction) -> Result<R>) -> Result<R> {
        let (schema, generators) = {
            self.check_active()?;
            let state = self.state.borrow();
            (state.schema.clone(), state.generators.clone())
        };
        self.mutate(|c| c.savepoint())?;
        let result = f(self);
        if self.is_finished() {
            return result;
        }
        match result {
            Ok(r) => {
                self.mutate(|c| c.release_savepoint())?;
                Ok(r)
            }
            Err(e) => {
                self.mutate(|c| c.rollback_to_savepoint())?;
                let mut state = self.state.borrow_mut();
                state.schema = schema;
                state.generators = generators;
                Err(e)
            }
        }
    }

    /// True once the transaction committed or aborted.
    pub fn is_finished(&self) -> bool {
        self.state.borrow().outcome != Outcome::Active
    }

    /// True once the transaction committed.
    pub fn was_committed(&self) -> bool {
        self.state.borrow().outcome == Outcome::Committed
    }

    // ---- versionchange: object stores ----

    /// Creates an object store (`IDBDatabase.createObjectStore`); upgrade only.
    ///
    /// `key_path`: `None` for out-of-line keys. `auto_increment`: give the store a key
    /// generator.
    ///
    /// # Errors
    /// [`Error::InvalidState`] outside a versionchange transaction;
    /// [`Error::TransactionInactive`] after it ended; [`Error::Constraint`] if the name is
    /// taken; [`Error::InvalidAccess`] for `auto_increment` with an empty or array key path.
    pub fn create_object_store(
        &self,
        name: impl Into<Utf16String>,
        key_path: Option<KeyPath>,
        auto_increment: bool,
    ) -> Result<ObjectStore<'_>> {
        let name = &name.into();
        self.check_upgrade()?;
        if self.state.borrow().schema.stores.contains_key(name) {
            return Err(Error::Constraint(format!(
                "an object store named {name:?} already exists"
            )));
        }
        if auto_increment
            && key_path
                .as_ref()
                .is_some_and(|kp| kp.is_empty_string() || kp.is_compound())
        {
            return Err(Error::InvalidAccess(
                "autoIncrement needs out-of-line keys or a non-empty string key path".into(),
            ));
        }
        let stored = key_path.as_ref().map(key_path_to_stored);
        let id = self.mutate(|conn| {
            conn.insert_store(
                name,
                stored.as_ref().map(|(t, a)| (t.as_str(), *a)),
                auto_increment,
            )
        })?;
        let mut state = self.state.borrow_mut();
        Arc::make_mut(&mut state.schema).insert_store(StoreMeta::new(
            id,
            name.clone(),
            key_path,
            auto_increment,
        ));
        state.generators.remove(&id);
        drop(state);
        Ok(ObjectStore::new(self, id))
    }

    /// Deletes an object store with its records and indexes
    /// (`IDBDatabase.deleteObjectStore`); upgrade only.
    ///
    /// # Errors
    /// [`Error::InvalidState`] outside a versionchange transaction;
    /// [`Error::TransactionInactive`] after it ended; [`Error::NotFound`] if there is no such
    /// object store.
    pub fn delete_object_store(&self, name: impl Into<Utf16String>) -> Result<()> {
        let name = &name.into();
        self.check_upgrade()?;
        let id = self.state.borrow().schema.store(name)?.id;
        self.mutate(|conn| conn.delete_store(id))?;
        let mut state = self.state.borrow_mut();
        Arc::make_mut(&mut state.schema).remove_store(name);
        state.generators.remove(&id);
        Ok(())
    }

    // ---- crate-internal plumbing ----

    pub(crate) fn serial(&self) -> u64 {
        self.serial
    }

    pub(crate) fn database_version_at_start(&self) -> u64 {
        self.start_version
    }

    /// Sets the database version inside an upgrade.
    pub(crate) fn set_version(&self, version: u64) -> Result<()> {
        self.mutate(|conn| conn.write_version(version))?;
        Arc::make_mut(&mut self.state.borrow_mut().schema).version = version;
        Ok(())
    }

    /// The schema as this transaction sees it.
    pub(crate) fn schema(&self) -> Arc<Schema> {
        self.state.borrow().schema.clone()
    }

    /// True while the object store `store_id` and, with `index_id`, its index exist in the
    /// schema as this transaction sees it: every request's check that its source was not
    /// deleted, without taking a reference to the schema. A store is found by its id alone;
    /// an index's store is still found by name, then the index by its id.
    pub(crate) fn source_exists(&self, store_id: i64, index_id: Option<i64>) -> bool {
        let state = self.state.borrow();
        match index_id {
            None => state.schema.has_store(store_id),
            Some(id) => state
                .schema
                .store_by_id(store_id)
                .is_some_and(|store| store.has_index(id)),
        }
    }

    /// Changes the schema as this transaction sees it (upgrade only; callers checked).
    pub(crate) fn edit_schema<R>(&self, f: impl FnOnce(&mut Schema) -> R) -> R {
        f(Arc::make_mut(&mut self.state.borrow_mut().schema))
    }

    /// The connection, while the transaction is active.
    pub(crate) fn conn(&self) -> Result<Ref<'_, dyn StorageConnection>> {
        self.check_active()?;
        Ref::filter_map(self.conn.borrow(), |c| c.as_ref().map(|(conn, _)| &**conn))
            .map_err(|_| Error::TransactionInactive("the transaction has finished".into()))
    }

    /// Runs writes that must all happen or none: a failure aborts the transaction.
    pub(crate) fn mutate<R>(
        &self,
        f: impl FnOnce(&dyn StorageConnection) -> Result<R>,
    ) -> Result<R> {
        self.writes.set(self.writes.get() + 1);
        let result = {
            let conn = self.conn()?;
            f(&*conn)
        };
        if result.is_err() {
            self.abort();
        }
        result
    }

    /// The number of writes so far (see the `writes` field): equal counts mean that no record
    /// changed in between.
    pub(crate) fn writes(&self) -> u64 {
        self.writes.get()
    }

    pub(crate) fn check_active(&self) -> Result<()> {
        match self.state.borrow().outcome {
            Outcome::Active => Ok(()),
            Outcome::Committed => Err(Error::TransactionInactive(
                "the transaction has committed".into(),
            )),
            Outcome::Aborted => Err(Error::TransactionInactive(
                "the transaction has aborted".into(),
            )),
        }
    }

    /// Active and allowed to write records.
    pub(crate) fn check_writable(&self) -> Result<()> {
        self.check_active()?;
        if self.mode == TransactionMode::ReadOnly {
            return Err(Error::ReadOnly("the transaction is readonly".into()));
        }
        Ok(())
    }

    /// Active and a versionchange transaction (for schema changes).
    pub(crate) fn check_upgrade(&self) -> Result<()> {
        if self.mode != TransactionMode::VersionChange {
            return Err(Error::InvalidState(
                "the schema can only change in a versionchange transaction".into(),
            ));
        }
        self.check_active()
    }

    /// The key generator of object store `store_id` as this transaction sees it.
    pub(crate) fn key_generator(&self, store_id: i64) -> Result<KeyGenerator> {
        if let Some((g, _)) = self.state.borrow().generators.get(&store_id) {
            return Ok(*g);
        }
        let n = self.conn()?.read_current_number(store_id)?;
        let g = KeyGenerator::with_current_number(n)?;
        self.state
            .borrow_mut()
            .generators
            .insert(store_id, (g, false));
        Ok(g)
    }

    /// Records a changed key generator; it is written to storage at commit.
    pub(crate) fn set_key_generator(&self, store_id: i64, generator: KeyGenerator) {
        let mut state = self.state.borrow_mut();
        let entry = state
            .generators
            .entry(store_id)
            .or_insert((generator, false));
        if entry.0 != generator {
            *entry = (generator, true);
        }
    }
}

impl Drop for Transaction {
    fn drop(&mut self) {
        self.abort();
        // What an abort under a visitor kept (see `release`).
        self.release();
    }
}

#[cfg(test)]
mod tests {
    use crate::{Durability, Factory, Key, TransactionMode, Value};

    /// Each readwrite transaction commits with its own durability, though the pragma is only
    /// issued when the setting changes (SQLite reports FULL as 2, NORMAL as 1).
    #[test]
    fn each_writer_gets_its_durability() {
        let factory = Factory::temporary().unwrap();
        let db = factory
            .open("db", Some(1), |tx, _, _| {
                tx.create_object_store("s", None, true).map(|_| ())
            })
            .unwrap();
        let synchronous = |durability| {
            let tx = db
                .transaction_with_durability(&["s"], TransactionMode::ReadWrite, durability)
                .unwrap();
            let level: i64 = tx
                .conn()
                .unwrap()
                .sqlite()
                .unwrap()
                .query_row("PRAGMA synchronous", [], |r| r.get(0))
                .unwrap();
            tx.commit().unwrap();
            level
        };
        assert_eq!(synchronous(Durability::Relaxed), 1);
        assert_eq!(synchronous(Durability::Strict), 2);
        assert_eq!(synchronous(Durability::Strict), 2);
        assert_eq!(synchronous(Durability::Relaxed), 1);
        assert_eq!(synchronous(Durability::Default), 2);
    }

    /// A commit without checkpoint leaves the log's pages out of the database file, however
    /// many; the next plain commit copies them in.
    #[test]
    fn a_commit_without_checkpoint_leaves_the_checkpoint_to_the_next_plain_commit() {
        let factory = Factory::temporary().unwrap();
        let db = factory
            .open("db", Some(1), |tx, _, _| {
                tx.create_object_store("s", None, false).map(|_| ())
            })
            .unwrap();
        let file_size = || {
            std::fs::metadata(factory.database_path("db"))
                .unwrap()
                .len()
        };
        let before = file_size();
        let tx = db
            .transaction_with_durability(&["s"], TransactionMode::ReadWrite, Durability::Relaxed)
            .unwrap();
        let s = tx.object_store("s").unwrap();
        // 2,000 values of 4,000 characters: about 2,000 pages, twice the checkpoint threshold.
        for i in 0..2000 {
            s.put(
                Value::from("x".repeat(4000)),
                Some(Key::Number(f64::from(i))),
            )
            .unwrap();
        }
        tx.commit_without_checkpoint().unwrap();
        assert_eq!(file_size(), before);

        let tx = db
            .transaction_with_durability(&["s"], TransactionMode::ReadWrite, Durability::Relaxed)
            .unwrap();
        tx.object_store("s")
            .unwrap()
            .put(Value::Null, Some(Key::Number(-1.0)))
            .unwrap();
        tx.commit().unwrap();
        assert!(file_size() > before + 7_000_000, "{} bytes", file_size());
    }
}
