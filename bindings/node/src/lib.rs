//! The native half of `indexa` for Node.js: a factory over a data directory, one connection
//! object per `IDBDatabase` whose engine work runs in order on a bounded pool of threads
//! shared by all connections (see `worker`), and the key and value
//! conversions of the IndexedDB spec (<https://www.w3.org/TR/IndexedDB-3/>).
//!
//! Every method that places a request checks its arguments synchronously, as the spec's
//! method steps do (throwing an error whose message starts with the spec's name, e.g.
//! `DataError: …`), then queues the engine work; its outcome arrives later through the
//! connection's reply callback as `[id, errorName | null, resultOrMessage, …]`, the results
//! that carry records as offsets into a buffer that ends the batch (see `wire`).

mod convert;
mod wire;
mod worker;

use std::sync::Arc;

use indexa::{
    check_that_a_key_could_be_injected_into_a_value, compare_two_keys,
    extract_key_from_value_using_key_path, CursorDirection, Durability, Factory, KeyPath,
    KeyPathExtraction, TransactionMode, Utf16String,
};
use napi::bindgen_prelude::{AsyncTask, BufferSlice, Either};
use napi::threadsafe_function::{
    ErrorStrategy, ThreadSafeCallContext, ThreadsafeFunction, ThreadsafeFunctionCallMode,
};
use napi::{Env, JsBuffer, JsFunction, JsString, JsUnknown, Result, Task, ValueType};
use napi_derive::napi;

use convert::{engine_error, key_to_js, named_error, required_key, stored_value};
use worker::{Event, Events, Op, ReadKind, Reply};

/// A key path as JavaScript gives it: a string or a list of strings.
type JsKeyPath = Either<String, Vec<String>>;

fn parse_key_path(kp: &JsKeyPath) -> Result<KeyPath> {
    match kp {
        Either::A(s) => KeyPath::parse(s),
        Either::B(list) => KeyPath::compound(list),
    }
    .map_err(engine_error)
}

/// The spec's `IDBFactory.cmp`: -1, 0 or 1.
///
/// # Errors
/// `DataError` when either argument is not a valid key.
#[napi]
pub fn cmp(env: Env, first: JsUnknown, second: JsUnknown) -> Result<i32> {
    let a = required_key(&env, first)?;
    let b = required_key(&env, second)?;
    Ok(compare_two_keys(&a, &b) as i32)
}

/// The key `value` converts to, converted back to a JavaScript value (a view becomes an
/// ArrayBuffer, `-0` becomes `0`).
///
/// # Errors
/// `DataError` when `value` is not a valid key.
#[napi]
pub fn normalize_key(env: Env, value: JsUnknown) -> Result<JsUnknown> {
    key_to_js(&env, &required_key(&env, value)?)
}

/// Checks a key path's syntax (`SyntaxError` otherwise).
#[napi]
pub fn validate_key_path(key_path: JsKeyPath) -> Result<()> {
    parse_key_path(&key_path).map(|_| ())
}

/// The databases of one data directory (or of a private temporary one), or of one
/// PostgreSQL database.
#[napi]
pub struct NativeFactory {
    factory: Arc<Factory>,
}

#[napi]
impl NativeFactory {
    /// `dir`: the data directory (created if missing); `undefined` for a temporary directory
    /// removed when the factory is garbage-collected or the process exits. `lock_timeout`:
    /// milliseconds a deletion or an upgrade waits for other processes to close the database
    /// (`Factory::set_lock_timeout`); `undefined` for the engine's default. `url`: a
    /// `postgres://` URL instead of a directory (`Factory::open_url`; `dir` is then ignored).
    #[napi(constructor)]
    pub fn new(
        dir: Option<String>,
        lock_timeout: Option<f64>,
        url: Option<String>,
    ) -> Result<NativeFactory> {
        let mut factory = match (url, dir) {
            (Some(u), _) => Factory::open_url(&u),
            (None, Some(d)) => Factory::open_dir(d),
            (None, None) => Factory::temporary(),
        }
        .map_err(engine_error)?;
        if let Some(ms) = lock_timeout {
            if !(0.0..=1e12).contains(&ms) {
                return Err(named_error(
                    "TypeError",
                    format!(
                        "lockTimeout must be a number of milliseconds from 0 to 1e12, not {ms}"
                    ),
                ));
            }
            factory.set_lock_timeout(std::time::Duration::from_secs_f64(ms / 1000.0));
        }
        Ok(NativeFactory {
            factory: Arc::new(factory),
        })
    }

