//! The SQLite backend: the only module that talks SQLite's SQL. Schema, pragmas and every
//! query.
//!
//! One SQLite file per database, in WAL mode, with a table of records per object store (keyed
//! by row id while every key is a whole number, [`RecordTable`]) and a table of entries per
//! index ([`index_table`]). Keys are stored as their
//! order-preserving encoding ([`crate::encode_key`]), number keys as SQLite numbers
//! ([`crate::sqlite_layout`]), so SQLite's order is key order. The layout is documented in
//! `docs/format.md`.

use std::borrow::Cow;
use std::cell::{Cell, RefCell};
use std::ops::Bound;
use std::path::Path;

use rusqlite::types::{FromSqlResult, Value as SqlValue, ValueRef};
use rusqlite::{
    config::DbConfig, params, CachedStatement, Connection, ErrorCode, OpenFlags, OptionalExtension,
    Statement,
};

use crate::backend::{DatabaseRow, IndexRow, IndexStep, Rows, StorageConnection, StoreRow};
use crate::error::{Error, Result};
use crate::key_encoding::KEY_ENCODING_VERSION;
use crate::key_range::EncodedRange;
use crate::utf16::Utf16String;
use crate::value_codec::wtf8_to_units;
use crate::value_codec::VALUE_FORMAT_VERSION;

use crate::sqlite_layout::{
    index_table, record_table, version_2_number_key, ColumnKey, SqlKey, SQLITE_FORMAT_VERSION,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS database (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    format_version INTEGER NOT NULL,
    key_encoding_version INTEGER NOT NULL,
    value_format_version INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS object_store (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE,
    key_path TEXT,
    key_path_is_array INTEGER NOT NULL,
    auto_increment INTEGER NOT NULL,
    current_number INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS object_store_index (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    object_store_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    key_path TEXT NOT NULL,
    key_path_is_array INTEGER NOT NULL,
    is_unique INTEGER NOT NULL,
    multi_entry INTEGER NOT NULL,
    UNIQUE (object_store_id, name)
);
";

/// How an object store's record table is laid out (`docs/format.md`, "Record tables").
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RecordTable {
    /// A row id table whose row id is the key column: it holds keys that are whole numbers
    /// (stored as `INTEGER`s, [`SqlKey`]) only. Every store's table starts so.
    NumberKeys,
    /// A `WITHOUT ROWID` table keyed by the key column: any key.
    AnyKeys,
}

/// Creates the table of an object store's records (see [`record_table`]) with `layout`; `key`
/// is a key column.
fn create_record_table(conn: &Connection, store_id: i64, layout: RecordTable) -> Result<()> {
    conn.execute_batch(&record_table_ddl(&record_table(store_id), layout))
        .sql()
}

/// The `CREATE TABLE` statement of a record table named `name`.
fn record_table_ddl(name: &str, layout: RecordTable) -> String {
    match layout {
        RecordTable::NumberKeys => {
            format!("CREATE TABLE {name} (key INTEGER PRIMARY KEY NOT NULL, value BLOB NOT NULL)")
        }
        RecordTable::AnyKeys => format!(
            "CREATE TABLE {name} (key BLOB NOT NULL PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID"
        ),
    }
}

/// Creates the table of an index's entries ([`index_table`]).
fn create_index_table(conn: &Connection, index_id: i64) -> Result<()> {
    conn.execute_batch(&format!(
        "CREATE TABLE {} (key BLOB NOT NULL, primary_key BLOB NOT NULL, PRIMARY KEY (key, primary_key)) WITHOUT ROWID",
        index_table(index_id)
    ))
    .sql()
}

/// Drops the table `name` at once, or, while a statement of the connection is still reading
/// (a visitor of [`StorageConnection::read_record`] changing the schema), renames it
/// `<name>_dropped` and returns that name, for [`drop_left_tables`] to drop before the
/// transaction commits: SQLite drops no table under a running statement. The rename keeps a
/// failed request's savepoint able to take the drop back (the renamed table is then gone).
fn drop_table(conn: &Connection, name: &str) -> Result<Option<String>> {
    match conn.execute_batch(&format!("DROP TABLE {name}")) {
        Ok(()) => Ok(None),
        Err(e) if e.sqlite_error_code() == Some(ErrorCode::DatabaseLocked) => {
            let left = format!("{name}_dropped");
            conn.execute_batch(&format!("ALTER TABLE {name} RENAME TO {left}"))
                .sql()?;
            Ok(Some(left))
        }
        Err(e) => Err(sql_error(e)),
    }
}

/// Rewrites a [`RecordTable::NumberKeys`] table as a [`RecordTable::AnyKeys`] one with the
/// same records, inside the caller's writing transaction: done when a key that is not a
/// whole number is first written to the store. The old table is dropped ([`drop_table`]);
/// returns its name when it is left for later.
fn widen_record_table(conn: &Connection, store_id: i64) -> Result<Option<String>> {
    let table = record_table(store_id);
    let create = record_table_ddl(&format!("{table}_any"), RecordTable::AnyKeys);
    conn.execute_batch(&format!(
        "{create};
         INSERT INTO {table}_any (key, value) SELECT key, value FROM {table};
         ALTER TABLE {table} RENAME TO {table}_old;
         ALTER TABLE {table}_any RENAME TO {table};"
    ))
    .sql()?;
    drop_table(conn, &format!("{table}_old"))
}

/// Drops the tables [`drop_table`] left (those a failed request's savepoint took back are
/// gone already).
fn drop_left_tables(conn: &Connection, tables: Vec<String>) -> Result<()> {
    for table in tables {
        conn.execute_batch(&format!("DROP TABLE IF EXISTS {table}"))
            .sql()?;
    }
    Ok(())
}

/// Rewrites an object store's [`RecordTable::AnyKeys`] table as a [`RecordTable::NumberKeys`]
/// one when every key in it is a whole number stored as an `INTEGER` (an upgraded file's
/// tables; [`widen_record_table`] goes the other way).
fn narrow_record_table(conn: &Connection, store_id: i64) -> Result<()> {
    let table = record_table(store_id);
    let whole_numbers: bool = conn
        .query_row(
            &format!("SELECT NOT EXISTS (SELECT 1 FROM {table} WHERE typeof(key) <> 'integer')"),
            [],
            |r| r.get(0),
        )
        .sql()?;
    if whole_numbers {
        let create = record_table_ddl(&table, RecordTable::NumberKeys);
        conn.execute_batch(&format!(
            "ALTER TABLE {table} RENAME TO {table}_any;
             {create};
             INSERT INTO {table} (key, value) SELECT key, value FROM {table}_any ORDER BY key;
             DROP TABLE {table}_any;"
        ))
        .sql()?;
    }
    Ok(())
}

/// Maps a SQLite failure to the spec's error: a full disk is `QuotaExceededError`, anything
/// else `UnknownError`.
pub(crate) fn sql_error(e: rusqlite::Error) -> Error {
    match e.sqlite_error_code() {
        Some(ErrorCode::DiskFull) => Error::QuotaExceeded(format!("the disk is full: {e}")),
        _ => Error::Unknown(format!("storage failure: {e}")),
    }
}

trait SqlResult<T> {
    fn sql(self) -> Result<T>;
}

impl<T> SqlResult<T> for rusqlite::Result<T> {
    fn sql(self) -> Result<T> {
        self.map_err(sql_error)
    }
}

/// Opens (creating if needed) the SQLite file of a database, in WAL mode. The file must not
/// be a symbolic link (`SQLITE_OPEN_NOFOLLOW`); `path` is absolute, so it is never read as a
/// `file:` URI.
pub(crate) fn open_connection(path: &Path) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW,
    )
    .sql()?;
    refuse_foreign_file(&conn)?;
    conn.set_prepared_statement_cache_capacity(128);
    // Plans never depend on bound values: without this SQLite prepares a statement again
    // whenever a new value is bound to its `LIMIT ?`, as every cursor step does.
    conn.set_db_config(DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)
        .sql()?;
    conn.busy_timeout(BUSY_TIMEOUT).sql()?;
    let mode = switch_to_wal(&conn)?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(Error::Unknown(format!(
            "could not switch the database file to WAL mode (got {mode})"
        )));
    }
    conn.execute_batch(&format!(
        "PRAGMA foreign_keys=OFF; PRAGMA cache_size=-{PAGE_CACHE_KIB};"
    ))
    .sql()?;
    Ok(conn)
}

/// Each connection's page cache, in KiB (`PRAGMA cache_size`).
const PAGE_CACHE_KIB: i64 = 65536;

/// How many bytes at the start of a database file a connection reads through a memory map
/// (`PRAGMA mmap_size`) once its page cache has filled ([`MAP_FROM_CACHE_BYTES`]): the bundled
/// SQLite's own limit (`SQLITE_MAX_MMAP_SIZE`, 2 GiB less 64 KiB), so in practice the whole
/// file. SQLite maps no more than the file holds and writes through its usual calls (the map
/// is read-only); where mapping fails or the platform has no `mmap`, it reads as before.
/// Reads of pages missing from the page cache then cost a page fault the first time instead
/// of a `read` call and a copy every time. The cost: an I/O error on a mapped page (a failing
/// disk, a file truncated by a program other than SQLite) is a `SIGBUS` that ends the process
/// rather than an `UnknownError` (docs/format.md, "Journal and durability"). Only on 64-bit
/// targets ([`MAPS`]).
const MAPPED_BYTES: i64 = 0x7fff_0000;

/// Whether connections map their files at all: not where the address space is 32 bits, which
/// a few readers' maps of a large file could use up.
const MAPS: bool = cfg!(target_pointer_width = "64");

/// How full a connection's page cache is, in bytes, when the connection starts reading its
/// file through a memory map: three quarters of the cache's size. SQLite counts each page
/// with its bookkeeping (about 4,350 bytes for a 4 KiB page; a full cache counts about 66 MiB),
/// so this is about 45 MiB of the file's pages read or written since the cache was last
/// emptied (by another connection's commit, or by releasing the connection's memory); a file
/// smaller than that is never mapped. A file that fits in the page cache gains nothing from a
/// map, and loses: SQLite unmaps the file at the start of every transaction that follows
/// another connection's commit, and the pages are mapped again one fault at a time. See
/// BENCHMARKS.md, "Reads through a memory map".
const MAP_FROM_CACHE_BYTES: i64 = PAGE_CACHE_KIB * 1024 * 3 / 4;

// The threshold is reached by a full cache, and not by an empty one.
const _: () = assert!(0 < MAP_FROM_CACHE_BYTES && MAP_FROM_CACHE_BYTES < PAGE_CACHE_KIB * 1024);

/// Sets how much of the file `conn` reads through a memory map (`PRAGMA mmap_size`; SQLite
/// keeps its build limit when `bytes` is above it); 0 unmaps the file. Called between
/// transactions, where no mapped page is in use.
fn set_mmap_size(conn: &Connection, bytes: i64) -> Result<()> {
    conn.execute_batch(&format!("PRAGMA mmap_size={bytes}"))
        .sql()
}

/// The bytes the page cache of `conn` holds now (`SQLITE_DBSTATUS_CACHE_USED`).
fn page_cache_bytes(conn: &Connection) -> i64 {
    let (mut current, mut highest) = (0, 0);
    // SAFETY: `conn` is an open connection (opened `SQLITE_OPEN_NO_MUTEX`; rusqlite's
    // `Connection` is not `Sync`, so no other thread uses it during the call); the two
    // pointers are to locals that outlive the call.
    let rc = unsafe {
        rusqlite::ffi::sqlite3_db_status(
            conn.handle(),
            rusqlite::ffi::SQLITE_DBSTATUS_CACHE_USED,
            &mut current,
            &mut highest,
            0,
        )
    };
    if rc == rusqlite::ffi::SQLITE_OK {
        i64::from(current)
    } else {
        0
    }
}

