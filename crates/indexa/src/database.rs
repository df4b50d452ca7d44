//! A database connection (`IDBDatabase`) and the state its connections share.
//!
//! Source: <https://www.w3.org/TR/IndexedDB-3/#database-interface>.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, ThreadId};
use std::time::Duration;

use crate::backend::{Connection, Place};
use crate::connection_lock::{ConnectionLock, Exclusive, Hold, Owner};
use crate::error::{Error, Result};
use crate::schema::Schema;
use crate::transaction::{Durability, Transaction, TransactionMode};
use crate::utf16::Utf16String;
use crate::version_change::VersionChange;

/// What all connections to one database share: its SQLite connections and cached schema.
///
/// Readwrite and versionchange transactions take the writer slot, so they run one at a time,
/// in the order they obtain it. Readonly transactions take a connection of their own (WAL lets
/// them run beside the writer); between transactions the readers are kept as [`IdleReaders`]
/// says. The connections change roles: a readonly transaction takes the idle writer
/// connection first, and a writer with none idle takes an idle reader, because SQLite drops a
/// connection's whole page cache when another connection changed the database, so after a
/// commit only the connection that made it has its cache still valid; a thread that writes
/// and then reads keeps using that one connection, as it would with SQLite by hand. On a
/// PostgreSQL server, where every connection is a server process, the writer and the idle
/// readers are closed when the last open connection of this state closes, and made again by
/// the next transaction.
pub(crate) struct DatabaseShared {
    /// The name as Rust text, lone surrogates replaced by U+FFFD (for messages and
    /// [`Database::name`]).
    pub name: String,
    /// The name exactly, as UTF-16 code units.
    pub name_units: Utf16String,
    /// The database file, or for a database on a server the key of its connection lock.
    pub path: PathBuf,
    /// Where new connections come from.
    place: Place,
    writer: Mutex<WriterSlot>,
    writer_returned: Condvar,
    readers: Mutex<IdleReaders>,
    /// Open [`Database`] connections of this state.
    connections: AtomicUsize,
    schema: Mutex<Arc<Schema>>,
    deleted: AtomicBool,
    /// Set when the process's locks on the server were lost and, once taken again, the
    /// database turned out deleted or upgraded meanwhile: its connections act as closed.
    lost: AtomicBool,
    /// The lock's [`ConnectionLock::generation`] when this state last checked it.
    lock_generation: AtomicU64,
    /// Which processes (and other factories of this one) have the database open (see
    /// [`ConnectionLock`]); this state's connections hold it as `owner`.
    lock: Arc<ConnectionLock>,
    owner: Owner,
    /// How long to wait for other processes on that lock.
    lock_timeout: Duration,
    /// Which file the connections opened, to notice another process deleting or replacing it.
    file_id: Option<FileId>,
}

/// How many idle reader connections a database keeps with their page cache.
const WARM_READERS: usize = 2;

/// How many more idle reader connections a database on a SQLite file keeps, their page cache
/// given back: readonly transactions that run at once beyond [`WARM_READERS`] then find a
/// connection instead of opening one (opening a SQLite connection and reading its schema took
/// 100–300 µs here, as much as 20–60 point reads). With the warm ones, as many as the Node.js
/// package runs at once per database (64). Each holds two file descriptors and its prepared
/// statements.
const COLD_READERS: usize = 62;

/// The reader connections of a database between readonly transactions: up to
/// [`WARM_READERS`] as their last transaction left them (the ones used last), and on a SQLite
/// file up to [`COLD_READERS`] more whose page cache was freed, until the database's last open
/// connection closes; a transaction takes a warm one first. Readers beyond those, and any whose
/// transaction did not end, are closed as their transactions end. On a server, where each is a
/// server process, only the warm ones are kept.
#[derive(Default)]
struct IdleReaders {
    warm: Vec<Connection>,
    cold: Vec<Connection>,
}

impl IdleReaders {
    fn take(&mut self) -> Option<Connection> {
        self.warm.pop().or_else(|| self.cold.pop())
    }

    fn clear(&mut self) {
        self.warm.clear();
        self.cold.clear();
    }
}

/// A file's identity (device and inode), where the platform has one.
type FileId = (u64, u64);

