//! `indexa check`: SQLite's integrity check plus the engine's invariants, read from the
//! database file in one read transaction (the tables of `docs/format.md`).
//!
//! Invariants checked:
//! - every key and value decodes and encodes back to the same bytes;
//! - every index holds exactly the entries its records' key path evaluation yields
//!   ("extract a key from a value using a key path",
//!   <https://www.w3.org/TR/IndexedDB-3/#extract-a-key-from-a-value-using-a-key-path>): no
//!   entry missing, no extra entry, no entry whose record does not exist;
//! - a unique index holds no key twice;
//! - every record, index and index entry has its owner (object store, object store, index);
//! - a record of a store with in-line keys has its key at the store's key path;
//! - each key generator's current number is above every numeric key of its store
//!   (<https://www.w3.org/TR/IndexedDB-3/#possibly-update-the-key-generator>).

use std::collections::HashSet;
use std::io::{self, Write};
use std::path::Path;

use clap::Args;
use indexa::sqlite_layout::{
    index_table, is_canonical_column, record_table, SqlKey, StoredKey, SQLITE_FORMAT_VERSION,
};
use indexa::{
    decode_key, decode_value, encode_key, encode_value, extract_key_from_value_using_key_path, Key,
    KeyPath, KeyPathExtraction, Utf16String, Value, MAX_GENERATED_KEY,
};
use rusqlite::types::{FromSql, ValueRef};
use rusqlite::{params, Connection, OpenFlags, OptionalExtension};

use crate::error::{CliError, CmdResult, Failure};
use crate::open::DataDir;
use crate::output::{JsonObject, Lines};

/// `indexa check`: verify a database.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// The database.
    pub db: String,
}

/// Why the check stopped before its end.
enum Stop {
    /// SQLite found the file damaged (`SQLITE_CORRUPT`, `SQLITE_NOTADB`): reported as a
    /// `sqliteIntegrity` problem; the checks that remain cannot run on such a file.
    Damaged(String),
    /// Any other failure, reported as the command's error.
    Failed(Failure),
}

impl From<rusqlite::Error> for Stop {
    fn from(e: rusqlite::Error) -> Stop {
        match e.sqlite_error_code() {
            Some(rusqlite::ErrorCode::DatabaseCorrupt | rusqlite::ErrorCode::NotADatabase) => {
                Stop::Damaged(e.to_string())
            }
            _ => Stop::Failed(
                CliError::new(
                    "UnknownError",
                    format!("reading the database file failed: {e}"),
                )
                .into(),
            ),
        }
    }
}

impl From<CliError> for Stop {
    fn from(e: CliError) -> Stop {
        Stop::Failed(e.into())
    }
}

impl From<io::Error> for Stop {
    fn from(e: io::Error) -> Stop {
        Stop::Failed(e.into())
    }
}

struct StoreRow {
    id: i64,
    name: Utf16String,
    key_path: Option<KeyPath>,
    auto_increment: bool,
    current_number: u64,
}

struct IndexRow {
    id: i64,
    name: Utf16String,
    key_path: KeyPath,
    unique: bool,
    multi_entry: bool,
}

fn stored_key_path(text: &str, is_array: bool) -> Result<KeyPath, CliError> {
    let parsed = if is_array {
        KeyPath::compound(&text.split(',').collect::<Vec<_>>())
    } else {
        KeyPath::parse(text)
    };
    parsed.map_err(|e| {
        CliError::new(
            "UnknownError",
            format!("stored key path {text:?} is corrupt: {}", e.message()),
        )
    })
}

/// Writes problems as NDJSON lines and counts them, with the stores and records checked.
struct Report<'o, W: Write> {
    out: &'o mut Lines<W>,
    problems: u64,
    stores: u64,
    records: u64,
}