/// Sets the WAL journal mode and returns the mode now in force. Switching a new file reads
/// it and then upgrades to a write, which SQLite does without its busy handler: when another
/// process switches or creates the same file at that moment, the switch is retried for up to
/// the busy timeout instead of failing with "database is locked".
fn switch_to_wal(conn: &Connection) -> Result<String> {
    let started = std::time::Instant::now();
    let mut pause = std::time::Duration::from_millis(1);
    loop {
        match conn.query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0)) {
            Err(rusqlite::Error::SqliteFailure(e, _))
                if e.code == rusqlite::ErrorCode::DatabaseBusy
                    && started.elapsed() < BUSY_TIMEOUT =>
            {
                std::thread::sleep(pause);
                pause = (pause * 2).min(std::time::Duration::from_millis(50));
            }
            other => return other.sql(),
        }
    }
}

/// How long a connection waits for another's lock (SQLite's busy timeout).
const BUSY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// The log size, in pages, past which a commit checkpoints (SQLite's default, which every
/// connection keeps).
const WAL_AUTOCHECKPOINT: i32 = 1000;

/// Sets the log size past which a commit of `conn` checkpoints; 0 turns it off.
fn set_wal_autocheckpoint(conn: &Connection, pages: i32) {
    // SAFETY: `conn` is an open connection, used by this thread only (see the `Send` impl
    // below); sqlite3_wal_autocheckpoint only stores the setting and cannot fail on it.
    unsafe {
        rusqlite::ffi::sqlite3_wal_autocheckpoint(conn.handle(), pages);
    }
}

/// Fails for a SQLite file that holds tables but not Indexa's, before anything (even the
/// journal mode) is changed in it.
fn refuse_foreign_file(conn: &Connection) -> Result<()> {
    let tables: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name NOT IN ('database', 'sqlite_sequence')",
            [],
            |r| r.get(0),
        )
        .sql()?;
    let ours: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'database'",
            [],
            |r| r.get(0),
        )
        .sql()?;
    if tables > 0 && ours == 0 {
        return Err(Error::Unknown(
            "the file is a SQLite database but not an Indexa database; it was left as it is".into(),
        ));
    }
    Ok(())
}

/// A name (of a database, object store or index) as stored: TEXT when it is valid Unicode
/// (every name a build before lone-surrogate names wrote), else its WTF-8 bytes as a BLOB,
/// so every UTF-16 name is kept exactly.
fn name_to_sql(name: &Utf16String) -> SqlValue {
    match name.to_string() {
        Some(text) => SqlValue::Text(text),
        None => SqlValue::Blob(name.to_wtf8()),
    }
}

/// Reads a name written by [`name_to_sql`].
fn name_from_sql(value: SqlValue) -> Result<Utf16String> {
    match value {
        SqlValue::Text(text) => Ok(Utf16String::from(text)),
        SqlValue::Blob(bytes) => wtf8_to_units(&bytes)
            .ok_or_else(|| Error::Unknown("a stored name is not valid WTF-8".into())),
        other => Err(Error::Unknown(format!(
            "a stored name is not text: {other:?}"
        ))),
    }
}

/// Creates the tables of a new file, or checks an existing file's format versions, upgrading
/// a file of an older format version (1 to 3) to the current one.
///
/// # Errors
/// [`Error::Unknown`] for a file that is not an Indexa database, one of another format
/// version, or one made for another database name.
///
/// An existing file of the current format is only read (a deferred transaction), so opening
/// never waits for another process's writer; only a new file (to create the tables) and a
/// file of an older version (to upgrade it) take the write lock.
pub(crate) fn initialize(conn: &Connection, name: &Utf16String) -> Result<DatabaseRow> {
    conn.execute_batch("BEGIN").sql()?;
    let existing = read_database_row(conn);
    conn.execute_batch("COMMIT").sql()?;
    let created = if existing?.is_some() {
        if let Some(row) = create_or_check(conn, name, false)? {
            return Ok(row);
        }
        create_or_check(conn, name, true)?
    } else {
        create_unflushed(conn, name)?
    };
    created.ok_or_else(|| Error::Unknown("the database file could not be upgraded".into()))
}

/// [`create_or_check`] with writing for a file without a database row (a new file, unless
/// another process creates it meanwhile), committed without flushing the log to disk
/// (`synchronous=OFF` for this transaction alone). The log is written in order and each
/// commit is checksummed, so the tables and row are flushed by the first flushed commit after
/// them, the upgrade transaction that follows the creation of a database (always strict);
/// should a crash lose them before, the file is read as new again (no row: see
/// [`read_database_row`]), as if the crash had come before they were written, and no commit
/// of the database was reported. Of the eight flushes until a new database's open succeeds
/// this saves two: the transaction's three (the log's header, its directory entry, the
/// commit), less the directory entry, which the log's first flush then syncs. Measured in
/// BENCHMARKS.md, "A new database's first transaction left to the upgrade's flush".
fn create_unflushed(conn: &Connection, name: &Utf16String) -> Result<Option<DatabaseRow>> {
    conn.execute_batch("PRAGMA synchronous=OFF").sql()?;
    let created = create_or_check(conn, name, true);
    // Back to SQLite's default before anything else is written (checkpoints included), on
    // failure too (`create_or_check` leaves no transaction open, where the setting could
    // not change); the creation's own error first.
    let restored = conn.execute_batch("PRAGMA synchronous=FULL").sql();
    let created = created?;
    restored?;
    Ok(created)
}

/// Checks the database row of a file. With `write` (under the write lock) it first creates
/// the missing tables and the row of a new file, and upgrades a file of an older format
/// version;
/// without, such a file answers `None` (it needs the write lock).
fn create_or_check(
    conn: &Connection,
    name: &Utf16String,
    write: bool,
) -> Result<Option<DatabaseRow>> {
    conn.execute_batch(if write { "BEGIN IMMEDIATE" } else { "BEGIN" })
        .sql()?;
    let result = (|| {
        if write {
            conn.execute_batch(SCHEMA).sql()?;
        }
        let existing = conn
            .query_row(
                "SELECT name, version, format_version, key_encoding_version, value_format_version FROM database",
                [],
                |r| {
                    Ok((
                        r.get::<_, SqlValue>(0)?,
                        r.get::<_, i64>(1)?,
                        r.get::<_, i64>(2)?,
                        r.get::<_, i64>(3)?,
                        r.get::<_, i64>(4)?,
                    ))
                },
            )
            .optional()
            .sql()?;
        match existing {
            None => {
                conn.execute(
                    "INSERT INTO database VALUES (1, ?1, 0, ?2, ?3, ?4)",
                    params![
                        name_to_sql(name),
                        SQLITE_FORMAT_VERSION,
                        KEY_ENCODING_VERSION,
                        VALUE_FORMAT_VERSION
                    ],
                )
                .sql()?;
                Ok(Some(DatabaseRow {
                    name: name.clone(),
                    version: 0,
                }))
            }
            Some((stored_name, version, mut format, key_format, value_format)) => {
                let stored_name = name_from_sql(stored_name)?;
                if (1..SQLITE_FORMAT_VERSION).contains(&format)
                    && key_format == i64::from(KEY_ENCODING_VERSION)
                    && value_format == i64::from(VALUE_FORMAT_VERSION)
                    && stored_name == *name
                {
                    if !write {
                        return Ok(None);
                    }
                    let upgrade = match format {
                        1 => upgrade_from_version_1,
                        2 => upgrade_from_version_2,
                        _ => upgrade_from_version_3,
                    };
                    upgrade(conn).map_err(|e| match e {
                        Error::Unknown(m) => Error::Unknown(format!(
                            "upgrading the database file from format version {format} failed (it was left as it was): {m}"
                        )),
                        other => other,
                    })?;
                    format = SQLITE_FORMAT_VERSION;
                }
                if stored_name != *name {
                    return Err(Error::Unknown(format!(
                        "database file belongs to database {stored_name:?}, not {name:?}"
                    )));
                }
                if format != SQLITE_FORMAT_VERSION
                    || key_format != i64::from(KEY_ENCODING_VERSION)
                    || value_format != i64::from(VALUE_FORMAT_VERSION)
                {
                    return Err(Error::Unknown(format!(
                        "database file has format version {format} (keys {key_format}, values {value_format}); this build reads {SQLITE_FORMAT_VERSION} (keys {KEY_ENCODING_VERSION}, values {VALUE_FORMAT_VERSION})"
                    )));
                }
                Ok(Some(DatabaseRow {
                    name: stored_name,
                    version: u64::try_from(version).map_err(|_| {
                        Error::Unknown(format!("stored database version {version} is invalid"))
                    })?,
                }))
            }
        }
    })();
    // A failed commit rolls back too, so the connection is never left in the transaction.
    let committed = result.and_then(|row| conn.execute_batch("COMMIT").sql().map(|()| row));
    if committed.is_err() && !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
    committed
}

/// The ids of the object stores, rising.
fn store_ids(conn: &Connection) -> Result<Vec<i64>> {
    conn.prepare("SELECT id FROM object_store ORDER BY id")
        .sql()?
        .query_map([], |r| r.get(0))
        .sql()?
        .collect::<rusqlite::Result<_>>()
        .sql()
}

/// Upgrades a file of format version 1 to the current layout, inside the caller's writing
/// transaction (so a crash leaves version 1 whole): each object store's records move from
/// the shared `record` table to a table of their own ([`move_records`]), and the keys of
/// records and index entries are rewritten as key columns ([`SqlKey`]). Records of stores
/// that no longer exist (rows a version 1 file could hold only if damaged) are not kept.
fn upgrade_from_version_1(conn: &Connection) -> Result<()> {
    for id in store_ids(conn)? {
        move_records(
            conn,
            id,
            "SELECT key, value FROM record WHERE object_store_id = ?1",
            [id],
            version_1_key,
        )?;
    }
    conn.execute_batch("DROP TABLE record").sql()?;
    move_index_entries(conn, Some(version_1_key))
}

/// Upgrades a file of format version 2 to the current layout, inside the caller's writing
/// transaction (so a crash leaves version 2 whole): the keys of records and index entries,
/// whose number keys version 2 stored as integers made from their encoding's bits, are
/// rewritten as key columns ([`SqlKey`]: number keys as SQLite numbers), each store's
/// records into a new table ([`move_records`]).
fn upgrade_from_version_2(conn: &Connection) -> Result<()> {
    for id in store_ids(conn)? {
        let table = record_table(id);
        conn.execute_batch(&format!("ALTER TABLE {table} RENAME TO {table}_2"))
            .sql()?;
        let select = format!("SELECT key, value FROM {table}_2");
        move_records(conn, id, &select, [], version_2_key)?;
        conn.execute_batch(&format!("DROP TABLE {table}_2")).sql()?;
    }
    move_index_entries(conn, Some(version_2_key))
}

/// Upgrades a file of format version 3 to the current layout, inside the caller's writing
/// transaction (so a crash leaves version 3 whole): each index's entries move from the shared
/// `index_entry` table to a table of their own ([`move_index_entries`]), as they are.
fn upgrade_from_version_3(conn: &Connection) -> Result<()> {
    move_index_entries(conn, None)
}

