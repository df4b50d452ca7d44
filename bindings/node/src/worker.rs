//! Each connection (`IDBDatabase`) has its engine work run in the order the requests were
//! placed, on a small pool of threads shared by every connection of the process, so Node's
//! thread never waits for a lock or a disk flush and ten thousand connections do not make ten
//! thousand threads. Replies go back in batches through a thread-safe function.
//!
//! A connection with ops waiting is in the pool's ready queue once; one pool thread at a time
//! runs its ops (up to [`OPS_PER_TURN`], then it queues again behind the others). Threads are
//! started as work arrives while the idle ones cannot take every ready connection, up to
//! [`MAX_THREADS`]: an op may wait inside the engine (for SQLite's write lock held by another
//! process, or for another process to close a database it deletes or upgrades), and meanwhile
//! the other threads serve the other connections.
//!
//! The JavaScript layer schedules transactions (spec: "transaction scheduling",
//! <https://www.w3.org/TR/IndexedDB-3/#transaction-scheduling>) and only sends `Begin` for a
//! transaction that may start, so a worker never waits for another connection's writer in
//! this process.
//!
//! Some ops run at once on the thread that places them (Node's), when the connection has
//! nothing queued or running: ops that never wait for a lock or a disk flush and touch one
//! record or a few (see [`Worker::runs_inline`]), among them the begin of a readwrite
//! transaction when the write lock is free (tried without waiting; else it begins on a pool
//! thread), a `put` of a small value, a `getAll` of a few records, a cursor's opening and its
//! short steps (a `continue(key)`, say), and the relaxed commit of a transaction
//! that wrote one small record, which leaves SQLite's automatic checkpoint (it writes the log
//! into the database file and flushes both) to a plain commit on a pool thread: each time a
//! connection made [`DEFERRED_CHECKPOINTS`] such commits in a row, its next goes to the pool to
//! be one. A pool thread's wake-up costs more than such an op. The reply still goes through the
//! thread-safe function, so it arrives as a task of its own (in the loop's poll phase, as every
//! reply: a transaction a success event made active is inactive again before the next timer),
//! after every earlier reply: a pool thread sends its replies before the connection counts as
//! idle. Node's thread spends at most [`INLINE_BUDGET`] on them in a task that dispatches a
//! batch of replies (see [`replies_task_begins`]) and, outside of those, in an
//! [`INLINE_WINDOW`]; and at most [`INLINE_WINDOW_BUDGET`] in an [`INLINE_WINDOW`] over all
//! tasks. The op that crosses a budget finishes; the next ones go to the pool until the next
//! batch's task begins or the window ends. So a program running one small transaction after
//! another, each placed from the last one's events, runs most of them on Node's thread with no
//! thread hop, a single task placing many ops holds the thread for about [`INLINE_BUDGET`],
//! and the event loop gets back to its I/O within about an [`INLINE_WINDOW`].
//!
//! Replies go back in batches of at most [`REPLY_WEIGHT`] records (a reply counts one, plus
//! the records it carries), so no single task on Node's thread turns more than about that
//! many records into JavaScript values and dispatches their events.
//!
//! Cursor steps read ahead: a step asks for a batch of rows, the row it moves to and up to
//! `batch - 1` rows beyond it (each a further plain `continue()`), which the JavaScript layer
//! steps through without a round trip. The engine cursor stays on the row the step moved to;
//! a clone of it (the [`Scout`]) is left on the last row read. The JavaScript layer reports
//! how many rows it stepped through on its own with its next op for the cursor, or with a
//! `SyncCursor` op that it places before any write to the transaction, so the engine cursor
//! catches up while the data is still what the rows were read from. While the JavaScript
//! layer steps through a batch, a `ReadAhead` op moves the scout on over the next one, so
//! that a pool thread reads it meanwhile; the engine cursor stays where it is.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, TryLockError};
use std::time::{Duration, Instant};

use crate::wire;
use indexa::{
    Cursor, CursorDirection, Database, Durability, Error, Factory, Key, KeyPath, KeyRange, Query,
    Transaction, TransactionMode, Utf16String, Value, VersionChange,
};

/// What a read request returns.
#[derive(Debug, Clone, Copy)]
pub enum ReadKind {
    Get,
    GetKey,
    GetAll,
    GetAllKeys,
    GetAllRecords,
    Count,
}

/// One piece of engine work; `id` identifies the reply.
pub enum Op {
    /// A transaction exists but may not start yet: its ops wait until `Begin`.
    Declare {
        tx: u32,
    },
    Open {
        id: u32,
        tx: u32,
        name: Utf16String,
        version: u64,
    },
    Begin {
        id: u32,
        tx: u32,
        scope: Vec<Utf16String>,
        mode: TransactionMode,
        durability: Durability,
    },
    /// `defer_checkpoint`: the commit of a readwrite transaction leaves SQLite's automatic
    /// checkpoint to a later plain commit (set for a commit run on Node's thread).
    Commit {
        id: u32,
        tx: u32,
        defer_checkpoint: bool,
    },
    Abort {
        id: u32,
        tx: u32,
    },
    CreateStore {
        id: u32,
        tx: u32,
        name: Utf16String,
        key_path: Option<KeyPath>,
        auto_increment: bool,
    },
    DeleteStore {
        id: u32,
        tx: u32,
        name: Utf16String,
    },
    RenameStore {
        id: u32,
        tx: u32,
        name: Utf16String,
        new_name: Utf16String,
    },
    CreateIndex {
        id: u32,
        tx: u32,
        store: Utf16String,
        name: Utf16String,
        key_path: KeyPath,
        unique: bool,
        multi_entry: bool,
    },
    DeleteIndex {
        id: u32,
        tx: u32,
        store: Utf16String,
        name: Utf16String,
    },
    RenameIndex {
        id: u32,
        tx: u32,
        store: Utf16String,
        name: Utf16String,
        new_name: Utf16String,
    },
    Put {
        id: u32,
        tx: u32,
        store: Utf16String,
        value: Value,
        key: Option<Key>,
        no_overwrite: bool,
    },
    Read {
        id: u32,
        tx: u32,
        store: Utf16String,
        index: Option<Utf16String>,
        kind: ReadKind,
        range: Option<KeyRange>,
        count: Option<u32>,
        direction: CursorDirection,
    },
    Delete {
        id: u32,
        tx: u32,
        store: Utf16String,
        range: KeyRange,
    },
    Clear {
        id: u32,
        tx: u32,
        store: Utf16String,
    },
    OpenCursor {
        id: u32,
        tx: u32,
        cursor: u32,
        store: Utf16String,
        index: Option<Utf16String>,
        range: Option<KeyRange>,
        direction: CursorDirection,
        key_only: bool,
    },
    /// `skipped`: rows of the last batch stepped through since (see [`OpenCursor::catch_up`]);
    /// `batch`: how many rows to read (see [`OpenCursor::rows`]).
    Continue {
        id: u32,
        cursor: u32,
        key: Option<Key>,
        primary_key: Option<Key>,
        skipped: u32,
        batch: u32,
    },
    Advance {
        id: u32,
        cursor: u32,
        count: u32,
        skipped: u32,
        batch: u32,
    },
    /// Reads up to `batch` more rows beyond the last row read ahead, moving only the scout
    /// (see [`OpenCursor::read_more`]), while the JavaScript layer steps through the rows it
    /// has.
    ReadAhead {
        id: u32,
        cursor: u32,
        batch: u32,
    },
    /// Moves the engine cursor over the `skipped` rows of the last batch that the JavaScript
    /// layer stepped through, before a write to the transaction changes what lies ahead.
    SyncCursor {
        id: u32,
        cursor: u32,
        skipped: u32,
    },
    CursorUpdate {
        id: u32,
        cursor: u32,
        value: Value,
    },
    CursorDelete {
        id: u32,
        cursor: u32,
    },
    Close,
}

/// An object store as the JavaScript layer mirrors it.
pub struct StoreInfo {
    pub name: Utf16String,
    pub key_path: Option<KeyPath>,
    pub auto_increment: bool,
    pub indexes: Vec<IndexInfo>,
}

/// An index as the JavaScript layer mirrors it.
pub struct IndexInfo {
    pub name: Utf16String,
    pub key_path: KeyPath,
    pub unique: bool,
    pub multi_entry: bool,
}

/// The records of a cursor step, in the form a reply carries them ([`wire::row`] per record:
/// key, primary key and, for value cursors, value), written as the cursor reaches each record
/// so that its key and value are not copied on the way.
#[derive(Default)]
pub struct Rows {
    pub bytes: Vec<u8>,
    /// How many records `bytes` holds.
    pub count: usize,
}

impl Rows {
    /// Appends the record `cursor` is on; false when it is past the end. `inject`: the key
    /// path of a generated key to inject (see [`Payload::Records`]).
    fn push(&mut self, cursor: &Cursor, inject: Option<&KeyPath>) -> indexa::Result<bool> {
        let pushed = wire::row(&mut self.bytes, cursor, inject)?;
        self.count += usize::from(pushed);
        Ok(pushed)
    }
}