    /// The data directory (empty for a factory on PostgreSQL).
    #[napi(getter)]
    pub fn dir(&self) -> String {
        self.factory.dir().display().to_string()
    }

    /// The PostgreSQL URL without its password; `null` for a factory on a directory.
    #[napi(getter)]
    pub fn url(&self) -> Option<String> {
        self.factory.url().map(str::to_owned)
    }

    /// Resolves to the version of database `name` (0 when it does not exist).
    #[napi]
    pub fn version(&self, name: JsString) -> Result<AsyncTask<FactoryTask>> {
        Ok(AsyncTask::new(FactoryTask {
            factory: self.factory.clone(),
            job: FactoryJob::Version(js_name(name)?),
        }))
    }

    /// Deletes database `name`; resolves to the version it had (0 when missing).
    /// `on_blocked(oldVersion, null)` is called when the deletion waits for connections of
    /// other factories or processes that stayed open after their `versionchange`.
    #[napi]
    pub fn delete_database(
        &self,
        env: Env,
        name: JsString,
        on_blocked: JsFunction,
    ) -> Result<AsyncTask<FactoryTask>> {
        let mut blocked: ThreadsafeFunction<u64, ErrorStrategy::Fatal> = on_blocked
            .create_threadsafe_function(0, |ctx: ThreadSafeCallContext<u64>| {
                Ok(vec![ctx.env.create_double(ctx.value as f64)?])
            })?;
        blocked.unref(&env)?;
        Ok(AsyncTask::new(FactoryTask {
            factory: self.factory.clone(),
            job: FactoryJob::Delete(js_name(name)?, blocked),
        }))
    }

    /// Resolves to `[{name, version}, …]`, sorted by name.
    #[napi]
    pub fn databases(&self) -> AsyncTask<FactoryTask> {
        AsyncTask::new(FactoryTask {
            factory: self.factory.clone(),
            job: FactoryJob::List,
        })
    }
}

/// What a [`FactoryTask`] does.
pub enum FactoryJob {
    Version(Utf16String),
    /// With where to report being blocked.
    Delete(Utf16String, ThreadsafeFunction<u64, ErrorStrategy::Fatal>),
    List,
}

/// Factory work on libuv's thread pool.
pub struct FactoryTask {
    factory: Arc<Factory>,
    job: FactoryJob,
}

/// The outcome of a [`FactoryTask`].
pub enum FactoryOutput {
    Version(u64),
    List(Vec<(Utf16String, u64)>),
}

impl Task for FactoryTask {
    type Output = FactoryOutput;
    type JsValue = JsUnknown;

    fn compute(&mut self) -> Result<FactoryOutput> {
        match &self.job {
            FactoryJob::Version(name) => self
                .factory
                .version(name.clone())
                .map(FactoryOutput::Version),
            FactoryJob::Delete(name, blocked) => self
                .factory
                .delete_database_with(name.clone(), &mut |change| {
                    blocked.call(change.old_version, ThreadsafeFunctionCallMode::NonBlocking);
                })
                .map(FactoryOutput::Version),
            FactoryJob::List => self.factory.databases_utf16().map(FactoryOutput::List),
        }
        .map_err(engine_error)
    }