/// Reads column `column` of a row of an older layout's table and gives the key column value
/// it is now.
type OldKey = fn(&rusqlite::Row<'_>, usize) -> Result<SqlValue>;

/// Fills the record table of store `id`, made `WITHOUT ROWID` and then made a row id table
/// when every key is a whole number ([`narrow_record_table`]), from the (key, value) rows
/// `select` reads with `params`, their keys rewritten by `key`.
fn move_records(
    conn: &Connection,
    id: i64,
    select: &str,
    params: impl rusqlite::Params,
    key: OldKey,
) -> Result<()> {
    create_record_table(conn, id, RecordTable::AnyKeys)?;
    copy_rows(
        conn,
        select,
        params,
        &format!(
            "INSERT INTO {} (key, value) VALUES (?1, ?2)",
            record_table(id)
        ),
        |row| {
            let value = SqlValue::Blob(blob_column(row, 1)?.to_vec());
            Ok(vec![key(row, 0)?, value])
        },
    )
    .map_err(|e| match e {
        Error::Unknown(m) => Error::Unknown(format!("the records of object store id {id}: {m}")),
        other => other,
    })?;
    narrow_record_table(conn, id)
}

/// A version 1 key column's value (a `BLOB` of the key encoding) as the current one's.
fn version_1_key(row: &rusqlite::Row<'_>, column: usize) -> Result<SqlValue> {
    Ok(SqlKey(blob_column(row, column)?).to_sql_value())
}

/// A version 2 key column's value (`docs/format.md`, "Upgrading a version 2 file") as the
/// current one's: an `INTEGER` is a number key ([`version_2_number_key`]); a `BLOB` is kept.
fn version_2_key(row: &rusqlite::Row<'_>, column: usize) -> Result<SqlValue> {
    match row.get_ref(column).sql()? {
        ValueRef::Integer(i) => Ok(SqlKey(&version_2_number_key(i)).to_sql_value()),
        _ => version_1_key(row, column),
    }
}

/// Moves the entries of each index from the shared `index_entry` table of versions 1 to 3 to
/// the index's own table ([`index_table`]), their keys and primary keys rewritten by `key`
/// (kept as they are with `None`), drops `index_entry` and records the current format version.
/// Entries of indexes that no longer exist (rows only a damaged file holds) get a table too,
/// where `indexa check` reports them as it did in `index_entry`; those with an id no index can
/// have (0 or below) are not kept.
fn move_index_entries(conn: &Connection, key: Option<OldKey>) -> Result<()> {
    let index_ids: Vec<i64> = conn
        .prepare("SELECT id FROM object_store_index UNION SELECT DISTINCT index_id FROM index_entry WHERE index_id > 0 ORDER BY 1")
        .sql()?
        .query_map([], |r| r.get(0))
        .sql()?
        .collect::<rusqlite::Result<_>>()
        .sql()?;
    for id in index_ids {
        create_index_table(conn, id)?;
        let table = index_table(id);
        let select = "SELECT key, primary_key FROM index_entry WHERE index_id = ?1";
        match key {
            Some(key) => copy_rows(
                conn,
                select,
                [id],
                &format!("INSERT INTO {table} (key, primary_key) VALUES (?1, ?2)"),
                |row| Ok(vec![key(row, 0)?, key(row, 1)?]),
            )?,
            None => {
                conn.execute(
                    &format!("INSERT INTO {table} (key, primary_key) {select}"),
                    [id],
                )
                .sql()?;
            }
        }
    }
    conn.execute_batch("DROP TABLE index_entry").sql()?;
    conn.execute(
        "UPDATE database SET format_version = ?1",
        [SQLITE_FORMAT_VERSION],
    )
    .sql()?;
    Ok(())
}

/// Inserts, with `insert`, the row `convert` makes of each row `select` reads (with `params`).
fn copy_rows(
    conn: &Connection,
    select: &str,
    params: impl rusqlite::Params,
    insert: &str,
    convert: impl Fn(&rusqlite::Row<'_>) -> Result<Vec<SqlValue>>,
) -> Result<()> {
    let mut read = conn.prepare(select).sql()?;
    let mut write = conn.prepare(insert).sql()?;
    let mut rows = read.query(params).sql()?;
    while let Some(row) = rows.next().sql()? {
        write
            .execute(rusqlite::params_from_iter(convert(row)?))
            .sql()?;
    }
    Ok(())
}

/// A `BLOB` column of a row, borrowed; another type is a damaged file.
fn blob_column<'r>(row: &'r rusqlite::Row<'_>, column: usize) -> Result<&'r [u8]> {
    let value = row.get_ref(column).sql()?;
    value.as_blob().map_err(|_| {
        Error::Unknown(format!(
            "a key or value is stored as SQLite {}, not as a blob",
            value.data_type()
        ))
    })
}

/// Reads the name and version of a database file without changing it, or `None` when the
/// file is not an Indexa database.
pub(crate) fn read_database_row(conn: &Connection) -> Result<Option<DatabaseRow>> {
    let row = conn
        .query_row("SELECT name, version FROM database", [], |r| {
            Ok((r.get::<_, SqlValue>(0)?, r.get::<_, i64>(1)?))
        })
        .optional();
    match row {
        Ok(Some((name, version))) => Ok(Some(DatabaseRow {
            name: name_from_sql(name)?,
            version: version.max(0) as u64,
        })),
        Ok(None) => Ok(None),
        Err(rusqlite::Error::SqliteFailure(_, Some(msg))) if msg.contains("no such table") => {
            Ok(None)
        }
        Err(e) => Err(sql_error(e)),
    }
}

/// The statement reading the stored database version (read inside a transaction to detect
/// schema changes; see [`version_of`]).
const READ_VERSION: &str = "SELECT version FROM database";

/// Runs [`READ_VERSION`]; a negative stored version reads as 0.
fn version_of(stmt: &mut Statement<'_>) -> Result<u64> {
    let v: i64 = stmt.query_row([], |r| r.get(0)).sql()?;
    Ok(v.max(0) as u64)
}

pub(crate) fn write_version(conn: &Connection, version: u64) -> Result<()> {
    let v = i64::try_from(version)
        .map_err(|_| Error::Type(format!("version {version} is too large")))?;
    conn.execute("UPDATE database SET version = ?1", [v])
        .sql()?;
    Ok(())
}

/// Sets `synchronous=FULL` (fsync at commit) or `NORMAL` for the writing transaction about to
/// begin. `current` is the connection's setting as last set (`None`: unknown); the pragma
/// runs only when it changes.
fn set_synchronous(conn: &Connection, current: &mut Option<bool>, full: bool) -> Result<()> {
    if *current != Some(full) {
        conn.execute_batch(if full {
            "PRAGMA synchronous=FULL"
        } else {
            "PRAGMA synchronous=NORMAL"
        })
        .sql()?;
        *current = Some(full);
    }
    Ok(())
}

/// Runs a statement without parameters or results (`BEGIN`, `COMMIT`, savepoints).
fn run(stmt: &mut Statement<'_>) -> Result<()> {
    stmt.execute([]).sql()?;
    Ok(())
}

/// Undoes the changes since the innermost savepoint and closes it.
pub(crate) fn rollback_to_savepoint(conn: &Connection) -> Result<()> {
    conn.execute_batch("ROLLBACK TO request; RELEASE request")
        .sql()
}

/// Rolls back; a connection with no open transaction is left alone.
pub(crate) fn rollback(conn: &Connection) {
    if !conn.is_autocommit() {
        let _ = conn.execute_batch("ROLLBACK");
    }
}

pub(crate) fn load_stores(conn: &Connection) -> Result<Vec<StoreRow>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, name, key_path, key_path_is_array, auto_increment FROM object_store ORDER BY name",
        )
        .sql()?;
    let rows = stmt
        .query_map([], |r| {
            let key_path: Option<String> = r.get(2)?;
            let is_array: bool = r.get(3)?;
            Ok((
                r.get::<_, SqlValue>(1)?,
                StoreRow {
                    id: r.get(0)?,
                    name: Utf16String::new(),
                    key_path: key_path.map(|k| (k, is_array)),
                    auto_increment: r.get(4)?,
                },
            ))
        })
        .sql()?;
    rows.map(|row| {
        let (name, store) = row.sql()?;
        Ok(StoreRow {
            name: name_from_sql(name)?,
            ..store
        })
    })
    .collect()
}

pub(crate) fn load_indexes(conn: &Connection) -> Result<Vec<IndexRow>> {
    let mut stmt = conn
        .prepare_cached(
            "SELECT id, object_store_id, name, key_path, key_path_is_array, is_unique, multi_entry FROM object_store_index ORDER BY name",
        )
        .sql()?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, SqlValue>(2)?,
                IndexRow {
                    id: r.get(0)?,
                    store_id: r.get(1)?,
                    name: Utf16String::new(),
                    key_path: (r.get(3)?, r.get(4)?),
                    unique: r.get(5)?,
                    multi_entry: r.get(6)?,
                },
            ))
        })
        .sql()?;
    rows.map(|row| {
        let (name, index) = row.sql()?;
        Ok(IndexRow {
            name: name_from_sql(name)?,
            ..index
        })
    })
    .collect()
}

pub(crate) fn insert_store(
    conn: &Connection,
    name: &Utf16String,
    key_path: Option<(&str, bool)>,
    auto_increment: bool,
) -> Result<i64> {
    conn.execute(
        "INSERT INTO object_store (name, key_path, key_path_is_array, auto_increment, current_number) VALUES (?1, ?2, ?3, ?4, 1)",
        params![
            name_to_sql(name),
            key_path.map(|k| k.0),
            key_path.is_some_and(|k| k.1),
            auto_increment
        ],
    )
    .sql()?;
    let id = conn.last_insert_rowid();
    create_record_table(conn, id, RecordTable::NumberKeys)?;
    Ok(id)
}

/// Deletes an object store with its indexes and their tables; returns the names of the tables
/// [`drop_table`] left for later.
pub(crate) fn delete_store(conn: &Connection, store_id: i64) -> Result<Vec<String>> {
    let index_ids: Vec<i64> = conn
        .prepare("SELECT id FROM object_store_index WHERE object_store_id = ?1")
        .sql()?
        .query_map([store_id], |r| r.get(0))
        .sql()?
        .collect::<rusqlite::Result<_>>()
        .sql()?;
    let mut left = Vec::new();
    for id in index_ids {
        left.extend(drop_table(conn, &index_table(id))?);
    }
    conn.execute(
        "DELETE FROM object_store_index WHERE object_store_id = ?1",
        [store_id],
    )
    .sql()?;
    left.extend(drop_table(conn, &record_table(store_id))?);
    conn.execute("DELETE FROM object_store WHERE id = ?1", [store_id])
        .sql()?;
    Ok(left)
}

pub(crate) fn rename_store(conn: &Connection, store_id: i64, name: &Utf16String) -> Result<()> {
    conn.execute(
        "UPDATE object_store SET name = ?2 WHERE id = ?1",
        params![store_id, name_to_sql(name)],
    )
    .sql()?;
    Ok(())
}

pub(crate) fn insert_index(
    conn: &Connection,
    store_id: i64,
    name: &Utf16String,
    key_path: (&str, bool),
    unique: bool,
    multi_entry: bool,
) -> Result<i64> {
    conn.execute(
        "INSERT INTO object_store_index (object_store_id, name, key_path, key_path_is_array, is_unique, multi_entry) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        params![
            store_id,
            name_to_sql(name),
            key_path.0,
            key_path.1,
            unique,
            multi_entry
        ],
    )
    .sql()?;
    let id = conn.last_insert_rowid();
    create_index_table(conn, id)?;
    Ok(id)
}

/// Deletes an index and its table; returns the table's name when [`drop_table`] left it for
/// later.
pub(crate) fn delete_index(conn: &Connection, index_id: i64) -> Result<Option<String>> {
    let left = drop_table(conn, &index_table(index_id))?;
    conn.execute("DELETE FROM object_store_index WHERE id = ?1", [index_id])
        .sql()?;
    Ok(left)
}

pub(crate) fn rename_index(conn: &Connection, index_id: i64, name: &Utf16String) -> Result<()> {
    conn.execute(
        "UPDATE object_store_index SET name = ?2 WHERE id = ?1",
        params![index_id, name_to_sql(name)],
    )
    .sql()?;
    Ok(())
}

// ---- records ----

/// Reads the record with the encoded key `key` ([`Kept::ReadRecord`]) and hands its encoded
/// value to `f` without copying it; `None` when there is no such record.
fn read_record<R>(
    stmt: &mut Statement<'_>,
    key: &[u8],
    f: impl FnOnce(&[u8]) -> Result<R>,
) -> Result<Option<R>> {
    let mut rows = stmt.query([SqlKey(key)]).sql()?;
    match rows.next().sql()? {
        Some(row) => f(row
            .get_ref(0)
            .sql()?
            .as_blob()
            .map_err(|e| sql_error(e.into()))?)
        .map(Some),
        None => Ok(None),
    }
}