/// A successful result.
pub enum Payload {
    None,
    Key(Key),
    MaybeKey(Option<Key>),
    /// The values of a `getAll` or the records of a `getAllRecords`, already in the reply's
    /// form (see [`wire::values_reply`], [`wire::records_reply`]), and how many there are.
    Values(Vec<u8>, usize),
    Keys(Vec<Key>),
    Count(u64),
    /// The rows of a cursor step (none: past the end), and whether the last of them is the
    /// last in the cursor's range and direction.
    Rows(Rows, bool),
    /// A `get`'s result, already in the reply's form (see [`wire::get_reply`]).
    Encoded(Vec<u8>),
    Opened {
        old_version: Option<u64>,
        version: u64,
        stores: Vec<StoreInfo>,
    },
}

/// The reply to one op.
pub struct Reply {
    pub id: u32,
    pub result: Result<Payload, Error>,
}

impl Reply {
    /// What the reply costs Node's thread, in records: one for the reply and its event, plus
    /// the values, keys or rows it carries.
    fn weight(&self) -> usize {
        1 + match &self.result {
            Ok(Payload::Values(_, count)) => *count,
            Ok(Payload::Keys(k)) => k.len(),
            Ok(Payload::Rows(r, _)) => r.count,
            Ok(Payload::Encoded(_)) => 1,
            _ => 0,
        }
    }
}

/// An engine cursor moved onto the last row of a batch, `rows` plain steps beyond the cursor
/// it was cloned from.
struct Scout {
    cursor: Cursor,
    rows: u32,
}

struct OpenCursor {
    tx: u32,
    /// On the row the JavaScript layer last heard of from this thread.
    cursor: Cursor,
    inject: Option<KeyPath>,
    /// Set while the last batch's rows beyond `cursor` may still be stepped through.
    scout: Option<Scout>,
    /// The failure that ended the last batch's read ahead, which a read ahead asked for after
    /// it meets again (the rows it would read start where that one failed).
    failure: Option<Error>,
}

impl OpenCursor {
    /// Moves the engine cursor over the `skipped` rows of the last batch that the JavaScript
    /// layer stepped through on its own: onto the scout when it stepped through all of them,
    /// else by `advance`. Only valid while the transaction has written nothing since the
    /// batch was read, which the JavaScript layer ensures by sending `SyncCursor` before a
    /// write.
    fn catch_up(&mut self, t: &Transaction, skipped: u32) -> indexa::Result<()> {
        match self.scout.take() {
            Some(scout) if scout.rows == skipped => self.cursor = scout.cursor,
            _ if skipped > 0 => self.cursor.advance(t, skipped)?,
            _ => {}
        }
        Ok(())
    }

    /// The row the cursor is on, then up to `batch - 1` rows beyond it read by a clone of the
    /// cursor taking plain steps (kept as the scout). A failed read ahead ends the batch early
    /// without error: the step itself succeeded, and the next step from the JavaScript layer
    /// meets the failure on the engine cursor (a read ahead asked for meanwhile, at once).
    fn rows(&mut self, t: &Transaction, batch: u32) -> indexa::Result<Payload> {
        let inject = self.inject.as_ref();
        let mut rows = Rows::default();
        let mut at_end = !rows.push(&self.cursor, inject)?;
        self.failure = None;
        if !at_end && batch > 1 {
            let mut scout = self.cursor.clone();
            match read_on(&mut scout, t, &mut rows, batch as usize, inject) {
                Ahead::More => {
                    self.scout = Some(Scout {
                        cursor: scout,
                        rows: rows.count as u32 - 1,
                    })
                }
                Ahead::AtEnd => at_end = true,
                Ahead::Failed(e) => self.failure = Some(e),
            }
        }
        Ok(Payload::Rows(rows, at_end))
    }

    /// Up to `batch` rows beyond the scout's, read by moving the scout on; no rows when the
    /// last batch reached the end. The engine cursor stays where it is: the rows continue the
    /// last batch's, so the steps the JavaScript layer takes through them are counted as
    /// through that batch's.
    ///
    /// # Errors
    /// The failure of a read ahead that ends before its first row, or of the last batch's read
    /// ahead (the first row this one would read is where that one failed): a step the
    /// JavaScript layer has waiting for these rows fails with it.
    fn read_more(&mut self, t: &Transaction, batch: u32) -> indexa::Result<Payload> {
        if let Some(e) = &self.failure {
            return Err(e.clone());
        }
        let mut rows = Rows::default();
        let mut at_end = false;
        if let Some(mut scout) = self.scout.take() {
            match read_on(
                &mut scout.cursor,
                t,
                &mut rows,
                batch as usize,
                self.inject.as_ref(),
            ) {
                Ahead::More => {
                    scout.rows += rows.count as u32;
                    self.scout = Some(scout);
                }
                Ahead::AtEnd => at_end = true,
                Ahead::Failed(e) if rows.count == 0 => return Err(e),
                Ahead::Failed(e) => self.failure = Some(e),
            }
        }
        Ok(Payload::Rows(rows, at_end))
    }
}

/// How a read ahead ended.
enum Ahead {
    /// With `batch` rows; the scout is on the last one.
    More,
    /// At the end of the cursor's range.
    AtEnd,
    /// A step or a read failed, with this error; the rows before it stand.
    Failed(Error),
}

/// Moves `scout` on by plain steps, appending each record it reaches to `rows` (`inject` as
/// for [`Rows::push`]), until `rows` holds `batch`. A failure ends the read: the rows read so
/// far stand.
fn read_on(
    scout: &mut Cursor,
    t: &Transaction,
    rows: &mut Rows,
    batch: usize,
    inject: Option<&KeyPath>,
) -> Ahead {
    while rows.count < batch {
        if let Err(e) = scout.continue_key(t, None) {
            return Ahead::Failed(e);
        }
        match rows.push(scout, inject) {
            Ok(true) => {}
            Ok(false) => return Ahead::AtEnd,
            Err(e) => return Ahead::Failed(e),
        }
    }
    Ahead::More
}

/// An event for the JavaScript layer about a connection's database.
pub enum Event {
    /// The connection's own upgrade waits for connections of other factories or processes
    /// that stayed open after their `versionchange` (the spec's `blocked`).
    Blocked(VersionChange),
    /// Another factory or process asks to upgrade or delete the database (`versionchange`);
    /// the JavaScript layer answers with [`Events::acknowledge`] once it has dispatched it.
    VersionChange(VersionChange),
}

/// How long the engine's call about a `versionchange` waits for the JavaScript layer to
/// dispatch it (a thread that is busy or gone does not hold the requester up for longer).
const DISPATCH_WITHIN: Duration = Duration::from_secs(1);

/// A connection's events to the JavaScript layer and its acknowledgements of them.
pub struct Events {
    send: Box<dyn Fn(Event) + Send + Sync>,
    state: Mutex<EventState>,
    changed: Condvar,
}

#[derive(Default)]
struct EventState {
    /// `versionchange` events sent, and acknowledged.
    sent: u64,
    acknowledged: u64,
    /// `Close` was placed, and has been run (the engine connection is closed).
    closing: bool,
    closed: bool,
}

impl Events {
    pub fn new(send: impl Fn(Event) + Send + Sync + 'static) -> Arc<Events> {
        Arc::new(Events {
            send: Box::new(send),
            state: Mutex::new(EventState::default()),
            changed: Condvar::new(),
        })
    }

    /// Sends a `versionchange` and waits (up to [`DISPATCH_WITHIN`]) until the JavaScript
    /// layer dispatched it and, when a handler closed the connection, until it is closed:
    /// the engine reports the requester blocked only by connections still open then. A
    /// connection whose `Close` was placed gets no event; the call waits until it is closed.
    fn version_change(&self, change: VersionChange) {
        let n = {
            let mut st = lock(&self.state);
            if st.closing {
                None
            } else {
                st.sent += 1;
                Some(st.sent)
            }
        };
        if n.is_some() {
            (self.send)(Event::VersionChange(change));
        }
        let deadline = Instant::now() + DISPATCH_WITHIN;
        let mut st = lock(&self.state);
        while !(st.closed || n.is_some_and(|n| st.acknowledged >= n) && !st.closing) {
            let Some(left) = deadline.checked_duration_since(Instant::now()) else {
                return;
            };
            st = self
                .changed
                .wait_timeout(st, left)
                .unwrap_or_else(|poisoned| poisoned.into_inner())
                .0;
        }
    }

    /// The JavaScript layer dispatched the oldest `versionchange` not yet acknowledged.
    pub fn acknowledge(&self) {
        lock(&self.state).acknowledged += 1;
        self.changed.notify_all();
    }

    fn update(&self, f: impl FnOnce(&mut EventState)) {
        f(&mut lock(&self.state));
        self.changed.notify_all();
    }
}

struct Worker {
    factory: Arc<Factory>,
    events: Arc<Events>,
    db: Option<Database>,
    /// The version the connection opened at (`IDBDatabase.version`).
    version: u64,
    txs: HashMap<u32, Transaction>,
    /// Records written so far by each running transaction that wrote (a deletion of a range
    /// and `clear` count as two: they may write many).
    written: HashMap<u32, u32>,
    /// Readwrite commits since the last plain one that left the checkpoint to a later commit.
    deferred_checkpoints: usize,
    /// Ops of declared transactions that have not begun, in order.
    held: HashMap<u32, Vec<Op>>,
    /// A readwrite transaction started on Node's thread without waiting, for its `Begin`
    /// about to run there (see [`Connection::run_inline`]), or why it could not start.
    started: Option<(u32, Result<Transaction, Error>)>,
    cursors: HashMap<u32, OpenCursor>,
}

