//! SQLite file shards, through the workspace's one SQLite binding (rusqlite).
//!
//! rusqlite is blocking, so each shard keeps one connection behind a mutex and every call runs
//! on tokio's blocking pool. The file is in WAL mode with a busy timeout, so tasks and other
//! processes may use it at the same time.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indexa::{Utf16String, Value};
use rusqlite::config::DbConfig;
use rusqlite::types::{Value as SqlValue, ValueRef};
use rusqlite::Connection;
use tokio::sync::OwnedMutexGuard;

use super::{from_epoch_ms, iso_utc, Cell, Outcome};
use crate::error::{Error, Result};

/// How long a statement waits for another connection's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(30);

/// Opens (creating if needed) a SQLite file in WAL mode with a busy timeout, with the
/// double-quoted-string fallback off: `"name"` is always an identifier, so a statement naming a
/// missing column fails instead of comparing against the text `'name'`.
pub(crate) fn open_sqlite(path: &Path) -> rusqlite::Result<Connection> {
    let conn = Connection::open(path)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DQS_DML, false)?;
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_DQS_DDL, false)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    Ok(conn)
}

/// Runs `f` with the locked connection on the blocking pool.
pub(crate) async fn with_sqlite<T, F>(conn: &Arc<Mutex<Connection>>, f: F) -> Result<T>
where
    T: Send + 'static,
    F: FnOnce(&mut Connection) -> Result<T> + Send + 'static,
{
    let conn = Arc::clone(conn);
    tokio::task::spawn_blocking(move || {
        // A panic while the lock was held cannot leave a transaction open: rusqlite's
        // `Transaction` rolls back when dropped during unwinding.
        let mut guard = conn
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        f(&mut guard)
    })
    .await
    .map_err(|e| Error::coordinator(format!("SQLite worker stopped: {e}")))?
}

pub(crate) struct SqliteShard {
    name: Arc<str>,
    conn: Arc<Mutex<Connection>>,
    /// Held by every statement and for the whole of a [`SqliteUnit`], so no other statement
    /// runs inside a unit's transaction.
    gate: Arc<tokio::sync::Mutex<()>>,
}

/// A transaction on a SQLite shard's connection (`BEGIN IMMEDIATE`), holding the shard's gate.
pub(crate) struct SqliteUnit {
    name: Arc<str>,
    conn: Arc<Mutex<Connection>>,
    _gate: OwnedMutexGuard<()>,
    pub(super) finished: bool,
}

impl SqliteUnit {
    pub(crate) async fn query(&mut self, sql: &str, params: &[Value]) -> Result<Outcome> {
        run_on(&self.conn, &self.name, sql, params).await
    }

    pub(crate) async fn execute(&mut self, sql: &str) -> Result<()> {
        batch_on(&self.conn, &self.name, sql).await
    }
}

impl Drop for SqliteUnit {
    fn drop(&mut self) {
        if !self.finished {
            // Dropped mid-way (an error path or a cancelled call): nothing of it is kept.
            let conn = self
                .conn
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            if !conn.is_autocommit() {
                let _ = conn.execute_batch("ROLLBACK");
            }
        }
    }
}

async fn run_on(
    conn: &Arc<Mutex<Connection>>,
    name: &Arc<str>,
    sql: &str,
    params: &[Value],
) -> Result<Outcome> {
    let sql = sql.to_string();
    let params: Vec<SqlValue> = params.iter().map(to_sql_value).collect();
    let shard = Arc::clone(name);
    with_sqlite(conn, move |conn| {
        run_statement(conn, &sql, params).map_err(|e| Error::query(&shard, e))
    })
    .await
    .map_err(|e| rename(name, e))
}

async fn batch_on(conn: &Arc<Mutex<Connection>>, name: &Arc<str>, sql: &str) -> Result<()> {
    let sql = sql.to_string();
    let shard = Arc::clone(name);
    with_sqlite(conn, move |conn| {
        conn.execute_batch(&sql)
            .map_err(|e| Error::query(&shard, e))
    })
    .await
    .map_err(|e| rename(name, e))
}

/// A failure of the blocking pool itself is reported against the shard.
fn rename(name: &str, error: Error) -> Error {
    match error {
        Error::CoordinatorUnavailable { message } => Error::query(name, message),
        other => other,
    }
}

impl SqliteShard {
    pub(crate) async fn open(name: &str, path: &Path) -> Result<SqliteShard> {
        let path = path.to_path_buf();
        let shard_name = name.to_string();
        let conn = tokio::task::spawn_blocking(move || open_sqlite(&path))
            .await
            .map_err(|e| Error::query(&shard_name, e))?
            .map_err(|e| Error::query(&shard_name, e))?;
        Ok(SqliteShard {
            name: name.into(),
            conn: Arc::new(Mutex::new(conn)),
            gate: Arc::new(tokio::sync::Mutex::new(())),
        })
    }