/// Runs [`Kept::RecordExists`] or [`Kept::IndexKeyTaken`]: true when it finds a row.
fn exists(stmt: &mut Statement<'_>, params: impl rusqlite::Params) -> Result<bool> {
    stmt.exists(params).sql()
}

/// Runs a writing statement of the record and index entry tables.
fn write(stmt: &mut Statement<'_>, params: impl rusqlite::Params) -> Result<()> {
    stmt.execute(params).sql()?;
    Ok(())
}

pub(crate) fn clear_records(conn: &Connection, store_id: i64, index_ids: &[i64]) -> Result<()> {
    conn.prepare_cached(&format!("DELETE FROM {}", record_table(store_id)))
        .sql()?
        .execute([])
        .sql()?;
    for id in index_ids {
        conn.prepare_cached(&format!("DELETE FROM {}", index_table(*id)))
            .sql()?
            .execute([])
            .sql()?;
    }
    Ok(())
}

/// Appends `AND <column> >= ? …` conditions for `range` and pushes their parameters.
fn range_conditions(
    column: &str,
    range: &EncodedRange,
    sql: &mut String,
    params: &mut Vec<SqlValue>,
) {
    match &range.lower {
        Bound::Unbounded => {}
        Bound::Included(b) => {
            sql.push_str(&format!(" AND {column} >= ?"));
            params.push(SqlKey(b).to_sql_value());
        }
        Bound::Excluded(b) => {
            sql.push_str(&format!(" AND {column} > ?"));
            params.push(SqlKey(b).to_sql_value());
        }
    }
    match &range.upper {
        Bound::Unbounded => {}
        Bound::Included(b) => {
            sql.push_str(&format!(" AND {column} <= ?"));
            params.push(SqlKey(b).to_sql_value());
        }
        Bound::Excluded(b) => {
            sql.push_str(&format!(" AND {column} < ?"));
            params.push(SqlKey(b).to_sql_value());
        }
    }
}

/// Where, within one key (or one index key), the start of a step lies: before every entry
/// with that key, at a primary key (`bias` 0: that entry included; 1: excluded, ascending;
/// −1: excluded, descending), or after every entry with that key.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Position<'a> {
    Below,
    At(&'a [u8], i8),
    Above,
}

/// The one condition where a cursor step or range read starts, in the direction of travel:
/// entries (key, primary key) at or beyond `(key, position)`. Of the range's near bound, the
/// cursor's position and its target only the tightest is written, as a single comparison
/// (a row value for a primary key), so SQLite seeks the B-tree to it: a step costs one seek
/// however far into the index the cursor is. Several lower bounds on one column would leave
/// SQLite to seek to one of them, possibly the range's start, and scan from there.
struct Start<'a> {
    bound: Option<(&'a [u8], Position<'a>)>,
}

impl<'a> Start<'a> {
    /// The near bound of `range` (the lower one ascending, the upper one descending).
    fn of_range(range: &'a EncodedRange, descending: bool) -> Self {
        let near = if descending {
            &range.upper
        } else {
            &range.lower
        };
        let (open, closed) = if descending {
            (Position::Below, Position::Above)
        } else {
            (Position::Above, Position::Below)
        };
        Start {
            bound: match near {
                Bound::Unbounded => None,
                Bound::Included(k) => Some((k.as_slice(), closed)),
                Bound::Excluded(k) => Some((k.as_slice(), open)),
            },
        }
    }

    /// Keeps the tighter of the current start and `(key, position)` (given as for
    /// ascending travel: `Below` = at or beyond `key`, `Above` = strictly beyond it).
    fn tighten(&mut self, key: &'a [u8], position: Position<'a>, descending: bool) {
        let candidate = (
            key,
            if descending {
                mirror(position)
            } else {
                position
            },
        );
        self.bound = Some(match self.bound.take() {
            None => candidate,
            Some(current) if descending => current.min(candidate),
            Some(current) => current.max(candidate),
        });
    }

    /// Appends the start condition on `key_column` (and `pk_column`) and its parameters.
    fn push_condition(
        &self,
        key_column: &str,
        pk_column: Option<&str>,
        descending: bool,
        sql: &mut String,
        params: &mut Vec<SqlValue>,
    ) {
        let Some((key, position)) = &self.bound else {
            return;
        };
        let (strict, inclusive) = if descending { ("<", "<=") } else { (">", ">=") };
        match position {
            Position::At(pk, bias) => {
                let op = if *bias == 0 { inclusive } else { strict };
                let pk_column = pk_column.expect("a primary-key position needs an index");
                sql.push_str(&format!(" AND ({key_column}, {pk_column}) {op} (?, ?)"));
                params.push(SqlKey(key).to_sql_value());
                params.push(SqlKey(pk).to_sql_value());
            }
            Position::Below | Position::Above => {
                let at_key = (*position == Position::Below) != descending;
                let op = if at_key { inclusive } else { strict };
                sql.push_str(&format!(" AND {key_column} {op} ?"));
                params.push(SqlKey(key).to_sql_value());
            }
        }
    }
}

