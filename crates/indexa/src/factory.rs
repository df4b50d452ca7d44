//! The entry point (`IDBFactory`): opening, listing and deleting databases.
//!
//! Source: <https://www.w3.org/TR/IndexedDB-3/#factory-interface> ("open a database
//! connection", "delete a database").

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use crate::backend::postgres::{self, Server};
use crate::backend::sqlite::{self, FileContents};
use crate::backend::Place;
use crate::connection_lock::{ConnectionLock, Exclusive, Owner};
use crate::database::{Database, DatabaseShared};
use crate::error::{Error, Result};
use crate::transaction::{Durability, Transaction, TransactionMode};
use crate::utf16::Utf16String;
use crate::version_change::{VersionChange, NOTICE_SUFFIX};

/// The largest database version: `open`'s `[EnforceRange] unsigned long long` accepts
/// integers up to 2^53 − 1.
pub const MAX_VERSION: u64 = (1 << 53) - 1;

/// File name extension of database files.
const EXTENSION: &str = "indexa";

/// How long a deletion or an upgrade waits by default for other processes to close the
/// database, and an open for another process's deletion or upgrade to finish.
pub const DEFAULT_LOCK_TIMEOUT: Duration = Duration::from_secs(30);

/// A begun upgrade: its versionchange transaction, the version it upgrades from, and a
/// second guard of its exclusive connection lock.
type Begun = (Transaction, u64, Exclusive);

/// How many more times [`Factory::version`] reads a database file that failed to read: a
/// file being removed by another process fails for a moment, a damaged one every time.
const PEEK_ATTEMPTS: u32 = 5;

/// How long [`Factory::version`] waits before reading such a file again.
const PEEK_RETRY: Duration = Duration::from_millis(20);

/// What [`Factory::scan_databases`] found in a data directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseScan {
    /// Each database as (exact name, version), sorted by name in code-unit order.
    pub databases: Vec<(Utf16String, u64)>,
    /// One [`Error::Unknown`] per file under a database file name that could not be read,
    /// its message naming the file and why; sorted by message.
    pub unreadable: Vec<Error>,
}

/// A database's name and version, as listed by [`Factory::databases`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseInfo {
    /// The database's name, with any lone surrogate replaced by U+FFFD (see
    /// [`Factory::databases_utf16`] for the exact names).
    pub name: String,
    /// Its version (≥ 1).
    pub version: u64,
}

/// Opens, lists and deletes the databases of one data directory.
///
/// Each database is one SQLite file in the directory, named after the database (see
/// `docs/format.md`); any string is a valid database name and never leads outside the
/// directory. Names are strings of UTF-16 code units, as in IndexedDB: the methods take
/// anything that converts into [`Utf16String`] (a `&str`, or a `Utf16String` for a name with
/// a lone surrogate), and distinct names are distinct databases. A `Factory` is
/// `Send + Sync`; use one per directory in a process.
///
/// Several processes may use one directory at once. A database is deleted or upgraded only
/// when no other process has a connection to it open (or a transaction running on it): the
/// deletion or upgrade waits for them up to the lock timeout
/// ([`Factory::set_lock_timeout`], default [`DEFAULT_LOCK_TIMEOUT`]), then fails with
/// [`Error::InvalidState`]; meanwhile opening it in other processes waits likewise. While it
/// waits, the connections it waits for are told (their [`Database::on_version_change`]
/// listeners are called, the spec's `versionchange`), and [`Factory::begin_upgrade_with`] and
/// [`Factory::delete_database_with`] report when it is blocked by connections still open
/// after that (`docs/format.md`, "Connections across processes"; Linux only, or any
/// platform on PostgreSQL). This
/// factory's own connections do not block its upgrades or deletions and are not told (a
/// caller with events, like the Node.js package, closes them first, as the spec says); those
/// of another factory of this process count as another process's.
pub struct Factory {
    dir: PathBuf,
    /// For [`Factory::open_url`]: the PostgreSQL server and database holding the databases
    /// (`dir` is then empty).
    server: Option<Arc<Server>>,
    lock_timeout: Duration,
    open: Mutex<HashMap<Utf16String, Arc<DatabaseShared>>>,
    /// For [`Factory::temporary`]: the directory, removed when the factory is dropped.
    _temporary: Option<tempfile::TempDir>,
}