impl<W: Write> Report<'_, W> {
    fn problem(&mut self, line: JsonObject) -> io::Result<()> {
        self.problems += 1;
        self.out.line(&line.finish())
    }

    /// Reports a damaged file: a `sqliteIntegrity` line with SQLite's message.
    fn damaged(&mut self, message: &str) -> io::Result<()> {
        self.problem(
            JsonObject::new()
                .value("problem", &Value::string("sqliteIntegrity"))
                .value("message", &Value::string(message)),
        )
    }

    /// Ends the check: a damaged file becomes a problem line, other failures the command's
    /// error; the summary goes to stderr; exit status 1 when there were problems.
    fn finish(mut self, db: &str, outcome: Result<(), Stop>) -> CmdResult {
        match outcome {
            Ok(()) => {}
            Err(Stop::Damaged(message)) => self.damaged(&message)?,
            Err(Stop::Failed(failure)) => return Err(failure),
        }
        let _ = writeln!(
            io::stderr().lock(),
            "checked {db}: {} object stores, {} records, {} problems",
            self.stores,
            self.records,
            self.problems
        );
        if self.problems > 0 {
            return Err(Failure::Quiet);
        }
        Ok(())
    }
}

fn problem(kind: &str, store: &Utf16String) -> JsonObject {
    JsonObject::new()
        .value("problem", &Value::string(kind))
        .value("store", &Value::String(store.clone()))
}

/// A store or index name as stored (`docs/format.md`): TEXT, or for a name with a lone
/// surrogate a BLOB of its WTF-8 bytes.
fn stored_name(row: &rusqlite::Row<'_>, column: usize) -> Result<Utf16String, Stop> {
    let value = row.get_ref(column)?;
    let name = value.as_bytes().ok().and_then(Utf16String::from_wtf8);
    name.ok_or_else(|| {
        CliError::new(
            "UnknownError",
            format!("a stored name is neither text nor WTF-8 bytes: {value:?}"),
        )
        .into()
    })
}

/// The encoded entries a record value has in an index.
fn index_entries(value: &Value, key_path: &KeyPath, multi_entry: bool) -> Vec<Vec<u8>> {
    match extract_key_from_value_using_key_path(value, key_path, multi_entry) {
        KeyPathExtraction::Key(Key::Array(members)) if multi_entry => {
            members.iter().map(encode_key).collect()
        }
        KeyPathExtraction::Key(key) => vec![encode_key(&key)],
        _ => Vec::new(),
    }
}

/// The file's SQLite layout version (`database.format_version`), when it can be read.
fn layout_version(path: &Path) -> Option<i64> {
    let conn = open_file(path, OpenFlags::SQLITE_OPEN_READ_ONLY).ok()?;
    conn.query_row("SELECT format_version FROM database", [], |r| r.get(0))
        .ok()
}

/// A key column's value as a key encoding, or why it is not a canonical key column value
/// (`docs/format.md`, "Key columns"): a number key must be an `INTEGER` when it is a whole
/// number that fits one and a `REAL` otherwise, any other key a `BLOB`; the encoding itself
/// is checked by the caller.
fn key_column(value: ValueRef<'_>) -> Result<Vec<u8>, (Option<Vec<u8>>, String)> {
    match value {
        ValueRef::Blob(b) if !is_canonical_column(value) => Err((
            Some(b.to_vec()),
            "a number key stored as a blob, not as a number".to_owned(),
        )),
        ValueRef::Real(r) if !is_canonical_column(value) => Err((
            None,
            format!("the whole number {r} stored as a real, not as an integer"),
        )),
        other => match StoredKey::column_result(other) {
            Ok(StoredKey(bytes)) => Ok(bytes),
            Err(_) => Err((
                None,
                format!(
                    "the key column holds SQLite {}, neither a number key nor a blob",
                    other.data_type()
                ),
            )),
        },
    }
}

/// `line` with what [`key_column`] found wrong: the bytes, when there are any, and why.
fn key_column_problem(
    mut line: JsonObject,
    (bytes, message): (Option<Vec<u8>>, String),
) -> JsonObject {
    if let Some(bytes) = bytes {
        line = line.value("bytes", &Value::Binary(bytes));
    }
    line.value("message", &Value::string(&message))
}