/// The same start seen from descending travel (where "beyond" means below).
fn mirror(position: Position<'_>) -> Position<'_> {
    match position {
        Position::Below => Position::Above,
        Position::Above => Position::Below,
        Position::At(pk, bias) => Position::At(pk, -bias),
    }
}

/// Appends the condition of `range`'s far bound (upper ascending, lower descending).
fn push_far_bound(
    column: &str,
    range: &EncodedRange,
    descending: bool,
    sql: &mut String,
    params: &mut Vec<SqlValue>,
) {
    let (far, inclusive, strict) = if descending {
        (&range.lower, ">=", ">")
    } else {
        (&range.upper, "<=", "<")
    };
    let (op, key) = match far {
        Bound::Unbounded => return,
        Bound::Included(k) => (inclusive, k),
        Bound::Excluded(k) => (strict, k),
    };
    sql.push_str(&format!(" AND {column} {op} ?"));
    params.push(SqlKey(key).to_sql_value());
}

/// Records of a store in a key range, ascending or descending, at most `limit` (0 = all).
pub(crate) fn select_records(
    conn: &Connection,
    store_id: i64,
    range: &EncodedRange,
    descending: bool,
    limit: u32,
    with_values: bool,
) -> Result<Rows> {
    let (mut sql, params) = records_in_range(&select_records_sql(with_values, store_id), range);
    sql.push_str(if descending {
        " ORDER BY key DESC"
    } else {
        " ORDER BY key"
    });
    if limit > 0 {
        sql.push_str(&format!(" LIMIT {limit}"));
    }
    query_rows(
        conn,
        &sql,
        rusqlite::params_from_iter(params),
        Rows::new(false, with_values),
        limit,
    )
}

/// `SELECT` of a store's records' keys, and of their values when asked for.
fn select_records_sql(with_values: bool, store_id: i64) -> String {
    let table = record_table(store_id);
    if with_values {
        format!("SELECT key, value FROM {table}")
    } else {
        format!("SELECT key FROM {table}")
    }
}

/// `head` (a statement on a store's record table) restricted to the records in `range`, with
/// its parameters.
fn records_in_range(head: &str, range: &EncodedRange) -> (String, Vec<SqlValue>) {
    let mut conditions = String::new();
    let mut params = Vec::new();
    range_conditions("key", range, &mut conditions, &mut params);
    (with_conditions(head, &conditions), params)
}

/// `head` with `conditions` (each written as ` AND <condition>`, as the functions above write
/// them) as its `WHERE` clause; `head` alone when there are none.
fn with_conditions(head: &str, conditions: &str) -> String {
    match conditions.strip_prefix(" AND ") {
        Some(conditions) => format!("{head} WHERE {conditions}"),
        None => head.to_owned(),
    }
}

pub(crate) fn count_records(conn: &Connection, store_id: i64, range: &EncodedRange) -> Result<u64> {
    let head = format!("SELECT COUNT(*) FROM {}", record_table(store_id));
    let (sql, params) = records_in_range(&head, range);
    let n: i64 = conn
        .prepare_cached(&sql)
        .sql()?
        .query_row(rusqlite::params_from_iter(params), |r| r.get(0))
        .sql()?;
    Ok(n as u64)
}

/// Deletes the records of a store in a range (index entries are the caller's business).
pub(crate) fn delete_records(conn: &Connection, store_id: i64, range: &EncodedRange) -> Result<()> {
    let (sql, params) = records_in_range(&format!("DELETE FROM {}", record_table(store_id)), range);
    conn.prepare_cached(&sql)
        .sql()?
        .execute(rusqlite::params_from_iter(params))
        .sql()?;
    Ok(())
}

/// The next records of a store cursor, at most `limit` (at least 1): the first (or,
/// `descending`, last) records in `range` strictly beyond `after` and at or beyond `target`,
/// in the cursor's order.
#[allow(clippy::too_many_arguments)]
pub(crate) fn step_store(
    conn: &Connection,
    store_id: i64,
    range: &EncodedRange,
    descending: bool,
    after: Option<&[u8]>,
    target: Option<&[u8]>,
    with_value: bool,
    limit: u32,
) -> Result<Rows> {
    let (sql, params) = step_store_sql(
        store_id, range, descending, after, target, with_value, limit,
    );
    query_rows(
        conn,
        &sql,
        rusqlite::params_from_iter(params),
        Rows::new(false, with_value),
        limit,
    )
}

/// The statement of [`step_store`] and its parameters.
fn step_store_sql(
    store_id: i64,
    range: &EncodedRange,
    descending: bool,
    after: Option<&[u8]>,
    target: Option<&[u8]>,
    with_value: bool,
    limit: u32,
) -> (String, Vec<SqlValue>) {
    let mut start = Start::of_range(range, descending);
    if let Some(a) = after {
        start.tighten(a, Position::Above, descending);
    }
    if let Some(t) = target {
        start.tighten(t, Position::Below, descending);
    }
    let mut conditions = String::new();
    let mut params = Vec::new();
    start.push_condition("key", None, descending, &mut conditions, &mut params);
    push_far_bound("key", range, descending, &mut conditions, &mut params);
    let mut sql = with_conditions(&select_records_sql(with_value, store_id), &conditions);
    sql.push_str(if descending {
        " ORDER BY key DESC LIMIT ?"
    } else {
        " ORDER BY key LIMIT ?"
    });
    params.push(SqlValue::Integer(i64::from(limit.max(1))));
    (sql, params)
}

// ---- index entries ----

/// The most entries of one index one `INSERT` statement writes (see [`insert_index_entries`]).
const INDEX_ENTRIES_PER_INSERT: usize = 8;

/// The `INSERT OR IGNORE` statement writing `rows` (1 to [`INDEX_ENTRIES_PER_INSERT`]) entries
/// of one record to the table of index `index_id` (`?1` is the primary key; each entry adds a
/// key).
fn insert_index_entries_sql(index_id: i64, rows: usize) -> String {
    let values: Vec<String> = (0..rows).map(|i| format!("(?{}, ?1)", i + 2)).collect();
    format!(
        "INSERT OR IGNORE INTO {} (key, primary_key) VALUES {}",
        index_table(index_id),
        values.join(", ")
    )
}

/// Writes entries `(index id, encoded index key)`, all of one index, for the record with the
/// encoded primary key `primary_key`, in one statement ([`Kept::IndexEntries`] of
/// `entries.len()`, at most [`INDEX_ENTRIES_PER_INSERT`]): a multiEntry index's keys are
/// written together.
fn insert_index_entries(
    stmt: &mut Statement<'_>,
    primary_key: &[u8],
    entries: &[(i64, &[u8])],
) -> Result<()> {
    stmt.raw_bind_parameter(1, SqlKey(primary_key)).sql()?;
    for (i, (_, key)) in entries.iter().enumerate() {
        stmt.raw_bind_parameter(i + 2, SqlKey(key)).sql()?;
    }
    stmt.raw_execute().sql()?;
    Ok(())
}

/// Entries of an index in a key range, in index order (key, then primary key), ascending or
/// descending; with `unique`, only the entry with the lowest primary key of each index key.
/// At most `limit` (0 = all).
#[allow(clippy::too_many_arguments)]
pub(crate) fn select_index_entries(
    conn: &Connection,
    index_id: i64,
    store_id: i64,
    range: &EncodedRange,
    descending: bool,
    unique: bool,
    limit: u32,
    with_values: bool,
) -> Result<Rows> {
    let table = index_table(index_id);
    let mut params = Vec::new();
    let mut conditions = String::new();
    range_conditions("key", range, &mut conditions, &mut params);
    let mut inner = with_conditions(
        &if unique {
            format!("SELECT key, MIN(primary_key) AS primary_key FROM {table}")
        } else {
            format!("SELECT key, primary_key FROM {table}")
        },
        &conditions,
    );
    if unique {
        inner.push_str(" GROUP BY key");
    }
    let order = if descending {
        " ORDER BY e.key DESC, e.primary_key DESC"
    } else {
        " ORDER BY e.key, e.primary_key"
    };
    let mut sql = if with_values {
        format!(
            "SELECT e.key, e.primary_key, r.value FROM ({inner}) e JOIN {} r ON r.key = e.primary_key{order}",
            record_table(store_id)
        )
    } else {
        format!("SELECT e.key, e.primary_key FROM ({inner}) e{order}")
    };
    if limit > 0 {
        sql.push_str(&format!(" LIMIT {limit}"));
    }
    query_rows(
        conn,
        &sql,
        rusqlite::params_from_iter(params),
        Rows::new(true, with_values),
        limit,
    )
}

/// Runs a query whose rows are (key[, primary key][, value]) as `rows` holds them, appending
/// each row to `rows`; `limit` is the query's `LIMIT` (0: none), for which room is made once
/// the first row is in.
fn query_rows(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    mut rows: Rows,
    limit: u32,
) -> Result<Rows> {
    let (with_primary_key, with_value) = rows.holds();
    let mut stmt = conn.prepare_cached(sql).sql()?;
    let mut read = stmt.query(params).sql()?;
    while let Some(row) = read.next().sql()? {
        let key = column(row, 0, "key", ColumnKey::of)?;
        let primary_key = match with_primary_key {
            true => column(row, 1, "primary key", ColumnKey::of)?,
            false => ColumnKey::Other(&[]),
        };
        let value = match with_value {
            true => column(row, 1 + usize::from(with_primary_key), "value", |v| {
                v.as_blob()
            })?,
            false => &[],
        };
        rows.push(key.as_bytes(), primary_key.as_bytes(), value);
        if rows.len() == 1 && limit > 1 {
            rows.reserve_like_so_far(limit as usize - 1);
        }
    }
    rows.shrink_to_fit();
    Ok(rows)
}

/// Column `i` of `row`, which holds a `what`, read in place by `read`; a column of a type
/// `read` refuses is a damaged file.
fn column<'r, T>(
    row: &'r rusqlite::Row<'_>,
    i: usize,
    what: &str,
    read: impl FnOnce(ValueRef<'r>) -> FromSqlResult<T>,
) -> Result<T> {
    let value = row.get_ref(i).sql()?;
    read(value).map_err(|e| {
        Error::Unknown(format!(
            "storage failure: a {what} column holds {} data ({e})",
            value.data_type()
        ))
    })
}

pub(crate) fn count_index_entries(
    conn: &Connection,
    index_id: i64,
    range: &EncodedRange,
) -> Result<u64> {
    let mut conditions = String::new();
    let mut params = Vec::new();
    range_conditions("key", range, &mut conditions, &mut params);
    let head = format!("SELECT COUNT(*) FROM {}", index_table(index_id));
    let sql = with_conditions(&head, &conditions);
    let n: i64 = conn
        .prepare_cached(&sql)
        .sql()?
        .query_row(rusqlite::params_from_iter(params), |r| r.get(0))
        .sql()?;
    Ok(n as u64)
}

/// The next entries of an index cursor in `range` (see [`IndexStep`]), at most `limit` (at
/// least 1): the first in ascending (key, primary key) order or, `descending`, the last, in
/// the cursor's order.
#[allow(clippy::too_many_arguments)]
pub(crate) fn step_index(
    conn: &Connection,
    index_id: i64,
    store_id: i64,
    range: &EncodedRange,
    descending: bool,
    step: &IndexStep<'_>,
    with_value: bool,
    limit: u32,
) -> Result<Rows> {
    let (sql, params) = step_index_sql(
        index_id, store_id, range, descending, step, with_value, limit,
    );
    query_rows(
        conn,
        &sql,
        rusqlite::params_from_iter(params),
        Rows::new(true, with_value),
        limit,
    )
}

/// The statement of [`step_index`] and its parameters.
#[allow(clippy::too_many_arguments)]
fn step_index_sql(
    index_id: i64,
    store_id: i64,
    range: &EncodedRange,
    descending: bool,
    step: &IndexStep<'_>,
    with_value: bool,
    limit: u32,
) -> (String, Vec<SqlValue>) {
    let head = if with_value {
        format!(
            "SELECT e.key, e.primary_key, r.value FROM {} e JOIN {} r ON r.key = e.primary_key",
            index_table(index_id),
            record_table(store_id)
        )
    } else {
        format!(
            "SELECT e.key, e.primary_key FROM {} e",
            index_table(index_id)
        )
    };
    let mut conditions = String::new();
    let mut params = Vec::new();
    let mut start = Start::of_range(range, descending);
    if let Some((k, pk)) = step.after {
        start.tighten(k, Position::At(pk, 1), descending);
    }
    if let Some(k) = step.after_key {
        start.tighten(k, Position::Above, descending);
    }
    if let Some(k) = step.target {
        let at = step
            .target_primary_key
            .map_or(Position::Below, |pk| Position::At(pk, 0));
        start.tighten(k, at, descending);
    }
    start.push_condition(
        "e.key",
        Some("e.primary_key"),
        descending,
        &mut conditions,
        &mut params,
    );
    push_far_bound("e.key", range, descending, &mut conditions, &mut params);
    let mut sql = with_conditions(&head, &conditions);
    sql.push_str(if descending {
        " ORDER BY e.key DESC, e.primary_key DESC LIMIT ?"
    } else {
        " ORDER BY e.key, e.primary_key LIMIT ?"
    });
    params.push(SqlValue::Integer(i64::from(limit.max(1))));
    (sql, params)
}

/// The entry with the lowest primary key among those with index key `key` (no row when
/// there is none).
pub(crate) fn first_entry_with_key(
    conn: &Connection,
    index_id: i64,
    store_id: i64,
    key: &[u8],
    with_value: bool,
) -> Result<Rows> {
    let table = index_table(index_id);
    let sql = if with_value {
        format!("SELECT e.key, e.primary_key, r.value FROM {table} e JOIN {} r ON r.key = e.primary_key WHERE e.key = ?1 ORDER BY e.primary_key LIMIT 1", record_table(store_id))
    } else {
        format!("SELECT e.key, e.primary_key FROM {table} e WHERE e.key = ?1 ORDER BY e.primary_key LIMIT 1")
    };
    let params = params![SqlKey(key)];
    query_rows(conn, &sql, params, Rows::new(true, with_value), 1)
}

/// Reads the name and version stored in a database file without creating or changing
/// anything; `None` when the file is not an Indexa database.
pub(crate) fn peek_database_file(path: &Path) -> Result<Option<DatabaseRow>> {
    read_database_row(&open_read_only(path)?)
}

/// What a SQLite file under a database's name holds, read in one snapshot.
pub(crate) enum FileContents {
    /// An Indexa database.
    Database(DatabaseRow),
    /// No table at all: a database that another connection is creating looks so until its
    /// tables and database row are committed together.
    NoTable,
    /// Tables, but not Indexa's.
    Foreign,
}

/// Reads what the SQLite file at `path` holds, without changing it.
pub(crate) fn peek_file_contents(path: &Path) -> Result<FileContents> {
    let conn = open_read_only(path)?;
    // One read transaction, so the table count and the database row are of one snapshot. Its
    // first statement must read (and so take the snapshot) before anything depends on the
    // schema: a query on a table that does not exist fails when it is prepared, without
    // taking one, and the next read would see another connection's creation committed since.
    conn.execute_batch("BEGIN").sql()?;
    let (tables, ours): (i64, i64) = conn
        .query_row(
            "SELECT COUNT(*), COUNT(*) FILTER (WHERE name = 'database') FROM sqlite_master WHERE type = 'table'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .sql()?;
    let contents = if ours > 0 {
        match read_database_row(&conn)? {
            Some(row) => FileContents::Database(row),
            // The tables and the row are committed together, so this is not a database
            // being created.
            None => FileContents::Foreign,
        }
    } else if tables == 0 {
        FileContents::NoTable
    } else {
        FileContents::Foreign
    };
    conn.execute_batch("COMMIT").sql()?;
    Ok(contents)
}

/// A read-only connection to the file at `path`, for a look before it is opened for real.
fn open_read_only(path: &Path) -> Result<Connection> {
    let conn = Connection::open_with_flags(
        path,
        OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_NOFOLLOW,
    )
    .sql()?;
    conn.busy_timeout(std::time::Duration::from_secs(5)).sql()?;
    Ok(conn)
}

/// The statements of the per-record and per-transaction paths, which a connection keeps at
/// hand (see [`SqliteConnection`]); those on records name their object store's id, those on
/// index entries their index's id.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kept {
    Begin,
    BeginImmediate,
    Commit,
    Savepoint,
    ReleaseSavepoint,
    ReadVersion,
    ReadCurrentNumber,
    WriteCurrentNumber,
    ReadRecord(i64),
    RecordExists(i64),
    PutRecord(i64),
    InsertRecord(i64),
    IndexKeyTaken(i64),
    DeleteIndexEntry(i64),
    /// `INSERT OR IGNORE` of 1 to [`INDEX_ENTRIES_PER_INSERT`] entries of one record into an
    /// index's table ([`insert_index_entries_sql`]).
    IndexEntries(i64, usize),
}

/// How many slots of each single-entry index statement a connection keeps, an index's slot
/// being its id modulo this: the statements of up to this many indexes with consecutive ids
/// (as an object store's indexes mostly are) are kept side by side. Indexes whose ids fall on
/// one slot, and the multi-entry inserts of several multiEntry indexes (one slot per entry
/// count), swap their statements through rusqlite's cache.
const INDEX_SLOTS: usize = 8;

/// How many statements a connection keeps (see [`Kept::slot`]).
const KEPT: usize = 12 + 3 * INDEX_SLOTS + INDEX_ENTRIES_PER_INSERT - 1;

impl Kept {
    fn slot(self) -> usize {
        match self {
            Kept::Begin => 0,
            Kept::BeginImmediate => 1,
            Kept::Commit => 2,
            Kept::Savepoint => 3,
            Kept::ReleaseSavepoint => 4,
            Kept::ReadVersion => 5,
            Kept::ReadCurrentNumber => 6,
            Kept::WriteCurrentNumber => 7,
            Kept::ReadRecord(_) => 8,
            Kept::RecordExists(_) => 9,
            Kept::PutRecord(_) => 10,
            Kept::InsertRecord(_) => 11,
            Kept::IndexKeyTaken(index) => 12 + index_slot(index),
            Kept::DeleteIndexEntry(index) => 12 + INDEX_SLOTS + index_slot(index),
            Kept::IndexEntries(index, 1) => 12 + 2 * INDEX_SLOTS + index_slot(index),
            // Several entries of one index (a multiEntry index's): one slot per row count.
            Kept::IndexEntries(_, rows) => 12 + 3 * INDEX_SLOTS + rows - 2,
        }
    }

    fn sql(self) -> Cow<'static, str> {
        let on_records = |store: i64, sql: &str| -> Cow<'static, str> {
            sql.replace("{table}", &record_table(store)).into()
        };
        let on_entries = |index: i64, sql: &str| -> Cow<'static, str> {
            sql.replace("{table}", &index_table(index)).into()
        };
        match self {
            Kept::Begin => "BEGIN".into(),
            Kept::BeginImmediate => "BEGIN IMMEDIATE".into(),
            Kept::Commit => "COMMIT".into(),
            Kept::Savepoint => "SAVEPOINT request".into(),
            Kept::ReleaseSavepoint => "RELEASE request".into(),
            Kept::ReadVersion => READ_VERSION.into(),
            Kept::ReadCurrentNumber => {
                "SELECT current_number FROM object_store WHERE id = ?1".into()
            }
            Kept::WriteCurrentNumber => {
                "UPDATE object_store SET current_number = ?2 WHERE id = ?1".into()
            }
            Kept::ReadRecord(store) => {
                on_records(store, "SELECT value FROM {table} WHERE key = ?1")
            }
            Kept::RecordExists(store) => on_records(store, "SELECT 1 FROM {table} WHERE key = ?1"),
            Kept::PutRecord(store) => on_records(
                store,
                "INSERT OR REPLACE INTO {table} (key, value) VALUES (?1, ?2)",
            ),
            Kept::InsertRecord(store) => {
                on_records(store, "INSERT INTO {table} (key, value) VALUES (?1, ?2)")
            }
            Kept::IndexKeyTaken(index) => on_entries(
                index,
                "SELECT 1 FROM {table} WHERE key = ?1 AND primary_key <> ?2 LIMIT 1",
            ),
            Kept::DeleteIndexEntry(index) => on_entries(
                index,
                "DELETE FROM {table} WHERE key = ?1 AND primary_key = ?2",
            ),
            Kept::IndexEntries(index, rows) => insert_index_entries_sql(index, rows).into(),
        }
    }
}

