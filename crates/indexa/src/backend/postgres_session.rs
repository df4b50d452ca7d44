//! The connection lock of a database on a PostgreSQL server: the session connection through
//! which a process holds it, and the listener that wakes the process when a deletion or an
//! upgrade announces itself.
//!
//! The connection lock (`connection_lock`) is a few lock bytes and a notice; on a server,
//! each lock byte is a session-level advisory lock `(0x1DBB + byte number, database id)`
//! taken on a session connection of the process's own (one per database the process has
//! open, outside every pool, never inside a long transaction), so a process that dies —
//! killed, or cut off from the server — lets go of all of them at once. The notice is the
//! database's row of `indexa.versionchange`; writing it sends `NOTIFY indexa_versionchange`
//! with the database id, which only wakes the listener: the state is always read again from
//! the row (after every notification, every reconnection of the listener, and at least every
//! [`READ_AGAIN_EVERY`]). A process has one listener per server URL, for its lifetime. The
//! layout is in `docs/format.md` ("PostgreSQL", "Connections across hosts").
//!
//! A session connection lost while the process has the database open (a server restart) takes
//! the process's locks with it. The process takes them again on a new session: its watcher as
//! soon as the server answers, and every transaction before it runs (one round trip checks
//! the session). When the database was deleted or upgraded elsewhere meanwhile, the
//! connections that lost their lock act as closed (`database::DatabaseShared::hold`).
//!
//! A transaction-mode pooler (PgBouncer's `pool_mode = transaction`) hands each statement to
//! any server process, which breaks session locks and `LISTEN`: the session checks after every
//! lock statement that it still talks to the server process it started on, and fails with
//! [`std::io::ErrorKind::Unsupported`] otherwise.

use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};
use std::time::{Duration, Instant};

use postgres::fallible_iterator::FallibleIterator;
use postgres::Client;

use crate::backend::postgres::Server;
use crate::version_change::{Notice, VersionChange};

/// The first key of the advisory lock of lock byte 0 (the next bytes take the next keys);
/// the second key is the database id. Apart from the transaction locks' `0x1DBA`.
const SESSION_LOCK_CLASS: i64 = 0x1DBB;

/// The channel the notices are announced on; the payload is the database id.
const CHANNEL: &str = "indexa_versionchange";

/// How often a process reads a notice row even without a notification.
pub(crate) const READ_AGAIN_EVERY: Duration = Duration::from_secs(1);

/// How long the listener waits before connecting again after losing its connection.
const RECONNECT_AFTER: Duration = Duration::from_millis(200);

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn pg_io(e: postgres::Error) -> io::Error {
    io::Error::other(format!("PostgreSQL failure: {e}"))
}

/// What a session lock call asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SessionLock {
    Shared,
    Exclusive,
    None,
}

/// One process's session connection for the connection lock of one database.
pub(crate) struct Session {
    client: Mutex<Client>,
    /// The server process the session started on (`pg_backend_pid()`): it identifies this
    /// process's notices, and a change of it means a transaction-mode pooler.
    backend_pid: i32,
    database_id: i32,
    /// The locks this session holds, by lock byte number.
    held: Mutex<HashMap<i64, SessionLock>>,
    /// The notifications of this database the listener had counted at the last read, and
    /// when that was; the notice read then.
    last_read: Mutex<Option<(u64, Instant, Option<Notice>)>>,
    listener: Arc<Listener>,
}

impl Session {
    /// A new session connection for database `database_id` of `server`, with the server's
    /// listener running (so no notification after this call is missed).
    ///
    /// # Errors
    /// When the server cannot be reached.
    pub fn connect(server: &Arc<Server>, database_id: i32) -> io::Result<Session> {
        let listener = Listener::for_server(server)?;
        let mut client = server
            .connect()
            .map_err(|e| io::Error::other(e.to_string()))?;
        let backend_pid: i32 = client
            .query_one("SELECT pg_backend_pid()", &[])
            .map_err(pg_io)?
            .get(0);
        Ok(Session {
            client: Mutex::new(client),
            backend_pid,
            database_id,
            held: Mutex::new(HashMap::new()),
            last_read: Mutex::new(None),
            listener,
        })
    }

    /// Whether the session connection is lost (its locks are gone with it).
    pub fn is_closed(&self) -> bool {
        lock(&self.client).is_closed()
    }

    /// Whether the session connection answers an empty statement (it holds its locks while
    /// it does).
    pub fn is_alive(&self) -> bool {
        lock(&self.client).simple_query("").is_ok()
    }