#[cfg(unix)]
fn file_id(path: &std::path::Path) -> Option<FileId> {
    use std::os::unix::fs::MetadataExt;
    std::fs::symlink_metadata(path)
        .ok()
        .map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn file_id(_path: &std::path::Path) -> Option<FileId> {
    None
}

/// The writer connection when it is free, and which thread took the slot when it is not (no
/// connection and no holder: a reader took it, or it was closed, and the next writer takes an
/// idle reader or connects again).
struct WriterSlot {
    conn: Option<Connection>,
    holder: Option<ThreadId>,
    /// Threads waiting on `writer_returned`: a writer given back with none waiting wakes
    /// nobody (a notification is a system call even then).
    waiting: usize,
}

/// Which kind of connection a transaction holds, so it goes back where it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConnectionKind {
    Writer,
    Reader,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A transaction's scope from the names given: [`Error::InvalidAccess`] when there are none.
fn scope_of<N: Into<Utf16String> + Clone>(names: &[N]) -> Result<Vec<Utf16String>> {
    if names.is_empty() {
        return Err(Error::InvalidAccess(
            "a transaction needs at least one object store".into(),
        ));
    }
    Ok(names.iter().cloned().map(Into::into).collect())
}

impl DatabaseShared {
    /// Opens (creating if needed) the database's storage and loads its schema;
    /// `lock_timeout` bounds every wait for other processes on the connection lock.
    ///
    /// On a server, an open that waited behind a deletion of the database goes on as a new
    /// open: the database is created again (at version 0), as the spec's connection queue
    /// runs an open queued behind a deletion after it.
    pub fn open(
        name: &Utf16String,
        mut place: Place,
        lock_timeout: Duration,
    ) -> Result<DatabaseShared> {
        let owner = Owner::new();
        let (path, lock, _opening) = loop {
            let (path, lock) = match &place {
                Place::File(path) => (path.clone(), ConnectionLock::for_database(path)),
                Place::Postgres(server, id) => (
                    ConnectionLock::server_key(server, *id),
                    ConnectionLock::on_server(server, *id),
                ),
            };
            // No other process deletes the file while it is being opened.
            let opening = lock.hold(owner, &name.to_string_lossy(), lock_timeout)?;
            if let Place::Postgres(server, id) = &place {
                if server.existing_id(name)? != Some(*id) {
                    // Deleted while this open waited: the name's database is a new one now.
                    drop(opening);
                    let server = server.clone();
                    let id = server.database_id(name)?;
                    place = Place::Postgres(server, id);
                    continue;
                }
            }
            break (path, lock, opening);
        };
        let conn = place.connect()?;
        let file_id = match &place {
            Place::File(path) => file_id(path),
            Place::Postgres(..) => None,
        };
        let row = conn.initialize(name)?;
        let schema = Schema::load(&*conn, row.version)?;
        Ok(DatabaseShared {
            name: name.to_string_lossy(),
            name_units: name.clone(),
            path,
            place,
            writer: Mutex::new(WriterSlot {
                conn: Some(conn),
                holder: None,
                waiting: 0,
            }),
            writer_returned: Condvar::new(),
            readers: Mutex::new(IdleReaders::default()),
            connections: AtomicUsize::new(0),
            schema: Mutex::new(Arc::new(schema)),
            deleted: AtomicBool::new(false),
            lost: AtomicBool::new(false),
            lock_generation: AtomicU64::new(lock.generation()),
            lock,
            owner,
            lock_timeout,
            file_id,
        })
    }

    /// Whether the file at the path (or the server's catalog entry of the name) is still the
    /// one this process opened (another process may have deleted the database while this
    /// one had no connection to it), and its lock on a server was not lost while the
    /// database changed (see [`DatabaseShared::hold`]). Meaningful while a hold is taken.
    pub fn is_current(&self) -> bool {
        if self.lost.load(Ordering::SeqCst) {
            return false;
        }
        match &self.place {
            Place::Postgres(server, id) => {
                server.existing_id(&self.name_units).ok() == Some(Some(*id))
            }
            Place::File(_) => self.file_id.is_none() || file_id(&self.path) == self.file_id,
        }
    }

    /// Marks the database as deleted by another process: this process's cached state of it
    /// is never used again.
    pub fn forget(&self) {
        self.deleted.store(true, Ordering::SeqCst);
    }

    /// A shared hold on the cross-process connection lock, for a connection or a transaction.
    ///
    /// # Errors
    /// [`Error::InvalidState`] when another process deletes or upgrades the database for
    /// longer than the lock timeout.
    ///
    /// On a server, when the process's locks were lost (a server restart) and taken again
    /// since this state last looked, the database must still be the one it opened, at the
    /// version it has cached: else another process deleted or upgraded it while nothing
    /// held it, and this state is done with: its transactions fail with
    /// [`Error::InvalidState`] (see [`DatabaseShared::check_not_deleted`]), and the factory's
    /// next open makes a new one.
    pub fn hold(&self) -> Result<Hold> {
        let hold = self.lock.hold(self.owner, &self.name, self.lock_timeout)?;
        let generation = self.lock.generation();
        if self.lock_generation.load(Ordering::SeqCst) != generation {
            if let Place::Postgres(server, id) = &self.place {
                let same = server.existing_id(&self.name_units)? == Some(*id)
                    && server.version(&self.name_units)? == Some(self.schema().version);
                if !same {
                    self.lost.store(true, Ordering::SeqCst);
                }
            }
            self.lock_generation.store(generation, Ordering::SeqCst);
        }
        Ok(hold)
    }

    /// The exclusive connection lock, for a deletion or an upgrade asking for `change`:
    /// waits until no other process has the database open, announcing `change` to them and
    /// calling `blocked` as [`ConnectionLock::exclusive`] says; `None` when another deletion
    /// or upgrade ran meanwhile (read the version again, then call again).
    ///
    /// # Errors
    /// [`Error::InvalidState`] when another process still has it open after the lock timeout.
    pub fn exclusive(
        &self,
        change: VersionChange,
        blocked: &mut dyn FnMut(&VersionChange),
    ) -> Result<Option<Exclusive>> {
        self.lock
            .exclusive(self.owner, &self.name, self.lock_timeout, change, blocked)
    }

    /// Where the database's storage is.
    pub fn place(&self) -> &Place {
        &self.place
    }

    /// Who this state's connections are on the connection lock.
    pub fn owner(&self) -> Owner {
        self.owner
    }

    /// Forgets the connection lock once the database's files are removed.
    pub fn detach_lock(&self) {
        self.lock.detach();
    }

    /// Takes a connection for a transaction of `mode`, waiting for the writer if needed.
    ///
    /// # Errors
    /// [`Error::InvalidState`] when the calling thread itself holds the writer (waiting
    /// would never end), or the database is deleted (also while waiting for the writer).
    pub fn take_connection(&self, mode: TransactionMode) -> Result<(Connection, ConnectionKind)> {
        if mode == TransactionMode::ReadOnly {
            self.check_not_deleted()?;
            let idle_writer = lock(&self.writer).conn.take();
            if let Some(conn) = idle_writer.or_else(|| lock(&self.readers).take()) {
                return Ok((conn, ConnectionKind::Reader));
            }
            let conn = self.place.connect()?;
            return Ok((conn, ConnectionKind::Reader));
        }
        let me = thread::current().id();
        let mut slot = lock(&self.writer);
        loop {
            if let Err(e) = self.check_not_deleted() {
                // The wake-up that may have brought this thread here is another waiter's
                // (a deletion waits on the same condition): pass it on.
                self.writer_freed(slot);
                return Err(e);
            }
            if slot.holder.is_none() {
                if let Some(conn) = self.take_idle_as_writer(&mut slot, me) {
                    return Ok((conn, ConnectionKind::Writer));
                }
                // None idle (or closed with the last connection): connect again, holding the
                // slot meanwhile.
                slot.holder = Some(me);
                drop(slot);
                return match self.place.connect() {
                    Ok(conn) => Ok((conn, ConnectionKind::Writer)),
                    Err(e) => {
                        let mut slot = lock(&self.writer);
                        slot.holder = None;
                        self.writer_freed(slot);
                        Err(e)
                    }
                };
            }
            if slot.holder == Some(me) {
                return Err(Error::InvalidState(format!(
                    "this thread already runs a readwrite or versionchange transaction on database {:?}; finish it first",
                    self.name
                )));
            }
            slot = self.wait_for_writer(slot);
        }
    }

    /// As [`DatabaseShared::take_connection`], without waiting: `None` while another
    /// transaction (of any thread) holds the writer, and while no connection is idle (opening
    /// one runs SQLite's busy handler, which may wait).
    ///
    /// # Errors
    /// [`Error::InvalidState`] when the database is deleted.
    pub fn try_take_connection(
        &self,
        mode: TransactionMode,
    ) -> Result<Option<(Connection, ConnectionKind)>> {
        if mode == TransactionMode::ReadOnly {
            return self.take_connection(mode).map(Some);
        }
        let mut slot = lock(&self.writer);
        self.check_not_deleted()?;
        if slot.holder.is_some() {
            return Ok(None);
        }
        Ok(self
            .take_idle_as_writer(&mut slot, thread::current().id())
            .map(|conn| (conn, ConnectionKind::Writer)))
    }

    /// With the writer slot `slot` free (no holder), takes the idle writer connection or else
    /// an idle reader for a writing transaction of thread `holder`; `None` when neither is
    /// idle.
    fn take_idle_as_writer(&self, slot: &mut WriterSlot, holder: ThreadId) -> Option<Connection> {
        let conn = slot.conn.take().or_else(|| lock(&self.readers).take())?;
        slot.holder = Some(holder);
        Some(conn)
    }

    /// Waits on `writer_returned` with the writer slot `slot` locked.
    fn wait_for_writer<'a>(
        &self,
        mut slot: MutexGuard<'a, WriterSlot>,
    ) -> MutexGuard<'a, WriterSlot> {
        slot.waiting += 1;
        let mut slot = self
            .writer_returned
            .wait(slot)
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        slot.waiting -= 1;
        slot
    }

    /// Unlocks the writer slot `slot`, just freed, and wakes a thread waiting for it if
    /// there is one.
    fn writer_freed(&self, slot: MutexGuard<'_, WriterSlot>) {
        let wake = slot.waiting > 0;
        drop(slot);
        if wake {
            self.writer_returned.notify_one();
        }
    }

    /// Gives a connection back after its transaction ended (closing it instead when it is
    /// not to be kept: a reader beyond those [`IdleReaders`] keeps, or any on a server once
    /// no connection is open).
    pub fn return_connection(&self, conn: Connection, kind: ConnectionKind) {
        let keep = (!self.releases_idle() || self.connections.load(Ordering::SeqCst) > 0)
            && !conn.in_transaction();
        match kind {
            ConnectionKind::Writer => {
                let mut slot = lock(&self.writer);
                slot.conn = keep.then_some(conn);
                slot.holder = None;
                self.writer_freed(slot);
            }
            ConnectionKind::Reader if keep => {
                let mut readers = lock(&self.readers);
                // Checked under the lock that `mark_deleted` clears the readers with.
                if self.deleted.load(Ordering::SeqCst) {
                    return;
                }
                if readers.warm.len() < WARM_READERS {
                    readers.warm.push(conn);
                    return;
                }
                // The connection just used keeps its cache (after a commit it may be the only
                // one whose cache SQLite kept); the warm one idle longest gives its back.
                let conn = {
                    let oldest = readers.warm.remove(0);
                    readers.warm.push(conn);
                    oldest
                };
                // None on a server, nor once the database's last connection closed.
                let cold_kept =
                    if self.releases_idle() || self.connections.load(Ordering::SeqCst) == 0 {
                        0
                    } else {
                        COLD_READERS
                    };
                if readers.cold.len() >= cold_kept {
                    return;
                }
                drop(readers);
                // A connection whose cache cannot be freed is closed rather than kept large.
                if conn.release_memory().is_ok() {
                    let mut readers = lock(&self.readers);
                    if !self.deleted.load(Ordering::SeqCst) && readers.cold.len() < cold_kept {
                        readers.cold.push(conn);
                    }
                }
            }
            ConnectionKind::Reader => {}
        }
    }

    /// Whether idle connections are closed once no connection is open: on a server, where
    /// each is a server process (a SQLite file's stay, for the next open to find).
    fn releases_idle(&self) -> bool {
        matches!(self.place, Place::Postgres(..))
    }

    /// Counts a [`Database`] connection opened.
    fn connection_opened(&self) {
        self.connections.fetch_add(1, Ordering::SeqCst);
    }

    /// Counts a [`Database`] connection closed; the last one closes the idle storage
    /// connections on a server (a running transaction's closes as it ends), and on a SQLite
    /// file the cold idle readers, so a closed database keeps what it kept before a burst.
    fn connection_closed(&self) {
        if self.connections.fetch_sub(1, Ordering::SeqCst) == 1 {
            if self.releases_idle() {
                lock(&self.readers).clear();
                lock(&self.writer).conn.take();
            } else {
                lock(&self.readers).cold.clear();
            }
        }
    }

    /// The cached schema.
    pub fn schema(&self) -> Arc<Schema> {
        lock(&self.schema).clone()
    }

    /// Replaces the cached schema (after a versionchange commit, or a reload).
    pub fn set_schema(&self, schema: Arc<Schema>) {
        *lock(&self.schema) = schema;
    }

    /// Marks the database deleted and closes its idle connections; waits for a running
    /// writer to finish first. Marking it again does nothing more.
    ///
    /// # Errors
    /// [`Error::InvalidState`] when the calling thread itself runs the writer's transaction
    /// (waiting would never end); nothing is marked then.
    pub fn mark_deleted(&self) -> Result<()> {
        let me = thread::current().id();
        let mut slot = lock(&self.writer);
        if slot.conn.is_none() && slot.holder == Some(me) {
            return Err(Error::InvalidState(format!(
                "this thread still runs a readwrite or versionchange transaction on database {:?}; finish it before deleting the database",
                self.name
            )));
        }
        self.deleted.store(true, Ordering::SeqCst);
        while slot.holder.is_some() {
            slot = self.wait_for_writer(slot);
        }
        slot.conn.take();
        // Writers still waiting would wait for a writer nobody gives back: wake them all to
        // find the database deleted.
        let waiting = slot.waiting > 0;
        drop(slot);
        if waiting {
            self.writer_returned.notify_all();
        }
        lock(&self.readers).clear();
        Ok(())
    }

    pub fn check_not_deleted(&self) -> Result<()> {
        if self.lost.load(Ordering::SeqCst) {
            return Err(Error::InvalidState(format!(
                "the connection to database {:?} is closed: its lock on the PostgreSQL server was lost (a server restart?) and the database was deleted or upgraded meanwhile",
                self.name
            )));
        }
        if self.deleted.load(Ordering::SeqCst) {
            return Err(Error::InvalidState(format!(
                "database {:?} has been deleted",
                self.name
            )));
        }
        Ok(())
    }
}