fn inactive() -> Error {
    Error::TransactionInactive("the transaction has finished".into())
}

/// The key path whose key the JavaScript layer injects into a deserialized value: the store's,
/// when it has a key generator and in-line keys.
fn injection_path(store: &indexa::ObjectStore<'_>) -> indexa::Result<Option<KeyPath>> {
    Ok(if store.auto_increment()? {
        store.key_path()?
    } else {
        None
    })
}

fn schema_of(tx: &Transaction) -> indexa::Result<Vec<StoreInfo>> {
    let mut stores = Vec::new();
    for name in tx.object_store_names_utf16() {
        let store = tx.object_store(&name)?;
        let mut indexes = Vec::new();
        for index_name in store.index_names_utf16()? {
            let index = store.index(&index_name)?;
            indexes.push(IndexInfo {
                name: index_name,
                key_path: index.key_path()?,
                unique: index.unique()?,
                multi_entry: index.multi_entry()?,
            });
        }
        stores.push(StoreInfo {
            key_path: store.key_path()?,
            auto_increment: store.auto_increment()?,
            name,
            indexes,
        });
    }
    Ok(stores)
}

impl Op {
    /// The transaction whose start an op waits for (not `Begin` itself).
    fn waits_for(&self) -> Option<u32> {
        match self {
            Op::Commit { tx, .. }
            | Op::Abort { tx, .. }
            | Op::CreateStore { tx, .. }
            | Op::DeleteStore { tx, .. }
            | Op::RenameStore { tx, .. }
            | Op::CreateIndex { tx, .. }
            | Op::DeleteIndex { tx, .. }
            | Op::RenameIndex { tx, .. }
            | Op::Put { tx, .. }
            | Op::Read { tx, .. }
            | Op::Delete { tx, .. }
            | Op::Clear { tx, .. }
            | Op::OpenCursor { tx, .. } => Some(*tx),
            _ => None,
        }
    }

    fn id(&self) -> Option<u32> {
        match self {
            Op::Declare { .. } | Op::Close => None,
            Op::Open { id, .. }
            | Op::Begin { id, .. }
            | Op::Commit { id, .. }
            | Op::Abort { id, .. }
            | Op::CreateStore { id, .. }
            | Op::DeleteStore { id, .. }
            | Op::RenameStore { id, .. }
            | Op::CreateIndex { id, .. }
            | Op::DeleteIndex { id, .. }
            | Op::RenameIndex { id, .. }
            | Op::Put { id, .. }
            | Op::Read { id, .. }
            | Op::Delete { id, .. }
            | Op::Clear { id, .. }
            | Op::OpenCursor { id, .. }
            | Op::Continue { id, .. }
            | Op::Advance { id, .. }
            | Op::CursorUpdate { id, .. }
            | Op::ReadAhead { id, .. }
            | Op::SyncCursor { id, .. }
            | Op::CursorDelete { id, .. } => Some(*id),
        }
    }
}

impl Worker {
    /// Whether `op` may run on the thread that places it: it never waits for a lock or a
    /// disk flush and touches one record or a few. Declaring a transaction; beginning one
    /// (which runs the ops held for it) when at most [`HELD_INLINE`] are held and each may run
    /// so too: a readonly one (its SQLite read transaction;
    /// a reader connection is opened when none is free), or on a SQLite file a readwrite one,
    /// which is tried without waiting for the write lock (see [`Connection::run_inline`]);
    /// `get` and `getKey`; on a SQLite file, a `put` of a small value (see [`is_small`]),
    /// a `getAll` with a count of at most [`INLINE_ROWS`], opening a cursor, a `continue`
    /// returning and an `advance` passing at most [`INLINE_ROWS`] rows;
    /// committing or aborting a readonly transaction (ending its read transaction) or one
    /// that never began; committing a readwrite one that commits quickly (see
    /// [`Worker::commits_quickly`]).
    fn runs_inline(&self, op: &Op) -> bool {
        match op {
            Op::Declare { .. } => true,
            Op::Begin { tx, mode, .. } => {
                (*mode == TransactionMode::ReadOnly
                    || *mode == TransactionMode::ReadWrite && self.on_sqlite_file())
                    && self.held.get(tx).map_or(true, |ops| {
                        ops.len() <= HELD_INLINE && ops.iter().all(|o| self.is_brief(o))
                    })
            }
            other => self.is_brief(other),
        }
    }

    /// See [`Worker::runs_inline`]: the ops other than a transaction's declaration and begin
    /// that may run on Node's thread.
    fn is_brief(&self, op: &Op) -> bool {
        match op {
            Op::Read {
                kind: ReadKind::Get | ReadKind::GetKey,
                ..
            } => true,
            Op::Read {
                kind: ReadKind::GetAll | ReadKind::GetAllKeys | ReadKind::GetAllRecords,
                count: Some(count),
                ..
            } => self.on_sqlite_file() && (1..=INLINE_ROWS).contains(count),
            // Its transaction holds the write lock since it began; a server's write is a
            // round trip.
            Op::Put { value, .. } => self.on_sqlite_file() && is_small(value),
            // A seek to the cursor's first record or to its next, and a few rows beyond it.
            Op::OpenCursor { .. } => self.on_sqlite_file(),
            Op::Continue { batch, .. } => self.on_sqlite_file() && *batch <= INLINE_ROWS,
            Op::Advance { count, batch, .. } => {
                self.on_sqlite_file() && *count <= INLINE_ROWS && *batch <= INLINE_ROWS
            }
            Op::Commit { tx, .. } => {
                self.held.contains_key(tx)
                    || self.txs.get(tx).map_or(true, |t| {
                        t.mode() == TransactionMode::ReadOnly || self.commits_quickly(*tx, t)
                    })
            }
            Op::Abort { tx, .. } => {
                self.held.contains_key(tx)
                    || self
                        .txs
                        .get(tx)
                        .map_or(true, |t| t.mode() == TransactionMode::ReadOnly)
            }
            _ => false,
        }
    }

    /// Whether the connection's database is a SQLite file (not on a server, where every
    /// statement is a round trip).
    fn on_sqlite_file(&self) -> bool {
        self.factory.url().is_none()
    }

    /// Whether readwrite transaction `tx` commits without waiting for a lock or a disk flush
    /// when its commit defers the checkpoint: relaxed durability (the commit appends to
    /// SQLite's log without flushing it), a SQLite file (a server's commit is a round trip), at
    /// most one record of at most [`QUICK_WRITE_BYTES`] written, and fewer than
    /// [`DEFERRED_CHECKPOINTS`] commits deferred their checkpoint since the last plain one. Its
    /// write lock is held since it began, so the commit waits for no other connection.
    fn commits_quickly(&self, tx: u32, t: &Transaction) -> bool {
        t.mode() == TransactionMode::ReadWrite
            && t.durability() == Durability::Relaxed
            && self.on_sqlite_file()
            && self.written.get(&tx).map_or(true, |n| *n <= 1)
            && self.deferred_checkpoints < DEFERRED_CHECKPOINTS
    }

    /// Counts the records `op` is about to write, for [`Worker::commits_quickly`]. A value
    /// larger than [`QUICK_WRITE_BYTES`], a deletion of a range and `clear` count as two:
    /// their commit may have many pages to copy into SQLite's log.
    fn count_writes(&mut self, op: &Op) {
        let weight = |value: &Value| if is_small(value) { 1 } else { 2 };
        let (tx, records) = match op {
            Op::Put { tx, value, .. } => (*tx, weight(value)),
            Op::Delete { tx, .. } | Op::Clear { tx, .. } => (*tx, 2),
            Op::CursorUpdate { cursor, value, .. } => match self.cursors.get(cursor) {
                Some(c) => (c.tx, weight(value)),
                None => return,
            },
            Op::CursorDelete { cursor, .. } => match self.cursors.get(cursor) {
                Some(c) => (c.tx, 1),
                None => return,
            },
            _ => return,
        };
        let n = self.written.entry(tx).or_insert(0);
        *n = n.saturating_add(records);
    }

    /// Runs `op`, or holds it while its transaction waits to begin; `Begin` runs the held
    /// ops after it, and `Abort` of a transaction that never began fails them with
    /// `AbortError`. Returns `false` on `Close`.
    fn handle(&mut self, op: Op, replies: &mut Vec<Reply>) -> bool {
        if let Op::Declare { tx } = op {
            self.held.insert(tx, Vec::new());
            return true;
        }
        if let Some(tx) = op.waits_for() {
            if let Some(held) = self.held.get_mut(&tx) {
                if let Op::Abort { id, .. } = op {
                    let held = self.held.remove(&tx).unwrap_or_default();
                    for h in held {
                        if let Some(hid) = h.id() {
                            replies.push(Reply {
                                id: hid,
                                result: Err(Error::Abort("the transaction was aborted".into())),
                            });
                        }
                    }
                    replies.push(Reply {
                        id,
                        result: Ok(Payload::None),
                    });
                } else {
                    held.push(op);
                }
                return true;
            }
        }
        let begun = match &op {
            Op::Begin { tx, .. } => Some(*tx),
            _ => None,
        };
        match self.run(op) {
            Some(reply) => {
                let ok = reply.result.is_ok();
                replies.push(reply);
                if let Some(tx) = begun {
                    let held = self.held.remove(&tx).unwrap_or_default();
                    for h in held {
                        if ok {
                            if let Some(r) = self.run(h) {
                                replies.push(r);
                            }
                        } else if let Some(hid) = h.id() {
                            replies.push(Reply {
                                id: hid,
                                result: Err(Error::Abort("the transaction could not start".into())),
                            });
                        }
                    }
                }
                true
            }
            None => false,
        }
    }