/// Opens the database file itself (never through a link), for SQLite's own reading;
/// `access` is `SQLITE_OPEN_READ_WRITE` (so a reader of a WAL file can use its `-shm`) or
/// `SQLITE_OPEN_READ_ONLY`.
fn open_file(path: &Path, access: OpenFlags) -> Result<Connection, Stop> {
    let conn = Connection::open_with_flags(
        path,
        access | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_NOFOLLOW,
    )?;
    conn.busy_timeout(std::time::Duration::from_secs(30))?;
    Ok(conn)
}

/// Runs `indexa check`: prints one NDJSON line per problem and a summary on stderr.
///
/// A file SQLite finds damaged (`SQLITE_CORRUPT`, `SQLITE_NOTADB`, also when the damage is in
/// the header, so the file no longer opens as a database) is a `sqliteIntegrity` problem; the
/// checks that cannot run on it are skipped.
///
/// # Errors
/// `NotFoundError` for a missing database; `UnknownError` when the file cannot be read, or
/// when SQLite reads it without fault but it is not an Indexa database of that name;
/// [`Failure::Quiet`] (exit status 1) when problems were found.
pub fn check<W: Write>(dir: &DataDir, a: &CheckArgs, out: &mut Lines<W>) -> CmdResult {
    dir.files_only("check")?;
    let missing = || dir.missing(&a.db);
    let factory = dir.existing_factory()?.ok_or_else(missing)?;
    let path = factory.database_path(&a.db);
    let mut report = Report {
        out,
        problems: 0,
        stores: 0,
        records: 0,
    };
    match DataDir::version_of(&factory, &a.db) {
        Ok(0) => Err(missing().into()),
        Ok(_) => {
            if layout_version(&path).is_some_and(|v| v < SQLITE_FORMAT_VERSION) {
                // Upgraded to the current layout as any open does, then checked.
                factory.open(a.db.as_str(), None, |_, _, _| Ok(()))?.close();
            }
            let outcome = check_file(&path, &mut report);
            report.finish(&a.db, outcome)
        }
        // Something under the name that the engine cannot open: when it is a regular file,
        // SQLite says (reading only) whether it is damaged; if not, the engine's error stands.
        Err(e) => {
            let regular = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file());
            if !regular {
                return Err(e.into());
            }
            let outcome = open_file(&path, OpenFlags::SQLITE_OPEN_READ_ONLY)
                .and_then(|conn| integrity(&conn, &mut report));
            if report.problems == 0 && !matches!(outcome, Err(Stop::Damaged(_))) {
                return Err(e.into());
            }
            report.finish(&a.db, outcome)
        }
    }
}

/// Checks the file in one read transaction: SQLite's integrity check, then, unless SQLite
/// failed to read the file, every store's invariants.
fn check_file<W: Write>(path: &Path, report: &mut Report<'_, W>) -> Result<(), Stop> {
    let conn = open_file(path, OpenFlags::SQLITE_OPEN_READ_WRITE)?;
    // One read transaction: the whole check sees one snapshot while writers run.
    conn.execute_batch("BEGIN")?;
    integrity(&conn, report)?;
    let tables = table_names(&conn)?;
    check_stores(&conn, &tables, report)?;
    check_orphans(&conn, &tables, report)?;
    conn.execute_batch("COMMIT")?;
    Ok(())
}

/// SQLite's `PRAGMA integrity_check`: each line other than `ok` is reported as it arrives,
/// so the lines before a read that fails are kept.
fn integrity<W: Write>(conn: &Connection, report: &mut Report<'_, W>) -> Result<(), Stop> {
    let mut integrity = conn.prepare("PRAGMA integrity_check")?;
    let mut rows = integrity.query([])?;
    while let Some(row) = rows.next()? {
        let message: String = row.get(0)?;
        if message != "ok" {
            report.damaged(&message)?;
        }
    }
    Ok(())
}