/// A connection to a database (`IDBDatabase`), returned by [`crate::Factory::open`].
///
/// It is `Send + Sync`: share it behind an `Arc`, and start transactions from several threads;
/// how they run side by side is described on [`Database::transaction`].
pub struct Database {
    shared: Arc<DatabaseShared>,
    closed: AtomicBool,
    /// Keeps the database open for other processes until the connection is closed.
    hold: Mutex<Option<Hold>>,
    /// The id of the connection's versionchange listener, while one is registered.
    listener: Mutex<Option<u64>>,
}

impl std::fmt::Debug for Database {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Database")
            .field("name", &self.shared.name)
            .field("version", &self.version())
            .finish()
    }
}

impl Database {
    /// A connection: holds the cross-process connection lock until closed.
    ///
    /// # Errors
    /// As [`DatabaseShared::hold`].
    pub(crate) fn new(shared: Arc<DatabaseShared>) -> Result<Database> {
        let hold = shared.hold()?;
        shared.connection_opened();
        Ok(Database {
            shared,
            closed: AtomicBool::new(false),
            hold: Mutex::new(Some(hold)),
            listener: Mutex::new(None),
        })
    }

    /// Calls `listener` when a deletion or an upgrade of this database by another factory of
    /// this process, or by another process, waits for this connection to close (the spec's
    /// `versionchange` event, <https://www.w3.org/TR/IndexedDB-3/#upgrade-a-database>); it
    /// replaces the listener set before. It runs on a thread of the engine's own (a
    /// connection closed while the call is on its way may still get it); until it returns, the requester does not report being
    /// blocked, so a listener that closes the connection lets the deletion or upgrade go on
    /// without one. The requester keeps waiting for the connection up to its lock timeout
    /// (see [`crate::Factory`]); connections of the requesting factory itself get no call.
    pub fn on_version_change(&self, listener: impl Fn(&VersionChange) + Send + Sync + 'static) {
        let mut slot = lock(&self.listener);
        if let Some(id) = slot.take() {
            self.shared.lock.remove_listener(id);
        }
        if !self.closed.load(Ordering::SeqCst) {
            *slot = Some(
                self.shared
                    .lock
                    .add_listener(self.shared.owner, Arc::new(listener)),
            );
        }
    }