/// The slot of an index's statement among the [`INDEX_SLOTS`] of its kind.
fn index_slot(index_id: i64) -> usize {
    index_id.rem_euclid(INDEX_SLOTS as i64) as usize
}

/// A connection's kept statements, by [`Kept::slot`], each taken from rusqlite's statement
/// cache on first use and given back when its slot is wanted for another object store or
/// index.
type KeptStatements<'c> = [RefCell<Option<(Kept, CachedStatement<'c>)>>; KEPT];

self_cell::self_cell!(
    /// A SQLite connection and the statements it keeps.
    struct ConnectionWithStatements {
        owner: Connection,
        #[not_covariant]
        dependent: KeptStatements,
    }
);

/// A connection to a database's SQLite file, with its `synchronous` setting as last set
/// (`None`: not set yet), so the pragma runs only when a transaction's durability changes it.
///
/// The statements run for every record or transaction ([`Kept`]) are kept here: rusqlite's
/// statement cache finds a statement by hashing its SQL text and moves it out of and back
/// into an LRU list at every use, about 1,100 instructions, as much as a twelfth of a point
/// read. A slot holds the statement of one object store (or index) at a time; a use for
/// another swaps it through the cache. Other statements go through that cache.
pub(crate) struct SqliteConnection {
    conn: ConnectionWithStatements,
    synchronous_full: Cell<Option<bool>>,
    /// Tables the running transaction must drop before it commits ([`drop_table`]).
    tables_to_drop: RefCell<Vec<String>>,
    /// Whether the connection reads its file through a memory map ([`MAPPED_BYTES`]).
    mapped: Cell<bool>,
    /// How full the page cache is, in bytes, when the map is set ([`MAP_FROM_CACHE_BYTES`]).
    map_from: i64,
}

// SAFETY: the kept statements are `!Send` only because they hold raw SQLite statement handles.
// They belong to the connection beside them, are never handed out, and move with it to another
// thread as a whole, which SQLite allows (rusqlite opens connections with
// `SQLITE_OPEN_NO_MUTEX`: a connection and its statements may be used by one thread at a time).
// `SqliteConnection` is not `Sync`, so no two threads use them at once.
unsafe impl Send for SqliteConnection {}

/// Opens (creating if needed) the SQLite file of a database (see [`open_connection`]).
pub(crate) fn open(path: &Path) -> Result<crate::backend::Connection> {
    Ok(Box::new(SqliteConnection::open(
        path,
        MAP_FROM_CACHE_BYTES,
    )?))
}

impl SqliteConnection {
    /// A new connection to the file at `path` that maps the file once its page cache holds
    /// `map_from` bytes.
    fn open(path: &Path, map_from: i64) -> Result<SqliteConnection> {
        Ok(SqliteConnection {
            conn: ConnectionWithStatements::new(open_connection(path)?, |_| {
                std::array::from_fn(|_| RefCell::new(None))
            }),
            synchronous_full: Cell::new(None),
            tables_to_drop: RefCell::new(Vec::new()),
            mapped: Cell::new(false),
            map_from,
        })
    }

    fn conn(&self) -> &Connection {
        self.conn.borrow_owner()
    }

    /// Sets `PRAGMA synchronous` for a writing transaction: `FULL` when `durable`, else
    /// `NORMAL` (unchanged when already so).
    fn set_durable(&self, durable: bool) -> Result<()> {
        let mut current = self.synchronous_full.get();
        let result = set_synchronous(self.conn(), &mut current, durable);
        self.synchronous_full.set(current);
        result
    }

    /// Before a transaction: once the page cache holds [`SqliteConnection::map_from`] bytes
    /// (see [`MAP_FROM_CACHE_BYTES`]), the connection reads its file through a memory map
    /// from then on. Best effort: should SQLite refuse the setting, the connection reads as
    /// before and the transaction goes ahead.
    fn map_once_cache_fills(&self) {
        if !MAPS || self.mapped.get() || page_cache_bytes(self.conn()) < self.map_from {
            return;
        }
        self.mapped.set(true);
        let _ = set_mmap_size(self.conn(), MAPPED_BYTES);
    }

    /// Runs `f` on the kept statement `which`, taking it from rusqlite's statement cache when
    /// its slot holds another (or none). Should the statement be in use further up the stack,
    /// this use takes one of its own from the cache.
    fn with_kept<R>(
        &self,
        which: Kept,
        f: impl FnOnce(&mut Statement<'_>) -> Result<R>,
    ) -> Result<R> {
        self.conn.with_dependent(|conn, kept| {
            let Ok(mut slot) = kept[which.slot()].try_borrow_mut() else {
                let mut cached = conn.prepare_cached(&which.sql()).sql()?;
                return f(&mut cached);
            };
            match &mut *slot {
                Some((held, stmt)) if *held == which => f(stmt),
                _ => {
                    // The statement held before goes back to the cache first.
                    *slot = None;
                    let stmt = conn.prepare_cached(&which.sql()).sql()?;
                    f(&mut slot.insert((which, stmt)).1)
                }
            }
        })
    }

    /// Writes a record with [`Kept::PutRecord`] or [`Kept::InsertRecord`]. A key that is not
    /// a whole number, refused by a [`RecordTable::NumberKeys`] table (`SQLITE_MISMATCH`),
    /// widens the table first.
    fn write_record(&self, which: Kept, store_id: i64, key: &[u8], value: &[u8]) -> Result<()> {
        let run = |stmt: &mut Statement<'_>| Ok(stmt.execute(params![SqlKey(key), value]));
        match self.with_kept(which, run)? {
            Err(e) if e.sqlite_error_code() == Some(ErrorCode::TypeMismatch) => {
                if let Some(old) = widen_record_table(self.conn(), store_id)? {
                    self.tables_to_drop.borrow_mut().push(old);
                }
                self.with_kept(which, |stmt| write(stmt, params![SqlKey(key), value]))
            }
            other => other.map(drop).sql(),
        }
    }
}

impl StorageConnection for SqliteConnection {
    /// Starts a reading SQLite transaction (its snapshot is taken at the first read).
    fn begin_read(&self) -> Result<()> {
        self.map_once_cache_fills();
        self.with_kept(Kept::Begin, run)
    }

    /// Starts a writing SQLite transaction, taking the write lock up front (`IMMEDIATE`).
    fn begin_write(&self, durable: bool) -> Result<()> {
        self.map_once_cache_fills();
        self.set_durable(durable)?;
        self.with_kept(Kept::BeginImmediate, run)
    }

    /// As `begin_write`, with SQLite's busy timeout off for the `BEGIN IMMEDIATE`: a write
    /// lock held by another connection answers `SQLITE_BUSY` at once.
    fn try_begin_write(&self, durable: bool) -> Result<bool> {
        self.map_once_cache_fills();
        self.set_durable(durable)?;
        self.conn().busy_timeout(std::time::Duration::ZERO).sql()?;
        let begun = self.with_kept(Kept::BeginImmediate, |stmt| match stmt.execute([]) {
            Ok(_) => Ok(true),
            Err(e) if e.sqlite_error_code() == Some(ErrorCode::DatabaseBusy) => Ok(false),
            Err(e) => Err(sql_error(e)),
        });
        // `sqlite3_busy_timeout` fails only on a closed connection; the begin's own error
        // comes first.
        let restored = self.conn().busy_timeout(BUSY_TIMEOUT).sql();
        match (begun, restored) {
            (Err(e), _) => Err(e),
            (Ok(begun), Ok(())) => Ok(begun),
            (Ok(begun), Err(e)) => {
                if begun {
                    rollback(self.conn());
                }
                Err(e)
            }
        }
    }

    fn commit(&self) -> Result<()> {
        drop_left_tables(self.conn(), self.tables_to_drop.take())?;
        self.with_kept(Kept::Commit, run)
    }

    /// Turns the automatic checkpoint off for the commit and back on after it: the log may
    /// then stay above the threshold until the next plain commit, which checkpoints.
    fn commit_without_checkpoint(&self) -> Result<()> {
        set_wal_autocheckpoint(self.conn(), 0);
        let committed = self.commit();
        set_wal_autocheckpoint(self.conn(), WAL_AUTOCHECKPOINT);
        committed
    }

    /// `sqlite3_db_release_memory`: the page cache's unused pages go back to the allocator.
    /// The connection's map of its file goes too (its pages leave the process's resident
    /// set); it is set again once the page cache fills again.
    fn release_memory(&self) -> Result<()> {
        if self.mapped.replace(false) {
            set_mmap_size(self.conn(), 0)?;
        }
        self.conn().release_memory().map_err(sql_error)
    }

    /// Outside autocommit mode: a `BEGIN` not ended by a `COMMIT` or `ROLLBACK`.
    fn in_transaction(&self) -> bool {
        !self.conn().is_autocommit()
    }

    fn rollback(&self) {
        self.tables_to_drop.take();
        rollback(self.conn())
    }

    /// Opens a savepoint inside the running transaction (savepoints nest).
    fn savepoint(&self) -> Result<()> {
        self.with_kept(Kept::Savepoint, run)
    }

    /// Keeps the changes since the innermost savepoint and closes it.
    fn release_savepoint(&self) -> Result<()> {
        self.with_kept(Kept::ReleaseSavepoint, run)
    }

    fn rollback_to_savepoint(&self) -> Result<()> {
        rollback_to_savepoint(self.conn())
    }

    fn initialize(&self, name: &Utf16String) -> Result<DatabaseRow> {
        initialize(self.conn(), name)
    }

    /// Runs at every transaction's start, so its statement is kept.
    fn read_version(&self) -> Result<u64> {
        self.with_kept(Kept::ReadVersion, version_of)
    }

    fn write_version(&self, version: u64) -> Result<()> {
        write_version(self.conn(), version)
    }

    fn load_stores(&self) -> Result<Vec<StoreRow>> {
        load_stores(self.conn())
    }

    fn load_indexes(&self) -> Result<Vec<IndexRow>> {
        load_indexes(self.conn())
    }

    fn insert_store(
        &self,
        name: &Utf16String,
        key_path: Option<(&str, bool)>,
        auto_increment: bool,
    ) -> Result<i64> {
        insert_store(self.conn(), name, key_path, auto_increment)
    }

    fn delete_store(&self, store_id: i64) -> Result<()> {
        let left = delete_store(self.conn(), store_id)?;
        self.tables_to_drop.borrow_mut().extend(left);
        Ok(())
    }