    /// The id notices of this process carry.
    pub fn process_id(&self) -> u64 {
        self.backend_pid as u64
    }

    /// Runs one lock statement returning a boolean, checking the server process.
    fn lock_statement(&self, sql: &str, byte: i64) -> io::Result<bool> {
        let class = SESSION_LOCK_CLASS + byte;
        let row = lock(&self.client)
            .query_one(
                &format!("SELECT {sql}($1::int4, $2::int4), pg_backend_pid()"),
                &[&(class as i32), &self.database_id],
            )
            .map_err(pg_io)?;
        let pid: i32 = row.get(1);
        if pid != self.backend_pid {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "the PostgreSQL connection moved to another server process between statements \
                 (a transaction-mode pooler such as PgBouncer?); Indexa needs a direct or \
                 session-mode connection for its session locks and LISTEN",
            ));
        }
        Ok(row.get(0))
    }

    /// Sets this session's lock on lock byte `byte` to `want` without waiting: `Ok(false)`
    /// when another session's lock conflicts (the session's lock is then unchanged). Like a
    /// file record lock, a lock replaces the one held before (shared and exclusive are not
    /// stacked).
    pub fn set_lock(&self, want: SessionLock, byte: i64) -> io::Result<bool> {
        let mut held = lock(&self.held);
        let now = held.get(&byte).copied().unwrap_or(SessionLock::None);
        if now == want {
            return Ok(true);
        }
        match want {
            SessionLock::Shared => {
                if !self.lock_statement("pg_try_advisory_lock_shared", byte)? {
                    return Ok(false);
                }
                if now == SessionLock::Exclusive {
                    self.lock_statement("pg_advisory_unlock", byte)?;
                }
            }
            SessionLock::Exclusive => {
                if !self.lock_statement("pg_try_advisory_lock", byte)? {
                    return Ok(false);
                }
                if now == SessionLock::Shared {
                    self.lock_statement("pg_advisory_unlock_shared", byte)?;
                }
            }
            SessionLock::None => {
                let unlock = match now {
                    SessionLock::Shared => "pg_advisory_unlock_shared",
                    _ => "pg_advisory_unlock",
                };
                self.lock_statement(unlock, byte)?;
            }
        }
        if want == SessionLock::None {
            held.remove(&byte);
        } else {
            held.insert(byte, want);
        }
        Ok(true)
    }

    /// Whether another session holds a lock on lock byte `byte` that `probe` would conflict
    /// with (any lock for [`SessionLock::Exclusive`], an exclusive one for
    /// [`SessionLock::Shared`]).
    pub fn conflicts(&self, byte: i64, probe: SessionLock) -> io::Result<bool> {
        let class = SESSION_LOCK_CLASS + byte;
        let row = lock(&self.client)
            .query_one(
                "SELECT EXISTS (SELECT 1 FROM pg_locks \
                 WHERE locktype = 'advisory' AND objsubid = 2 \
                 AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
                 AND classid::int8 = $1 AND objid::int8 = $2 AND pid <> pg_backend_pid() \
                 AND ($3 OR mode = 'ExclusiveLock'))",
                &[
                    &class,
                    &i64::from(self.database_id),
                    &(probe == SessionLock::Exclusive),
                ],
            )
            .map_err(pg_io)?;
        Ok(row.get(0))
    }

    /// Writes `change` by `owner` as the database's next notice and wakes every process
    /// listening; returns the notice's serial.
    pub fn publish(&self, owner: u64, change: VersionChange) -> io::Result<u64> {
        let mut client = lock(&self.client);
        let mut tx = client.transaction().map_err(pg_io)?;
        let serial: i64 = tx
            .query_one(
                "INSERT INTO indexa.versionchange AS v \
                 (database_id, serial, backend_pid, owner, old_version, new_version) \
                 VALUES ($1, 1, pg_backend_pid(), $2, $3, $4) \
                 ON CONFLICT (database_id) DO UPDATE SET serial = v.serial + 1, \
                 backend_pid = excluded.backend_pid, owner = excluded.owner, \
                 old_version = excluded.old_version, new_version = excluded.new_version \
                 RETURNING serial",
                &[
                    &self.database_id,
                    &(owner as i64),
                    &(change.old_version as i64),
                    &change.new_version.map(|v| v as i64),
                ],
            )
            .map_err(pg_io)?
            .get(0);
        tx.execute(
            "SELECT pg_notify($1, $2)",
            &[&CHANNEL, &self.database_id.to_string()],
        )
        .map_err(pg_io)?;
        tx.commit().map_err(pg_io)?;
        // This process's own connections need not wait for the notification to come back.
        let notice = Notice {
            serial: serial as u64,
            pid: self.process_id(),
            owner,
            change,
        };
        *lock(&self.last_read) = Some((
            self.listener.wakes(self.database_id),
            Instant::now(),
            Some(notice),
        ));
        Ok(serial as u64)
    }

    /// The database's latest notice (`None` before the first): read from the server when the
    /// listener was woken for it (or reconnected) since the last read, or after
    /// [`READ_AGAIN_EVERY`]; else the one read last.
    pub fn read_notice(&self) -> Option<Notice> {
        let woken = self.listener.wakes(self.database_id);
        let mut last = lock(&self.last_read);
        if let Some((seen, at, notice)) = &*last {
            if *seen == woken && at.elapsed() < READ_AGAIN_EVERY {
                return *notice;
            }
        }
        let read = lock(&self.client).query_opt(
            "SELECT serial, backend_pid, owner, old_version, new_version \
             FROM indexa.versionchange WHERE database_id = $1",
            &[&self.database_id],
        );
        let Ok(row) = read else {
            // Read again next time; meanwhile the notice read last still holds.
            return last.as_ref().and_then(|(_, _, notice)| *notice);
        };
        let notice = row.map(|r| Notice {
            serial: r.get::<_, i64>(0) as u64,
            pid: r.get::<_, i32>(1) as u64,
            owner: r.get::<_, i64>(2) as u64,
            change: VersionChange {
                old_version: r.get::<_, i64>(3) as u64,
                new_version: r.get::<_, Option<i64>>(4).map(|v| v as u64),
            },
        });
        *last = Some((woken, Instant::now(), notice));
        notice
    }
}