    fn resolve(&mut self, env: Env, output: FactoryOutput) -> Result<JsUnknown> {
        match output {
            FactoryOutput::Version(v) => Ok(env.create_double(v as f64)?.into_unknown()),
            FactoryOutput::List(list) => {
                let mut array = env.create_array_with_length(list.len())?;
                for (i, (name, version)) in list.iter().enumerate() {
                    let mut o = env.create_object()?;
                    o.set_named_property("name", env.create_string_utf16(name.units())?)?;
                    o.set_named_property("version", env.create_double(*version as f64)?)?;
                    array.set_element(i as u32, o)?;
                }
                Ok(array.into_unknown())
            }
        }
    }
}

/// A name (of a database, object store or index) exactly as JavaScript holds it: UTF-16
/// code units, lone surrogates kept (a `String` argument would replace them with U+FFFD, and
/// distinct names would collide).
fn js_name(name: JsString) -> Result<Utf16String> {
    let len = name.utf16_len()?;
    // The buffer napi fills ends with a NUL terminator that is not part of the string.
    let mut units = name.into_utf16()?.as_slice().to_vec();
    units.truncate(len);
    Ok(Utf16String::from_units(units))
}

/// A batch of replies as the JavaScript layer takes them: one buffer (see [`wire::reply`]).
fn replies_to_js(env: &Env, replies: Vec<Reply>) -> Result<JsBuffer> {
    let mut out = Vec::with_capacity(64 * replies.len());
    for reply in replies {
        wire::reply(&mut out, reply);
    }
    Ok(env.create_buffer_copy(out)?.into_raw())
}

/// One connection to a database (`IDBDatabase`); its engine work runs on the shared pool of
/// threads (see `worker`).
#[napi]
pub struct NativeConnection {
    conn: Arc<worker::Connection>,
    replies: ThreadsafeFunction<Vec<Reply>, ErrorStrategy::Fatal>,
}

impl Drop for NativeConnection {
    /// A connection collected without `close()` is closed once its work is done.
    fn drop(&mut self) {
        self.conn.submit(Op::Close);
    }
}

fn mode_from(mode: &str) -> Result<TransactionMode> {
    match mode {
        "readonly" => Ok(TransactionMode::ReadOnly),
        "readwrite" => Ok(TransactionMode::ReadWrite),
        other => Err(named_error(
            "TypeError",
            format!("{other:?} is not a transaction mode"),
        )),
    }
}

fn durability_from(durability: &str) -> Result<Durability> {
    match durability {
        "default" => Ok(Durability::Default),
        "strict" => Ok(Durability::Strict),
        "relaxed" => Ok(Durability::Relaxed),
        other => Err(named_error(
            "TypeError",
            format!("{other:?} is not a transaction durability"),
        )),
    }
}

fn read_kind(kind: &str) -> Result<ReadKind> {
    match kind {
        "get" => Ok(ReadKind::Get),
        "getKey" => Ok(ReadKind::GetKey),
        "getAll" => Ok(ReadKind::GetAll),
        "getAllKeys" => Ok(ReadKind::GetAllKeys),
        "getAllRecords" => Ok(ReadKind::GetAllRecords),
        "count" => Ok(ReadKind::Count),
        other => Err(named_error("TypeError", format!("unknown read {other:?}"))),
    }
}

/// The stored form of a value and the spec's synchronous checks of its key
/// (`IDBObjectStore.put` steps on the clone: the key path must yield a valid key, or a key
/// generator must be able to inject one).
fn checked_value(
    value: &[u8],
    clone: Option<BufferSlice>,
    key_path: Option<&KeyPath>,
    auto_increment: bool,
) -> Result<indexa::Value> {
    let stored = stored_value(wire::read_value(value)?, clone.map(|b| b.to_vec()));
    if let Some(kp) = key_path {
        match extract_key_from_value_using_key_path(&stored, kp, false) {
            KeyPathExtraction::Key(_) => {}
            KeyPathExtraction::Invalid => {
                return Err(named_error(
                    "DataError",
                    format!("key path {kp} yielded a value that is not a valid key"),
                ))
            }
            KeyPathExtraction::Failure => {
                if !auto_increment {
                    return Err(named_error(
                        "DataError",
                        format!("key path {kp} yielded no key"),
                    ));
                }
                if !check_that_a_key_could_be_injected_into_a_value(&stored, kp) {
                    return Err(named_error(
                        "DataError",
                        format!(
                            "a generated key cannot be injected into this value at key path {kp}"
                        ),
                    ));
                }
            }
        }
    }
    Ok(stored)
}