    /// The database's name, with any lone surrogate replaced by U+FFFD (see
    /// [`Database::name_units`] for the exact name).
    pub fn name(&self) -> &str {
        &self.shared.name
    }

    /// The database's name exactly, as UTF-16 code units (`IDBDatabase.name`).
    pub fn name_units(&self) -> &Utf16String {
        &self.shared.name_units
    }

    /// The database's version (≥ 1 once opened).
    pub fn version(&self) -> u64 {
        self.shared.schema().version
    }

    /// Names of the object stores, sorted in code-unit order, each with any lone surrogate
    /// replaced by U+FFFD (see [`Database::object_store_names_utf16`]).
    pub fn object_store_names(&self) -> Vec<String> {
        self.shared
            .schema()
            .stores
            .keys()
            .map(Utf16String::to_string_lossy)
            .collect()
    }

    /// Names of the object stores exactly, sorted in code-unit order (`objectStoreNames`).
    pub fn object_store_names_utf16(&self) -> Vec<Utf16String> {
        self.shared.schema().stores.keys().cloned().collect()
    }

    /// Starts a transaction over the object stores named in `scope` (`IDBDatabase.transaction`)
    /// with durability [`Durability::Default`].
    ///
    /// `mode` is [`TransactionMode::ReadOnly`] or [`TransactionMode::ReadWrite`]. A readwrite
    /// transaction waits until no other readwrite transaction of this database is running
    /// (they run one at a time, in the order they got the database's writer connection);
    /// readonly transactions on a file run concurrently with everything and see the data as
    /// of their start.
    ///
    /// # Errors
    /// [`Error::InvalidState`] if the connection is closed or the database deleted, or for a
    /// readwrite transaction while the same thread still runs another one on this database
    /// (waiting for it would never end);
    /// [`Error::NotFound`] if a name is not an object store; [`Error::InvalidAccess`] if
    /// `scope` is empty; [`Error::Type`] for [`TransactionMode::VersionChange`] (only
    /// [`crate::Factory::open`] starts those); [`Error::Unknown`] if storage fails.
    pub fn transaction<N: Into<Utf16String> + Clone>(
        &self,
        scope: &[N],
        mode: TransactionMode,
    ) -> Result<Transaction> {
        self.transaction_with_durability(scope, mode, Durability::Default)
    }