/// Checks every store (`tables`: the file's tables, [`table_names`]).
fn check_stores<W: Write>(
    conn: &Connection,
    tables: &HashSet<String>,
    report: &mut Report<'_, W>,
) -> Result<(), Stop> {
    let mut stmt = conn
        .prepare("SELECT id, name, key_path, key_path_is_array, auto_increment, current_number FROM object_store ORDER BY name")?;
    let mut stores = Vec::new();
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let key_path: Option<String> = r.get(2)?;
        let is_array: bool = r.get(3)?;
        stores.push(StoreRow {
            id: r.get(0)?,
            name: stored_name(r, 1)?,
            key_path: key_path
                .as_deref()
                .map(|t| stored_key_path(t, is_array))
                .transpose()?,
            auto_increment: r.get(4)?,
            current_number: u64::try_from(r.get::<_, i64>(5)?).unwrap_or(0),
        });
    }
    drop(rows);
    for store in stores {
        report.stores += 1;
        check_store(conn, &store, tables, report)?;
    }
    Ok(())
}

/// The names of the file's tables, read once: each store's and index's table, and the
/// orphan tables, are looked up here instead of in `sqlite_master`.
fn table_names(conn: &Connection) -> Result<HashSet<String>, Stop> {
    let mut stmt = conn.prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?;
    let names = stmt
        .query_map([], |r| r.get::<_, String>(0))?
        .collect::<Result<_, _>>()?;
    Ok(names)
}

/// Checks one store's records, key generator and indexes, counting its records. `tables` are
/// the file's tables ([`table_names`]).
fn check_store<W: Write>(
    conn: &Connection,
    store: &StoreRow,
    tables: &HashSet<String>,
    report: &mut Report<'_, W>,
) -> Result<(), Stop> {
    let mut indexes = Vec::new();
    {
        let mut stmt = conn
            .prepare("SELECT id, name, key_path, key_path_is_array, is_unique, multi_entry FROM object_store_index WHERE object_store_id = ?1 ORDER BY name")
            ?;
        let mut rows = stmt.query(params![store.id])?;
        while let Some(r) = rows.next()? {
            let text: String = r.get(2)?;
            indexes.push(IndexRow {
                id: r.get(0)?,
                name: stored_name(r, 1)?,
                key_path: stored_key_path(&text, r.get(3)?)?,
                unique: r.get(4)?,
                multi_entry: r.get(5)?,
            });
        }
    }
    if !tables.contains(&record_table(store.id)) {
        // Its records, key generator and indexes cannot be checked.
        return Ok(report.problem(problem("missingRecordTable", &store.name))?);
    }
    // Indexes whose table is missing are reported and left out of the rest of the check.
    let mut checked = Vec::new();
    for ix in indexes {
        if tables.contains(&index_table(ix.id)) {
            checked.push(ix);
        } else {
            report.problem(
                problem("missingIndexTable", &store.name).value("index", &Value::String(ix.name)),
            )?;
        }
    }
    let indexes = checked;
    let mut has_entry = Vec::new();
    for ix in &indexes {
        has_entry.push(conn.prepare(&format!(
            "SELECT 1 FROM {} WHERE key = ?1 AND primary_key = ?2",
            index_table(ix.id)
        ))?);
    }
    let mut stmt = conn.prepare(&format!(
        "SELECT key, value FROM {} ORDER BY key",
        record_table(store.id)
    ))?;
    let mut rows = stmt.query([])?;
    // The largest numeric key the generator must be above.
    let mut largest: Option<f64> = None;
    while let Some(r) = rows.next()? {
        report.records += 1;
        let key_bytes = match key_column(r.get_ref(0)?) {
            Ok(bytes) => bytes,
            Err(wrong) => {
                report.problem(key_column_problem(
                    problem("undecodableKey", &store.name),
                    wrong,
                ))?;
                continue;
            }
        };
        let value_bytes: Vec<u8> = r.get(1)?;
        let key = match decode_key(&key_bytes) {
            Ok(k) if encode_key(&k) == key_bytes => k,
            Ok(_) => {
                report.problem(
                    problem("nonCanonicalKey", &store.name)
                        .value("bytes", &Value::Binary(key_bytes)),
                )?;
                continue;
            }
            Err(e) => {
                report.problem(
                    problem("undecodableKey", &store.name)
                        .value("bytes", &Value::Binary(key_bytes))
                        .value("message", &Value::string(e.message())),
                )?;
                continue;
            }
        };
        if let Key::Number(n) = key {
            if n >= 1.0 && largest.map_or(true, |l| n > l) {
                largest = Some(n);
            }
        }
        let value = match decode_value(&value_bytes) {
            Ok(v) => v,
            Err(e) => {
                report.problem(
                    problem("undecodableValue", &store.name)
                        .key("key", &key)
                        .value("message", &Value::string(e.message())),
                )?;
                continue;
            }
        };
        if let Some(kp) = &store.key_path {
            let in_line = extract_key_from_value_using_key_path(&value, kp, false);
            if !matches!(&in_line, KeyPathExtraction::Key(k) if *k == key) {
                report.problem(problem("inLineKeyMismatch", &store.name).key("key", &key))?;
            }
        }
        if encode_value(&value) != value_bytes {
            report.problem(problem("nonCanonicalValue", &store.name).key("key", &key))?;
        }
        for (ix, has_entry) in indexes.iter().zip(&mut has_entry) {
            for entry in index_entries(&value, &ix.key_path, ix.multi_entry) {
                let found = has_entry.exists(params![SqlKey(&entry), SqlKey(&key_bytes)])?;
                if !found {
                    report.problem(entry_line(
                        "missingIndexEntry",
                        store,
                        ix,
                        &entry,
                        &key_bytes,
                    ))?;
                }
            }
        }
    }
    drop(rows);
    if let (true, Some(n)) = (store.auto_increment, largest) {
        // Compared as integers: 2^53 + 1 (an exhausted generator) is not exact as f64.
        let floor = n.min(MAX_GENERATED_KEY as f64).floor() as u64;
        if floor >= store.current_number {
            report.problem(
                problem("keyGeneratorBelowKey", &store.name)
                    .value("currentNumber", &Value::Number(store.current_number as f64))
                    .key("key", &Key::Number(n)),
            )?;
        }
    }
    for ix in &indexes {
        check_index(conn, store, ix, report)?;
    }
    Ok(())
}