#[napi]
impl NativeConnection {
    /// A connection of `factory`; `on_replies` receives every batch of replies, and
    /// `on_event(kind, oldVersion, newVersion)` the connection's `"blocked"` (its upgrade
    /// waits for other factories' or processes' connections) and `"versionchange"` (another
    /// factory or process asks to upgrade or delete the database; `newVersion` is `null` for
    /// a deletion), each `versionchange` to be answered with [`NativeConnection::acknowledge`].
    #[napi(constructor)]
    pub fn new(
        env: Env,
        factory: &NativeFactory,
        on_replies: JsFunction,
        on_event: JsFunction,
    ) -> Result<Self> {
        let in_flight = Arc::new(worker::InFlight::default());
        let delivered = in_flight.clone();
        let mut replies: ThreadsafeFunction<Vec<Reply>, ErrorStrategy::Fatal> = on_replies
            .create_threadsafe_function(0, move |ctx: ThreadSafeCallContext<Vec<Reply>>| {
                delivered.delivered();
                worker::replies_task_begins();
                Ok(vec![replies_to_js(&ctx.env, ctx.value)?])
            })?;
        // Only outstanding work keeps the process alive: see `set_busy`.
        replies.unref(&env)?;
        let thread_replies = replies.clone();
        let mut on_event: ThreadsafeFunction<Event, ErrorStrategy::Fatal> = on_event
            .create_threadsafe_function(0, |ctx: ThreadSafeCallContext<Event>| {
                let (kind, change) = match ctx.value {
                    Event::Blocked(c) => ("blocked", c),
                    Event::VersionChange(c) => ("versionchange", c),
                };
                let new_version = match change.new_version {
                    Some(v) => ctx.env.create_double(v as f64)?.into_unknown(),
                    None => ctx.env.get_null()?.into_unknown(),
                };
                Ok(vec![
                    ctx.env.create_string(kind)?.into_unknown(),
                    ctx.env
                        .create_double(change.old_version as f64)?
                        .into_unknown(),
                    new_version,
                ])
            })?;
        // An open connection alone does not keep the process alive.
        on_event.unref(&env)?;
        let events = Events::new(move |event| {
            on_event.call(event, ThreadsafeFunctionCallMode::NonBlocking);
        });
        let conn = worker::Connection::new(
            factory.factory.clone(),
            move |batch| {
                thread_replies.call(batch, ThreadsafeFunctionCallMode::Blocking);
            },
            in_flight,
            events,
        );
        Ok(NativeConnection { conn, replies })
    }

    /// The JavaScript layer has dispatched the oldest `versionchange` it got and not yet
    /// acknowledged (and closed the connection if a handler asked to).
    #[napi]
    pub fn acknowledge(&self) {
        self.conn.events().acknowledge();
    }

    /// Whether replies are outstanding: while they are, the process stays alive.
    #[napi]
    pub fn set_busy(&mut self, env: Env, busy: bool) -> Result<()> {
        if busy {
            self.replies.refer(&env)
        } else {
            self.replies.unref(&env)
        }
    }

    fn send(&self, op: Op) -> Result<()> {
        if self.conn.submit(op) {
            Ok(())
        } else {
            Err(named_error("InvalidStateError", "the connection is closed"))
        }
    }