    fn tx(&self, id: u32) -> Result<&Transaction, Error> {
        self.txs.get(&id).ok_or_else(inactive)
    }

    fn run(&mut self, op: Op) -> Option<Reply> {
        self.count_writes(&op);
        let (id, result) = match op {
            Op::Close | Op::Declare { .. } => return None,
            Op::Open {
                id,
                tx,
                name,
                version,
            } => (id, self.open(tx, name, version)),
            Op::Begin {
                id,
                tx,
                scope,
                mode,
                durability,
            } => (id, self.begin(tx, &scope, mode, durability)),
            Op::Commit {
                id,
                tx,
                defer_checkpoint,
            } => (id, self.commit(tx, defer_checkpoint)),
            Op::Abort { id, tx } => (
                id,
                self.end(tx).map(|t| {
                    t.abort();
                    Payload::None
                }),
            ),
            Op::CreateStore {
                id,
                tx,
                name,
                key_path,
                auto_increment,
            } => (
                id,
                self.tx(tx).and_then(|t| {
                    t.create_object_store(&name, key_path, auto_increment)
                        .map(|_| Payload::None)
                }),
            ),
            Op::DeleteStore { id, tx, name } => (
                id,
                self.tx(tx)
                    .and_then(|t| t.delete_object_store(&name).map(|()| Payload::None)),
            ),
            Op::RenameStore {
                id,
                tx,
                name,
                new_name,
            } => (
                id,
                self.tx(tx).and_then(|t| {
                    t.object_store(&name)?
                        .rename(&new_name)
                        .map(|()| Payload::None)
                }),
            ),
            Op::CreateIndex {
                id,
                tx,
                store,
                name,
                key_path,
                unique,
                multi_entry,
            } => (
                id,
                self.tx(tx).and_then(|t| {
                    t.object_store(&store)?
                        .create_index(&name, key_path, unique, multi_entry)
                        .map(|_| Payload::None)
                }),
            ),
            Op::DeleteIndex {
                id,
                tx,
                store,
                name,
            } => (
                id,
                self.tx(tx).and_then(|t| {
                    t.object_store(&store)?
                        .delete_index(&name)
                        .map(|()| Payload::None)
                }),
            ),
            Op::RenameIndex {
                id,
                tx,
                store,
                name,
                new_name,
            } => (
                id,
                self.tx(tx).and_then(|t| {
                    t.object_store(&store)?
                        .index(&name)?
                        .rename(&new_name)
                        .map(|()| Payload::None)
                }),
            ),
            Op::Put {
                id,
                tx,
                store,
                value,
                key,
                no_overwrite,
            } => (
                id,
                self.tx(tx).and_then(|t| {
                    let s = t.object_store(&store)?;
                    let key = if no_overwrite {
                        s.add(value, key)?
                    } else {
                        s.put(value, key)?
                    };
                    Ok(Payload::Key(key))
                }),
            ),
            Op::Read {
                id,
                tx,
                store,
                index,
                kind,
                range,
                count,
                direction,
            } => (
                id,
                self.tx(tx).and_then(|t| {
                    read(
                        t,
                        &store,
                        index.as_ref(),
                        kind,
                        range,
                        Query {
                            range: None,
                            count: count.filter(|n| *n > 0),
                            direction,
                        },
                    )
                }),
            ),
            Op::Delete {
                id,
                tx,
                store,
                range,
            } => (
                id,
                self.tx(tx).and_then(|t| {
                    t.object_store(&store)?
                        .delete(range)
                        .map(|()| Payload::None)
                }),
            ),
            Op::Clear { id, tx, store } => (
                id,
                self.tx(tx)
                    .and_then(|t| t.object_store(&store)?.clear().map(|()| Payload::None)),
            ),
            Op::OpenCursor {
                id,
                tx,
                cursor,
                store,
                index,
                range,
                direction,
                key_only,
            } => (
                id,
                self.open_cursor(
                    tx,
                    cursor,
                    &store,
                    index.as_ref(),
                    range,
                    direction,
                    key_only,
                ),
            ),
            Op::Continue {
                id,
                cursor,
                key,
                primary_key,
                skipped,
                batch,
            } => (
                id,
                self.step(cursor, skipped, batch, |c, t| match (&key, &primary_key) {
                    (Some(k), Some(p)) => c.continue_primary_key(t, k, p),
                    _ => c.continue_key(t, key.as_ref()),
                }),
            ),
            Op::Advance {
                id,
                cursor,
                count,
                skipped,
                batch,
            } => (
                id,
                self.step(cursor, skipped, batch, |c, t| c.advance(t, count)),
            ),
            Op::ReadAhead { id, cursor, batch } => {
                (id, self.with_cursor(cursor, |c, t| c.read_more(t, batch)))
            }
            Op::SyncCursor {
                id,
                cursor,
                skipped,
            } => (
                id,
                self.with_cursor(cursor, |c, t| {
                    c.catch_up(t, skipped).map(|()| Payload::None)
                }),
            ),
            Op::CursorUpdate { id, cursor, value } => (
                id,
                self.with_cursor(cursor, |c, t| c.cursor.update(t, value).map(Payload::Key)),
            ),
            Op::CursorDelete { id, cursor } => (
                id,
                self.with_cursor(cursor, |c, t| c.cursor.delete(t).map(|()| Payload::None)),
            ),
        };
        Some(Reply { id, result })
    }

    fn open(&mut self, tx: u32, name: Utf16String, version: u64) -> Result<Payload, Error> {
        let events = self.events.clone();
        let (db, upgrade) = self
            .factory
            .begin_upgrade_with(name, version, &mut |change| {
                (events.send)(Event::Blocked(*change))
            })?;
        let events = self.events.clone();
        db.on_version_change(move |change| events.version_change(*change));
        let (old_version, stores) = match upgrade {
            Some((t, old)) => {
                let stores = schema_of(&t)?;
                self.txs.insert(tx, t);
                (Some(old), stores)
            }
            None => {
                let t =
                    db.transaction_over_all_stores(TransactionMode::ReadOnly, Durability::Default)?;
                let stores = schema_of(&t)?;
                t.abort();
                (None, stores)
            }
        };
        self.db = Some(db);
        self.version = version;
        Ok(Payload::Opened {
            old_version,
            version,
            stores,
        })
    }

    fn begin(
        &mut self,
        tx: u32,
        scope: &[Utf16String],
        mode: TransactionMode,
        durability: Durability,
    ) -> Result<Payload, Error> {
        let db = self
            .db
            .as_ref()
            .ok_or_else(|| Error::InvalidState("the connection is not open".into()))?;
        let t = match self.started.take() {
            Some((started, t)) if started == tx => t?,
            _ => db.transaction_with_durability(scope, mode, durability)?,
        };
        // Beginning read the stored version. Where upgrades cannot wait for this connection
        // (platforms without the cross-process lock), another process may have upgraded the
        // database: this connection's object stores and indexes are then outdated.
        if db.version() != self.version {
            t.abort();
            return Err(Error::InvalidState(format!(
                "database {:?} was upgraded from version {} to {} by another connection; this connection is outdated: close it and open the database again",
                db.name(),
                self.version,
                db.version()
            )));
        }
        self.txs.insert(tx, t);
        Ok(Payload::None)
    }

    /// Takes transaction `tx` out of the running ones, with its cursors.
    fn end(&mut self, tx: u32) -> Result<Transaction, Error> {
        self.cursors.retain(|_, c| c.tx != tx);
        self.written.remove(&tx);
        self.txs.remove(&tx).ok_or_else(inactive)
    }

    /// Commits transaction `tx`; a readwrite one with `defer_checkpoint` leaves the
    /// checkpoint to the next plain commit.
    fn commit(&mut self, tx: u32, defer_checkpoint: bool) -> Result<Payload, Error> {
        let t = self.end(tx)?;
        if t.mode() == TransactionMode::ReadOnly {
            t.commit()?;
        } else if defer_checkpoint {
            self.deferred_checkpoints += 1;
            t.commit_without_checkpoint()?;
        } else {
            self.deferred_checkpoints = 0;
            t.commit()?;
        }
        Ok(Payload::None)
    }

    #[allow(clippy::too_many_arguments)]
    fn open_cursor(
        &mut self,
        tx: u32,
        id: u32,
        store: &Utf16String,
        index: Option<&Utf16String>,
        range: Option<KeyRange>,
        direction: CursorDirection,
        key_only: bool,
    ) -> Result<Payload, Error> {
        let t = self.tx(tx)?;
        let s = t.object_store(store)?;
        let inject = injection_path(&s)?;
        let cursor = match (index, key_only) {
            (Some(n), false) => s.index(n)?.open_cursor(range, direction)?,
            (Some(n), true) => s.index(n)?.open_key_cursor(range, direction)?,
            (None, false) => s.open_cursor(range, direction)?,
            (None, true) => s.open_key_cursor(range, direction)?,
        };
        let mut open = OpenCursor {
            tx,
            cursor,
            inject,
            scout: None,
            failure: None,
        };
        let rows = open.rows(t, 1)?;
        self.cursors.insert(id, open);
        Ok(rows)
    }