impl std::fmt::Debug for Factory {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.server {
            Some(server) => f.debug_struct("Factory").field("url", server).finish(),
            None => f.debug_struct("Factory").field("dir", &self.dir).finish(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The file name for a database name: `db-` plus the name's WTF-8 bytes (UTF-8 for every
/// name without lone surrogates), every byte outside `[A-Za-z0-9_-]` written as `%XX`; names
/// whose escaped form is longer than 120 bytes keep 80 bytes of it and add a 64-bit FNV-1a
/// hash of the whole name's bytes. Distinct UTF-16 names have distinct bytes. The real name
/// is stored inside the file and checked on open.
pub(crate) fn file_name_for(name: &Utf16String) -> String {
    let bytes = name.to_wtf8();
    let mut escaped = String::with_capacity(bytes.len());
    for &b in &bytes {
        if b.is_ascii_alphanumeric() || b == b'_' || b == b'-' {
            escaped.push(b as char);
        } else {
            escaped.push_str(&format!("%{b:02X}"));
        }
    }
    if escaped.len() > 120 {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for &b in &bytes {
            hash ^= u64::from(b);
            hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        let mut cut = 80;
        // Do not cut an escape in half.
        while escaped.as_bytes()[cut - 1] == b'%' || escaped.as_bytes()[cut - 2] == b'%' {
            cut -= 1;
        }
        escaped.truncate(cut);
        escaped.push_str(&format!("~{hash:016x}"));
    }
    format!("db-{escaped}.{EXTENSION}")
}

/// The suffixes of a database file's companions: SQLite's write-ahead log, its shared-memory
/// index and its rollback journal, and the versionchange notice file (`version_change`).
const COMPANIONS: [&str; 4] = ["-wal", "-shm", "-journal", NOTICE_SUFFIX];

/// Whether a database file is there: `Ok(false)` when nothing is at `path`, `Ok(true)` for a
/// regular file. Checked without following links and before anything opens the file, so a
/// FIFO, device or socket is never opened (opening or reading one can block forever) and a
/// symbolic link never leads a database out of the data directory.
///
/// # Errors
/// [`Error::Unknown`] when the file, or one of its `-wal`, `-shm` and `-journal`
/// companions, is a symbolic link or anything but a regular file, or cannot be examined.
pub(crate) fn database_file_exists(path: &Path) -> Result<bool> {
    let exists = regular_file_exists(path)?;
    for suffix in COMPANIONS {
        let mut companion = path.as_os_str().to_owned();
        companion.push(suffix);
        regular_file_exists(Path::new(&companion))?;
    }
    Ok(exists)
}

/// `Ok(false)` when nothing is at `path`, `Ok(true)` for a regular file, an error otherwise.
fn regular_file_exists(path: &Path) -> Result<bool> {
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(false),
        Err(e) => {
            return Err(Error::Unknown(format!(
                "cannot examine {}: {e}",
                path.display()
            )))
        }
    };
    let kind = meta.file_type();
    if kind.is_file() {
        return Ok(true);
    }
    if kind.is_symlink() {
        return Err(Error::Unknown(format!(
            "{} is a symbolic link; database files must be regular files inside the data directory, so it was left as it is",
            path.display()
        )));
    }
    Err(Error::Unknown(format!(
        "{} is {}, not a regular file, so it is not an Indexa database; it was left as it is",
        path.display(),
        file_kind(&kind)
    )))
}

/// What a file that is not a regular file or a link is, in words.
fn file_kind(kind: &fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if kind.is_fifo() {
            return "a FIFO";
        }
        if kind.is_socket() {
            return "a socket";
        }
        if kind.is_block_device() || kind.is_char_device() {
            return "a device";
        }
    }
    if kind.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

impl Factory {
    /// A factory over the directory `dir`, created if missing. A relative `dir` is taken
    /// relative to the current directory, now; `dir` is a path (`file:x` is a directory
    /// named `file:x`, never a SQLite URI), but never one that starts as a URL does
    /// (`scheme://…`): that is a server's address, for [`Factory::open_url`].
    ///
    /// # Errors
    /// - [`Error::Syntax`] when `dir` starts with `scheme://` (only the scheme is named in
    ///   the message: the rest may hold a password).
    /// - [`Error::Unknown`] if the directory cannot be created.
    pub fn open_dir(dir: impl AsRef<Path>) -> Result<Factory> {
        let dir = dir.as_ref();
        if let Some(scheme) = dir.to_str().and_then(postgres::url_scheme) {
            return Err(Error::Syntax(format!(
                "a data directory's path cannot start with {scheme}://, which makes it a URL; \
                 a PostgreSQL database is opened by its postgres:// or postgresql:// URL"
            )));
        }
        fs::create_dir_all(dir).map_err(|e| {
            Error::Unknown(format!(
                "cannot create data directory {}: {e}",
                dir.display()
            ))
        })?;
        // One absolute path per directory, with links resolved, so one lock file has one
        // name in the process. SQLite reads a file name starting with `file:` as a URI
        // whatever the open flags (the bundled build enables URIs globally); an absolute path
        // never starts so. Database files are opened without following links, which SQLite
        // checks for every part of the path: a data directory reached through a link works
        // because the link is resolved here.
        let dir = fs::canonicalize(dir).map_err(|e| {
            Error::Unknown(format!("cannot open data directory {}: {e}", dir.display()))
        })?;
        Ok(Factory {
            dir,
            server: None,
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
            open: Mutex::new(HashMap::new()),
            _temporary: None,
        })
    }

    /// A factory over a new private temporary directory that is removed, with every
    /// database in it, when the factory is dropped: for tests and scratch data. Databases
    /// behave exactly as in [`Factory::open_dir`] (SQLite needs a file for WAL, which lets
    /// readers run beside a writer), so nothing here outlives the process.
    ///
    /// # Errors
    /// [`Error::Unknown`] if the temporary directory cannot be created.
    pub fn temporary() -> Result<Factory> {
        let temp = tempfile::Builder::new()
            .prefix("indexa-")
            .tempdir()
            .map_err(|e| Error::Unknown(format!("cannot create a temporary directory: {e}")))?;
        Ok(Factory {
            dir: temp.path().to_path_buf(),
            server: None,
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
            open: Mutex::new(HashMap::new()),
            _temporary: Some(temp),
        })
    }

    /// A factory over the IndexedDB databases kept in an existing PostgreSQL database, named
    /// by a URL `postgres://user[:password]@host[:port]/dbname` (also `postgresql://`, the
    /// scheme in any case; a
    /// `?sslmode=require` connects over TLS, `prefer` and `disable` without). Every process
    /// and host opening the same URL sees the same databases; the layout is in
    /// `docs/format.md` ("PostgreSQL"). Creates the catalog schema `indexa` when missing.
    ///
    /// Differences from a directory: readwrite transactions of one database are serialised
    /// across processes and hosts by the server, and [`Factory::replace_database`] is not
    /// available. A deletion or an upgrade waits for the connections of every process and
    /// host as it does on a directory (see [`Factory`]), through session advisory locks and
    /// `LISTEN`/`NOTIFY` on connections of the factory's own (`docs/format.md`,
    /// "PostgreSQL"); these need a direct or session-mode connection, and fail with
    /// [`Error::Unknown`] when a transaction-mode pooler is seen moving the session.
    ///
    /// # Errors
    /// [`Error::Syntax`] when `url` is not a PostgreSQL URL; [`Error::Unknown`] when the
    /// server cannot be reached or refuses the login. No message holds the URL's password.
    pub fn open_url(url: &str) -> Result<Factory> {
        if !postgres::is_url(url) {
            return Err(Error::Syntax(
                "a database URL starts with postgres:// or postgresql://".into(),
            ));
        }
        Ok(Factory {
            dir: PathBuf::new(),
            server: Some(Arc::new(Server::new(url)?)),
            lock_timeout: DEFAULT_LOCK_TIMEOUT,
            open: Mutex::new(HashMap::new()),
            _temporary: None,
        })
    }

    /// Whether `text` starts as a URL does (`scheme://`, RFC 3986 section 3.1): such text is
    /// for [`Factory::open_url`], and [`Factory::open_dir`] refuses it.
    pub fn is_url(text: &str) -> bool {
        postgres::url_scheme(text).is_some()
    }

    /// The PostgreSQL URL of a factory made by [`Factory::open_url`], without its password.
    pub fn url(&self) -> Option<&str> {
        self.server.as_deref().map(Server::shown)
    }

    /// Sets how long a deletion or an upgrade waits for other processes to close the database,
    /// and an open or a transaction for another process's deletion or upgrade to finish,
    /// before failing with [`Error::InvalidState`]. Applies to databases this factory opens
    /// from now on.
    pub fn set_lock_timeout(&mut self, timeout: Duration) {
        self.lock_timeout = timeout;
    }

    /// The data directory (absolute); empty for a factory on PostgreSQL.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The SQLite file that holds (or would hold) database `name`: the data directory joined
    /// with the file name described in `docs/format.md` ("File names"). For tools that work
    /// on the file itself (integrity checks, backups, vacuum); the file may not exist.
    pub fn database_path(&self, name: impl Into<Utf16String>) -> PathBuf {
        self.path_for(&name.into())
    }

    fn path_for(&self, name: &Utf16String) -> PathBuf {
        self.dir.join(file_name_for(name))
    }

    /// The shared state of database `name`, opening its storage if needed (a missing database
    /// is created at version 0).
    fn shared(&self, name: &Utf16String) -> Result<Arc<DatabaseShared>> {
        let mut open = lock(&self.open);
        if let Some(shared) = open.get(name) {
            return Ok(shared.clone());
        }
        let shared = match &self.server {
            Some(server) => {
                let deadline = Instant::now() + self.lock_timeout;
                loop {
                    let id = server.database_id(name)?;
                    let place = Place::Postgres(server.clone(), id);
                    match DatabaseShared::open(name, place, self.lock_timeout) {
                        // Another process deleted it (under its exclusive lock) before this
                        // one's hold was taken: open the database there is now.
                        Err(_)
                            if Instant::now() < deadline
                                && server.existing_id(name)? != Some(id) => {}
                        opened => break opened?,
                    }
                }
            }
            None => {
                let path = self.path_for(name);
                database_file_exists(&path)?;
                DatabaseShared::open(name, Place::File(path), self.lock_timeout)?
            }
        };
        let shared = Arc::new(shared);
        open.insert(name.clone(), shared.clone());
        Ok(shared)
    }

    /// Drops this factory's state of database `name` (another process deleted the database,
    /// or this one removed it): it is never used again, and the next open opens the database
    /// anew.
    fn forget(&self, name: &Utf16String, shared: &Arc<DatabaseShared>) {
        shared.forget();
        let mut open = lock(&self.open);
        if open.get(name).is_some_and(|s| Arc::ptr_eq(s, shared)) {
            open.remove(name);
        }
    }

    /// A new connection to database `name` with its shared state, opening its storage if
    /// needed; state cached from before another process deleted the database is dropped. The
    /// connection's hold is taken before the state is found current, so the database it
    /// connects to is not deleted while it is open.
    ///
    /// # Errors
    /// [`Error::InvalidState`] when other processes kept deleting the database for longer
    /// than the lock timeout; as [`Factory::open`] otherwise.
    fn connect(&self, name: &Utf16String) -> Result<(Arc<DatabaseShared>, Database)> {
        let deadline = Instant::now() + self.lock_timeout;
        loop {
            let shared = self.shared(name)?;
            let db = Database::new(shared.clone())?;
            if shared.is_current() {
                return Ok((shared, db));
            }
            drop(db);
            self.forget(name, &shared);
            if Instant::now() >= deadline {
                return Err(Error::InvalidState(format!(
                    "database {name:?} was deleted by other processes each time this one opened it (for {} ms)",
                    self.lock_timeout.as_millis()
                )));
            }
        }
    }

    /// Opens a connection to database `name` (`IDBFactory.open`).
    ///
    /// `version`: `None` opens at the current version, or creates the database at version 1.
    /// When the requested version is above the current one (a missing database is at 0),
    /// `upgrade(transaction, old_version, new_version)` runs inside a versionchange
    /// transaction, where object stores and indexes may be created, renamed and deleted; if it
    /// returns `Ok` the transaction commits (unless it was already committed or aborted).
    ///
    /// # Errors
    /// - [`Error::Type`] for version 0 or above [`MAX_VERSION`].
    /// - [`Error::Version`] when `version` is below the current version.
    /// - [`Error::InvalidState`] when an upgrade is needed and another process still has the
    ///   database open after the lock timeout, or when another process deletes or upgrades
    ///   it for longer than that (see [`Factory`]).
    /// - the error `upgrade` returns, or [`Error::Abort`] if it aborted the transaction: either
    ///   way the database is left exactly as before (a database created by this call is
    ///   removed again).
    /// - [`Error::Unknown`] when storage fails or the file is not an Indexa database of this
    ///   format version.
    pub fn open<F>(
        &self,
        name: impl Into<Utf16String>,
        version: Option<u64>,
        upgrade: F,
    ) -> Result<Database>
    where
        F: FnOnce(&Transaction, u64, u64) -> Result<()>,
    {
        let name = &name.into();
        if version == Some(0) || version.is_some_and(|v| v > MAX_VERSION) {
            return Err(Error::Type(format!(
                "the version must be an integer from 1 to 2^53 - 1 ({MAX_VERSION})"
            )));
        }
        // The connection keeps the database open for other processes from here on.
        let (shared, db) = self.connect(name)?;
        let current = Self::stored_version(&shared)?;
        let requested = version.unwrap_or(current.max(1));
        if requested < current {
            return Err(Error::Version(format!(
                "database {name:?} is at version {current}, above the requested {requested}"
            )));
        }
        if requested > current {
            return self.run_upgrade(name, shared, db, current, requested, upgrade);
        }
        Ok(db)
    }

    /// The version of database `name`: 0 when it does not exist (or was never committed at a
    /// version), without creating or opening it. Another process may change it right after.
    ///
    /// # Errors
    /// [`Error::Unknown`] when something is under the database's file name but it is not an
    /// Indexa database of that name (a damaged or foreign file, a directory, a link, a FIFO,
    /// …): a damaged database never looks absent.
    pub fn version(&self, name: impl Into<Utf16String>) -> Result<u64> {
        let name = &name.into();
        let cached = lock(&self.open).get(name).cloned();
        if let Some(shared) = cached.filter(|s| s.is_current()) {
            // Read from the file: another process may have upgraded it since it was cached.
            let reader =
                Transaction::begin(shared, None, TransactionMode::ReadOnly, Durability::Default)?;
            return Ok(reader.database_version_at_start());
        }
        if let Some(server) = &self.server {
            return Ok(server.version(name)?.unwrap_or(0));
        }
        let path = self.path_for(name);
        let mut failed = 0;
        let contents = loop {
            if !database_file_exists(&path)? {
                return Ok(0);
            }
            if fs::metadata(&path).is_ok_and(|m| m.len() == 0) {
                // SQLite makes an empty file a new database when it opens it.
                return Ok(0);
            }
            match sqlite::peek_file_contents(&path) {
                // Read without the connection lock, the file may be in the middle of being
                // removed by a deletion (its log gone first): read it again, or find it gone.
                Err(_) if failed < PEEK_ATTEMPTS => {
                    failed += 1;
                    std::thread::sleep(PEEK_RETRY);
                }
                contents => break contents,
            }
        };
        match contents {
            Ok(FileContents::Database(row)) if row.name == *name => Ok(row.version),
            Ok(FileContents::Database(row)) => Err(Error::Unknown(format!(
                "database file {} belongs to database {:?}, not {name:?}",
                path.display(),
                row.name
            ))),
            // Another connection is creating the database (its tables are not committed yet).
            Ok(FileContents::NoTable) => Ok(0),
            Ok(FileContents::Foreign) => Err(not_a_database(&path, "it holds no Indexa tables")),
            Err(e) => Err(not_a_database(&path, e.message())),
        }
    }

    /// Opens a connection to database `name` for a caller that runs the upgrade itself, over
    /// time (a JavaScript binding, where `upgradeneeded` handlers issue requests while the
    /// versionchange transaction stays open).
    ///
    /// When the database is below `version` (a missing database is at 0), the versionchange
    /// transaction is begun and returned with the old version; the new version is already set
    /// in it. Committing it publishes the new schema and version to every connection;
    /// aborting it leaves the database exactly as before (a database created by this call
    /// stays at version 0, which [`Factory::databases`] does not list and the next open
    /// upgrades from). `None` means the database already is at `version` (possibly because
    /// another process upgraded it meanwhile).
    ///
    /// Source: <https://www.w3.org/TR/IndexedDB-3/#open-a-database-connection> and
    /// <https://www.w3.org/TR/IndexedDB-3/#upgrade-a-database>.
    ///
    /// # Errors
    /// - [`Error::Type`] for version 0.
    /// - [`Error::Version`] when the database is above `version`.
    /// - [`Error::InvalidState`] when the calling thread still runs a readwrite transaction
    ///   on this database; [`Error::Unknown`] when storage fails.
    pub fn begin_upgrade(
        &self,
        name: impl Into<Utf16String>,
        version: u64,
    ) -> Result<(Database, Option<(Transaction, u64)>)> {
        self.begin_upgrade_with(name, version, &mut |_| {})
    }

    /// As [`Factory::begin_upgrade`], calling `blocked` (at most once, on the calling
    /// thread) when the upgrade has to wait for connections of other factories or processes
    /// that are still open after their listeners ([`Database::on_version_change`]) were
    /// called: the spec's `blocked` event. The upgrade then keeps waiting, up to the lock
    /// timeout.
    ///
    /// # Errors
    /// As [`Factory::begin_upgrade`].
    pub fn begin_upgrade_with(
        &self,
        name: impl Into<Utf16String>,
        version: u64,
        blocked: &mut dyn FnMut(&VersionChange),
    ) -> Result<(Database, Option<(Transaction, u64)>)> {
        let name = &name.into();
        if version == 0 {
            return Err(Error::Type("the version must be at least 1".into()));
        }
        let (shared, db) = self.connect(name)?;
        let (_, db, started) = self.start_upgrade(name, shared, db, version, blocked)?;
        // The transaction keeps the exclusive lock until it ends.
        Ok((db, started.map(|(tx, old, _)| (tx, old))))
    }

    /// The version stored in the database file, read in a readonly transaction (which also
    /// reloads the cached schema when another process changed it).
    fn stored_version(shared: &Arc<DatabaseShared>) -> Result<u64> {
        let reader = Transaction::begin(
            shared.clone(),
            None,
            TransactionMode::ReadOnly,
            Durability::Default,
        )?;
        Ok(reader.database_version_at_start())
    }

    /// Begins the versionchange transaction that takes database `name` (`shared`) to version
    /// `new`, or `None` when it is already there; fails with [`Error::Version`] when it is
    /// above `new`. `db` is the caller's new connection, given back with the state it is of.
    /// The transaction comes with the version it upgrades from and a second guard of its
    /// exclusive connection lock, for the caller to keep beyond the transaction.
    ///
    /// Learning that the database already is at `new` takes neither the write lock nor the
    /// exclusive connection lock, so it never waits for a writer or for other processes. An
    /// upgrade gives up `db`'s hold while it waits for the exclusive lock, so two processes
    /// upgrading at once do not wait for each other's new connections. When another process
    /// deleted the database meanwhile (or removed the database its own aborted upgrade had
    /// created), the upgrade starts again on the database there is now, as an open queued
    /// behind that deletion does in the spec.
    fn start_upgrade(
        &self,
        name: &Utf16String,
        shared: Arc<DatabaseShared>,
        db: Database,
        new: u64,
        blocked: &mut dyn FnMut(&VersionChange),
    ) -> Result<(Arc<DatabaseShared>, Database, Option<Begun>)> {
        let (mut shared, mut db) = (shared, db);
        let exclusive = loop {
            if !shared.is_current() {
                drop(db);
                self.forget(name, &shared);
                (shared, db) = self.connect(name)?;
            }
            let stored = Self::stored_version(&shared)?;
            if new < stored {
                return Err(Error::Version(format!(
                    "database {:?} is at version {stored}, above the requested {new}",
                    shared.name
                )));
            }
            if new == stored {
                return Ok((shared, db, None));
            }
            // An upgrade waits until no other process has the database open (spec: the
            // versionchange transaction waits for the other connections to close).
            drop(db);
            let change = VersionChange {
                old_version: stored,
                new_version: Some(new),
            };
            match shared.exclusive(change, blocked)? {
                Some(exclusive) if shared.is_current() => break exclusive,
                // Another deletion or upgrade ran meanwhile: read the version it left (on the
                // database there is now, once the loop found this one deleted).
                _ => db = Database::new(shared.clone())?,
            }
        };
        let db = Database::new(shared.clone())?;
        let tx = Transaction::begin_locked(
            shared.clone(),
            None,
            TransactionMode::VersionChange,
            Durability::Strict,
            Some(exclusive.again()),
        )?;
        // Another process may have upgraded meanwhile: the transaction read the version.
        let old_now = tx.database_version_at_start();
        if new < old_now {
            return Err(Error::Version(format!(
                "database {:?} is at version {old_now}, above the requested {new}",
                shared.name
            )));
        }
        if new == old_now {
            tx.commit()?;
            return Ok((shared, db, None));
        }
        tx.set_version(new)?;
        Ok((shared, db, Some((tx, old_now, exclusive))))
    }

    /// Runs the upgrade transaction (<https://www.w3.org/TR/IndexedDB-3/#upgrade-a-database>).
    ///
    /// When it aborts an upgrade from version 0, the database it created is removed again
    /// ("abort an upgrade transaction": it is as if it never existed) before the upgrade's
    /// exclusive connection lock is let go: no other process can have opened that database,
    /// let alone upgraded or written to it, and the opens waiting behind the upgrade find no
    /// database and create it themselves.
    fn run_upgrade<F>(
        &self,
        name: &Utf16String,
        shared: Arc<DatabaseShared>,
        db: Database,
        old: u64,
        new: u64,
        upgrade: F,
    ) -> Result<Database>
    where
        F: FnOnce(&Transaction, u64, u64) -> Result<()>,
    {
        let (shared, db, started) = self.start_upgrade(name, shared, db, new, &mut |_| {})?;
        let Some((tx, old_now, exclusive)) = started else {
            return Ok(db);
        };
        let outcome = match upgrade(&tx, old.max(old_now), new) {
            Ok(()) if tx.is_finished() => {
                if tx.was_committed() {
                    Ok(())
                } else {
                    Err(Error::Abort("the upgrade transaction was aborted".into()))
                }
            }
            Ok(()) => tx.commit(),
            Err(e) => {
                tx.abort();
                Err(e)
            }
        };
        drop(tx);
        match outcome {
            Ok(()) => Ok(db),
            Err(e) => {
                if old_now == 0 {
                    drop(db);
                    // The upgrade's error is the one to report; a database that could not be
                    // removed stays at version 0, which lists as no database.
                    let _ = self.remove_aborted_creation(name, &shared, &exclusive);
                }
                Err(e)
            }
        }
    }

    /// Removes the database an aborted upgrade from version 0 left, under that upgrade's
    /// `exclusive` lock. Only the storage `shared` opened is removed, and only while it still
    /// is at version 0: another thread of this factory (which shares the lock) may have
    /// created the database since.
    fn remove_aborted_creation(
        &self,
        name: &Utf16String,
        shared: &Arc<DatabaseShared>,
        exclusive: &Exclusive,
    ) -> Result<()> {
        if !shared.is_current() || Self::stored_version(shared)? != 0 {
            return Ok(());
        }
        // No transaction of this factory starts on it from here on: read the version again.
        shared.mark_deleted()?;
        if shared.place().connect()?.read_version()? != 0 {
            self.forget(name, shared);
            return Ok(());
        }
        self.remove(name, shared, exclusive)
    }

    /// Lists the databases (`IDBFactory.databases`), sorted by name (in code-unit order),
    /// each name with any lone surrogate replaced by U+FFFD.
    ///
    /// # Errors
    /// As [`Factory::databases_utf16`].
    pub fn databases(&self) -> Result<Vec<DatabaseInfo>> {
        Ok(self
            .databases_utf16()?
            .into_iter()
            .map(|(name, version)| DatabaseInfo {
                name: name.to_string_lossy(),
                version,
            })
            .collect())
    }

    /// Lists the databases as (exact name, version), sorted by name in code-unit order.
    ///
    /// # Errors
    /// [`Error::Unknown`] if the data directory cannot be read. Files that are not Indexa
    /// databases are skipped, as are links, directories, FIFOs and other files that are not
    /// regular files (without opening them); [`Factory::scan_databases`] names them.
    pub fn databases_utf16(&self) -> Result<Vec<(Utf16String, u64)>> {
        Ok(self.scan_databases()?.databases)
    }

    /// Lists the databases as [`Factory::databases_utf16`] does, and names the files under
    /// database file names (`db-….indexa`) that could not be read: links, directories,
    /// FIFOs and other files that are not regular files (never opened), and regular files
    /// SQLite fails to read (a damaged file, one without read permission). A file that holds
    /// no Indexa tables (a database being created, another program's SQLite file) and a
    /// database whose first upgrade never committed (version 0) are neither.
    ///
    /// # Errors
    /// [`Error::Unknown`] if the data directory cannot be read.
    pub fn scan_databases(&self) -> Result<DatabaseScan> {
        let mut scan = DatabaseScan {
            databases: Vec::new(),
            unreadable: Vec::new(),
        };
        if let Some(server) = &self.server {
            scan.databases = server.databases()?;
            scan.databases.retain(|(_, version)| *version > 0);
            return Ok(scan);
        }
        let entries = fs::read_dir(&self.dir).map_err(|e| {
            Error::Unknown(format!(
                "cannot read data directory {}: {e}",
                self.dir.display()
            ))
        })?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|e| e.to_str()) != Some(EXTENSION) {
                continue;
            }
            // Only regular files are opened (a FIFO would block), links are not followed.
            if let Err(e) = database_file_exists(&path) {
                scan.unreadable.push(e);
                continue;
            }
            match sqlite::peek_database_file(&path) {
                Ok(Some(row)) if row.version > 0 => scan.databases.push((row.name, row.version)),
                Ok(_) => {}
                Err(e) => scan.unreadable.push(Error::Unknown(format!(
                    "{} is not a readable Indexa database ({}); it was left as it is",
                    path.display(),
                    e.message()
                ))),
            }
        }
        scan.databases.sort();
        scan.unreadable.sort_by(|a, b| a.message().cmp(b.message()));
        Ok(scan)
    }