    /// Opens database `name` at `version`, beginning the versionchange transaction `tx` when
    /// it is below.
    #[napi]
    pub fn open(&self, id: u32, tx: u32, name: JsString, version: f64) -> Result<()> {
        self.send(Op::Open {
            id,
            tx,
            name: js_name(name)?,
            version: version as u64,
        })
    }

    /// Declares transaction `tx`: its ops wait until [`NativeConnection::begin`].
    #[napi]
    pub fn declare(&self, tx: u32) -> Result<()> {
        self.send(Op::Declare { tx })
    }

    /// Begins transaction `tx` over `scope`.
    #[napi]
    pub fn begin(
        &self,
        id: u32,
        tx: u32,
        scope: Vec<JsString>,
        mode: String,
        durability: String,
    ) -> Result<()> {
        self.send(Op::Begin {
            id,
            tx,
            scope: scope.into_iter().map(js_name).collect::<Result<_>>()?,
            mode: mode_from(&mode)?,
            durability: durability_from(&durability)?,
        })
    }

    /// Commits transaction `tx`.
    #[napi]
    pub fn commit(&self, id: u32, tx: u32) -> Result<()> {
        self.send(Op::Commit {
            id,
            tx,
            defer_checkpoint: false,
        })
    }

    /// Aborts transaction `tx`.
    #[napi]
    pub fn abort(&self, id: u32, tx: u32) -> Result<()> {
        self.send(Op::Abort { id, tx })
    }

    /// `createObjectStore` in upgrade transaction `tx`.
    #[napi]
    pub fn create_store(
        &self,
        id: u32,
        tx: u32,
        name: JsString,
        key_path: Option<JsKeyPath>,
        auto_increment: bool,
    ) -> Result<()> {
        let key_path = key_path.as_ref().map(parse_key_path).transpose()?;
        self.send(Op::CreateStore {
            id,
            tx,
            name: js_name(name)?,
            key_path,
            auto_increment,
        })
    }

    /// `deleteObjectStore` in upgrade transaction `tx`.
    #[napi]
    pub fn delete_store(&self, id: u32, tx: u32, name: JsString) -> Result<()> {
        self.send(Op::DeleteStore {
            id,
            tx,
            name: js_name(name)?,
        })
    }

    /// Renames object store `name` in upgrade transaction `tx`.
    #[napi]
    pub fn rename_store(&self, id: u32, tx: u32, name: JsString, new_name: JsString) -> Result<()> {
        self.send(Op::RenameStore {
            id,
            tx,
            name: js_name(name)?,
            new_name: js_name(new_name)?,
        })
    }