/// A problem line about one index entry; keys that do not decode are shown as bytes.
fn entry_line(kind: &str, store: &StoreRow, ix: &IndexRow, key: &[u8], pk: &[u8]) -> JsonObject {
    let text =
        |b: &[u8]| decode_key(b).map_or_else(|_| Value::Binary(b.to_vec()), |k| Value::from(&k));
    problem(kind, &store.name)
        .value("index", &Value::String(ix.name.clone()))
        .value("key", &text(key))
        .value("primaryKey", &text(pk))
}

/// Checks every entry of an index against its record: the record must exist
/// (else the entry dangles) and yield the entry's key (else it is extra); in a unique index,
/// no entry may share its key with the one before (entries come in key order). Entries the records
/// yield but the index lacks were reported during the record scan. Memory stays bounded: one
/// entry and one record at a time.
fn check_index<W: Write>(
    conn: &Connection,
    store: &StoreRow,
    ix: &IndexRow,
    report: &mut Report<'_, W>,
) -> Result<(), Stop> {
    let mut stmt = conn.prepare(&format!(
        "SELECT key, primary_key FROM {} ORDER BY key, primary_key",
        index_table(ix.id)
    ))?;
    let mut record = conn.prepare(&format!(
        "SELECT value FROM {} WHERE key = ?1",
        record_table(store.id)
    ))?;
    let mut rows = stmt.query([])?;
    // The previous entry's key: in a unique index, no two entries have the same key.
    let mut previous: Option<Vec<u8>> = None;
    while let Some(r) = rows.next()? {
        let (key, pk) = match (key_column(r.get_ref(0)?), key_column(r.get_ref(1)?)) {
            (Ok(key), Ok(pk)) => (key, pk),
            (Err(wrong), _) | (_, Err(wrong)) => {
                let line = problem("undecodableIndexKey", &store.name)
                    .value("index", &Value::String(ix.name.clone()));
                report.problem(key_column_problem(line, wrong))?;
                continue;
            }
        };
        if ix.unique && previous.as_ref() == Some(&key) {
            report.problem(entry_line("duplicateUniqueKey", store, ix, &key, &pk))?;
        }
        previous = Some(key.clone());
        if let Err(e) = decode_key(&key) {
            report.problem(
                problem("undecodableIndexKey", &store.name)
                    .value("index", &Value::String(ix.name.clone()))
                    .value("bytes", &Value::Binary(key))
                    .value("message", &Value::string(e.message())),
            )?;
            continue;
        }
        let value: Option<Vec<u8>> = record.query_row([SqlKey(&pk)], |r| r.get(0)).optional()?;
        let Some(value) = value else {
            report.problem(entry_line("danglingIndexEntry", store, ix, &key, &pk))?;
            continue;
        };
        // An undecodable value was reported with its record.
        let Ok(value) = decode_value(&value) else {
            continue;
        };
        if !index_entries(&value, &ix.key_path, ix.multi_entry).contains(&key) {
            report.problem(entry_line("extraIndexEntry", store, ix, &key, &pk))?;
        }
    }
    Ok(())
}

