//! `indexa check`: SQLite's integrity check plus the engine's invariants, read from the
//! database file in one read transaction (the tables of `docs/format.md`).
//!
//! Invariants checked:
//! - every key and value decodes and encodes back to the same bytes;
//! - every index holds exactly the entries its records' key path evaluation yields
//!   ("extract a key from a value using a key path",
//!   <https://www.w3.org/TR/IndexedDB-3/#extract-a-key-from-a-value-using-a-key-path>): no
//!   entry missing, no extra entry, no entry whose record does not exist;
//! - a record of a store with in-line keys has its key at the store's key path;
//! - each key generator's current number is above every numeric key of its store
//!   (<https://www.w3.org/TR/IndexedDB-3/#possibly-update-the-key-generator>).

use std::io::{self, Write};

use clap::Args;
use indexa::{
    decode_key, decode_value, encode_key, encode_value, extract_key_from_value_using_key_path, Key,
    KeyPath, KeyPathExtraction, Value, MAX_GENERATED_KEY,
};
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

fn sql(e: rusqlite::Error) -> CliError {
    CliError::new(
        "UnknownError",
        format!("reading the database file failed: {e}"),
    )
}

struct StoreRow {
    id: i64,
    name: String,
    key_path: Option<KeyPath>,
    auto_increment: bool,
    current_number: u64,
}

struct IndexRow {
    id: i64,
    name: String,
    key_path: KeyPath,
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

/// Writes problems as NDJSON lines and counts them.
struct Report<'o, W: Write> {
    out: &'o mut Lines<W>,
    problems: u64,
}

impl<W: Write> Report<'_, W> {
    fn problem(&mut self, line: JsonObject) -> io::Result<()> {
        self.problems += 1;
        self.out.line(&line.finish())
    }
}

fn problem(kind: &str, store: &str) -> JsonObject {
    JsonObject::new()
        .value("problem", &Value::string(kind))
        .value("store", &Value::string(store))
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

/// Runs `indexa check`: prints one NDJSON line per problem and a summary on stderr.
///
/// # Errors
/// `NotFoundError` for a missing database; `UnknownError` when the file cannot be read;
/// [`Failure::Quiet`] (exit status 1) when problems were found.
pub fn check<W: Write>(dir: &DataDir, a: &CheckArgs, out: &mut Lines<W>) -> CmdResult {
    let factory = dir.existing_factory()?;
    let exists = match &factory {
        Some(f) => DataDir::version_of(f, &a.db)? > 0,
        None => false,
    };
    let Some(factory) = factory.filter(|_| exists) else {
        return Err(CliError::new(
            "NotFoundError",
            format!(
                "database {:?} does not exist in {}",
                a.db,
                dir.path().display()
            ),
        )
        .into());
    };
    let conn = Connection::open_with_flags(
        factory.database_path(&a.db),
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql)?;
    conn.busy_timeout(std::time::Duration::from_secs(30))
        .map_err(sql)?;
    // One read transaction: the whole check sees one snapshot while writers run.
    conn.execute_batch("BEGIN").map_err(sql)?;
    let mut report = Report { out, problems: 0 };
    let (stores, records) = check_all(&conn, &mut report)?;
    conn.execute_batch("COMMIT").map_err(sql)?;
    let problems = report.problems;
    let _ = writeln!(
        io::stderr().lock(),
        "checked {}: {stores} object stores, {records} records, {problems} problems",
        a.db
    );
    if problems > 0 {
        return Err(Failure::Quiet);
    }
    Ok(())
}

fn check_all<W: Write>(
    conn: &Connection,
    report: &mut Report<'_, W>,
) -> Result<(u64, u64), Failure> {
    let mut integrity = conn.prepare("PRAGMA integrity_check").map_err(sql)?;
    let messages: Vec<String> = integrity
        .query_map([], |r| r.get(0))
        .map_err(sql)?
        .collect::<Result<_, _>>()
        .map_err(sql)?;
    for message in messages.iter().filter(|m| *m != "ok") {
        report.problem(
            JsonObject::new()
                .value("problem", &Value::string("sqliteIntegrity"))
                .value("message", &Value::string(message)),
        )?;
    }
    let mut stmt = conn
        .prepare("SELECT id, name, key_path, key_path_is_array, auto_increment, current_number FROM object_store ORDER BY name")
        .map_err(sql)?;
    let rows = stmt
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, bool>(3)?,
                r.get::<_, bool>(4)?,
                r.get::<_, i64>(5)?,
            ))
        })
        .map_err(sql)?
        .collect::<Result<Vec<_>, _>>()
        .map_err(sql)?;
    let mut records = 0;
    for (id, name, kp, is_array, auto_increment, current) in &rows {
        let store = StoreRow {
            id: *id,
            name: name.clone(),
            key_path: kp
                .as_deref()
                .map(|t| stored_key_path(t, *is_array))
                .transpose()?,
            auto_increment: *auto_increment,
            current_number: u64::try_from(*current).unwrap_or(0),
        };
        records += check_store(conn, &store, report)?;
    }
    Ok((rows.len() as u64, records))
}

