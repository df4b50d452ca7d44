//! The cross-process connection lock: which processes have a database open.
//!
//! IndexedDB lets a database be deleted or upgraded only once every other connection to it
//! is closed (<https://www.w3.org/TR/IndexedDB-3/#delete-a-database>, "upgrade a database").
//! This lock makes them wait for the connections their caller cannot see: those of other
//! processes, and those of other factories (owners) of the same process. Every process with
//! an open connection or a running transaction holds a shared record lock on one byte of the
//! database file (apart from the bytes SQLite locks), and a deletion or an upgrade holds it
//! exclusively; within the process, holds are counted by owner. The operating system drops
//! a process's locks when it exits or crashes, so a dead process never blocks anyone.
//!
//! The locks are Linux open-file-description locks (`F_OFD_SETLK`): they belong to one open
//! file, so SQLite opening and closing its own descriptors of the file never touches them,
//! turning a shared lock into an exclusive one is atomic (a failed attempt keeps the shared
//! lock), and a process conflicts with itself only through a second open file — so each
//! database file is opened for locking once per process, through a process-wide registry
//! keyed by path. On other platforms there is no lock between processes (the file lock always
//! succeeds); the owners within a process are counted everywhere.
//!
//! A deletion or an upgrade that has to wait announces itself in the database's notice file
//! (`version_change`) and holds a request byte meanwhile, so new connections elsewhere wait
//! behind it. Each process with the database open runs a watcher thread that reads the notice
//! file every few milliseconds and calls the listeners of its connections; it acknowledges a
//! notice by moving its shared lock from the pending byte of that notice's serial to the one
//! of the next, so the requester knows when every process was told and reports being blocked
//! only by connections still open then. The bytes and the file are described in
//! `docs/format.md` ("Connections across processes").
//!
//! For a database on a PostgreSQL server the same protocol runs on the server, across hosts:
//! each lock byte is a session advisory lock and the notice a row of `indexa.versionchange`
//! (`backend::postgres_session`; `docs/format.md`, "Connections across hosts").

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use crate::backend::postgres::Server;
use crate::backend::postgres_session::{Session, SessionLock};
use crate::error::{Error, Result};
use crate::version_change::{notice_path, read_notice, write_notice, Notice, VersionChange};

/// How long an attempt sleeps before trying again while another process holds the lock.
const RETRY_EVERY: Duration = Duration::from_millis(10);

/// How often the watcher reads the notice files of the databases this process has open.
const WATCH_EVERY: Duration = Duration::from_millis(5);

/// How long a deletion or an upgrade waits for every process to acknowledge its notice
/// before it reports being blocked anyway (a process may be too busy to answer).
const ACKNOWLEDGE_WITHIN: Duration = Duration::from_secs(1);

/// How often the watcher tries to take locks lost with a server's session connection again.
const RETRY_LOST_EVERY: Duration = Duration::from_millis(200);

/// What a deletion or an upgrade announces, and what it calls when blocked.
type Request<'a> = (VersionChange, &'a mut dyn FnMut(&VersionChange));

/// A connection's versionchange listener.
pub(crate) type Listener = Arc<dyn Fn(&VersionChange) + Send + Sync>;

/// The lock on one database file, shared by every connection of this process.
pub(crate) struct ConnectionLock {
    path: PathBuf,
    /// For a database on a PostgreSQL server: the server and the database's id (the locks
    /// are then session locks there, see `backend::postgres_session`).
    server: Option<(Arc<Server>, i32)>,
    state: Mutex<LockState>,
}

struct LockState {
    /// The database file opened for locking, or the session connection to the server.
    file: Option<LockFile>,
    /// Open connections and running transactions of this process.
    holds: usize,
    /// The same, by owner.
    holds_by: HashMap<Owner, usize>,
    /// Deletions and upgrades of this process running now.
    exclusive: usize,
    /// Whose they are (one owner at a time).
    exclusive_owner: Option<Owner>,
    /// The notice file, read by the watcher while the process has holds (a database file's).
    notice: Option<File>,
    /// The serial of the last notice delivered to this process's connections.
    acknowledged: u64,
    /// The owner of this process whose deletion or upgrade has announced itself and waits.
    requesting: Option<Owner>,
    /// On a server: the session connection holding this process's locks was lost (a server
    /// restart, an administrator ending it) while the process had holds, and the locks are
    /// not taken again yet.
    lost: bool,
    /// How many times lost locks were taken again (see [`ConnectionLock::generation`]).
    generation: u64,
    /// When the watcher may next try to take lost locks again.
    retry_at: Option<Instant>,
    /// The versionchange listeners of the open connections, by id.
    listeners: Vec<(u64, Owner, Listener)>,
}