    fn with_cursor(
        &mut self,
        id: u32,
        f: impl FnOnce(&mut OpenCursor, &Transaction) -> indexa::Result<Payload>,
    ) -> Result<Payload, Error> {
        let c = self.cursors.get_mut(&id).ok_or_else(inactive)?;
        let t = self.txs.get(&c.tx).ok_or_else(inactive)?;
        f(c, t)
    }

    /// Catches cursor `id` up over `skipped` rows, moves it with `f`, and reads `batch` rows
    /// from there.
    fn step(
        &mut self,
        id: u32,
        skipped: u32,
        batch: u32,
        f: impl FnOnce(&mut Cursor, &Transaction) -> indexa::Result<()>,
    ) -> Result<Payload, Error> {
        self.with_cursor(id, |c, t| {
            c.catch_up(t, skipped)?;
            f(&mut c.cursor, t)?;
            c.rows(t, batch)
        })
    }
}

fn read(
    t: &Transaction,
    store: &Utf16String,
    index: Option<&Utf16String>,
    kind: ReadKind,
    range: Option<KeyRange>,
    query: Query,
) -> Result<Payload, Error> {
    let s = t.object_store(store)?;
    let inject = injection_path(&s)?;
    let query = Query {
        range: range.clone(),
        ..query
    };
    let single = |r: Option<KeyRange>| -> indexa::Result<KeyRange> {
        r.ok_or_else(|| Error::Data("a key or key range is required".into()))
    };
    match index {
        None => match kind {
            ReadKind::Get => {
                let range = single(range)?;
                wire::get_reply(|t| s.get_with(range, t), inject.as_ref()).map(Payload::Encoded)
            }
            ReadKind::GetKey => Ok(Payload::MaybeKey(s.get_key(single(range)?)?)),
            ReadKind::GetAll => wire::values_reply(|t| s.get_all_with(query, t), inject.as_ref())
                .map(|(bytes, count)| Payload::Values(bytes, count)),
            ReadKind::GetAllKeys => Ok(Payload::Keys(s.get_all_keys(query)?)),
            ReadKind::GetAllRecords => {
                wire::records_reply(|t| s.get_all_records_with(query, t), inject.as_ref())
                    .map(|(bytes, count)| Payload::Values(bytes, count))
            }
            ReadKind::Count => Ok(Payload::Count(s.count(range)?)),
        },
        Some(n) => {
            let ix = s.index(n)?;
            match kind {
                ReadKind::Get => {
                    let range = single(range)?;
                    wire::get_reply(|t| ix.get_with(range, t), inject.as_ref())
                        .map(Payload::Encoded)
                }
                ReadKind::GetKey => Ok(Payload::MaybeKey(ix.get_key(single(range)?)?)),
                ReadKind::GetAll => {
                    wire::values_reply(|t| ix.get_all_with(query, t), inject.as_ref())
                        .map(|(bytes, count)| Payload::Values(bytes, count))
                }
                ReadKind::GetAllKeys => Ok(Payload::Keys(ix.get_all_keys(query)?)),
                ReadKind::GetAllRecords => {
                    wire::records_reply(|t| ix.get_all_records_with(query, t), inject.as_ref())
                        .map(|(bytes, count)| Payload::Values(bytes, count))
                }
                ReadKind::Count => Ok(Payload::Count(ix.count(range)?)),
            }
        }
    }
}

/// The most threads the pool runs; 32 connections can wait inside the engine at once while
/// the others are still served.
pub const MAX_THREADS: usize = 32;

/// The most ops held for a transaction that its begin may run on Node's thread (see
/// [`Worker::runs_inline`]): a transaction's first few requests, not a burst of them.
pub const HELD_INLINE: usize = 8;

/// How many ops a pool thread runs for one connection before serving the next one.
pub const OPS_PER_TURN: usize = 4096;

/// Replies are sent at the latest when they weigh this much (see [`Reply::weight`]): a
/// cursor's read-ahead batch of up to 256 rows goes alone, `get`s go by about 128.
pub const REPLY_WEIGHT: usize = 256;

/// The most time Node's thread spends running ops itself within one task that dispatches a
/// batch of replies (see [`replies_task_begins`]), and within one [`INLINE_WINDOW`] outside of
/// those.
pub const INLINE_BUDGET: Duration = Duration::from_micros(1000);

/// The most records a `getAll` (or `getAllKeys`, `getAllRecords`) run on Node's thread asks
/// for, the most rows a cursor step run there returns and the most records an `advance` run
/// there passes (see [`Worker::runs_inline`]). A cursor step that asks for more is part of a
/// scan, whose later batches are read on a pool thread while Node's thread steps through the
/// rows it has.
pub const INLINE_ROWS: u32 = 4;

/// Ops run on Node's thread only while fewer batches of replies than this are on their way
/// there (see [`InFlight`]): a transaction's begin and its first request both run there, but a
/// burst of requests placed at once, or from the events of one batch, goes to the pool, whose
/// replies come in batches, instead of each op run here sending its reply alone (a delivery,
/// and a task on Node's thread, per op).
pub const INLINE_IN_FLIGHT: usize = 2;

/// The most time Node's thread spends running ops itself within one [`INLINE_WINDOW`], over
/// all its tasks: Node runs the queued calls of a thread-safe function one after the other
/// (up to 1,000) before it polls for I/O again, so the budget per task alone would not bound
/// how long a chain of replies, each placing the next op, keeps the event loop from its I/O.
pub const INLINE_WINDOW_BUDGET: Duration = Duration::from_micros(3000);

/// See [`INLINE_BUDGET`] and [`INLINE_WINDOW_BUDGET`].
pub const INLINE_WINDOW: Duration = Duration::from_millis(4);

/// The largest value, roughly as stored (see [`is_small`]), whose write leaves its
/// transaction's relaxed commit free to run on Node's thread: copying 64 KiB of pages into
/// SQLite's log takes some tens of microseconds, far below the inline budget.
pub const QUICK_WRITE_BYTES: usize = 64 * 1024;

/// Whether `value` takes at most [`QUICK_WRITE_BYTES`], counting two bytes per UTF-16 code
/// unit, the bytes of binary data, eight per number or date, and one per other value, and
/// property names as strings. Stops as soon as the count passes the bound, so a huge value
/// costs no more to refuse than a small one to accept.
fn is_small(value: &Value) -> bool {
    fn fits(value: &Value, left: &mut usize) -> bool {
        let own = match value {
            Value::String(s) => 2 * s.len(),
            Value::Binary(b) => b.len(),
            Value::Number(_) | Value::Date(_) => 8,
            _ => 1,
        };
        take(left, own)
            && match value {
                Value::Array(items) => items.iter().all(|v| fits(v, left)),
                Value::Object(properties) => properties
                    .iter()
                    .all(|(name, v)| take(left, 2 * name.len()) && fits(v, left)),
                _ => true,
            }
    }
    fn take(left: &mut usize, n: usize) -> bool {
        match left.checked_sub(n) {
            Some(rest) => {
                *left = rest;
                true
            }
            None => false,
        }
    }
    // Recursion is as deep as the value, which conversion from JavaScript bounds.
    fits(value, &mut { QUICK_WRITE_BYTES })
}

/// How many readwrite commits of a connection in a row may run on Node's thread, deferring
/// SQLite's checkpoint; the next one runs on the pool as a plain commit, which checkpoints
/// when the log has grown past SQLite's threshold (1,000 pages). A one-record commit adds a
/// few pages, so the log outgrows the threshold by at most a few hundred.
pub const DEFERRED_CHECKPOINTS: usize = 64;

/// Time spent on inline ops in the current window, and in the current task.
#[derive(Clone, Copy)]
struct InlineSpent {
    window_began: Instant,
    in_window: Duration,
    in_task: Duration,
}

thread_local! {
    /// This thread's current window and what it spent on inline ops.
    static INLINE_SPENT: Cell<Option<InlineSpent>> = const { Cell::new(None) };
}

/// Whether this thread may still run an op itself in the current window and task.
fn inline_budget_left(now: Instant) -> bool {
    match INLINE_SPENT.get() {
        Some(spent) if now.duration_since(spent.window_began) < INLINE_WINDOW => {
            spent.in_task < INLINE_BUDGET && spent.in_window < INLINE_WINDOW_BUDGET
        }
        _ => {
            INLINE_SPENT.set(Some(InlineSpent {
                window_began: now,
                in_window: Duration::ZERO,
                in_task: Duration::ZERO,
            }));
            true
        }
    }
}

/// A batch of replies is about to be turned into JavaScript values and dispatched on this
/// thread: a task of its own (a thread-safe function's call), so the ops its event handlers
/// place get a whole [`INLINE_BUDGET`], within what is left of [`INLINE_WINDOW_BUDGET`].
pub fn replies_task_begins() {
    if let Some(spent) = INLINE_SPENT.get() {
        INLINE_SPENT.set(Some(InlineSpent {
            in_task: Duration::ZERO,
            ..spent
        }));
    }
}