    pub(crate) async fn query(&self, sql: &str, params: &[Value]) -> Result<Outcome> {
        let _gate = self.gate.lock().await;
        run_on(&self.conn, &self.name, sql, params).await
    }

    pub(crate) async fn execute_batch(&self, sql: &str) -> Result<()> {
        let _gate = self.gate.lock().await;
        batch_on(&self.conn, &self.name, sql).await
    }

    /// Starts a unit: `BEGIN IMMEDIATE` (the write lock is taken now, so the unit never fails
    /// later on a lock upgrade).
    pub(crate) async fn begin(&self) -> Result<SqliteUnit> {
        let gate = Arc::clone(&self.gate).lock_owned().await;
        let mut unit = SqliteUnit {
            name: Arc::clone(&self.name),
            conn: Arc::clone(&self.conn),
            _gate: gate,
            finished: true,
        };
        unit.execute("BEGIN IMMEDIATE").await?;
        unit.finished = false;
        Ok(unit)
    }
}

fn run_statement(conn: &Connection, sql: &str, params: Vec<SqlValue>) -> rusqlite::Result<Outcome> {
    let mut stmt = conn.prepare_cached(sql)?;
    let columns: Vec<Utf16String> = stmt
        .column_names()
        .into_iter()
        .map(Utf16String::from)
        .collect();
    let total_before = conn.total_changes();
    // SAFETY: the handle belongs to `conn`, which the caller holds locked for the whole call;
    // sqlite3_set_last_insert_rowid only writes the connection's last-insert rowid. Zero is
    // SQLite's own "no row inserted yet" value, so a rowid still zero afterwards means this
    // statement inserted no row that got a rowid (an ignored insert, a WITHOUT ROWID table,
    // an UPDATE).
    unsafe { rusqlite::ffi::sqlite3_set_last_insert_rowid(conn.handle(), 0) };
    let mut cells = Vec::new();
    {
        let mut result = stmt.query(rusqlite::params_from_iter(params))?;
        while let Some(row) = result.next()? {
            cells.push(
                (0..columns.len())
                    .map(|i| row.get_ref(i).map(from_sql_value))
                    .collect::<rusqlite::Result<Vec<_>>>()?,
            );
        }
    }
    let changed = conn.total_changes() != total_before;
    let rowid = conn.last_insert_rowid();
    Ok(Outcome {
        columns,
        cells,
        rows_affected: if changed { conn.changes() } else { 0 },
        inserted_rowid: (changed && rowid != 0).then_some(rowid),
    })
}

/// A parameter as SQLite stores it: integral numbers in the 64-bit range as INTEGER, other
/// numbers as REAL, booleans as 0/1, dates as ISO-8601 text, arrays and objects as their text
/// form, undefined as NULL.
fn to_sql_value(value: &Value) -> SqlValue {
    match value {
        Value::Undefined | Value::Null => SqlValue::Null,
        Value::Bool(b) => SqlValue::Integer(i64::from(*b)),
        Value::Number(n) => match exact_i64(*n) {
            Some(i) => SqlValue::Integer(i),
            None => SqlValue::Real(*n),
        },
        Value::String(s) => SqlValue::Text(s.to_string_lossy()),
        Value::Date(ms) => match from_epoch_ms(*ms) {
            Some(t) => SqlValue::Text(iso_utc(
                time::PrimitiveDateTime::new(t.date(), t.time()),
                true,
            )),
            None => SqlValue::Null,
        },
        Value::Binary(bytes) => SqlValue::Blob(bytes.clone()),
        Value::Array(_) | Value::Object(_) => SqlValue::Text(crate::text::to_text(value)),
    }
}

/// `n` as an `i64` when it is an integer that converts exactly.
pub(crate) fn exact_i64(n: f64) -> Option<i64> {
    // 2^63 is exactly representable; every integral f64 in [-2^63, 2^63) fits an i64.
    const TWO_POW_63: f64 = 9_223_372_036_854_775_808.0;
    if n.fract() == 0.0 && (-TWO_POW_63..TWO_POW_63).contains(&n) {
        Some(n as i64)
    } else {
        None
    }
}

fn from_sql_value(value: ValueRef<'_>) -> Cell {
    match value {
        ValueRef::Null => Cell::Other(Value::Null),
        ValueRef::Integer(i) => Cell::Integer(i),
        ValueRef::Real(r) => Cell::Other(Value::Number(r)),
        ValueRef::Text(bytes) => {
            Cell::Other(Value::from(String::from_utf8_lossy(bytes).into_owned()))
        }
        ValueRef::Blob(bytes) => Cell::Other(Value::Binary(bytes.to_vec())),
    }
}