    /// As [`Database::transaction`], with an explicit durability.
    ///
    /// # Errors
    /// As [`Database::transaction`].
    pub fn transaction_with_durability<N: Into<Utf16String> + Clone>(
        &self,
        scope: &[N],
        mode: TransactionMode,
        durability: Durability,
    ) -> Result<Transaction> {
        self.start(Some(scope_of(scope)?), mode, durability)
    }

    /// A transaction over all object stores, even when there are none (then every object
    /// store request fails with [`Error::NotFound`]). Not in the spec: the text interfaces use
    /// it to run a batch against "the whole database".
    ///
    /// # Errors
    /// As [`Database::transaction`], except that an empty database is not an error.
    pub fn transaction_over_all_stores(
        &self,
        mode: TransactionMode,
        durability: Durability,
    ) -> Result<Transaction> {
        self.start(None, mode, durability)
    }

    /// As [`Database::transaction_with_durability`], without waiting for the writer: `None`,
    /// and no transaction, when a readwrite transaction would have to wait for another one
    /// (of this process or another) to end first, or to open a connection because none is
    /// idle (opening one may wait on SQLite's busy handler). A readonly transaction never waits
    /// for another one.
    /// Like every start, it waits while another process deletes or upgrades the database.
    ///
    /// For callers that must not block, such as an event loop trying a start before handing
    /// it to a thread that may wait. Not in the spec, whose transactions start when the
    /// implementation's scheduling lets them ("transaction scheduling",
    /// <https://www.w3.org/TR/IndexedDB-3/#transaction-scheduling>).
    ///
    /// # Errors
    /// As [`Database::transaction`].
    pub fn try_transaction_with_durability<N: Into<Utf16String> + Clone>(
        &self,
        scope: &[N],
        mode: TransactionMode,
        durability: Durability,
    ) -> Result<Option<Transaction>> {
        let scope = scope_of(scope)?;
        self.check_start(Some(&scope), mode)?;
        Transaction::try_begin(self.shared.clone(), Some(scope), mode, durability)
    }