    fn rename_store(&self, store_id: i64, name: &Utf16String) -> Result<()> {
        rename_store(self.conn(), store_id, name)
    }

    fn insert_index(
        &self,
        store_id: i64,
        name: &Utf16String,
        key_path: (&str, bool),
        unique: bool,
        multi_entry: bool,
    ) -> Result<i64> {
        insert_index(self.conn(), store_id, name, key_path, unique, multi_entry)
    }

    fn delete_index(&self, index_id: i64) -> Result<()> {
        let left = delete_index(self.conn(), index_id)?;
        self.tables_to_drop.borrow_mut().extend(left);
        Ok(())
    }

    fn rename_index(&self, index_id: i64, name: &Utf16String) -> Result<()> {
        rename_index(self.conn(), index_id, name)
    }

    /// Runs at a key generator's first use in a transaction, so its statement is kept.
    fn read_current_number(&self, store_id: i64) -> Result<u64> {
        self.with_kept(Kept::ReadCurrentNumber, |stmt| {
            let n: i64 = stmt.query_row([store_id], |r| r.get(0)).sql()?;
            Ok(n.max(0) as u64)
        })
    }

    /// Runs at the commit of a transaction that used a key generator, so its statement is
    /// kept.
    fn write_current_number(&self, store_id: i64, n: u64) -> Result<()> {
        self.with_kept(Kept::WriteCurrentNumber, |stmt| {
            stmt.execute(params![store_id, n as i64]).sql()?;
            Ok(())
        })
    }

    fn read_record(
        &self,
        store_id: i64,
        key: &[u8],
        read: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<bool> {
        self.with_kept(Kept::ReadRecord(store_id), |stmt| {
            Ok(read_record(stmt, key, read)?.is_some())
        })
    }

    fn record_exists(&self, store_id: i64, key: &[u8]) -> Result<bool> {
        self.with_kept(Kept::RecordExists(store_id), |stmt| {
            exists(stmt, [SqlKey(key)])
        })
    }

    fn put_record(&self, store_id: i64, key: &[u8], value: &[u8]) -> Result<()> {
        self.write_record(Kept::PutRecord(store_id), store_id, key, value)
    }

    fn insert_record(&self, store_id: i64, key: &[u8], value: &[u8]) -> Result<()> {
        self.write_record(Kept::InsertRecord(store_id), store_id, key, value)
    }

    fn clear_records(&self, store_id: i64, index_ids: &[i64]) -> Result<()> {
        clear_records(self.conn(), store_id, index_ids)
    }

    fn select_records(
        &self,
        store_id: i64,
        range: &EncodedRange,
        descending: bool,
        limit: u32,
        with_values: bool,
    ) -> Result<Rows> {
        select_records(self.conn(), store_id, range, descending, limit, with_values)
    }

    fn count_records(&self, store_id: i64, range: &EncodedRange) -> Result<u64> {
        count_records(self.conn(), store_id, range)
    }

    fn delete_records(&self, store_id: i64, range: &EncodedRange) -> Result<()> {
        delete_records(self.conn(), store_id, range)
    }

    fn step_store(
        &self,
        store_id: i64,
        range: &EncodedRange,
        descending: bool,
        after: Option<&[u8]>,
        target: Option<&[u8]>,
        with_value: bool,
        limit: u32,
    ) -> Result<Rows> {
        step_store(
            self.conn(),
            store_id,
            range,
            descending,
            after,
            target,
            with_value,
            limit,
        )
    }

    fn index_key_taken(&self, index_id: i64, key: &[u8], primary_key: &[u8]) -> Result<bool> {
        self.with_kept(Kept::IndexKeyTaken(index_id), |stmt| {
            exists(stmt, params![SqlKey(key), SqlKey(primary_key)])
        })
    }

    /// One statement per index (entries of one index come together), of at most
    /// [`INDEX_ENTRIES_PER_INSERT`] entries.
    fn insert_index_entries(&self, primary_key: &[u8], entries: &[(i64, &[u8])]) -> Result<()> {
        for same_index in entries.chunk_by(|a, b| a.0 == b.0) {
            let index_id = same_index[0].0;
            for chunk in same_index.chunks(INDEX_ENTRIES_PER_INSERT) {
                self.with_kept(Kept::IndexEntries(index_id, chunk.len()), |stmt| {
                    insert_index_entries(stmt, primary_key, chunk)
                })?;
            }
        }
        Ok(())
    }

    fn delete_index_entry(&self, index_id: i64, key: &[u8], primary_key: &[u8]) -> Result<()> {
        self.with_kept(Kept::DeleteIndexEntry(index_id), |stmt| {
            write(stmt, params![SqlKey(key), SqlKey(primary_key)])
        })
    }

    fn select_index_entries(
        &self,
        index_id: i64,
        store_id: i64,
        range: &EncodedRange,
        descending: bool,
        unique: bool,
        limit: u32,
        with_values: bool,
    ) -> Result<Rows> {
        select_index_entries(
            self.conn(),
            index_id,
            store_id,
            range,
            descending,
            unique,
            limit,
            with_values,
        )
    }

    fn count_index_entries(&self, index_id: i64, range: &EncodedRange) -> Result<u64> {
        count_index_entries(self.conn(), index_id, range)
    }

    fn step_index(
        &self,
        index_id: i64,
        store_id: i64,
        range: &EncodedRange,
        descending: bool,
        step: &IndexStep<'_>,
        with_value: bool,
        limit: u32,
    ) -> Result<Rows> {
        step_index(
            self.conn(),
            index_id,
            store_id,
            range,
            descending,
            step,
            with_value,
            limit,
        )
    }

    fn first_entry_with_key(
        &self,
        index_id: i64,
        store_id: i64,
        key: &[u8],
        with_value: bool,
    ) -> Result<Rows> {
        first_entry_with_key(self.conn(), index_id, store_id, key, with_value)
    }

    #[cfg(test)]
    fn sqlite(&self) -> Option<&Connection> {
        Some(self.conn())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The workspace builds SQLite with the options of `.cargo/config.toml`: a page cache per
    /// connection (no process-wide cache behind one mutex) and no allocation counting.
    #[test]
    fn sqlite_is_built_with_the_workspace_options() {
        // A LIBSQLITE3_FLAGS of one's own replaces the workspace's (cargo's `[env]` does not
        // override it), and then SQLite is built as that asks.
        let workspace = include_str!("../../../../.cargo/config.toml")
            .lines()
            .find_map(|l| l.strip_prefix("LIBSQLITE3_FLAGS = "))
            .map(|v| v.trim_matches('"'));
        assert!(
            workspace.is_some(),
            ".cargo/config.toml sets LIBSQLITE3_FLAGS"
        );
        if option_env!("LIBSQLITE3_FLAGS") != workspace {
            return;
        }
        let conn = Connection::open_in_memory().unwrap();
        let options: Vec<String> = conn
            .prepare("PRAGMA compile_options")
            .unwrap()
            .query_map([], |row| row.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert!(
            options.iter().any(|o| o == "DEFAULT_MEMSTATUS=0"),
            "{options:?}"
        );
        assert!(
            !options.iter().any(|o| o == "ENABLE_MEMORY_MANAGEMENT"),
            "{options:?}"
        );
        assert!(options.iter().any(|o| o == "THREADSAFE=1"), "{options:?}");
    }

    /// A new database file with object store "s" (its id returned), in a writing
    /// transaction; the directory goes when the first value is dropped.
    fn writing_on_a_new_store() -> (tempfile::TempDir, crate::backend::Connection, i64) {
        let dir = tempfile::tempdir().unwrap();
        let conn = open(&dir.path().join("db.sqlite")).unwrap();
        conn.initialize(&Utf16String::from("db")).unwrap();
        conn.begin_write(false).unwrap();
        let store = conn
            .insert_store(&Utf16String::from("s"), None, false)
            .unwrap();
        (dir, conn, store)
    }

    /// A kept statement in use further up the stack (here, a record read from inside the
    /// reading of another) is not taken twice: the inner use gets its own statement.
    #[test]
    fn a_kept_statement_in_use_is_not_shared() {
        let (_dir, conn, store) = writing_on_a_new_store();
        conn.put_record(store, b"a", b"first").unwrap();
        conn.put_record(store, b"b", b"second").unwrap();
        let mut seen = Vec::new();
        let found = conn
            .read_record(store, b"a", &mut |outer| {
                seen.push(outer.to_vec());
                conn.read_record(store, b"b", &mut |inner| {
                    seen.push(inner.to_vec());
                    Ok(())
                })?;
                seen.push(outer.to_vec());
                Ok(())
            })
            .unwrap();
        conn.commit().unwrap();
        assert!(found);
        assert_eq!(
            seen,
            [b"first".to_vec(), b"second".to_vec(), b"first".to_vec()]
        );
    }

    /// A cursor step binds a new `LIMIT` (and new bounds) each time; the statement is prepared
    /// once, not again at every step (SQLite prepares again when a bound value can change
    /// the plan, unless the connection has the query planner stability guarantee).
    #[test]
    fn cursor_steps_do_not_prepare_their_statement_again() {
        let (_dir, conn, store) = writing_on_a_new_store();
        for k in [b"a", b"b", b"c", b"d", b"e"] {
            conn.put_record(store, k, b"v").unwrap();
        }
        let all = range(Bound::Unbounded, Bound::Unbounded);
        let mut after: Option<Vec<u8>> = None;
        let mut seen = Vec::new();
        for limit in [1, 2, 4] {
            let rows = conn
                .step_store(store, &all, false, after.as_deref(), None, true, limit)
                .unwrap();
            after = rows.iter().last().map(|(k, _, _)| k.to_vec());
            seen.extend(rows.iter().map(|(k, _, _)| k.to_vec()));
        }
        assert_eq!(seen, [b"a", b"b", b"c", b"d", b"e"].map(|k| k.to_vec()));
        let (sql, _) = step_store_sql(store, &all, false, Some(b"a"), None, true, 1);
        let stmt = conn.sqlite().unwrap().prepare_cached(&sql).unwrap();
        assert_eq!(stmt.get_status(rusqlite::StatementStatus::RePrepare), 0);
        drop(stmt);
        conn.commit().unwrap();
    }

    /// Processes creating one database at once race to switch the new file to WAL; one that
    /// finds another's write lock must wait for it, not fail with "database is locked"
    /// (SQLite's switch reads, then upgrades to a write without its busy handler).
    #[test]
    fn switching_a_new_file_to_wal_waits_for_another_writer() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db-x.indexa");
        let other = Connection::open(&path).unwrap();
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(300));
            other.execute_batch("COMMIT").unwrap();
        });
        let conn = open_connection(&path).unwrap();
        release.join().unwrap();
        let mode: String = conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
    }

    /// The size of the memory map `c` reads its file through (0: none).
    fn mapped(c: &SqliteConnection) -> i64 {
        c.conn()
            .query_row("PRAGMA mmap_size", [], |r| r.get(0))
            .unwrap()
    }