    /// Deletes database `name` (`IDBFactory.deleteDatabase`) and returns the version it had
    /// (0 when it did not exist). It first waits until no other process has a connection to
    /// the database open (see [`Factory`]); this process's connections to it fail from then
    /// on with [`Error::InvalidState`], after a running readwrite transaction is waited for.
    ///
    /// # Errors
    /// [`Error::Unknown`] if the files cannot be removed, or if the file under that name is
    /// not an Indexa database of that name, or is a link, directory, FIFO or anything but a
    /// regular file (it is then left alone); [`Error::InvalidState`] if another process still
    /// has the database open after the lock timeout, or if the calling thread still runs a
    /// readwrite transaction on the database.
    pub fn delete_database(&self, name: impl Into<Utf16String>) -> Result<u64> {
        self.delete_database_with(name, &mut |_| {})
    }

    /// As [`Factory::delete_database`], calling `blocked` (at most once, on the calling
    /// thread) when the deletion has to wait for connections of other factories or
    /// processes that are still open after their listeners ([`Database::on_version_change`])
    /// were called: the spec's `blocked` event. The deletion then keeps waiting, up to the
    /// lock timeout.
    ///
    /// # Errors
    /// As [`Factory::delete_database`].
    pub fn delete_database_with(
        &self,
        name: impl Into<Utf16String>,
        blocked: &mut dyn FnMut(&VersionChange),
    ) -> Result<u64> {
        let name = &name.into();
        if self.server.is_some() {
            return self.delete_on_server(name, blocked);
        }
        let path = self.path_for(name);
        if !database_file_exists(&path)? && !lock(&self.open).contains_key(name) {
            return Ok(0);
        }
        // Wait until no other process (nor another factory of this one) has the database
        // open, and keep them out meanwhile.
        let shared = lock(&self.open).get(name).cloned();
        let connection_lock = ConnectionLock::for_database(&path);
        let owner = shared.as_ref().map_or_else(Owner::new, |s| s.owner());
        // What the other connections are told; the version returned is read below.
        let exclusive =
            self.exclusive_for_removal(&connection_lock, owner, name, blocked, || {
                Ok(self.version(name.clone()).unwrap_or(0))
            })?;
        match shared {
            Some(s) if s.is_current() => {
                // The file's, not the cached one: another factory may have upgraded it.
                let version = Self::stored_version(&s)?;
                self.remove(name, &s, &exclusive)?;
                Ok(version)
            }
            stale => {
                if let Some(s) = stale {
                    // Another process deleted or replaced the file this process had opened.
                    self.forget(name, &s);
                }
                if !path.exists() {
                    return Ok(0);
                }
                // Only a file that is an Indexa database of this name is ours to remove.
                match sqlite::peek_database_file(&path) {
                    Ok(Some(row)) if row.name == *name => {
                        remove_files(&path)?;
                        connection_lock.detach();
                        Ok(row.version)
                    }
                    _ => Err(Error::Unknown(format!(
                        "{} is not an Indexa database; it was left as it is",
                        path.display()
                    ))),
                }
            }
        }
    }