/// The process's listener on one server: a connection of its own running
/// `LISTEN indexa_versionchange`, counting the notifications of each database.
struct Listener {
    /// Notifications so far, by database id, plus `reconnects` for every id.
    counts: Mutex<HashMap<i32, u64>>,
    /// Times the listener connected again (every notice must be read again then).
    reconnects: AtomicU64,
}

impl Listener {
    /// The listener of `server` (by its URL without password), started when first needed:
    /// returns once it listens.
    fn for_server(server: &Arc<Server>) -> io::Result<Arc<Listener>> {
        static LISTENERS: OnceLock<Mutex<HashMap<String, Arc<Listener>>>> = OnceLock::new();
        let mut listeners = lock(LISTENERS.get_or_init(|| Mutex::new(HashMap::new())));
        if let Some(l) = listeners.get(server.shown()) {
            return Ok(l.clone());
        }
        let client = Self::listen(server)?;
        let listener = Arc::new(Listener {
            counts: Mutex::new(HashMap::new()),
            reconnects: AtomicU64::new(0),
        });
        let (l, s) = (listener.clone(), server.without_catalog());
        std::thread::Builder::new()
            .name("indexa-pg-listener".into())
            .spawn(move || l.run(&s, client))?;
        listeners.insert(server.shown().to_owned(), listener.clone());
        Ok(listener)
    }

    /// A new connection listening on the channel.
    fn listen(server: &Server) -> io::Result<Client> {
        let mut client = server
            .connect()
            .map_err(|e| io::Error::other(e.to_string()))?;
        client
            .batch_execute(&format!("LISTEN {CHANNEL}"))
            .map_err(pg_io)?;
        Ok(client)
    }

    /// Counts notifications forever, connecting again whenever the connection is lost.
    fn run(&self, server: &Server, mut client: Client) {
        loop {
            let mut lost = false;
            let mut notifications = client.notifications();
            let mut waiting = notifications.timeout_iter(READ_AGAIN_EVERY);
            loop {
                match waiting.next() {
                    Ok(Some(n)) => {
                        if let Ok(id) = n.payload().parse::<i32>() {
                            *lock(&self.counts).entry(id).or_insert(0) += 1;
                        }
                    }
                    Ok(None) => break,
                    Err(_) => {
                        lost = true;
                        break;
                    }
                }
            }
            drop(waiting);
            drop(notifications);
            if !lost && !client.is_closed() {
                continue;
            }
            client = loop {
                std::thread::sleep(RECONNECT_AFTER);
                if let Ok(c) = Self::listen(server) {
                    break c;
                }
            };
            // Notifications sent while disconnected are lost: every notice is read again.
            self.reconnects.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// How often the listener was woken for database `id` (or reconnected).
    fn wakes(&self, id: i32) -> u64 {
        lock(&self.counts).get(&id).copied().unwrap_or(0) + self.reconnects.load(Ordering::SeqCst)
    }
}