/// Who takes a lock within the process: one factory's state of one database (the
/// connections a caller sees, and may close before deleting or upgrading), or one deletion.
/// Holds of other owners block a deletion or an upgrade as another process's do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct Owner(usize);

impl Owner {
    /// An owner distinct from every other.
    pub fn new() -> Owner {
        static NEXT: AtomicUsize = AtomicUsize::new(1);
        Owner(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

/// The lock a process holds on the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Shared,
    Exclusive,
    None,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The locks in use in this process, by path. A lock (and its descriptor) lives as long as a
/// database's shared state uses it, which outlives that state's SQLite connections: closing
/// a descriptor of a file drops the process's SQLite locks on it.
fn registry() -> &'static Mutex<HashMap<PathBuf, Weak<ConnectionLock>>> {
    static REGISTRY: OnceLock<Mutex<HashMap<PathBuf, Weak<ConnectionLock>>>> = OnceLock::new();
    REGISTRY.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The byte of the database file the lock is on: apart from SQLite's lock bytes (the 512
/// from 1 GiB on). Record locks are advisory and need no data at their offset, so the
/// database's size does not matter.
const LOCK_BYTE: i64 = 0x7000_0000;

/// The two bytes a process holds a shared lock on while it has not yet delivered the next
/// notice to its connections: the one for an odd serial and the one for an even serial.
const PENDING_BYTES: [i64; 2] = [LOCK_BYTE + 1, LOCK_BYTE + 2];

/// Locked exclusively while a notice is written.
const NOTICE_BYTE: i64 = LOCK_BYTE + 3;

/// Locked exclusively by a deletion or an upgrade from its notice until it ends; new
/// connections of other processes wait meanwhile.
const REQUEST_BYTE: i64 = LOCK_BYTE + 4;

/// The byte of [`PENDING_BYTES`] for notice `serial`.
fn pending_byte(serial: u64) -> i64 {
    PENDING_BYTES[(serial % 2) as usize]
}

/// A shared lock held for one connection or transaction; dropping it releases it.
pub(crate) struct Hold(Arc<ConnectionLock>, Owner);

/// The exclusive lock held for one deletion or upgrade; dropping it returns the process to
/// its shared lock (or none).
pub(crate) struct Exclusive(Arc<ConnectionLock>);

/// What a lock attempt waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Blocker {
    AnotherProcess,
    AnotherOwner,
}

impl ConnectionLock {
    /// This process's lock for the database file `database`.
    pub fn for_database(database: &Path) -> Arc<ConnectionLock> {
        Self::registered(database, None)
    }

    /// This process's lock for database `id` on PostgreSQL server `server`: session locks on
    /// the server instead of file locks, and the notice in the server's
    /// `indexa.versionchange` table.
    pub fn on_server(server: &Arc<Server>, id: i32) -> Arc<ConnectionLock> {
        Self::registered(&Self::server_key(server, id), Some((server.clone(), id)))
    }

    /// The registry key of database `id` on `server`: a name no file path has (it holds a NUL
    /// byte).
    pub fn server_key(server: &Server, id: i32) -> PathBuf {
        PathBuf::from(format!("\0{}\0{id}", server.shown()))
    }

    fn registered(database: &Path, server: Option<(Arc<Server>, i32)>) -> Arc<ConnectionLock> {
        let path = database.to_path_buf();
        let mut registry = lock(registry());
        if let Some(existing) = registry.get(&path).and_then(Weak::upgrade) {
            return existing;
        }
        registry.retain(|_, l| l.strong_count() > 0);
        let new = Arc::new(ConnectionLock {
            path: path.clone(),
            server,
            state: Mutex::new(LockState {
                file: None,
                holds: 0,
                holds_by: HashMap::new(),
                exclusive: 0,
                exclusive_owner: None,
                notice: None,
                acknowledged: 0,
                requesting: None,
                lost: false,
                generation: 0,
                retry_at: None,
                listeners: Vec::new(),
            }),
        });
        registry.insert(path, Arc::downgrade(&new));
        new
    }

    /// Registers `listener` for a connection of `owner`; returns its id for
    /// [`ConnectionLock::remove_listener`].
    pub fn add_listener(&self, owner: Owner, listener: Listener) -> u64 {
        static NEXT: AtomicUsize = AtomicUsize::new(1);
        let id = NEXT.fetch_add(1, Ordering::Relaxed) as u64;
        lock(&self.state).listeners.push((id, owner, listener));
        id
    }

    /// Removes the listener `id`.
    pub fn remove_listener(&self, id: u64) {
        lock(&self.state).listeners.retain(|(i, _, _)| *i != id);
    }

    /// Takes a shared hold for a connection or transaction of `owner`, waiting up to
    /// `timeout` while another process or owner deletes or upgrades the database.
    ///
    /// # Errors
    /// [`Error::InvalidState`] when the wait timed out; [`Error::Unknown`] when the file
    /// cannot be opened or locked.
    pub fn hold(self: &Arc<Self>, owner: Owner, name: &str, timeout: Duration) -> Result<Hold> {
        self.acquire(Kind::Shared, owner, timeout, None, |by| {
            Error::InvalidState(format!(
                "database {name:?} is being deleted or upgraded {} (waited {} ms)",
                match by {
                    Blocker::AnotherProcess => "by another process",
                    Blocker::AnotherOwner => "through another factory of this process",
                },
                timeout.as_millis()
            ))
        })?;
        Ok(Hold(self.clone(), owner))
    }

    /// Takes the exclusive lock for a deletion or an upgrade by `owner`, waiting up to
    /// `timeout` until no other process or owner has a connection to the database.
    ///
    /// When it has to wait, it announces `change` in the notice file, so every other
    /// process and owner delivers it to its connections' listeners; once they all have (or
    /// after [`ACKNOWLEDGE_WITHIN`]) and the database is still open elsewhere, it calls
    /// `blocked` once and keeps waiting. New connections of other owners and processes wait
    /// until it ends. It announces nothing while another owner's or process's deletion or
    /// upgrade runs or waits: once that has ended it returns `Ok(None)`, for the caller to
    /// read the version that deletion or upgrade left and call again.
    ///
    /// # Errors
    /// [`Error::InvalidState`] when another process or owner still had the database open
    /// after `timeout`; [`Error::Unknown`] when the file cannot be opened or locked.
    pub fn exclusive(
        self: &Arc<Self>,
        owner: Owner,
        name: &str,
        timeout: Duration,
        change: VersionChange,
        blocked: &mut dyn FnMut(&VersionChange),
    ) -> Result<Option<Exclusive>> {
        let taken = self.acquire(
            Kind::Exclusive,
            owner,
            timeout,
            Some((change, blocked)),
            |by| {
                Error::InvalidState(format!(
                    "database {name:?} is open {}; close it there first (waited {} ms)",
                    match by {
                        Blocker::AnotherProcess => "in another process",
                        Blocker::AnotherOwner => "through another factory of this process",
                    },
                    timeout.as_millis()
                ))
            },
        )?;
        Ok(taken.then(|| Exclusive(self.clone())))
    }

    fn acquire(
        &self,
        want: Kind,
        owner: Owner,
        timeout: Duration,
        mut request: Option<Request<'_>>,
        timed_out: impl Fn(Blocker) -> Error,
    ) -> Result<bool> {
        let deadline = Instant::now() + timeout;
        // Whether a deletion or an upgrade of another owner or process ran (or was
        // announced) while this one waited: it may have changed the version.
        let mut waited_for_another = false;
        // This attempt's notice's serial and when it was announced; whether `blocked` was
        // called.
        let mut announced: Option<(u64, Instant)> = None;
        let mut reported = false;
        let outcome = loop {
            let mut st = lock(&self.state);
            // Whether every connection elsewhere has been told, checked before trying: a
            // connection closed by its listener has let go by the time it acknowledges.
            let told = announced.map(|(serial, at)| {
                self.acknowledged(&st, owner, serial) || at.elapsed() >= ACKNOWLEDGE_WITHIN
            });
            let blocker = match self.attempt(&mut st, want, owner) {
                Ok(None) => break Ok(true),
                Err(e) => break Err(e),
                Ok(Some((blocker, another_request))) => {
                    if let Some((change, _)) = request.as_mut() {
                        if another_request && announced.is_none() {
                            waited_for_another = true;
                        } else if announced.is_none() && waited_for_another {
                            break Ok(false);
                        } else if announced.is_none() {
                            match self.announce(&mut st, owner, *change) {
                                Ok(serial) => announced = serial.map(|s| (s, Instant::now())),
                                Err(e) => break Err(e),
                            }
                        }
                    }
                    blocker
                }
            };
            // Neither `blocked` nor the wait runs with the state locked: the watcher needs it
            // to deliver the notice (a lock held through the sleep kept it out for as long as
            // ACKNOWLEDGE_WITHIN on a loaded machine, and `blocked` was reported wrongly).
            drop(st);
            if let Some((change, blocked)) = request.as_mut() {
                if told == Some(true) && !reported {
                    reported = true;
                    blocked(change);
                }
            }
            if Instant::now() >= deadline {
                break Err(timed_out(blocker));
            }
            std::thread::sleep(RETRY_EVERY);
        };
        let mut st = lock(&self.state);
        if announced.is_some() {
            st.requesting = None;
            if let Some(file) = &st.file {
                // Unlocking never conflicts.
                let _ = file.set_lock(Kind::None, REQUEST_BYTE);
            }
        }
        self.close_unused_session(&mut st);
        outcome
    }

    /// One try at taking the lock: `Ok(None)` when taken, else what it waits for, and
    /// whether that is a deletion or an upgrade (running or announced) rather than
    /// connections.
    fn attempt(
        &self,
        st: &mut LockState,
        want: Kind,
        owner: Owner,
    ) -> Result<Option<(Blocker, bool)>> {
        let own_exclusive = st.exclusive > 0 && st.exclusive_owner == Some(owner);
        // A new connection of an owner that has none waits for a deletion or an upgrade that
        // announced itself, as an open waits behind one in the spec's connection queue.
        let newcomer = want == Kind::Shared && !own_exclusive && !st.holds_by.contains_key(&owner);
        if st.exclusive > 0 && !own_exclusive
            || st.requesting.is_some_and(|o| o != owner) && (newcomer || want == Kind::Exclusive)
        {
            return Ok(Some((Blocker::AnotherOwner, true)));
        }
        if want == Kind::Exclusive && st.holds_by.iter().any(|(o, n)| *o != owner && *n > 0) {
            return Ok(Some((Blocker::AnotherOwner, false)));
        }
        // No transaction runs on locks the server let go of: they are taken again first (a
        // deletion or an upgrade elsewhere that took the database meanwhile is waited for).
        if want == Kind::Shared && !self.recover(st, true)? {
            return Ok(Some((Blocker::AnotherProcess, true)));
        }
        let unlocked = st.holds == 0 && st.exclusive == 0;
        if unlocked {
            self.open_current(st)?;
        }
        if newcomer && st.requesting.is_none() {
            if let Some(file) = &st.file {
                if file
                    .conflicts(REQUEST_BYTE, Kind::Exclusive)
                    .map_err(|e| self.io_error(e))?
                {
                    return Ok(Some((Blocker::AnotherProcess, true)));
                }
            }
        }
        if st.exclusive > 0 || (want == Kind::Shared && st.holds > 0) {
            // Already held strongly enough by this process.
            return self.count(st, want, owner).map(|()| None);
        }
        let locked = match &st.file {
            Some(file) => file
                .set_lock(want, LOCK_BYTE)
                .map_err(|e| self.io_error(e))?,
            // Nothing to lock where the file can neither be opened nor created (SQLite then
            // reports why), so nothing to wait for.
            None => true,
        };
        if !locked {
            let another_request = match &st.file {
                Some(file) => {
                    file.conflicts(LOCK_BYTE, Kind::Shared)
                        .map_err(|e| self.io_error(e))?
                        || file
                            .conflicts(REQUEST_BYTE, Kind::Exclusive)
                            .map_err(|e| self.io_error(e))?
                }
                None => false,
            };
            return Ok(Some((Blocker::AnotherProcess, another_request)));
        }
        // A lock taken on a file another process deleted meanwhile guards nothing: start
        // again on the file now at the path.
        if unlocked && st.file.as_ref().is_some_and(|f| !self.is_current(f)) {
            st.file = None;
            return self.attempt(st, want, owner);
        }
        self.count(st, want, owner).map(|()| None)
    }

    /// Announces a deletion or an upgrade by `owner` in the notice file and returns the
    /// notice's serial; `None` (nothing announced, to be tried again) while another owner or
    /// process has a request of its own announced.
    fn announce(
        &self,
        st: &mut LockState,
        owner: Owner,
        change: VersionChange,
    ) -> Result<Option<u64>> {
        let Some(file) = &st.file else {
            return Ok(None);
        };
        if st.requesting.is_some()
            || !file
                .set_lock(Kind::Exclusive, REQUEST_BYTE)
                .map_err(|e| self.io_error(e))?
        {
            return Ok(None);
        }
        let written = (|| {
            let file = match file {
                LockFile::Server(session) => return session.publish(owner.0 as u64, change),
                LockFile::File(file) => file,
            };
            set_lock_waiting(file, NOTICE_BYTE)?;
            let result = (|| {
                let notice_file = open_notice(&self.path, true)?;
                let serial = read_notice(&notice_file).map_or(0, |n| n.serial) + 1;
                write_notice(
                    &notice_file,
                    &Notice {
                        serial,
                        pid: u64::from(std::process::id()),
                        owner: owner.0 as u64,
                        change,
                    },
                )?;
                Ok(serial)
            })();
            let _ = set_lock(file, Kind::None, NOTICE_BYTE);
            result
        })();
        match written {
            Ok(serial) => {
                st.requesting = Some(owner);
                Ok(Some(serial))
            }
            Err(e) => {
                let _ = file.set_lock(Kind::None, REQUEST_BYTE);
                Err(self.io_error(e))
            }
        }
    }

    /// Whether every connection `owner` waits for has been given notice `serial`: this
    /// process's watcher delivered it (or no other owner has a connection here), and no
    /// other process still holds the pending byte of its serial.
    fn acknowledged(&self, st: &LockState, owner: Owner, serial: u64) -> bool {
        let others_here = st.holds_by.iter().any(|(o, n)| *o != owner && *n > 0);
        if others_here && st.acknowledged < serial {
            return false;
        }
        match &st.file {
            Some(file) => !file
                .conflicts(pending_byte(serial), Kind::Exclusive)
                .unwrap_or(true),
            None => true,
        }
    }

    /// How many times this process's locks on the server were lost and taken again: a
    /// database's state compares it with the value it saw last, to check that the database
    /// was neither deleted nor upgraded while the locks were away.
    pub fn generation(&self) -> u64 {
        lock(&self.state).generation
    }

    /// On a server, while the process has holds and no deletion or upgrade of its own:
    /// makes sure the session connection still holds the process's locks, connecting again
    /// and taking the shared lock and the pending one again when it was lost. With `ping`,
    /// asks the server (one round trip); else trusts what the client last saw. `Ok(false)`
    /// when the shared lock cannot be taken now (a deletion or an upgrade elsewhere holds
    /// it); tried again on the next call.
    fn recover(&self, st: &mut LockState, ping: bool) -> Result<bool> {
        let Some((server, id)) = &self.server else {
            return Ok(true);
        };
        if st.holds == 0 || st.exclusive > 0 {
            return Ok(true);
        }
        let alive = st
            .file
            .as_ref()
            .is_some_and(|f| !f.is_closed() && (!ping || f.is_alive()));
        if !alive {
            st.lost = true;
            st.file = None;
            let session = Session::connect(server, *id).map_err(|e| self.io_error(e))?;
            st.file = Some(LockFile::Server(Box::new(session)));
        }
        if !st.lost {
            return Ok(true);
        }
        let Some(file) = &st.file else {
            return Ok(false);
        };
        if !file
            .set_lock(Kind::Shared, LOCK_BYTE)
            .map_err(|e| self.io_error(e))?
        {
            return Ok(false);
        }
        // Taking a shared lock on a byte no process locks exclusively never conflicts.
        file.set_lock(Kind::Shared, pending_byte(st.acknowledged + 1))
            .map_err(|e| self.io_error(e))?;
        st.lost = false;
        st.generation += 1;
        Ok(true)
    }

    /// Starts watching the notice file once the process has its first hold: the notices so
    /// far count as delivered, and the pending byte of the next one is locked.
    fn start_watching(&self, st: &mut LockState) -> std::io::Result<()> {
        st.notice = None;
        st.acknowledged = self.current_notice(st).map_or(0, |n| n.serial);
        if let Some(file) = &st.file {
            file.set_lock(Kind::Shared, pending_byte(st.acknowledged + 1))?;
        }
        watcher();
        Ok(())
    }

    /// Records that notice `serial` was delivered: the pending lock moves to the next one.
    fn acknowledge(&self, st: &mut LockState, serial: u64) {
        st.acknowledged = serial;
        if let Some(file) = &st.file {
            // Taking a shared lock on a byte no process locks exclusively never conflicts.
            let _ = file.set_lock(Kind::Shared, pending_byte(serial + 1));
            let _ = file.set_lock(Kind::None, pending_byte(serial));
        }
    }

    /// Delivers a new notice to this process's connections (except those of the owner that
    /// made it) and acknowledges it. Called by the watcher.
    fn deliver_notice(&self) {
        let (notice, listeners) = {
            let mut st = lock(&self.state);
            if st.holds == 0 {
                return;
            }
            // Locks lost with the session connection are taken again as soon as the server
            // answers, so a deletion or an upgrade elsewhere waits for this process again.
            let lost = st.lost || st.file.as_ref().is_some_and(LockFile::is_closed);
            if lost && !st.retry_at.is_some_and(|at| Instant::now() < at) {
                st.retry_at = Some(Instant::now() + RETRY_LOST_EVERY);
                let _ = self.recover(&mut st, false);
            }
            let Some(notice) = self.current_notice(&mut st) else {
                return;
            };
            if notice.serial == st.acknowledged {
                return;
            }
            let here = notice.pid == Self::process_id(&st);
            let listeners: Vec<Listener> = st
                .listeners
                .iter()
                .filter(|(_, o, _)| !(here && o.0 as u64 == notice.owner))
                .map(|(_, _, l)| l.clone())
                .collect();
            (notice, listeners)
        };
        for listener in listeners {
            listener(&notice.change);
        }
        let mut st = lock(&self.state);
        if st.holds > 0 && st.acknowledged != notice.serial {
            self.acknowledge(&mut st, notice.serial);
        }
    }

    /// Counts a lock taken; the process's first hold starts watching the notice file.
    fn count(&self, st: &mut LockState, want: Kind, owner: Owner) -> Result<()> {
        if want == Kind::Shared {
            if st.holds == 0 {
                self.start_watching(st).map_err(|e| self.io_error(e))?;
            }
            st.holds += 1;
            *st.holds_by.entry(owner).or_insert(0) += 1;
        } else {
            st.exclusive += 1;
            st.exclusive_owner = Some(owner);
        }
        Ok(())
    }

    /// Opens the file at the path (creating it empty, which SQLite reads as a new database)
    /// unless the one open is still there; read-only where it cannot be written (a shared
    /// lock needs no more). Only called while this process holds no lock.
    fn open_current(&self, st: &mut LockState) -> Result<()> {
        if let Some((server, id)) = &self.server {
            if !st.file.as_ref().is_some_and(|f| !f.is_closed()) {
                st.file = None;
                let session = Session::connect(server, *id).map_err(|e| self.io_error(e))?;
                st.file = Some(LockFile::Server(Box::new(session)));
            }
            return Ok(());
        }
        if st.file.as_ref().is_some_and(|f| self.is_current(f)) {
            return Ok(());
        }
        st.file = None;
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(&self.path)
            .or_else(|e| match e.kind() {
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem => {
                    File::open(&self.path)
                }
                _ => Err(e),
            });
        match file {
            Ok(file) => st.file = Some(LockFile::File(file)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(self.io_error(e)),
        }
        Ok(())
    }

    /// Whether `file` is the file at the lock path (not one deleted or replaced since).
    #[cfg(unix)]
    fn is_current(&self, file: &LockFile) -> bool {
        use std::os::unix::fs::MetadataExt;
        let LockFile::File(file) = file else {
            return true;
        };
        match (file.metadata(), std::fs::symlink_metadata(&self.path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }

    #[cfg(not(unix))]
    fn is_current(&self, _file: &LockFile) -> bool {
        true
    }

    fn io_error(&self, e: std::io::Error) -> Error {
        match &self.server {
            Some((server, id)) => Error::Unknown(format!(
                "cannot take the connection lock of database {id} on {}: {e}",
                server.shown()
            )),
            None => Error::Unknown(format!("cannot lock {}: {e}", self.path.display())),
        }
    }

    /// The latest notice of the database (`None` before the first): the notice file's, or
    /// the server's row.
    fn current_notice(&self, st: &mut LockState) -> Option<Notice> {
        if let Some(LockFile::Server(session)) = &st.file {
            return session.read_notice();
        }
        if st.notice.is_none() {
            st.notice = open_notice(&self.path, false).ok();
        }
        st.notice.as_ref().and_then(read_notice)
    }

    /// The id this process's notices carry: its process id, or on a server its session's
    /// server process id (unique on the server, unlike process ids across hosts).
    fn process_id(st: &LockState) -> u64 {
        match &st.file {
            Some(LockFile::Server(session)) => session.process_id(),
            _ => u64::from(std::process::id()),
        }
    }

    /// Sets the lock the process should now hold after a release.
    fn settle(&self, st: &mut LockState) {
        let kind = if st.exclusive > 0 {
            Kind::Exclusive
        } else if st.holds > 0 {
            Kind::Shared
        } else {
            Kind::None
        };
        if kind != Kind::Exclusive {
            if let Some(file) = &st.file {
                // Going down never conflicts; a failure leaves a stronger lock, which the
                // process's exit releases.
                let _ = file.set_lock(kind, LOCK_BYTE);
            }
        }
        if st.holds == 0 {
            st.notice = None;
            if let Some(file) = &st.file {
                for byte in PENDING_BYTES {
                    let _ = file.set_lock(Kind::None, byte);
                }
            }
        }
        self.close_unused_session(st);
    }

    /// Closes the session connection to the server once the process holds nothing on it
    /// (no connection, transaction, deletion or upgrade, nor an announced request), so a
    /// closed database keeps no server process; the next lock connects again. A database
    /// file stays open: its descriptor keeps no resource of another machine.
    fn close_unused_session(&self, st: &mut LockState) {
        if self.server.is_some() && st.holds == 0 && st.exclusive == 0 && st.requesting.is_none() {
            st.file = None;
            st.lost = false;
        }
    }

    /// Forgets this lock once its database file was deleted (under the exclusive lock), so a
    /// database created again under the name gets a lock of its own.
    pub fn detach(&self) {
        let mut registry = lock(registry());
        if registry
            .get(&self.path)
            .is_some_and(|l| std::ptr::eq(l.as_ptr(), self))
        {
            registry.remove(&self.path);
        }
    }
}

impl Drop for Hold {
    fn drop(&mut self) {
        let mut st = lock(&self.0.state);
        st.holds -= 1;
        if let Some(n) = st.holds_by.get_mut(&self.1) {
            *n -= 1;
            if *n == 0 {
                st.holds_by.remove(&self.1);
            }
        }
        // With holds left, the lock stays what it is: shared, or this process's exclusive
        // (a transaction's hold ending under its connection's costs no system call). An
        // exclusive lock whose step down to shared failed in `settle` (it never conflicts, so
        // only an I/O error does that) stays until the last hold ends.
        if st.holds == 0 {
            self.0.settle(&mut st);
        }
    }
}

impl Exclusive {
    /// Another guard of the same exclusive lock: the lock stays held until every guard is
    /// dropped (an upgrade keeps one beyond its transaction, to remove a database its aborted
    /// creation left before any other process can open it).
    pub fn again(&self) -> Exclusive {
        lock(&self.0.state).exclusive += 1;
        Exclusive(self.0.clone())
    }
}

impl Drop for Exclusive {
    fn drop(&mut self) {
        let mut st = lock(&self.0.state);
        st.exclusive -= 1;
        if st.exclusive == 0 {
            st.exclusive_owner = None;
        }
        self.0.settle(&mut st);
    }
}

/// What a process's locks of one database are on.
enum LockFile {
    /// The database file, with record locks on its lock bytes.
    File(File),
    /// A session connection to the PostgreSQL server holding the database, with a session
    /// advisory lock per lock byte.
    Server(Box<Session>),
}

impl LockFile {
    /// Sets this process's lock on `byte` without waiting: `Ok(false)` when another
    /// process's lock conflicts.
    fn set_lock(&self, kind: Kind, byte: i64) -> std::io::Result<bool> {
        match self {
            LockFile::File(file) => set_lock(file, kind, byte),
            LockFile::Server(session) => session.set_lock(session_lock(kind), byte - LOCK_BYTE),
        }
    }

    /// Whether another process holds a lock on `byte` that a lock of kind `probe` would
    /// conflict with.
    fn conflicts(&self, byte: i64, probe: Kind) -> std::io::Result<bool> {
        match self {
            LockFile::File(file) => conflicts(file, byte, probe),
            LockFile::Server(session) => session.conflicts(byte - LOCK_BYTE, session_lock(probe)),
        }
    }

    /// Whether the session connection to the server is known to be lost (never for a
    /// file).
    fn is_closed(&self) -> bool {
        match self {
            LockFile::File(_) => false,
            LockFile::Server(session) => session.is_closed(),
        }
    }

    /// Whether the session connection answers the server's round trip (always for a file).
    fn is_alive(&self) -> bool {
        match self {
            LockFile::File(_) => true,
            LockFile::Server(session) => session.is_alive(),
        }
    }
}

fn session_lock(kind: Kind) -> SessionLock {
    match kind {
        Kind::Shared => SessionLock::Shared,
        Kind::Exclusive => SessionLock::Exclusive,
        Kind::None => SessionLock::None,
    }
}

/// Opens the notice file of database file `database` (not following links), creating it
/// when `create`.
fn open_notice(database: &Path, create: bool) -> std::io::Result<File> {
    let mut options = OpenOptions::new();
    options
        .read(true)
        .write(true)
        .create(create)
        .truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(libc::O_NOFOLLOW);
    }
    options.open(notice_path(database))
}

/// The watcher thread of this process, started once: every [`WATCH_EVERY`] it delivers new
/// notices of the databases the process has open.
fn watcher() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        // Without the thread (the system refused one) no notice is delivered here: requests
        // elsewhere still wait for this process's connections, and report being blocked after
        // ACKNOWLEDGE_WITHIN.
        let _ = std::thread::Builder::new()
            .name("indexa-versionchange".into())
            .spawn(|| loop {
                std::thread::sleep(WATCH_EVERY);
                let locks: Vec<Arc<ConnectionLock>> = lock(registry())
                    .values()
                    .filter_map(Weak::upgrade)
                    .collect();
                for l in locks {
                    l.deliver_notice();
                }
            });
    });
}

#[cfg(target_os = "linux")]
fn flock_for(kind: Kind, byte: i64) -> libc::flock {
    let l_type = match kind {
        Kind::Shared => libc::F_RDLCK,
        Kind::Exclusive => libc::F_WRLCK,
        Kind::None => libc::F_UNLCK,
    };
    // SAFETY: `flock` is plain data, zeroed is a valid value (OFD locks require l_pid = 0).
    let mut request: libc::flock = unsafe { std::mem::zeroed() };
    request.l_type = l_type as libc::c_short;
    request.l_whence = libc::SEEK_SET as libc::c_short;
    request.l_start = byte as libc::off_t;
    request.l_len = 1;
    request
}

/// Sets this process's lock on `byte` of `file` without waiting: `Ok(false)` when another
/// process's lock conflicts.
#[cfg(target_os = "linux")]
fn set_lock(file: &File, kind: Kind, byte: i64) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let request = flock_for(kind, byte);
    // SAFETY: the descriptor is open for the call (borrowed from `file`), and `request` is a
    // valid `struct flock` that outlives it.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLK, &request) };
    if rc == 0 {
        return Ok(true);
    }
    let e = std::io::Error::last_os_error();
    match e.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EACCES) => Ok(false),
        _ => Err(e),
    }
}

