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

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, Weak};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// How long an attempt sleeps before trying again while another process holds the lock.
const RETRY_EVERY: Duration = Duration::from_millis(10);

/// The lock on one database file, shared by every connection of this process.
pub(crate) struct ConnectionLock {
    path: PathBuf,
    /// False for a database that is no file (on a server): only this process's owners are
    /// counted.
    file_backed: bool,
    state: Mutex<LockState>,
}

struct LockState {
    /// The database file opened for locking.
    file: Option<File>,
    /// Open connections and running transactions of this process.
    holds: usize,
    /// The same, by owner.
    holds_by: HashMap<Owner, usize>,
    /// Deletions and upgrades of this process running now.
    exclusive: usize,
    /// Whose they are (one owner at a time).
    exclusive_owner: Option<Owner>,
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
#[cfg(target_os = "linux")]
const LOCK_BYTE: libc::off_t = 0x7000_0000;

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
        Self::registered(database, true)
    }

    /// This process's lock for a database that is not a file, under `key` (a name no file
    /// path has): it counts the owners of this process only.
    pub fn within_process(key: &Path) -> Arc<ConnectionLock> {
        Self::registered(key, false)
    }

    fn registered(database: &Path, file_backed: bool) -> Arc<ConnectionLock> {
        let path = database.to_path_buf();
        let mut registry = lock(registry());
        if let Some(existing) = registry.get(&path).and_then(Weak::upgrade) {
            return existing;
        }
        registry.retain(|_, l| l.strong_count() > 0);
        let new = Arc::new(ConnectionLock {
            path: path.clone(),
            file_backed,
            state: Mutex::new(LockState {
                file: None,
                holds: 0,
                holds_by: HashMap::new(),
                exclusive: 0,
                exclusive_owner: None,
            }),
        });
        registry.insert(path, Arc::downgrade(&new));
        new
    }

    /// Takes a shared hold for a connection or transaction of `owner`, waiting up to
    /// `timeout` while another process or owner deletes or upgrades the database.
    ///
    /// # Errors
    /// [`Error::InvalidState`] when the wait timed out; [`Error::Unknown`] when the file
    /// cannot be opened or locked.
    pub fn hold(self: &Arc<Self>, owner: Owner, name: &str, timeout: Duration) -> Result<Hold> {
        self.acquire(Kind::Shared, owner, timeout, |by| {
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
    /// # Errors
    /// [`Error::InvalidState`] when another process or owner still had the database open
    /// after `timeout`; [`Error::Unknown`] when the file cannot be opened or locked.
    pub fn exclusive(
        self: &Arc<Self>,
        owner: Owner,
        name: &str,
        timeout: Duration,
    ) -> Result<Exclusive> {
        self.acquire(Kind::Exclusive, owner, timeout, |by| {
            Error::InvalidState(format!(
                "database {name:?} is open {}; close it there first (waited {} ms)",
                match by {
                    Blocker::AnotherProcess => "in another process",
                    Blocker::AnotherOwner => "through another factory of this process",
                },
                timeout.as_millis()
            ))
        })?;
        Ok(Exclusive(self.clone()))
    }

    fn acquire(
        &self,
        want: Kind,
        owner: Owner,
        timeout: Duration,
        timed_out: impl Fn(Blocker) -> Error,
    ) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            let mut st = lock(&self.state);
            let blocker = if st.exclusive > 0 && st.exclusive_owner != Some(owner)
                || want == Kind::Exclusive && st.holds_by.iter().any(|(o, n)| *o != owner && *n > 0)
            {
                Blocker::AnotherOwner
            } else if st.exclusive > 0 || (want == Kind::Shared && st.holds > 0) {
                // Already held strongly enough by this process.
                Self::count(&mut st, want, owner);
                return Ok(());
            } else {
                let unlocked = st.holds == 0;
                if unlocked {
                    self.open_current(&mut st)?;
                }
                let locked = match &st.file {
                    Some(file) => set_lock(file, want).map_err(|e| self.io_error(e))?,
                    // Nothing to lock where the file can neither be opened nor created
                    // (SQLite then reports why), so nothing to wait for.
                    None => true,
                };
                if locked {
                    // A lock taken on a file another process deleted meanwhile guards
                    // nothing: start again on the file now at the path.
                    if unlocked && st.file.as_ref().is_some_and(|f| !self.is_current(f)) {
                        st.file = None;
                        continue;
                    }
                    Self::count(&mut st, want, owner);
                    return Ok(());
                }
                Blocker::AnotherProcess
            };
            drop(st);
            if Instant::now() >= deadline {
                return Err(timed_out(blocker));
            }
            std::thread::sleep(RETRY_EVERY);
        }
    }

    fn count(st: &mut LockState, want: Kind, owner: Owner) {
        if want == Kind::Shared {
            st.holds += 1;
            *st.holds_by.entry(owner).or_insert(0) += 1;
        } else {
            st.exclusive += 1;
            st.exclusive_owner = Some(owner);
        }
    }

    /// Opens the file at the path (creating it empty, which SQLite reads as a new database)
    /// unless the one open is still there; read-only where it cannot be written (a shared
    /// lock needs no more). Only called while this process holds no lock.
    fn open_current(&self, st: &mut LockState) -> Result<()> {
        if !self.file_backed || st.file.as_ref().is_some_and(|f| self.is_current(f)) {
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
            Ok(file) => st.file = Some(file),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(self.io_error(e)),
        }
        Ok(())
    }

    /// Whether `file` is the file at the lock path (not one deleted or replaced since).
    #[cfg(unix)]
    fn is_current(&self, file: &File) -> bool {
        use std::os::unix::fs::MetadataExt;
        match (file.metadata(), std::fs::symlink_metadata(&self.path)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }

    #[cfg(not(unix))]
    fn is_current(&self, _file: &File) -> bool {
        true
    }

    fn io_error(&self, e: std::io::Error) -> Error {
        Error::Unknown(format!("cannot lock {}: {e}", self.path.display()))
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
                let _ = set_lock(file, kind);
            }
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
        self.0.settle(&mut st);
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

/// Sets this process's lock on `file` without waiting: `Ok(false)` when another process's
/// lock conflicts.
#[cfg(target_os = "linux")]
fn set_lock(file: &File, kind: Kind) -> std::io::Result<bool> {
    use std::os::fd::AsRawFd;
    let l_type = match kind {
        Kind::Shared => libc::F_RDLCK,
        Kind::Exclusive => libc::F_WRLCK,
        Kind::None => libc::F_UNLCK,
    };
    // SAFETY: `flock` is plain data, zeroed is a valid value (OFD locks require l_pid = 0).
    let mut request: libc::flock = unsafe { std::mem::zeroed() };
    request.l_type = l_type as libc::c_short;
    request.l_whence = libc::SEEK_SET as libc::c_short;
    request.l_start = LOCK_BYTE;
    request.l_len = 1;
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

#[cfg(not(target_os = "linux"))]
fn set_lock(_file: &File, _kind: Kind) -> std::io::Result<bool> {
    Ok(true)
}