    /// A connection reads its file through a memory map ([`MAPPED_BYTES`]; SQLite's default
    /// is none) from the first transaction after its page cache held `map_from` bytes, not
    /// before; releasing its memory unmaps it until the cache fills again.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn a_connection_maps_its_file_once_its_page_cache_fills() {
        let dir = tempfile::tempdir().unwrap();
        let c = SqliteConnection::open(&dir.path().join("db-x.indexa"), 1 << 20).unwrap();
        let insert = |n: usize| {
            c.begin_write(false).unwrap();
            for _ in 0..n {
                c.conn()
                    .execute("INSERT INTO t VALUES (zeroblob(3000))", [])
                    .unwrap();
            }
            c.commit().unwrap();
        };
        c.conn().execute_batch("CREATE TABLE t (v BLOB)").unwrap();
        insert(1);
        c.begin_read().unwrap();
        c.commit().unwrap();
        assert!(page_cache_bytes(c.conn()) < 1 << 20);
        assert_eq!(mapped(&c), 0);
        insert(400);
        assert!(page_cache_bytes(c.conn()) >= 1 << 20);
        assert_eq!(mapped(&c), 0);
        insert(1);
        assert_eq!(mapped(&c), MAPPED_BYTES);
        c.release_memory().unwrap();
        assert_eq!(mapped(&c), 0);
        c.begin_read().unwrap();
        let count: i64 = c
            .conn()
            .query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
            .unwrap();
        assert_eq!(count, 402);
        c.commit().unwrap();
        assert_eq!(mapped(&c), 0);
    }

    /// A mapped connection reads what another connection committed after its map was set,
    /// in pages of the write-ahead log and, after checkpoints, in pages of a file that grew.
    #[cfg(target_pointer_width = "64")]
    #[test]
    fn a_mapped_connection_reads_other_connections_commits() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db-x.indexa");
        let writer = SqliteConnection::open(&path, 0).unwrap();
        let reader = SqliteConnection::open(&path, 0).unwrap();
        writer
            .conn()
            .execute_batch("CREATE TABLE t (k INTEGER PRIMARY KEY, v BLOB)")
            .unwrap();
        let sum = |c: &SqliteConnection| -> (i64, i64) {
            c.begin_read().unwrap();
            let got = c
                .conn()
                .query_row("SELECT COUNT(*), TOTAL(length(v)) FROM t", [], |r| {
                    Ok((r.get(0)?, r.get::<_, f64>(1)? as i64))
                })
                .unwrap();
            c.commit().unwrap();
            got
        };
        let write = |rows: std::ops::Range<i64>| {
            assert!(writer.try_begin_write(false).unwrap());
            for k in rows {
                writer
                    .conn()
                    .execute("INSERT INTO t VALUES (?1, zeroblob(1000))", [k])
                    .unwrap();
            }
            writer.commit().unwrap();
        };
        // Fully checkpointed: no reader held the log back.
        let checkpoint = || {
            let busy: i64 = writer
                .conn()
                .query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |r| r.get(0))
                .unwrap();
            assert_eq!(busy, 0);
        };
        write(0..10);
        assert_eq!(mapped(&writer), MAPPED_BYTES);
        assert_eq!(sum(&reader), (10, 10_000));
        assert_eq!(mapped(&reader), MAPPED_BYTES);
        write(10..500);
        assert_eq!(sum(&reader), (500, 500_000));
        checkpoint();
        assert_eq!(sum(&reader), (500, 500_000));
        write(500..2000);
        checkpoint();
        assert_eq!(sum(&reader), (2000, 2_000_000));
    }

    /// A new file's tables and row are committed with `synchronous=OFF` (the statements a
    /// new file's initialization runs, in order, traced); the setting is back to SQLite's
    /// default (FULL, 2) afterwards, before anything else is written. An existing file's
    /// opening leaves the setting alone.
    #[test]
    fn a_new_files_creation_commits_unflushed_then_synchronous_is_full() {
        thread_local! {
            static RAN: RefCell<Vec<String>> = const { RefCell::new(Vec::new()) };
        }
        fn record(event: rusqlite::trace::TraceEvent<'_>) {
            if let rusqlite::trace::TraceEvent::Stmt(_, sql) = event {
                RAN.with(|ran| ran.borrow_mut().push(sql.trim().to_owned()));
            }
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db-x.indexa");
        let synchronous = |conn: &Connection| -> i64 {
            conn.query_row("PRAGMA synchronous", [], |r| r.get(0))
                .unwrap()
        };
        let traced = |conn: &Connection| {
            RAN.with(|ran| ran.borrow_mut().clear());
            conn.trace_v2(
                rusqlite::trace::TraceEventCodes::SQLITE_TRACE_STMT,
                Some(record),
            );
            let row = initialize(conn, &Utf16String::from("x")).unwrap();
            assert_eq!((row.name, row.version), (Utf16String::from("x"), 0));
            RAN.with(|ran| ran.take())
        };
        let conn = open_connection(&path).unwrap();
        let ran = traced(&conn);
        let at = |sql: &str| ran.iter().position(|s| s == sql);
        let (off, begin, full) = (
            at("PRAGMA synchronous=OFF"),
            at("BEGIN IMMEDIATE"),
            at("PRAGMA synchronous=FULL"),
        );
        let commit = ran.iter().rposition(|s| s == "COMMIT");
        assert!(
            off.is_some() && off < begin && begin < commit && commit < full,
            "{ran:?}"
        );
        assert_eq!(synchronous(&conn), 2);
        drop(conn);
        let conn = open_connection(&path).unwrap();
        let ran = traced(&conn);
        assert!(
            !ran.iter().any(|s| s.starts_with("PRAGMA synchronous")),
            "{ran:?}"
        );
        assert_eq!(synchronous(&conn), 2);
    }

    /// A crash that loses a new file's unflushed tables and row (its log, never flushed)
    /// leaves the database file as the switch to WAL mode flushed it, without tables; such a
    /// file opens as a new database. The loss is made by copying the database file alone
    /// while the creating connection, whose tables and row are only in the log, is still open.
    #[test]
    fn a_file_whose_unflushed_creation_was_lost_opens_as_new() {
        let dir = tempfile::tempdir().unwrap();
        let created = dir.path().join("db-x.indexa");
        let conn = open_connection(&created).unwrap();
        initialize(&conn, &Utf16String::from("x")).unwrap();
        let lost = dir.path().join("db-y.indexa");
        std::fs::copy(&created, &lost).unwrap();
        drop(conn);
        let conn = open_connection(&lost).unwrap();
        let tables: i64 = conn
            .query_row("SELECT COUNT(*) FROM sqlite_master", [], |r| r.get(0))
            .unwrap();
        assert_eq!(tables, 0);
        let row = initialize(&conn, &Utf16String::from("x")).unwrap();
        assert_eq!((row.name, row.version), (Utf16String::from("x"), 0));
        assert_eq!(
            read_database_row(&conn).unwrap().map(|r| r.version),
            Some(0)
        );
    }

    /// A file peeked at while another connection creates the database in it is either still
    /// without tables or a whole database, never "tables, but not Indexa's" (the count and
    /// the row are read in one snapshot).
    #[test]
    fn peeking_at_a_database_being_created_never_sees_a_foreign_file() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..200 {
            let path = dir.path().join(format!("db-{i}.indexa"));
            let creator = {
                let path = path.clone();
                std::thread::spawn(move || {
                    let conn = open_connection(&path).unwrap();
                    initialize(&conn, &Utf16String::from("x")).unwrap();
                })
            };
            loop {
                match peek_file_contents(&path) {
                    Ok(FileContents::Database(row)) => {
                        assert_eq!(row.version, 0);
                        break;
                    }
                    Ok(FileContents::NoTable) | Err(_) => {}
                    Ok(FileContents::Foreign) => panic!("file {i} looked foreign"),
                }
            }
            creator.join().unwrap();
        }
    }

    /// SQLite's plan for a statement, one detail line per step.
    fn plan(conn: &Connection, sql: &str, params: &[SqlValue]) -> Vec<String> {
        let mut stmt = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        stmt.query_map(rusqlite::params_from_iter(params), |r| {
            r.get::<_, String>(3)
        })
        .unwrap()
        .collect::<rusqlite::Result<Vec<_>>>()
        .unwrap()
    }

    /// The tables of a new file, with the record tables of stores 1 and 2 and the table of
    /// index 1.
    fn schema() -> Connection {
        let conn = Connection::open_in_memory().unwrap();
        conn.execute_batch(SCHEMA).unwrap();
        create_record_table(&conn, 1, RecordTable::AnyKeys).unwrap();
        create_record_table(&conn, 2, RecordTable::AnyKeys).unwrap();
        create_index_table(&conn, 1).unwrap();
        conn
    }

    fn range(lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> EncodedRange {
        EncodedRange {
            lower: lower.map(<[u8]>::to_vec),
            upper: upper.map(<[u8]>::to_vec),
        }
    }

    #[test]
    fn an_index_step_seeks_to_the_position_past_the_ranges_start() {
        let conn = schema();
        let r = range(Bound::Included(b"\x10"), Bound::Excluded(b"\x90"));
        let step = IndexStep {
            after: Some((b"\x30", b"\x31")),
            after_key: None,
            target: None,
            target_primary_key: None,
        };
        let (sql, params) = step_index_sql(1, 2, &r, false, &step, true, 8);
        assert_eq!(
            plan(&conn, &sql, &params),
            [
                "SEARCH e USING PRIMARY KEY ((key,primary_key)>(?,?) AND key<?)",
                "SEARCH r USING PRIMARY KEY (key=?)"
            ]
        );
        assert_eq!(
            params.len(),
            4,
            "the range's lower bound is not written: {sql}"
        );
        let (sql, params) = step_index_sql(1, 2, &r, true, &step, false, 8);
        assert_eq!(
            plan(&conn, &sql, &params),
            ["SEARCH e USING PRIMARY KEY (key>? AND (key,primary_key)<(?,?))"]
        );
    }

    #[test]
    fn an_index_step_keeps_the_tightest_start() {
        let r = range(Bound::Included(b"\x10"), Bound::Unbounded);
        // continuePrimaryKey beyond the position: the target is the start.
        let step = IndexStep {
            after: Some((b"\x30", b"\x31")),
            after_key: None,
            target: Some(b"\x30"),
            target_primary_key: Some(b"\x35"),
        };
        let (sql, params) = step_index_sql(1, 2, &r, false, &step, false, 1);
        assert!(
            sql.contains("WHERE (e.key, e.primary_key) >= (?, ?)"),
            "{sql}"
        );
        assert_eq!(params[0], SqlValue::Blob(b"\x30".to_vec()));
        assert_eq!(params[1], SqlValue::Blob(b"\x35".to_vec()));
        // A target key equal to the position's with no primary key: the position wins.
        let step = IndexStep {
            target_primary_key: None,
            ..step
        };
        let (sql, params) = step_index_sql(1, 2, &r, false, &step, false, 1);
        assert!(
            sql.contains("WHERE (e.key, e.primary_key) > (?, ?)"),
            "{sql}"
        );
        assert_eq!(params[1], SqlValue::Blob(b"\x31".to_vec()));
        // Descending, the position below the range's upper bound starts the step.
        let r = range(Bound::Unbounded, Bound::Included(b"\x90"));
        let step = IndexStep {
            after: None,
            after_key: Some(b"\x40"),
            target: Some(b"\x50"),
            target_primary_key: None,
        };
        let (sql, params) = step_index_sql(1, 2, &r, true, &step, false, 1);
        assert!(sql.contains("WHERE e.key < ? ORDER BY"), "{sql}");
        assert_eq!(params[0], SqlValue::Blob(b"\x40".to_vec()));
    }

    #[test]
    fn a_store_step_seeks_to_the_position_past_the_ranges_start() {
        let conn = schema();
        let fill = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000) INSERT INTO record_1 SELECT CAST(printf('%08d', i) AS BLOB), x'00' FROM n";
        conn.execute_batch(fill).unwrap();
        let r = range(Bound::Included(b"00000001"), Bound::Unbounded);
        let rows = step_store(&conn, 1, &r, false, Some(b"00001500"), None, false, 2).unwrap();
        let rows: Vec<_> = rows.iter().collect();
        assert_eq!(
            rows,
            [
                (&b"00001501"[..], None, None),
                (&b"00001502"[..], None, None)
            ]
        );
        let rows = step_store(&conn, 1, &r, true, Some(b"00001500"), None, false, 1).unwrap();
        let rows: Vec<_> = rows.iter().collect();
        assert_eq!(rows, [(&b"00001499"[..], None, None)]);
        let (sql, params) = step_store_sql(1, &r, false, Some(b"00001500"), None, true, 2);
        assert_eq!(
            plan(&conn, &sql, &params),
            ["SEARCH record_1 USING PRIMARY KEY (key>?)"]
        );
        assert_eq!(
            params.len(),
            2,
            "the range's lower bound is not written: {sql}"
        );
    }
}