    fn start(
        &self,
        scope: Option<Vec<Utf16String>>,
        mode: TransactionMode,
        durability: Durability,
    ) -> Result<Transaction> {
        self.check_start(scope.as_deref(), mode)?;
        Transaction::begin(self.shared.clone(), scope, mode, durability)
    }

    /// Whether a transaction over `scope` (`None`: every object store) in `mode` may start on
    /// this connection.
    fn check_start(&self, scope: Option<&[Utf16String]>, mode: TransactionMode) -> Result<()> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(Error::InvalidState("the connection is closed".into()));
        }
        if mode == TransactionMode::VersionChange {
            return Err(Error::Type(
                "versionchange transactions are started by opening with a higher version".into(),
            ));
        }
        if let Some(names) = scope {
            let schema = self.shared.schema();
            for name in names {
                schema.store(name)?;
            }
        }
        Ok(())
    }

    /// Closes the connection (`IDBDatabase.close`): later [`Database::transaction`] calls fail
    /// with [`Error::InvalidState`]; running transactions finish normally. Once they have, other
    /// processes may delete or upgrade the database (dropping the connection closes it too).
    pub fn close(&self) {
        if self.closed.swap(true, Ordering::SeqCst) {
            return;
        }
        if let Some(id) = lock(&self.listener).take() {
            self.shared.lock.remove_listener(id);
        }
        self.shared.connection_closed();
        lock(&self.hold).take();
    }
}

impl Drop for Database {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Factory;

    /// Database `name` of `factory` at version 1, with one object store, `s`.
    fn with_store(factory: &Factory, name: &str) -> Result<Database> {
        factory.open(name, Some(1), |tx, _, _| {
            tx.create_object_store("s", None, false)?;
            Ok(())
        })
    }

    fn idle_readers(db: &Database) -> (usize, usize) {
        let readers = lock(&db.shared.readers);
        (readers.warm.len(), readers.cold.len())
    }