fn charge_inline(spent: Duration) {
    if let Some(before) = INLINE_SPENT.get() {
        INLINE_SPENT.set(Some(InlineSpent {
            in_window: before.in_window + spent,
            in_task: before.in_task + spent,
            ..before
        }));
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Where a connection's replies go.
type SendReplies = Box<dyn Fn(Vec<Reply>) + Send + Sync>;

/// One connection's engine work: its worker and the ops waiting for it.
pub struct Connection {
    queue: Mutex<Queue>,
    worker: Mutex<Option<Worker>>,
    send: SendReplies,
    in_flight: Arc<InFlight>,
    events: Arc<Events>,
}

/// A connection's batches of replies sent to Node's thread and not yet taken there (see
/// [`INLINE_IN_FLIGHT`]).
#[derive(Default)]
pub struct InFlight(AtomicUsize);

impl InFlight {
    /// A batch of replies reached Node's thread.
    pub fn delivered(&self) {
        self.0.fetch_sub(1, Ordering::AcqRel);
    }

    fn sent(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }

    /// Whether fewer than [`INLINE_IN_FLIGHT`] batches are on their way.
    fn allow_inline(&self) -> bool {
        self.0.load(Ordering::Acquire) < INLINE_IN_FLIGHT
    }
}

struct Queue {
    ops: VecDeque<Op>,
    /// In the pool's ready queue or being run by a pool thread.
    scheduled: bool,
    /// `Close` was placed: later ops are refused.
    closed: bool,
}

impl Connection {
    /// A connection of `factory` whose replies go to `send`, in batches, each counted in
    /// `in_flight` until its [`InFlight::delivered`].
    pub fn new(
        factory: Arc<Factory>,
        send: impl Fn(Vec<Reply>) + Send + Sync + 'static,
        in_flight: Arc<InFlight>,
        events: Arc<Events>,
    ) -> Arc<Connection> {
        Arc::new(Connection {
            queue: Mutex::new(Queue {
                ops: VecDeque::new(),
                scheduled: false,
                closed: false,
            }),
            worker: Mutex::new(Some(Worker {
                factory,
                events: events.clone(),
                db: None,
                version: 0,
                txs: HashMap::new(),
                written: HashMap::new(),
                deferred_checkpoints: 0,
                held: HashMap::new(),
                started: None,
                cursors: HashMap::new(),
            })),
            send: Box::new(send),
            in_flight,
            events,
        })
    }

    /// Sends a batch of replies to Node's thread.
    fn send_replies(&self, replies: Vec<Reply>) {
        self.in_flight.sent();
        (self.send)(replies);
    }

    /// Its events to the JavaScript layer.
    pub fn events(&self) -> &Events {
        &self.events
    }

    /// Places `op` after the ops placed before; `false` once the connection was closed.
    pub fn submit(self: &Arc<Self>, op: Op) -> bool {
        let mut q = lock(&self.queue);
        if q.closed {
            return false;
        }
        if matches!(op, Op::Close) {
            q.closed = true;
            self.events.update(|st| st.closing = true);
        }
        let op = if !q.scheduled && q.ops.is_empty() {
            match self.run_inline(op) {
                Some(op) => op,
                None => return true,
            }
        } else {
            op
        };
        q.ops.push_back(op);
        if !q.scheduled {
            q.scheduled = true;
            drop(q);
            pool().schedule(self.clone());
        }
        true
    }

    /// Runs `op` on this thread when the worker is free, fewer than [`INLINE_IN_FLIGHT`]
    /// batches of replies are on their way here, and it may (see [`Worker::runs_inline`] and
    /// [`INLINE_BUDGET`]); else gives it back. Called with the
    /// queue locked, empty and not scheduled, so no pool thread runs this connection and the
    /// reply follows every earlier one.
    fn run_inline(&self, op: Op) -> Option<Op> {
        let mut slot = match self.worker.try_lock() {
            Ok(slot) => slot,
            Err(TryLockError::WouldBlock | TryLockError::Poisoned(_)) => return Some(op),
        };
        let Some(worker) = slot.as_mut() else {
            return Some(op);
        };
        let started = Instant::now();
        if !self.in_flight.allow_inline()
            || !worker.runs_inline(&op)
            || !inline_budget_left(started)
        {
            return Some(op);
        }
        // A readwrite transaction starts here only when it need not wait for the write lock
        // (another connection's transaction, of this process or another); else on the pool.
        if let Op::Begin {
            tx,
            scope,
            mode: TransactionMode::ReadWrite,
            durability,
            ..
        } = &op
        {
            let Some(db) = worker.db.as_ref() else {
                return Some(op);
            };
            match db
                .try_transaction_with_durability(scope, TransactionMode::ReadWrite, *durability)
                .transpose()
            {
                Some(t) => worker.started = Some((*tx, t)),
                None => return Some(op),
            }
        }
        // A commit of a running transaction that may run here commits quickly (a commit held
        // for a transaction that has not begun runs later, on the pool).
        let op = match op {
            Op::Commit { id, tx, .. } if worker.txs.contains_key(&tx) => Op::Commit {
                id,
                tx,
                defer_checkpoint: true,
            },
            other => other,
        };
        let mut replies = Vec::new();
        worker.handle(op, &mut replies);
        charge_inline(started.elapsed());
        drop(slot);
        if !replies.is_empty() {
            self.send_replies(replies);
        }
        None
    }

    /// Runs waiting ops on a pool thread, one turn's worth.
    fn run_turn(self: &Arc<Self>) {
        let mut slot = lock(&self.worker);
        let mut replies = Vec::new();
        let mut weight = 0;
        for _ in 0..OPS_PER_TURN {
            let op = {
                let mut q = lock(&self.queue);
                match q.ops.pop_front() {
                    Some(op) => op,
                    // The replies go before the connection counts as idle: an op run inline
                    // after that must not overtake them.
                    None if !replies.is_empty() => {
                        drop(q);
                        self.send_replies(std::mem::take(&mut replies));
                        weight = 0;
                        continue;
                    }
                    None => {
                        q.scheduled = false;
                        return;
                    }
                }
            };
            let Some(worker) = slot.as_mut() else {
                continue;
            };
            let before = replies.len();
            if !worker.handle(op, &mut replies) {
                // Unfinished transactions abort when dropped, before the connection goes.
                if let Some(mut worker) = slot.take() {
                    worker.cursors.clear();
                    worker.txs.clear();
                    if let Some(db) = worker.db.take() {
                        db.close();
                    }
                }
                self.events.update(|st| st.closed = true);
            }
            weight += replies[before..].iter().map(Reply::weight).sum::<usize>();
            if weight >= REPLY_WEIGHT {
                self.send_replies(std::mem::take(&mut replies));
                weight = 0;
            }
        }
        drop(slot);
        if !replies.is_empty() {
            self.send_replies(replies);
        }
        // Others get a turn first.
        pool().schedule(self.clone());
    }
}

/// Whether [`Pool::schedule`] starts a thread, with `ready` connections waiting (the one just
/// queued among them), `idle` threads waiting for work and `threads` in all: when the idle
/// threads cannot take every ready connection, below [`MAX_THREADS`]. Each idle thread takes one
/// connection, and one already woken for an earlier connection still counts as idle until it
/// takes it, so "no idle thread" alone would leave the later connection waiting for a busy
/// thread, which may be waiting inside the engine for the very lock that connection's
/// transaction holds (SQLite's write lock, until its busy timeout ends).
fn needs_thread(ready: usize, idle: usize, threads: usize) -> bool {
    ready > idle && threads < MAX_THREADS
}

/// The threads that run connections' work.
struct Pool {
    state: Mutex<PoolState>,
    work: Condvar,
}

struct PoolState {
    ready: VecDeque<Arc<Connection>>,
    threads: usize,
    idle: usize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        state: Mutex::new(PoolState {
            ready: VecDeque::new(),
            threads: 0,
            idle: 0,
        }),
        work: Condvar::new(),
    })
}

impl Pool {
    fn schedule(&'static self, conn: Arc<Connection>) {
        let mut st = lock(&self.state);
        st.ready.push_back(conn);
        if needs_thread(st.ready.len(), st.idle, st.threads) {
            let started = std::thread::Builder::new()
                .name("indexa-pool".into())
                .spawn(move || self.serve());
            // Without a new thread the running ones still get to the work.
            if started.is_ok() {
                st.threads += 1;
            }
        }
        // A new thread looks for work before it waits; a notification is a system call even
        // when no thread waits.
        let wake = st.idle > 0;
        drop(st);
        if wake {
            self.work.notify_one();
        }
    }