/// Checks one store's records, key generator and indexes; returns its record count.
fn check_store<W: Write>(
    conn: &Connection,
    store: &StoreRow,
    report: &mut Report<'_, W>,
) -> Result<u64, Failure> {
    let mut indexes = Vec::new();
    {
        let mut stmt = conn
            .prepare("SELECT id, name, key_path, key_path_is_array, multi_entry FROM object_store_index WHERE object_store_id = ?1 ORDER BY name")
            .map_err(sql)?;
        let mut rows = stmt.query(params![store.id]).map_err(sql)?;
        while let Some(r) = rows.next().map_err(sql)? {
            let text: String = r.get(2).map_err(sql)?;
            indexes.push(IndexRow {
                id: r.get(0).map_err(sql)?,
                name: r.get(1).map_err(sql)?,
                key_path: stored_key_path(&text, r.get(3).map_err(sql)?)?,
                multi_entry: r.get(4).map_err(sql)?,
            });
        }
    }
    let mut has_entry = conn
        .prepare("SELECT 1 FROM index_entry WHERE index_id = ?1 AND key = ?2 AND primary_key = ?3")
        .map_err(sql)?;
    let mut stmt = conn
        .prepare("SELECT key, value FROM record WHERE object_store_id = ?1 ORDER BY key")
        .map_err(sql)?;
    let mut rows = stmt.query(params![store.id]).map_err(sql)?;
    let mut count = 0;
    // The largest numeric key the generator must be above.
    let mut largest: Option<f64> = None;
    while let Some(r) = rows.next().map_err(sql)? {
        count += 1;
        let key_bytes: Vec<u8> = r.get(0).map_err(sql)?;
        let value_bytes: Vec<u8> = r.get(1).map_err(sql)?;
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
        for ix in &indexes {
            for entry in index_entries(&value, &ix.key_path, ix.multi_entry) {
                let found = has_entry
                    .exists(params![ix.id, entry, key_bytes])
                    .map_err(sql)?;
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
    Ok(count)
}

/// A problem line about one index entry; keys that do not decode are shown as bytes.
fn entry_line(kind: &str, store: &StoreRow, ix: &IndexRow, key: &[u8], pk: &[u8]) -> JsonObject {
    let text =
        |b: &[u8]| decode_key(b).map_or_else(|_| Value::Binary(b.to_vec()), |k| Value::from(&k));
    problem(kind, &store.name)
        .value("index", &Value::string(&ix.name))
        .value("key", &text(key))
        .value("primaryKey", &text(pk))
}

/// Checks every entry of an index against its record: the record must exist
/// (else the entry dangles) and yield the entry's key (else it is extra). Entries the records
/// yield but the index lacks were reported during the record scan. Memory stays bounded: one
/// entry and one record at a time.
fn check_index<W: Write>(
    conn: &Connection,
    store: &StoreRow,
    ix: &IndexRow,
    report: &mut Report<'_, W>,
) -> Result<(), Failure> {
    let mut stmt = conn
        .prepare("SELECT key, primary_key FROM index_entry WHERE index_id = ?1 ORDER BY key, primary_key")
        .map_err(sql)?;
    let mut record = conn
        .prepare("SELECT value FROM record WHERE object_store_id = ?1 AND key = ?2")
        .map_err(sql)?;
    let mut rows = stmt.query(params![ix.id]).map_err(sql)?;
    while let Some(r) = rows.next().map_err(sql)? {
        let (key, pk): (Vec<u8>, Vec<u8>) = (r.get(0).map_err(sql)?, r.get(1).map_err(sql)?);
        if let Err(e) = decode_key(&key) {
            report.problem(
                problem("undecodableIndexKey", &store.name)
                    .value("index", &Value::string(&ix.name))
                    .value("bytes", &Value::Binary(key))
                    .value("message", &Value::string(e.message())),
            )?;
            continue;
        }
        let value: Option<Vec<u8>> = record
            .query_row(params![store.id, pk], |r| r.get(0))
            .optional()
            .map_err(sql)?;
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