    /// Readonly transactions run at once leave their connections for the next ones: two as
    /// they were, 62 more with their page cache freed, and the rest closed.
    #[test]
    fn readers_of_transactions_run_at_once_stay_for_the_next_ones() -> Result<()> {
        let factory = Factory::temporary()?;
        let db = with_store(&factory, "readers")?;
        let begin_at_once = |n: usize| {
            (0..n)
                .map(|_| db.transaction(&["s"], TransactionMode::ReadOnly))
                .collect::<Result<Vec<_>>>()
        };
        let run_at_once = |n: usize| -> Result<()> {
            for tx in begin_at_once(n)? {
                tx.object_store("s")?.count(None)?;
                tx.commit()?;
            }
            Ok(())
        };
        run_at_once(1)?;
        assert_eq!(idle_readers(&db), (1, 0));
        run_at_once(WARM_READERS + COLD_READERS + 8)?;
        assert_eq!(idle_readers(&db), (WARM_READERS, COLD_READERS));
        // The next ones take those, the warm ones first.
        let txs = begin_at_once(WARM_READERS + 1)?;
        assert_eq!(idle_readers(&db), (0, COLD_READERS - 1));
        drop(txs);
        assert_eq!(idle_readers(&db), (WARM_READERS, COLD_READERS));
        // Closing the database's last connection closes the cold ones, and a reader of a
        // transaction still running then is not kept cold.
        let txs = begin_at_once(WARM_READERS + 1)?;
        db.close();
        assert_eq!(idle_readers(&db), (0, 0));
        drop(txs);
        assert_eq!(idle_readers(&db), (WARM_READERS, 0));
        Ok(())
    }

    /// Where a connection sits between transactions, by address: the idle writer, the idle
    /// readers (warm, then cold).
    fn idle_connections(db: &Database) -> (Option<usize>, Vec<usize>) {
        let address = |c: &Connection| &**c as *const _ as *const () as usize;
        let writer = lock(&db.shared.writer).conn.as_ref().map(address);
        let readers = lock(&db.shared.readers);
        let idle = readers
            .warm
            .iter()
            .chain(&readers.cold)
            .map(address)
            .collect();
        (writer, idle)
    }

    /// The address of the idle writer, after an upgrade the only connection idle.
    fn only_idle_writer(db: &Database) -> usize {
        match idle_connections(db) {
            (Some(writer), idle) if idle.is_empty() => writer,
            other => panic!("the upgrade's connection is not the only idle one: {other:?}"),
        }
    }

    /// After a commit a readonly transaction takes the connection that made it (SQLite kept
    /// that one's page cache alone), and the next readwrite transaction takes it back from the
    /// idle readers instead of opening another: one thread that writes and reads keeps to one
    /// connection.
    #[test]
    fn a_thread_that_writes_and_reads_keeps_to_one_connection() -> Result<()> {
        let factory = Factory::temporary()?;
        let db = with_store(&factory, "roles")?;
        let writer = only_idle_writer(&db);
        for round in 0..3 {
            let read = db.transaction(&["s"], TransactionMode::ReadOnly)?;
            assert_eq!(idle_connections(&db), (None, vec![]), "round {round}");
            assert_eq!(read.object_store("s")?.count(None)?, round);
            read.commit()?;
            assert_eq!(idle_connections(&db), (None, vec![writer]), "round {round}");
            let write = db.transaction(&["s"], TransactionMode::ReadWrite)?;
            assert_eq!(idle_connections(&db), (None, vec![]), "round {round}");
            write
                .object_store("s")?
                .put(crate::Value::Null, Some(crate::Key::Number(round as f64)))?;
            write.commit()?;
            assert_eq!(
                idle_connections(&db),
                (Some(writer), vec![]),
                "round {round}"
            );
        }
        Ok(())
    }

    /// A reader given back while the warm ones are full stays warm, and the warm one idle
    /// longest gives its page cache back instead.
    #[test]
    fn the_reader_used_last_stays_warm() -> Result<()> {
        let factory = Factory::temporary()?;
        let db = with_store(&factory, "warm")?;
        let first = only_idle_writer(&db);
        // The first takes the idle writer, the other two open connections; given back in
        // that order, the first is the one idle longest when the third comes back.
        let txs = (0..WARM_READERS + 1)
            .map(|_| db.transaction(&["s"], TransactionMode::ReadOnly))
            .collect::<Result<Vec<_>>>()?;
        for tx in txs {
            tx.commit()?;
        }
        assert_eq!(idle_readers(&db), (WARM_READERS, 1));
        let (None, idle) = idle_connections(&db) else {
            panic!("a readonly transaction's connection went back to the writer");
        };
        assert!(!idle[..WARM_READERS].contains(&first));
        assert_eq!(idle[WARM_READERS..], [first]);
        Ok(())
    }