    /// Puts the database in the file `from` (a closed Indexa database named `name`, in the
    /// data directory's file system, e.g. in a scratch directory inside it) in place as
    /// database `name`, and returns the version of the database it replaced (0 when there was
    /// none). Used by restores and backups, which build the new database aside first.
    ///
    /// Like [`Factory::delete_database`], it first waits until no other process (nor another
    /// factory of this process) has database `name` open, and keeps them out until the new
    /// file is in place; this factory's connections to the old database fail from then on with
    /// [`Error::InvalidState`]. The old database's write-ahead log is checkpointed into its
    /// file, then `from` is renamed over it in one step: a failure at any point leaves the old
    /// database as it was, and no process ever writes to a file that is no longer there.
    ///
    /// # Errors
    /// - [`Error::Constraint`] when database `name` exists and `replace` is false.
    /// - [`Error::InvalidState`] when another process still has the database open after the
    ///   lock timeout, or the calling thread runs a readwrite transaction on it.
    /// - [`Error::Unknown`] when `from` is not a closed Indexa database named `name`, when the
    ///   file under `name` is not an Indexa database of that name (it is left alone), or when
    ///   a file operation fails.
    pub fn replace_database(
        &self,
        name: impl Into<Utf16String>,
        from: &Path,
        replace: bool,
    ) -> Result<u64> {
        let name = &name.into();
        if let Some(server) = &self.server {
            return Err(Error::InvalidState(format!(
                "replacing a database with a file needs a data directory; {} is a PostgreSQL database",
                server.shown()
            )));
        }
        let path = self.path_for(name);
        database_file_exists(&path)?;
        match sqlite::peek_database_file(from) {
            Ok(Some(row)) if row.name == *name && row.version > 0 => {}
            _ => {
                return Err(Error::Unknown(format!(
                    "{} is not an Indexa database named {name:?}",
                    from.display()
                )))
            }
        }
        if has_content(&companion(from, "-wal"))? {
            return Err(Error::Unknown(format!(
                "{} still has a write-ahead log; close it first",
                from.display()
            )));
        }
        let shared = lock(&self.open).get(name).cloned();
        let connection_lock = ConnectionLock::for_database(&path);
        let owner = shared.as_ref().map_or_else(Owner::new, |s| s.owner());
        // The other connections are told the database goes away, as for a deletion.
        let _exclusive =
            self.exclusive_for_removal(&connection_lock, owner, name, &mut |_| {}, || {
                Ok(self.version(name.clone()).unwrap_or(0))
            })?;
        // The lock may have created an empty file, which holds no database.
        let old = if has_content(&path)? {
            match sqlite::peek_database_file(&path) {
                Ok(Some(row)) if row.name == *name => row.version,
                _ => return Err(not_a_database(&path, "it is not this database's file")),
            }
        } else {
            0
        };
        if old > 0 && !replace {
            return Err(Error::Constraint(format!(
                "database {name:?} already exists"
            )));
        }
        if let Some(s) = shared {
            s.mark_deleted()?;
            let mut open = lock(&self.open);
            if open.get(name).is_some_and(|o| Arc::ptr_eq(o, &s)) {
                open.remove(name);
            }
        }
        if old > 0 {
            // Nothing else has the file open: move its log into it, so no log of the old
            // database is left beside the new file.
            let conn = sqlite::open_connection(&path)?;
            conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE)")
                .map_err(sqlite::sql_error)?;
            drop(conn);
            if has_content(&companion(&path, "-wal"))? {
                return Err(Error::Unknown(format!(
                    "cannot checkpoint the write-ahead log of {}; the database was left as it is",
                    path.display()
                )));
            }
        }
        let io = |what: &str, p: &Path, e: std::io::Error| {
            Error::Unknown(format!("cannot {what} {}: {e}", p.display()))
        };
        fs::File::open(from)
            .and_then(|f| f.sync_all())
            .map_err(|e| io("write", from, e))?;
        fs::rename(from, &path).map_err(|e| io("move the new database to", &path, e))?;
        for suffix in COMPANIONS {
            let p = companion(&path, suffix);
            match fs::remove_file(&p) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(io("remove", &p, e)),
            }
        }
        #[cfg(unix)]
        fs::File::open(&self.dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| io("write", &self.dir, e))?;
        connection_lock.detach();
        Ok(old)
    }

    /// Removes the storage `shared` opened (its files, or its schema on a server) while this
    /// process holds its exclusive connection lock (`_exclusive`), so no other process has it
    /// open; this factory's connections to it fail from then on. A database created under
    /// the name since `shared` was opened is another file or id, never removed here.
    fn remove(
        &self,
        name: &Utf16String,
        shared: &Arc<DatabaseShared>,
        _exclusive: &Exclusive,
    ) -> Result<()> {
        shared.mark_deleted()?;
        self.forget(name, shared);
        match shared.place() {
            Place::Postgres(server, id) => {
                server.delete(*id)?;
            }
            Place::File(path) => remove_files(path)?,
        }
        shared.detach_lock();
        Ok(())
    }

    /// [`Factory::delete_database_with`] on a PostgreSQL server: waits, as for a file, until
    /// no other process or factory has the database open (their connections are told through
    /// the server), then drops its schema. The database deleted is the one whose exclusive
    /// lock was taken: when another process deleted it (and maybe created it again) while this
    /// one waited, it starts again on the database there is now.
    fn delete_on_server(
        &self,
        name: &Utf16String,
        blocked: &mut dyn FnMut(&VersionChange),
    ) -> Result<u64> {
        let server = self.server.as_ref().expect("called for a server");
        loop {
            let shared = lock(&self.open).get(name).cloned();
            let id = server.existing_id(name)?;
            // This factory's state of another id is stale: that database was deleted.
            let shared = match shared {
                Some(s) if id.is_some_and(|id| is_at(&s, id)) => Some(s),
                Some(s) => {
                    self.forget(name, &s);
                    None
                }
                None => None,
            };
            let Some(id) = id else {
                return Ok(0);
            };
            let connection_lock = ConnectionLock::on_server(server, id);
            let owner = shared.as_ref().map_or_else(Owner::new, |s| s.owner());
            let _exclusive =
                self.exclusive_for_removal(&connection_lock, owner, name, blocked, || {
                    Ok(server.version(name)?.unwrap_or(0))
                })?;
            if server.existing_id(name)? != Some(id) {
                continue;
            }
            if let Some(s) = shared {
                s.mark_deleted()?;
                self.forget(name, &s);
            }
            let version = server.delete(id)?;
            connection_lock.detach();
            return Ok(version);
        }
    }

    /// Takes `connection_lock` exclusively to remove database `name` (a deletion or a
    /// replacement): the connections open elsewhere are told it goes away from the version
    /// `old_version` gives at each try, `blocked` is called while they stay open; tried
    /// again when another deletion or upgrade took the lock meanwhile.
    ///
    /// # Errors
    /// Those of [`ConnectionLock::exclusive`] and of `old_version`.
    fn exclusive_for_removal(
        &self,
        connection_lock: &Arc<ConnectionLock>,
        owner: Owner,
        name: &Utf16String,
        blocked: &mut dyn FnMut(&VersionChange),
        old_version: impl Fn() -> Result<u64>,
    ) -> Result<Exclusive> {
        loop {
            let removal = VersionChange {
                old_version: old_version()?,
                new_version: None,
            };
            if let Some(exclusive) = connection_lock.exclusive(
                owner,
                &name.to_string_lossy(),
                self.lock_timeout,
                removal,
                blocked,
            )? {
                return Ok(exclusive);
            }
        }
    }
}