    fn serve(&self) {
        loop {
            let conn = {
                let mut st = lock(&self.state);
                loop {
                    if let Some(conn) = st.ready.pop_front() {
                        break conn;
                    }
                    st.idle += 1;
                    st = self
                        .work
                        .wait(st)
                        .unwrap_or_else(|poisoned| poisoned.into_inner());
                    st.idle -= 1;
                }
            };
            conn.run_turn();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_starts_when_the_idle_ones_cannot_take_every_ready_connection() {
        // One idle thread, woken for the first of two connections queued back to back: the
        // second gets a thread of its own.
        assert!(!needs_thread(1, 1, 3));
        assert!(needs_thread(2, 1, 3));
        assert!(needs_thread(1, 0, 3));
        assert!(!needs_thread(2, 2, 3));
        assert!(!needs_thread(2, 1, MAX_THREADS));
    }

    fn read(tx: u32, kind: ReadKind) -> Op {
        read_counted(tx, kind, None)
    }

    fn read_counted(tx: u32, kind: ReadKind, count: Option<u32>) -> Op {
        Op::Read {
            id: 9,
            tx,
            store: "s".into(),
            index: None,
            kind,
            range: None,
            count,
            direction: CursorDirection::Next,
        }
    }

    fn begin(tx: u32, mode: TransactionMode) -> Op {
        begin_with(tx, mode, Durability::Default)
    }

    fn begin_with(tx: u32, mode: TransactionMode, durability: Durability) -> Op {
        Op::Begin {
            id: 3,
            tx,
            scope: vec!["s".into()],
            mode,
            durability,
        }
    }

    fn commit(id: u32, tx: u32) -> Op {
        Op::Commit {
            id,
            tx,
            defer_checkpoint: false,
        }
    }

    fn put(tx: u32, key: f64) -> Op {
        put_value(tx, key, Value::Null)
    }

    fn put_value(tx: u32, key: f64, value: Value) -> Op {
        Op::Put {
            id: 4,
            tx,
            store: "s".into(),
            value,
            key: Some(Key::Number(key)),
            no_overwrite: false,
        }
    }

    /// A worker of a temporary factory, with database "db" open and its object store "s".
    fn worker_with_store() -> Worker {
        let factory = Arc::new(Factory::temporary().unwrap());
        let mut w = Worker {
            factory,
            events: Events::new(|_| {}),
            db: None,
            version: 0,
            txs: HashMap::new(),
            written: HashMap::new(),
            deferred_checkpoints: 0,
            held: HashMap::new(),
            started: None,
            cursors: HashMap::new(),
        };
        let mut replies = Vec::new();
        w.handle(
            Op::Open {
                id: 1,
                tx: 1,
                name: "db".into(),
                version: 1,
            },
            &mut replies,
        );
        w.handle(
            Op::CreateStore {
                id: 2,
                tx: 1,
                name: "s".into(),
                key_path: None,
                auto_increment: false,
            },
            &mut replies,
        );
        w.handle(commit(3, 1), &mut replies);
        assert!(replies.iter().all(|r| r.result.is_ok()));
        w
    }

    #[test]
    fn a_relaxed_commit_of_one_record_runs_inline_and_every_so_often_one_checkpoints() {
        let mut w = worker_with_store();
        let mut replies = Vec::new();
        let relaxed = |tx| begin_with(tx, TransactionMode::ReadWrite, Durability::Relaxed);

        // One record written: inline. Two, or a deletion or clear that may write many: not.
        w.handle(relaxed(10), &mut replies);
        assert!(w.runs_inline(&commit(11, 10)));
        w.handle(put(10, 1.0), &mut replies);
        assert!(w.runs_inline(&commit(11, 10)));
        w.handle(put(10, 2.0), &mut replies);
        assert!(!w.runs_inline(&commit(11, 10)));
        w.handle(commit(11, 10), &mut replies);
        // One record larger than QUICK_WRITE_BYTES: not inline.
        w.handle(relaxed(16), &mut replies);
        w.handle(
            put_value(16, 9.0, Value::Binary(vec![0; QUICK_WRITE_BYTES + 1])),
            &mut replies,
        );
        assert!(!w.runs_inline(&commit(17, 16)));
        w.handle(commit(17, 16), &mut replies);
        for op in [
            Op::Delete {
                id: 12,
                tx: 12,
                store: "s".into(),
                range: KeyRange::only(Key::Number(1.0)),
            },
            Op::Clear {
                id: 12,
                tx: 12,
                store: "s".into(),
            },
        ] {
            w.handle(relaxed(12), &mut replies);
            w.handle(op, &mut replies);
            assert!(!w.runs_inline(&commit(13, 12)));
            w.handle(commit(13, 12), &mut replies);
        }
        // Default and strict durability flush at commit: never inline.
        for durability in [Durability::Default, Durability::Strict] {
            w.handle(
                begin_with(14, TransactionMode::ReadWrite, durability),
                &mut replies,
            );
            w.handle(put(14, 3.0), &mut replies);
            assert!(!w.runs_inline(&commit(15, 14)));
            w.handle(commit(15, 14), &mut replies);
        }

        // After DEFERRED_CHECKPOINTS commits deferring the checkpoint, the next is plain.
        for i in 0..=DEFERRED_CHECKPOINTS as u32 {
            let tx = 100 + i;
            w.handle(relaxed(tx), &mut replies);
            w.handle(put(tx, f64::from(i)), &mut replies);
            let inline = w.runs_inline(&commit(1, tx));
            assert_eq!(inline, (i as usize) < DEFERRED_CHECKPOINTS, "commit {i}");
            w.handle(
                Op::Commit {
                    id: 1,
                    tx,
                    defer_checkpoint: inline,
                },
                &mut replies,
            );
        }
        assert_eq!(w.deferred_checkpoints, 0);
        w.handle(relaxed(200), &mut replies);
        w.handle(put(200, 0.5), &mut replies);
        assert!(w.runs_inline(&commit(1, 200)));
        assert!(replies.iter().all(|r| r.result.is_ok()));
    }

    #[test]
    fn a_value_is_small_up_to_quick_write_bytes_counted_as_documented() {
        let binary = |n| Value::Binary(vec![0; n]);
        assert!(is_small(&binary(QUICK_WRITE_BYTES)));
        assert!(!is_small(&binary(QUICK_WRITE_BYTES + 1)));
        // Two bytes per code unit: half as many code units fit.
        let text = |n| Value::String(Utf16String::from("x".repeat(n).as_str()));
        assert!(is_small(&text(QUICK_WRITE_BYTES / 2)));
        assert!(!is_small(&text(QUICK_WRITE_BYTES / 2 + 1)));
        // An array of 8,192 numbers: 1 + 8 × 8,192 = QUICK_WRITE_BYTES + 1.
        let numbers = |n| Value::Array(vec![Value::Number(0.0); n]);
        assert!(is_small(&numbers(QUICK_WRITE_BYTES / 8 - 1)));
        assert!(!is_small(&numbers(QUICK_WRITE_BYTES / 8)));
        // Property names count as strings: one of QUICK_WRITE_BYTES / 2 code units is too big.
        let mut object = indexa::Object::default();
        object.insert(
            Utf16String::from("n".repeat(QUICK_WRITE_BYTES / 2).as_str()),
            Value::Null,
        );
        assert!(!is_small(&Value::Object(object)));
    }

    #[test]
    fn only_brief_ops_that_never_wait_run_inline() {
        let mut w = worker_with_store();
        let mut replies = Vec::new();
        assert!(w.runs_inline(&Op::Declare { tx: 2 }));
        assert!(w.runs_inline(&begin(2, TransactionMode::ReadOnly)));
        // On a SQLite file, tried without waiting for the write lock (see run_inline).
        assert!(w.runs_inline(&begin(2, TransactionMode::ReadWrite)));
        assert!(w.runs_inline(&read(2, ReadKind::Get)));
        assert!(w.runs_inline(&read(2, ReadKind::GetKey)));
        for kind in [
            ReadKind::GetAll,
            ReadKind::GetAllKeys,
            ReadKind::GetAllRecords,
            ReadKind::Count,
        ] {
            assert!(!w.runs_inline(&read(2, kind)));
        }
        // A getAll of at most INLINE_ROWS records (not of all, count 0).
        for kind in [
            ReadKind::GetAll,
            ReadKind::GetAllKeys,
            ReadKind::GetAllRecords,
        ] {
            let counted = |count| read_counted(2, kind, Some(count));
            assert!(w.runs_inline(&counted(1)));
            assert!(w.runs_inline(&counted(INLINE_ROWS)));
            assert!(!w.runs_inline(&counted(INLINE_ROWS + 1)));
            assert!(!w.runs_inline(&counted(0)));
        }
        assert!(w.runs_inline(&put(2, 1.0)));
        let large = Value::Binary(vec![0; QUICK_WRITE_BYTES + 1]);
        assert!(!w.runs_inline(&put_value(2, 1.0, large)));
        assert!(!w.runs_inline(&Op::Close));
        // Opening a cursor, its steps of at most INLINE_ROWS rows and its advances past at
        // most INLINE_ROWS records; not a longer step or advance, or a read ahead.
        assert!(w.runs_inline(&Op::OpenCursor {
            id: 3,
            tx: 2,
            cursor: 1,
            store: "s".into(),
            index: None,
            range: None,
            direction: CursorDirection::Next,
            key_only: false,
        }));
        let step = |batch| Op::Continue {
            id: 4,
            cursor: 1,
            key: Some(Key::Number(7.0)),
            primary_key: None,
            skipped: 0,
            batch,
        };
        assert!(w.runs_inline(&step(1)));
        assert!(w.runs_inline(&step(INLINE_ROWS)));
        assert!(!w.runs_inline(&step(INLINE_ROWS + 1)));
        let advance = |count| Op::Advance {
            id: 5,
            cursor: 1,
            count,
            skipped: 0,
            batch: 1,
        };
        assert!(w.runs_inline(&advance(INLINE_ROWS)));
        assert!(!w.runs_inline(&advance(INLINE_ROWS + 1)));
        assert!(!w.runs_inline(&Op::ReadAhead {
            id: 6,
            cursor: 1,
            batch: 1,
        }));

        // A readonly transaction whose held ops include a longer read begins on the pool.
        w.handle(Op::Declare { tx: 5 }, &mut replies);
        w.handle(read(5, ReadKind::Get), &mut replies);
        assert!(w.runs_inline(&begin(5, TransactionMode::ReadOnly)));
        w.handle(read(5, ReadKind::Count), &mut replies);
        assert!(!w.runs_inline(&begin(5, TransactionMode::ReadOnly)));
        assert!(!w.runs_inline(&begin(5, TransactionMode::ReadWrite)));
        // So does one with more than HELD_INLINE ops held, each of which could run inline.
        w.handle(Op::Declare { tx: 40 }, &mut replies);
        for _ in 0..HELD_INLINE {
            w.handle(put(40, 1.0), &mut replies);
        }
        assert!(w.runs_inline(&begin(40, TransactionMode::ReadWrite)));
        w.handle(put(40, 2.0), &mut replies);
        assert!(!w.runs_inline(&begin(40, TransactionMode::ReadWrite)));

        // Commit and abort run inline for a readonly transaction, not a readwrite one.
        w.handle(begin(6, TransactionMode::ReadOnly), &mut replies);
        assert!(w.runs_inline(&commit(7, 6)));
        assert!(w.runs_inline(&Op::Abort { id: 7, tx: 6 }));
        w.handle(begin(8, TransactionMode::ReadWrite), &mut replies);
        assert!(!w.runs_inline(&commit(9, 8)));
        assert!(!w.runs_inline(&Op::Abort { id: 9, tx: 8 }));
        assert!(replies.iter().all(|r| r.result.is_ok()));
    }

    #[test]
    fn a_versionchange_for_a_connection_whose_close_is_placed_waits_until_it_is_closed() {
        let sent = Arc::new(Mutex::new(0));
        let counted = sent.clone();
        let events = Events::new(move |_| *lock(&counted) += 1);
        events.update(|st| st.closing = true);
        // Taken before the closing thread starts its sleep, so the wait it measures is at
        // least the sleep.
        let start = Instant::now();
        let closer = {
            let events = events.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(100));
                events.update(|st| st.closed = true);
            })
        };
        events.version_change(VersionChange {
            old_version: 1,
            new_version: None,
        });
        let waited = start.elapsed();
        closer.join().unwrap();
        assert!(
            waited >= Duration::from_millis(100),
            "returned after {waited:?}"
        );
        assert_eq!(*lock(&sent), 0);
    }

    /// A transaction's begin and its first request run on the thread that places them; with
    /// INLINE_IN_FLIGHT batches of replies on their way, the next request goes to the pool.
    #[test]
    fn ops_go_to_the_pool_while_replies_are_on_their_way() {
        let factory = Arc::new(Factory::temporary().unwrap());
        let (conn, mut replies) = connection_on(&factory);
        let get = |id| Op::Read {
            id,
            tx: 10,
            store: "s".into(),
            index: None,
            kind: ReadKind::Get,
            range: Some(KeyRange::only(Key::Number(1.0))),
            count: None,
            direction: CursorDirection::Next,
        };
        // The pool thread that ran the setup lets go of the connection.
        while lock(&conn.queue).scheduled {
            std::thread::yield_now();
        }
        conn.submit(Op::Declare { tx: 10 });
        conn.submit(Op::Begin {
            id: 11,
            tx: 10,
            scope: vec!["s".into()],
            mode: TransactionMode::ReadOnly,
            durability: Durability::Default,
        });
        conn.submit(get(12));
        conn.submit(get(13));
        let here = std::thread::current().id();
        assert_eq!(replies.sent_from(11).0, here);
        assert_eq!(replies.sent_from(12).0, here);
        let (pool_thread, result) = replies.sent_from(13);
        assert_ne!(pool_thread, here);
        assert!(matches!(result, Ok(Payload::Encoded(..))));
    }

    /// A connection whose replies go to a channel, opened on `factory` at version 1 with
    /// object store "s" (created when missing).
    fn connection_on(factory: &Arc<Factory>) -> (Arc<Connection>, Replies) {
        let (send, arriving) = std::sync::mpsc::channel::<(std::thread::ThreadId, Vec<Reply>)>();
        let in_flight = Arc::new(InFlight::default());
        let mut replies = Replies {
            arriving,
            arrived: Vec::new(),
            in_flight: in_flight.clone(),
        };
        let send = Mutex::new(send);
        let conn = Connection::new(
            factory.clone(),
            move |batch| {
                let _ = lock(&send).send((std::thread::current().id(), batch));
            },
            in_flight,
            Events::new(|_| {}),
        );
        conn.submit(Op::Open {
            id: 1,
            tx: 1,
            name: "db".into(),
            version: 1,
        });
        let Ok(Payload::Opened { stores, .. }) = replies.of(1) else {
            panic!("not opened");
        };
        if stores.is_empty() {
            conn.submit(Op::CreateStore {
                id: 2,
                tx: 1,
                name: "s".into(),
                key_path: None,
                auto_increment: false,
            });
            assert!(replies.of(2).is_ok());
            conn.submit(commit(3, 1));
            assert!(replies.of(3).is_ok());
        }
        (conn, replies)
    }

    /// A connection's replies as they arrive, kept until asked for.
    struct Replies {
        /// Each batch with the thread that sent it.
        arriving: std::sync::mpsc::Receiver<(std::thread::ThreadId, Vec<Reply>)>,
        arrived: Vec<(std::thread::ThreadId, Reply)>,
        /// Told of each batch as it arrives, as Node's thread does.
        in_flight: Arc<InFlight>,
    }

    impl Replies {
        /// The result of the reply `id` (waits up to a minute for it).
        fn of(&mut self, id: u32) -> Result<Payload, Error> {
            self.sent_from(id).1
        }

        /// The reply `id` with the thread that sent it (waits up to a minute for it).
        fn sent_from(&mut self, id: u32) -> (std::thread::ThreadId, Result<Payload, Error>) {
            loop {
                if let Some(at) = self.arrived.iter().position(|(_, r)| r.id == id) {
                    let (thread, reply) = self.arrived.remove(at);
                    return (thread, reply.result);
                }
                let (thread, batch) = self
                    .arriving
                    .recv_timeout(Duration::from_secs(60))
                    .expect("no reply within a minute");
                self.in_flight.delivered();
                self.arrived.extend(batch.into_iter().map(|r| (thread, r)));
            }
        }
    }

    /// A readwrite transaction placed on Node's thread while another connection's holds the
    /// write lock, of the same factory or of another (as another process would), begins on a
    /// pool thread once the lock is free: Node's thread neither waits for it nor fails.
    #[test]
    fn a_readwrite_begin_waits_on_the_pool_while_another_connection_writes() {
        let factory = Arc::new(Factory::temporary().unwrap());
        let elsewhere = Arc::new(Factory::open_dir(factory.dir()).unwrap());
        let (first, mut first_replies) = connection_on(&factory);
        for other_factory in [&factory, &elsewhere] {
            let (other, mut other_replies) = connection_on(other_factory);
            first.submit(Op::Declare { tx: 10 });
            first.submit(begin_with(
                10,
                TransactionMode::ReadWrite,
                Durability::Relaxed,
            ));
            assert!(first_replies.of(3).is_ok());
            first.submit(put(10, 1.0));
            assert!(first_replies.of(4).is_ok());
            other.submit(Op::Declare { tx: 20 });
            other.submit(begin_with(
                20,
                TransactionMode::ReadWrite,
                Durability::Relaxed,
            ));
            other.submit(put(20, 2.0));
            other.submit(commit(21, 20));
            first.submit(commit(11, 10));
            assert!(first_replies.of(11).is_ok());
            assert!(other_replies.of(3).is_ok());
            assert!(other_replies.of(4).is_ok());
            assert!(other_replies.of(21).is_ok());
            other.submit(Op::Close);
        }
        first.submit(Op::Declare { tx: 30 });
        first.submit(begin(30, TransactionMode::ReadOnly));
        first.submit(read(30, ReadKind::Count));
        assert!(matches!(first_replies.of(9), Ok(Payload::Count(2))));
        first.submit(Op::Close);
    }

    #[test]
    fn inline_budget_holds_within_a_window_and_renews_after_it() {
        let start = Instant::now();
        assert!(inline_budget_left(start));
        charge_inline(INLINE_BUDGET - Duration::from_micros(1));
        assert!(inline_budget_left(start + Duration::from_millis(1)));
        charge_inline(Duration::from_micros(1));
        assert!(!inline_budget_left(start + Duration::from_millis(1)));
        assert!(!inline_budget_left(
            start + INLINE_WINDOW - Duration::from_micros(1)
        ));
        assert!(inline_budget_left(start + INLINE_WINDOW));
        assert!(inline_budget_left(
            start + INLINE_WINDOW + Duration::from_millis(1)
        ));
        // A batch of replies about to be dispatched is a task of its own: its budget renews
        // then, until the window's is spent.
        charge_inline(INLINE_BUDGET);
        let later = start + INLINE_WINDOW + Duration::from_millis(2);
        assert!(!inline_budget_left(later));
        replies_task_begins();
        assert!(inline_budget_left(later));
        charge_inline(INLINE_BUDGET);
        assert!(!inline_budget_left(later));
        replies_task_begins();
        assert!(inline_budget_left(later));
        charge_inline(INLINE_WINDOW_BUDGET - 2 * INLINE_BUDGET);
        replies_task_begins();
        assert!(!inline_budget_left(later + Duration::from_millis(1)));
        assert!(inline_budget_left(start + 2 * INLINE_WINDOW));
    }
}