    /// A readwrite start that must not wait takes the idle writer or else an idle reader, and
    /// gives `None` when neither is idle (it would have to open a connection) and while
    /// another transaction holds the writer.
    #[test]
    fn a_start_without_waiting_takes_an_idle_reader_or_gives_none() -> Result<()> {
        let factory = Factory::temporary()?;
        let db = with_store(&factory, "try")?;
        let try_write = || {
            db.try_transaction_with_durability(
                &["s"],
                TransactionMode::ReadWrite,
                Durability::Relaxed,
            )
        };
        // The readonly transaction holds the only connection.
        let read = db.transaction(&["s"], TransactionMode::ReadOnly)?;
        assert!(try_write()?.is_none());
        read.commit()?;
        let (None, idle) = idle_connections(&db) else {
            panic!("the readonly transaction's connection went back to the writer");
        };
        assert_eq!(idle.len(), 1);
        let write = try_write()?.expect("the idle reader becomes the writer");
        assert_eq!(idle_connections(&db), (None, vec![]));
        assert!(try_write()?.is_none());
        write.commit()?;
        assert_eq!(idle_connections(&db), (Some(idle[0]), vec![]));
        Ok(())
    }

    /// A connection whose transaction is still open is closed, not kept for the next one:
    /// a reader, and the writer (the next readwrite transaction connects again).
    #[test]
    fn a_connection_still_in_a_transaction_is_not_kept() -> Result<()> {
        let factory = Factory::temporary()?;
        let db = factory.open("open-reader", Some(1), |_, _, _| Ok(()))?;
        let (conn, kind) = db.shared.take_connection(TransactionMode::ReadOnly)?;
        conn.begin_read()?;
        conn.read_version()?;
        db.shared.return_connection(conn, kind);
        assert_eq!(idle_readers(&db), (0, 0));
        let (conn, kind) = db.shared.take_connection(TransactionMode::ReadOnly)?;
        conn.begin_read()?;
        conn.read_version()?;
        conn.commit()?;
        db.shared.return_connection(conn, kind);
        assert_eq!(idle_readers(&db), (1, 0));
        let (conn, kind) = db.shared.take_connection(TransactionMode::ReadWrite)?;
        conn.begin_write(false)?;
        db.shared.return_connection(conn, kind);
        assert!(lock(&db.shared.writer).conn.is_none());
        let (conn, kind) = db.shared.take_connection(TransactionMode::ReadWrite)?;
        conn.begin_write(false)?;
        conn.commit()?;
        db.shared.return_connection(conn, kind);
        assert!(lock(&db.shared.writer).conn.is_some());
        Ok(())
    }

    /// Waits (up to a minute) until `n` threads wait for the writer of `db`.
    fn until_waiting_for_writer(db: &Database, n: usize) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while lock(&db.shared.writer).waiting < n {
            assert!(
                std::time::Instant::now() < deadline,
                "{n} threads never waited"
            );
            thread::sleep(std::time::Duration::from_millis(1));
        }
    }

    /// A writer and a deletion both waiting for a running writer both end once it is given
    /// back, whichever of them is woken first: the deletion, and the writer with
    /// InvalidStateError (its database is gone). The running writer is given back still in
    /// its transaction, so it is closed rather than kept, as a server's writer is once the
    /// database's last connection closed.
    #[test]
    fn a_writer_and_a_deletion_waiting_together_both_end() -> Result<()> {
        let factory = Factory::temporary()?;
        let db = factory.open("waiting", Some(1), |_, _, _| Ok(()))?;
        let (conn, kind) = db.shared.take_connection(TransactionMode::ReadWrite)?;
        conn.begin_write(false)?;
        let (done, ended) = std::sync::mpsc::channel();
        // The writer waits first, so a wake-up given to one waiter goes to it.
        let writing = db.shared.clone();
        let wrote = done.clone();
        thread::spawn(move || {
            let took = writing.take_connection(TransactionMode::ReadWrite);
            wrote.send((
                "writer",
                took.map(|(conn, kind)| writing.return_connection(conn, kind)),
            ))
        });
        until_waiting_for_writer(&db, 1);
        let deleting = db.shared.clone();
        thread::spawn(move || done.send(("deletion", deleting.mark_deleted())));
        until_waiting_for_writer(&db, 2);
        db.shared.return_connection(conn, kind);
        let mut results = Vec::new();
        for _ in 0..2 {
            let (who, result) = ended
                .recv_timeout(std::time::Duration::from_secs(60))
                .expect("a waiter was never woken");
            results.push((who, result.map_err(|e| e.name())));
        }
        results.sort_by_key(|(who, _)| *who);
        assert_eq!(
            results,
            [("deletion", Ok(())), ("writer", Err("InvalidStateError"))]
        );
        Ok(())
    }

    /// A reader given back after its database was marked deleted is closed.
    #[test]
    fn a_reader_of_a_deleted_database_is_not_kept() -> Result<()> {
        let factory = Factory::temporary()?;
        let db = factory.open("deleted", Some(1), |_, _, _| Ok(()))?;
        let (conn, kind) = db.shared.take_connection(TransactionMode::ReadOnly)?;
        db.shared.mark_deleted()?;
        db.shared.return_connection(conn, kind);
        assert_eq!(idle_readers(&db), (0, 0));
        Ok(())
    }
}