/// Locks `byte` of `file` exclusively, waiting for other processes (held only briefly).
#[cfg(target_os = "linux")]
fn set_lock_waiting(file: &File, byte: i64) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let request = flock_for(Kind::Exclusive, byte);
    loop {
        // SAFETY: as in `set_lock`.
        let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_SETLKW, &request) };
        if rc == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// Whether another process holds a lock on `byte` of `file` that a lock of kind `probe`
/// would conflict with (any lock for [`Kind::Exclusive`], an exclusive one for
/// [`Kind::Shared`]).
#[cfg(target_os = "linux")]
fn conflicts(file: &File, byte: i64, probe: Kind) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let mut request = flock_for(probe, byte);
    // SAFETY: as in `set_lock`; F_OFD_GETLK writes the conflicting lock into `request`.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_OFD_GETLK, &mut request) };
    if rc != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(request.l_type != libc::F_UNLCK as libc::c_short)
}

#[cfg(not(target_os = "linux"))]
fn set_lock(_file: &File, _kind: Kind, _byte: i64) -> std::io::Result<bool> {
    Ok(true)
}

#[cfg(not(target_os = "linux"))]
fn set_lock_waiting(_file: &File, _byte: i64) -> std::io::Result<()> {
    Ok(())
}

#[cfg(not(target_os = "linux"))]
fn conflicts(_file: &File, _byte: i64, _probe: Kind) -> std::io::Result<bool> {
    Ok(false)
}