/// The ids of the tables among `tables` named as `table_name` names them (`prefix` and an
/// id: no sign, no leading zero), rising.
fn table_ids(tables: &HashSet<String>, prefix: &str, table_name: fn(i64) -> String) -> Vec<i64> {
    let mut ids: Vec<i64> = tables
        .iter()
        .filter_map(|name| {
            let id = name.strip_prefix(prefix)?.parse::<i64>().ok()?;
            (table_name(id) == *name).then_some(id)
        })
        .collect();
    ids.sort_unstable();
    ids
}

/// Rows no object store or index owns: records whose object store does not exist, indexes
/// whose object store does not exist, and index entries whose index does not exist (a store
/// or index deleted without its rows). Reported once per missing owner, with a count.
fn check_orphans<W: Write>(
    conn: &Connection,
    tables: &HashSet<String>,
    report: &mut Report<'_, W>,
) -> Result<(), Stop> {
    let ids = |sql: &str| -> Result<HashSet<i64>, Stop> {
        let mut stmt = conn.prepare(sql)?;
        let ids = stmt
            .query_map([], |r| r.get(0))?
            .collect::<Result<HashSet<i64>, _>>()?;
        Ok(ids)
    };
    let stores = ids("SELECT id FROM object_store")?;
    let indexes = ids("SELECT id FROM object_store_index")?;
    for id in table_ids(tables, "record_", record_table) {
        if !stores.contains(&id) {
            let count: i64 = conn.query_row(
                &format!("SELECT count(*) FROM {}", record_table(id)),
                [],
                |r| r.get(0),
            )?;
            report.problem(
                JsonObject::new()
                    .value("problem", &Value::string("orphanRecords"))
                    .value("storeId", &Value::Number(id as f64))
                    .value("records", &Value::Number(count as f64)),
            )?;
        }
    }
    let mut stmt = conn.prepare(
        "SELECT id, name, object_store_id FROM object_store_index ORDER BY object_store_id, id",
    )?;
    let mut rows = stmt.query([])?;
    while let Some(r) = rows.next()? {
        let store_id: i64 = r.get(2)?;
        if !stores.contains(&store_id) {
            report.problem(
                JsonObject::new()
                    .value("problem", &Value::string("orphanIndex"))
                    .value("storeId", &Value::Number(store_id as f64))
                    .value("indexId", &Value::Number(r.get::<_, i64>(0)? as f64))
                    .value("index", &Value::String(stored_name(r, 1)?)),
            )?;
        }
    }
    for id in table_ids(tables, "index_", index_table) {
        if !indexes.contains(&id) {
            let count: i64 = conn.query_row(
                &format!("SELECT count(*) FROM {}", index_table(id)),
                [],
                |r| r.get(0),
            )?;
            report.problem(
                JsonObject::new()
                    .value("problem", &Value::string("orphanIndexEntries"))
                    .value("indexId", &Value::Number(id as f64))
                    .value("entries", &Value::Number(count as f64)),
            )?;
        }
    }
    Ok(())
}