/// Whether `shared` is the state of the database with catalog id `id` on a server.
fn is_at(shared: &DatabaseShared, id: i32) -> bool {
    matches!(shared.place(), Place::Postgres(_, at) if *at == id)
}

/// The error for a file under a database's name that is not an Indexa database.
fn not_a_database(path: &Path, why: &str) -> Error {
    Error::Unknown(format!(
        "{} is not an Indexa database ({why}); it was left as it is",
        path.display()
    ))
}

/// The companion file of `path` with `suffix` (`-wal`, `-shm`, `-journal`).
fn companion(path: &Path, suffix: &str) -> PathBuf {
    let mut p = path.as_os_str().to_owned();
    p.push(suffix);
    PathBuf::from(p)
}

/// Whether a file is at `path` and is not empty.
fn has_content(path: &Path) -> Result<bool> {
    match fs::symlink_metadata(path) {
        Ok(meta) => Ok(meta.len() > 0),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::Unknown(format!(
            "cannot examine {}: {e}",
            path.display()
        ))),
    }
}

/// Removes a database file with its WAL and shared-memory files and its notice file. The
/// database file goes last: a process that finds it gone creates a new one at the path, whose
/// companions must not be removed here.
fn remove_files(path: &Path) -> Result<()> {
    for suffix in COMPANIONS.into_iter().chain(std::iter::once("")) {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        match fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                return Err(Error::Unknown(format!(
                    "cannot remove {}: {e}",
                    Path::new(&p).display()
                )))
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name_of(name: &str) -> String {
        file_name_for(&Utf16String::from(name))
    }

    fn units(units: &[u16]) -> String {
        file_name_for(&Utf16String::from_units(units.to_vec()))
    }

    #[test]
    fn every_utf16_name_has_its_own_file() {
        // Lone surrogates are written as their WTF-8 bytes, which no valid name has.
        assert_eq!(units(&[0xD800]), "db-%ED%A0%80.indexa");
        assert_eq!(units(&[0xDC00]), "db-%ED%B0%80.indexa");
        assert_eq!(units(&[0xFFFD]), "db-%EF%BF%BD.indexa");
        // A pair is one code point, as in UTF-8; the same units reversed are two lone ones.
        assert_eq!(units(&[0xD834, 0xDD1E]), name_of("\u{1D11E}"));
        assert_eq!(units(&[0xDD1E, 0xD834]), "db-%ED%B4%9E%ED%A0%B4.indexa");
        // Long names hash their WTF-8 bytes.
        let long_lone: Vec<u16> = std::iter::repeat(0xD800).take(100).collect();
        let mut long_other = long_lone.clone();
        long_other[99] = 0xFFFD;
        assert_ne!(units(&long_lone), units(&long_other));
    }

    /// A database at version 1 named `name` in `dir` with store `s` holding 1 → `value`.
    fn make(dir: &Path, name: &str, value: &str) -> PathBuf {
        let f = Factory::open_dir(dir).unwrap();
        let db = f
            .open(name, Some(1), |tx, _, _| {
                let s = tx.create_object_store("s", None, false)?;
                s.put(crate::Value::from(value), Some(crate::Key::Number(1.0)))?;
                Ok(())
            })
            .unwrap();
        db.close();
        f.database_path(name)
    }

    fn value_of(f: &Factory, name: &str) -> Option<crate::Value> {
        let db = f.open(name, None, |_, _, _| Ok(())).unwrap();
        let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
        let v = tx
            .object_store("s")
            .unwrap()
            .get(crate::Key::Number(1.0))
            .unwrap();
        tx.commit().unwrap();
        db.close();
        v
    }

    /// A path that starts as a URL does is refused, naming only the scheme; `is_url` says
    /// which text is a URL.
    #[test]
    fn open_dir_refuses_a_url() {
        let err = Factory::open_dir("mysql://alice:hunter2@host/db").unwrap_err();
        assert_eq!(
            (err.name(), err.message()),
            (
                "SyntaxError",
                "a data directory's path cannot start with mysql://, which makes it a URL; \
                 a PostgreSQL database is opened by its postgres:// or postgresql:// URL"
            )
        );
        assert!(Factory::is_url("POSTGRES://h/d"));
        assert!(Factory::is_url("git+ssh://h/d"));
        assert!(!Factory::is_url("file:x"));
        assert!(!Factory::is_url("dir/with://inside"));
        assert!(!Factory::is_url("1abc://x"));
        assert!(!Factory::is_url("://x"));
    }

    /// `replace_database` waits for other factories' (and processes') connections like a
    /// deletion, refuses a file that is not the named database, and leaves the old database
    /// as it was whenever it fails; once it succeeds every factory reads the new database.
    #[test]
    fn replace_database_is_excluded_by_open_connections_and_atomic() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        make(&data, "x", "old");
        let from = make(&dir.path().join("new"), "x", "new");
        let other = make(&dir.path().join("other"), "y", "other");
        let first = Factory::open_dir(&data).unwrap();
        let db = first.open("x", None, |_, _, _| Ok(())).unwrap();
        let mut second = Factory::open_dir(&data).unwrap();
        second.set_lock_timeout(Duration::from_millis(100));
        let err = second.replace_database("x", &from, true).unwrap_err();
        assert_eq!(
            (err.name(), err.message()),
            (
                "InvalidStateError",
                "database \"x\" is open through another factory of this process; close it there first (waited 100 ms)"
            )
        );
        db.close();
        let err = second.replace_database("x", &other, true).unwrap_err();
        assert_eq!(
            (err.name(), err.message()),
            (
                "UnknownError",
                format!("{} is not an Indexa database named \"x\"", other.display()).as_str()
            )
        );
        let err = second.replace_database("x", &from, false).unwrap_err();
        assert_eq!(
            (err.name(), err.message()),
            ("ConstraintError", "database \"x\" already exists")
        );
        assert_eq!(value_of(&first, "x"), Some(crate::Value::from("old")));
        assert!(from.exists());
        assert_eq!(second.replace_database("x", &from, true).unwrap(), 1);
        assert!(!from.exists());
        assert_eq!(value_of(&first, "x"), Some(crate::Value::from("new")));
        assert_eq!(value_of(&second, "x"), Some(crate::Value::from("new")));
        // A database that did not exist is put in place too.
        let z = make(&dir.path().join("z"), "z", "zed");
        assert_eq!(second.replace_database("z", &z, false).unwrap(), 0);
        assert_eq!(value_of(&first, "z"), Some(crate::Value::from("zed")));
    }

    /// Another factory's connection in this process blocks a deletion or an upgrade like
    /// another process's (RELIABILITY.md, "Several processes"); the factory's own do not.
    #[test]
    fn another_factorys_connections_block_deletion_and_upgrade() {
        let dir = tempfile::tempdir().unwrap();
        let first = Factory::open_dir(dir.path()).unwrap();
        let db = first
            .open("x", Some(1), |tx, _, _| {
                tx.create_object_store("s", None, false).map(|_| ())
            })
            .unwrap();
        let mut second = Factory::open_dir(dir.path()).unwrap();
        second.set_lock_timeout(Duration::from_millis(100));
        let blocked = "database \"x\" is open through another factory of this process; close it there first (waited 100 ms)";
        let err = second.delete_database("x").unwrap_err();
        assert_eq!((err.name(), err.message()), ("InvalidStateError", blocked));
        let err = second.open("x", Some(2), |_, _, _| Ok(())).unwrap_err();
        assert_eq!((err.name(), err.message()), ("InvalidStateError", blocked));
        // The first factory's connection still works at version 1.
        let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
        tx.object_store("s")
            .unwrap()
            .put(crate::Value::from("kept"), Some(crate::Key::Number(1.0)))
            .unwrap();
        tx.commit().unwrap();
        assert_eq!(db.version(), 1);
        // The first factory's own upgrade does not wait for its own open connection.
        first.open("x", Some(2), |_, _, _| Ok(())).unwrap();
        db.close();
        assert_eq!(second.delete_database("x").unwrap(), 2);
        assert_eq!(first.databases().unwrap(), vec![]);
    }

    #[test]
    fn file_names_are_safe() {
        assert_eq!(name_of("library"), "db-library.indexa");
        assert_eq!(name_of(""), "db-.indexa");
        assert_eq!(name_of("CON"), "db-CON.indexa");
        assert_eq!(
            name_of("../../etc/x"),
            "db-%2E%2E%2F%2E%2E%2Fetc%2Fx.indexa"
        );
        assert_eq!(name_of("ñ"), "db-%C3%B1.indexa");
        let long = "x".repeat(10_000);
        let f = name_of(&long);
        assert!(f.len() < 120, "{f}");
        assert_ne!(f, name_of(&"x".repeat(9_999)));
        let long_escaped = "/".repeat(500);
        assert!(!name_of(&long_escaped).contains('/'));
    }
}