    /// `createIndex` in upgrade transaction `tx`.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn create_index(
        &self,
        id: u32,
        tx: u32,
        store: JsString,
        name: JsString,
        key_path: JsKeyPath,
        unique: bool,
        multi_entry: bool,
    ) -> Result<()> {
        let key_path = parse_key_path(&key_path)?;
        self.send(Op::CreateIndex {
            id,
            tx,
            store: js_name(store)?,
            name: js_name(name)?,
            key_path,
            unique,
            multi_entry,
        })
    }

    /// `deleteIndex` in upgrade transaction `tx`.
    #[napi]
    pub fn delete_index(&self, id: u32, tx: u32, store: JsString, name: JsString) -> Result<()> {
        self.send(Op::DeleteIndex {
            id,
            tx,
            store: js_name(store)?,
            name: js_name(name)?,
        })
    }

    /// Renames index `name` of `store` in upgrade transaction `tx`.
    #[napi]
    pub fn rename_index(
        &self,
        id: u32,
        tx: u32,
        store: JsString,
        name: JsString,
        new_name: JsString,
    ) -> Result<()> {
        self.send(Op::RenameIndex {
            id,
            tx,
            store: js_name(store)?,
            name: js_name(name)?,
            new_name: js_name(new_name)?,
        })
    }

    /// `put` (or `add` with `no_overwrite`): `value` is the value or its projection as
    /// `lib/wire.js` writes it (see [`wire::read_value`]), `clone` its serialization when the
    /// value needs it; `key_path`/`auto_increment` describe the
    /// object store for the synchronous checks; with `check_only`, nothing else is done (a
    /// value holding Blobs is checked when placed and written once their bytes are read).
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn put(
        &self,
        env: Env,
        id: u32,
        tx: u32,
        store: JsString,
        value: BufferSlice,
        clone: Option<BufferSlice>,
        key: JsUnknown,
        no_overwrite: bool,
        key_path: Option<JsKeyPath>,
        auto_increment: bool,
        check_only: Option<bool>,
    ) -> Result<()> {
        let key_path = key_path.as_ref().map(parse_key_path).transpose()?;
        let key = if matches!(key.get_type()?, ValueType::Undefined) {
            None
        } else {
            Some(required_key(&env, key)?)
        };
        match (&key_path, &key) {
            (Some(_), Some(_)) => {
                return Err(named_error(
                    "DataError",
                    "the object store uses in-line keys and a key was given",
                ))
            }
            (None, None) if !auto_increment => {
                return Err(named_error(
                    "DataError",
                    "the object store uses out-of-line keys and has no key generator, and no key was given",
                ))
            }
            _ => {}
        }
        let value = checked_value(&value, clone, key_path.as_ref(), auto_increment)?;
        if check_only == Some(true) {
            return Ok(());
        }
        self.send(Op::Put {
            id,
            tx,
            store: js_name(store)?,
            value,
            key,
            no_overwrite,
        })
    }

    /// A read (`get`, `getKey`, `getAll`, `getAllKeys`, `count`) of `store` or its `index`
    /// over `range` (as `lib/IDBKeyRange.js` writes it, see [`wire::read_range`]; none for
    /// every record).
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn read(
        &self,
        id: u32,
        tx: u32,
        store: JsString,
        index: Option<JsString>,
        kind: String,
        range: Option<BufferSlice>,
        count: Option<u32>,
        direction: Option<String>,
    ) -> Result<()> {
        let kind = read_kind(&kind)?;
        let range = range.map(|r| wire::read_range(&r)).transpose()?;
        let direction: CursorDirection = match direction {
            Some(d) => d.parse().map_err(engine_error)?,
            None => CursorDirection::Next,
        };
        self.send(Op::Read {
            id,
            tx,
            store: js_name(store)?,
            index: index.map(js_name).transpose()?,
            kind,
            range,
            count,
            direction,
        })
    }

    /// `delete(query)` on `store`: the records in `range` (as for `read`).
    #[napi]
    pub fn delete(&self, id: u32, tx: u32, store: JsString, range: BufferSlice) -> Result<()> {
        let range = wire::read_range(&range)?;
        self.send(Op::Delete {
            id,
            tx,
            store: js_name(store)?,
            range,
        })
    }

    /// `clear()` on `store`.
    #[napi]
    pub fn clear(&self, id: u32, tx: u32, store: JsString) -> Result<()> {
        self.send(Op::Clear {
            id,
            tx,
            store: js_name(store)?,
        })
    }

    /// Opens cursor `cursor` over `store` or its `index`, within `range` as for `read`.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn open_cursor(
        &self,
        id: u32,
        tx: u32,
        cursor: u32,
        store: JsString,
        index: Option<JsString>,
        range: Option<BufferSlice>,
        direction: String,
        key_only: bool,
    ) -> Result<()> {
        let range = range.map(|r| wire::read_range(&r)).transpose()?;
        let direction: CursorDirection = direction.parse().map_err(engine_error)?;
        self.send(Op::OpenCursor {
            id,
            tx,
            cursor,
            store: js_name(store)?,
            index: index.map(js_name).transpose()?,
            range,
            direction,
            key_only,
        })
    }

    /// `continue(key)` / `continuePrimaryKey(key, primaryKey)` of cursor `cursor`, after the
    /// `skipped` records of its last result beyond the first that the caller stepped through
    /// itself; the result holds up to `batch` records (at least one).
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn cursor_continue(
        &self,
        env: Env,
        id: u32,
        cursor: u32,
        key: JsUnknown,
        primary_key: JsUnknown,
        skipped: u32,
        batch: u32,
    ) -> Result<()> {
        let key = if matches!(key.get_type()?, ValueType::Undefined) {
            None
        } else {
            Some(required_key(&env, key)?)
        };
        let primary_key = if matches!(primary_key.get_type()?, ValueType::Undefined) {
            None
        } else {
            Some(required_key(&env, primary_key)?)
        };
        self.send(Op::Continue {
            id,
            cursor,
            key,
            primary_key,
            skipped,
            batch,
        })
    }

    /// `advance(count)` of cursor `cursor`; `skipped` and `batch` as for
    /// [`NativeConnection::cursor_continue`].
    #[napi]
    pub fn cursor_advance(
        &self,
        id: u32,
        cursor: u32,
        count: u32,
        skipped: u32,
        batch: u32,
    ) -> Result<()> {
        self.send(Op::Advance {
            id,
            cursor,
            count,
            skipped,
            batch,
        })
    }

    /// Reads up to `batch` more records of cursor `cursor` beyond the last one its last
    /// result or read ahead returned, without moving the cursor: the rows as a step's result
    /// has them (`null` when there are none to read ahead), to be stepped through after that
    /// result's, which they continue.
    #[napi]
    pub fn cursor_read_ahead(&self, id: u32, cursor: u32, batch: u32) -> Result<()> {
        self.send(Op::ReadAhead { id, cursor, batch })
    }

    /// Moves cursor `cursor` over the `skipped` records of its last result beyond the first
    /// that the caller stepped through itself. Must precede any write to the cursor's
    /// transaction made after such steps, so the cursor lands where those records were read.
    #[napi]
    pub fn cursor_sync(&self, id: u32, cursor: u32, skipped: u32) -> Result<()> {
        self.send(Op::SyncCursor {
            id,
            cursor,
            skipped,
        })
    }

    /// `update(value)` through cursor `cursor`, `value` and `clone` as for `put`; with
    /// in-line keys, the key path must yield the cursor's primary key (`DataError`
    /// otherwise); `check_only` as for `put`.
    #[napi]
    #[allow(clippy::too_many_arguments)]
    pub fn cursor_update(
        &self,
        env: Env,
        id: u32,
        cursor: u32,
        value: BufferSlice,
        clone: Option<BufferSlice>,
        key_path: Option<JsKeyPath>,
        primary_key: JsUnknown,
        check_only: Option<bool>,
    ) -> Result<()> {
        let key_path = key_path.as_ref().map(parse_key_path).transpose()?;
        let value = stored_value(wire::read_value(&value)?, clone.map(|b| b.to_vec()));
        if let Some(kp) = &key_path {
            let primary = required_key(&env, primary_key)?;
            match extract_key_from_value_using_key_path(&value, kp, false) {
                KeyPathExtraction::Key(k) if k == primary => {}
                _ => {
                    return Err(named_error(
                        "DataError",
                        format!(
                        "key path {kp} of the new value does not yield the cursor's primary key"
                    ),
                    ))
                }
            }
        }
        if check_only == Some(true) {
            return Ok(());
        }
        self.send(Op::CursorUpdate { id, cursor, value })
    }

    /// `delete()` through cursor `cursor`.
    #[napi]
    pub fn cursor_delete(&self, id: u32, cursor: u32) -> Result<()> {
        self.send(Op::CursorDelete { id, cursor })
    }

    /// Closes the connection once the work placed before this call is done.
    #[napi]
    pub fn close(&self) -> Result<()> {
        self.send(Op::Close)
    }
}
