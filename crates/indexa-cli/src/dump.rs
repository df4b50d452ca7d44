//! `indexa dump` and `indexa restore`: a whole database as one NDJSON file
//! (`docs/dump-format.md`).
//!
//! A dump is a header line, then for each object store (in name order) its store line, its
//! index lines (in name order) and its records (in key order), then an end line with the
//! counts. Values are in the text form (`docs/text-form.md`), so every value the engine holds
//! — including the projections and V8 serializations the Node.js package stores — survives.

use std::fs;
use std::io::{self, BufRead, BufReader, Write};
use std::path::PathBuf;

use clap::Args;
use indexa::{
    parse_value, value_to_text, CursorDirection, Durability, Factory, Key, KeyPath, ObjectStore,
    Transaction, TransactionMode, Utf16String, Value, MAX_GENERATED_KEY,
};

use crate::error::{CliError, CmdResult};
use crate::open::DataDir;
use crate::output::{number, JsonObject, Lines};
use crate::scratch::Scratch;

/// The dump format's version, written in the header line.
pub const DUMP_FORMAT_VERSION: u64 = 1;

/// `indexa dump`: write a whole database to standard output.
#[derive(Debug, Clone, Args)]
pub struct DumpArgs {
    /// The database.
    pub db: String,
}

/// `indexa restore`: create a database from a dump.
#[derive(Debug, Clone, Args)]
pub struct RestoreArgs {
    /// The database to create (its name need not be the one in the dump).
    pub db: String,
    /// The dump file; `-` reads standard input.
    pub file: PathBuf,
    /// Replace the database if it exists (only once the whole dump has been restored).
    #[arg(long)]
    pub replace: bool,
}

/// Runs `indexa dump`: one readonly transaction over every store, so the dump is one
/// consistent snapshot even while other connections write.
///
/// # Errors
/// `NotFoundError` for a missing database; engine and output errors.
pub fn dump<W: Write>(dir: &DataDir, a: &DumpArgs, out: &mut Lines<W>) -> CmdResult {
    let db = dir.open_existing(&a.db)?;
    let tx = db.transaction_over_all_stores(TransactionMode::ReadOnly, Durability::Default)?;
    out.line(
        &JsonObject::new()
            .value("indexaDump", &number(DUMP_FORMAT_VERSION))
            .value("name", &Value::string(db.name()))
            .value("version", &number(db.version()))
            .finish(),
    )?;
    let (mut stores, mut indexes, mut records) = (0u64, 0u64, 0u64);
    for name in tx.object_store_names_utf16() {
        let store = tx.object_store(name.clone())?;
        let current = store.current_number()?;
        let mut line = JsonObject::new()
            .value("store", &Value::String(name))
            .value(
                "keyPath",
                &store.key_path()?.map_or(Value::Null, |kp| kp.to_value()),
            )
            .value("autoIncrement", &Value::Bool(store.auto_increment()?));
        line = match current {
            None => line,
            // 2^53 + 1 (an exhausted generator) is not exact as a JSON number.
            Some(n) if n > MAX_GENERATED_KEY => {
                line.value("keyGeneratorExhausted", &Value::Bool(true))
            }
            Some(n) => line.value("currentNumber", &number(n)),
        };
        out.line(&line.finish())?;
        stores += 1;
        for ix_name in store.index_names_utf16()? {
            let ix = store.index(ix_name.clone())?;
            out.line(
                &JsonObject::new()
                    .value("index", &Value::String(ix_name))
                    .value("keyPath", &ix.key_path()?.to_value())
                    .value("unique", &Value::Bool(ix.unique()?))
                    .value("multiEntry", &Value::Bool(ix.multi_entry()?))
                    .finish(),
            )?;
            indexes += 1;
        }
        let mut cursor = store.open_cursor(None, CursorDirection::Next)?;
        while let (Some(key), Some(value)) = (cursor.primary_key(), cursor.value()?) {
            out.line(
                &JsonObject::new()
                    .key("key", key)
                    .value("value", value)
                    .finish(),
            )?;
            records += 1;
            cursor.continue_key(&tx, None)?;
        }
    }
    tx.commit()?;
    out.line(
        &JsonObject::new()
            .raw(
                "end",
                &JsonObject::new()
                    .value("stores", &number(stores))
                    .value("indexes", &number(indexes))
                    .value("records", &number(records))
                    .finish(),
            )
            .finish(),
    )?;
    Ok(())
}

/// One parsed line of a dump.
enum Line {
    Header {
        version: u64,
    },
    Store {
        name: Utf16String,
        key_path: Option<KeyPath>,
        auto_increment: bool,
        current: Option<u64>,
    },
    Index {
        name: Utf16String,
        key_path: KeyPath,
        unique: bool,
        multi_entry: bool,
    },
    Record {
        key: Key,
        value: Value,
    },
    End {
        stores: u64,
        indexes: u64,
        records: u64,
    },
}

/// The members of a line object, checked to be exactly `names` (in any order).
struct Members {
    map: indexa::Object,
}

impl Members {
    fn take(&mut self, name: &str) -> Result<Value, String> {
        self.map
            .shift_remove(&Utf16String::from(name))
            .ok_or_else(|| format!("member {name:?} is missing"))
    }

    fn take_opt(&mut self, name: &str) -> Option<Value> {
        self.map.shift_remove(&Utf16String::from(name))
    }

    fn string(&mut self, name: &str) -> Result<String, String> {
        match self.take(name)? {
            Value::String(s) => s
                .to_string()
                .ok_or_else(|| format!("{name:?} holds a lone surrogate")),
            other => Err(format!(
                "{name:?} must be a string, not {}",
                value_to_text(&other)
            )),
        }
    }

    /// An object store or index name: any string, lone surrogates included (names are UTF-16).
    fn name(&mut self, name: &str) -> Result<Utf16String, String> {
        match self.take(name)? {
            Value::String(s) => Ok(s),
            other => Err(format!(
                "{name:?} must be a string, not {}",
                value_to_text(&other)
            )),
        }
    }

    fn boolean(&mut self, name: &str) -> Result<bool, String> {
        match self.take(name)? {
            Value::Bool(b) => Ok(b),
            other => Err(format!(
                "{name:?} must be a boolean, not {}",
                value_to_text(&other)
            )),
        }
    }

    fn count(&mut self, name: &str) -> Result<u64, String> {
        count_of(name, &self.take(name)?)
    }

    fn done(self) -> Result<(), String> {
        match self.map.keys().next() {
            None => Ok(()),
            Some(extra) => Err(format!(
                "unexpected member {}",
                value_to_text(&Value::String(extra.clone()))
            )),
        }
    }
}

fn count_of(name: &str, v: &Value) -> Result<u64, String> {
    match v {
        Value::Number(n) if n.fract() == 0.0 && *n >= 0.0 && *n <= MAX_GENERATED_KEY as f64 => {
            Ok(*n as u64)
        }
        other => Err(format!(
            "{name:?} must be a whole number from 0 to 2^53, not {}",
            value_to_text(other)
        )),
    }
}

fn key_path_of(v: &Value) -> Result<KeyPath, String> {
    KeyPath::from_value(v).map_err(|e| format!("key path {}: {}", value_to_text(v), e.message()))
}

/// Reads one dump line (text form) into its kind, by its first member's name.
fn parse_line(text: &str) -> Result<Line, String> {
    let value = parse_value(text).map_err(|e| format!("{}: {}", e.name(), e.message()))?;
    let Value::Object(map) = value else {
        return Err("a dump line must be a JSON object".into());
    };
    let first = map
        .keys()
        .next()
        .and_then(|k| k.to_string())
        .unwrap_or_default();
    let mut m = Members { map };
    let line = match first.as_str() {
        "indexaDump" => {
            let format = m.count("indexaDump")?;
            if format != DUMP_FORMAT_VERSION {
                return Err(format!(
                    "dump format version {format}; this build reads version {DUMP_FORMAT_VERSION}"
                ));
            }
            m.string("name")?;
            let version = m.count("version")?;
            if version == 0 {
                return Err("\"version\" must be at least 1".into());
            }
            Line::Header { version }
        }
        "store" => {
            let name = m.name("store")?;
            let key_path = match m.take("keyPath")? {
                Value::Null => None,
                v => Some(key_path_of(&v)?),
            };
            let auto_increment = m.boolean("autoIncrement")?;
            let current = match (m.take_opt("currentNumber"), m.take_opt("keyGeneratorExhausted")) {
                (None, None) if !auto_increment => None,
                (Some(v), None) if auto_increment => {
                    let n = count_of("currentNumber", &v)?;
                    if n == 0 {
                        return Err("\"currentNumber\" must be at least 1".into());
                    }
                    Some(n)
                }
                (None, Some(Value::Bool(true))) if auto_increment => Some(MAX_GENERATED_KEY + 1),
                _ => {
                    return Err(
                        "a store with autoIncrement needs \"currentNumber\" (or \"keyGeneratorExhausted\":true), and only such a store may have one"
                            .into(),
                    )
                }
            };
            Line::Store {
                name,
                key_path,
                auto_increment,
                current,
            }
        }
        "index" => Line::Index {
            name: m.name("index")?,
            key_path: key_path_of(&m.take("keyPath")?)?,
            unique: m.boolean("unique")?,
            multi_entry: m.boolean("multiEntry")?,
        },
        "key" => {
            let key_value = m.take("key")?;
            let key = indexa::convert_value_to_key(&key_value)
                .ok_or_else(|| format!("{} is not a valid key", value_to_text(&key_value)))?;
            Line::Record {
                key,
                value: m.take("value")?,
            }
        }
        "end" => {
            let Value::Object(counts) = m.take("end")? else {
                return Err("\"end\" must be an object".into());
            };
            let mut c = Members { map: counts };
            let end = Line::End {
                stores: c.count("stores")?,
                indexes: c.count("indexes")?,
                records: c.count("records")?,
            };
            c.done()?;
            end
        }
        other => return Err(format!("unknown line kind {other:?}")),
    };
    m.done()?;
    Ok(line)
}

/// Restores the lines after the header into the upgrade transaction `tx`.
fn restore_into(
    tx: &Transaction,
    lines: &mut impl Iterator<Item = (usize, io::Result<String>)>,
) -> Result<(), CliError> {
    let mut store: Option<ObjectStore<'_>> = None;
    let (mut stores, mut indexes, mut records) = (0u64, 0u64, 0u64);
    for (number, text) in lines.by_ref() {
        let at =
            |message: String| CliError::new("DataError", format!("dump line {number}: {message}"));
        let text =
            text.map_err(|e| CliError::new("UnknownError", format!("cannot read the dump: {e}")))?;
        if text.trim().is_empty() {
            continue;
        }
        match parse_line(&text).map_err(at)? {
            Line::Header { .. } => return Err(at("a second header line".into())),
            Line::Store {
                name,
                key_path,
                auto_increment,
                current,
            } => {
                let s = tx
                    .create_object_store(name.clone(), key_path, auto_increment)
                    .map_err(|e| {
                        CliError::from(e)
                            .context(format!("dump line {number}: object store {name:?}"))
                    })?;
                if let Some(n) = current {
                    s.set_current_number(n)
                        .map_err(|e| CliError::from(e).context(format!("dump line {number}")))?;
                }
                store = Some(s);
                stores += 1;
            }
            Line::Index {
                name,
                key_path,
                unique,
                multi_entry,
            } => {
                let s = store
                    .as_ref()
                    .ok_or_else(|| at("an index line before any store line".into()))?;
                s.create_index(name.clone(), key_path, unique, multi_entry)
                    .map_err(|e| {
                        CliError::from(e).context(format!("dump line {number}: index {name:?}"))
                    })?;
                indexes += 1;
            }
            Line::Record { key, value } => {
                let s = store
                    .as_ref()
                    .ok_or_else(|| at("a record line before any store line".into()))?;
                let given = if s.key_path()?.is_some() {
                    None
                } else {
                    Some(key.clone())
                };
                let stored = s
                    .add(value, given)
                    .map_err(|e| CliError::from(e).context(format!("dump line {number}")))?;
                if stored != key {
                    return Err(at(format!(
                        "the record's in-line key is {}, not its key {}",
                        indexa::key_to_text(&stored),
                        indexa::key_to_text(&key)
                    )));
                }
                records += 1;
            }
            Line::End {
                stores: s,
                indexes: i,
                records: r,
            } => {
                if (s, i, r) != (stores, indexes, records) {
                    return Err(at(format!(
                        "the end line counts {s} stores, {i} indexes and {r} records; the dump holds {stores}, {indexes} and {records}"
                    )));
                }
                if let Some((number, _)) =
                    lines.find(|(_, t)| t.as_ref().map_or(true, |t| !t.trim().is_empty()))
                {
                    return Err(CliError::new(
                        "DataError",
                        format!("dump line {number}: a line after the end line"),
                    ));
                }
                return Ok(());
            }
        }
    }
    Err(CliError::new(
        "DataError",
        "the dump has no end line (it is truncated)",
    ))
}

/// Runs `indexa restore`.
///
/// The dump is restored into a new database in a scratch directory inside the data
/// directory (see [`Scratch`]), in one upgrade transaction; only when all of it is in is the
/// file renamed into place in one step ([`Factory::replace_database`]), replacing the old
/// database with `--replace` once no other process has it open. Any error leaves the data
/// directory as it was.
///
/// # Errors
/// `ConstraintError` if the database exists (without `--replace`); `InvalidStateError` if
/// another process still has it open after the lock timeout (with `--replace`); `DataError`
/// naming the line for a malformed dump; `UnknownError` for I/O failures; engine errors (e.g.
/// `ConstraintError` for a duplicate key).
pub fn restore(dir: &DataDir, a: &RestoreArgs) -> CmdResult {
    dir.files_only("restore")?;
    let factory = dir.factory()?;
    if DataDir::version_of(&factory, &a.db)? > 0 && !a.replace {
        return Err(CliError::new(
            "ConstraintError",
            format!(
                "database {:?} already exists (restore --replace replaces it)",
                a.db
            ),
        )
        .into());
    }
    let shown = a.file.display().to_string();
    let input: Box<dyn BufRead> = if a.file.as_os_str() == "-" {
        Box::new(io::stdin().lock())
    } else {
        let file = fs::File::open(&a.file).map_err(|e| {
            let name = if e.kind() == io::ErrorKind::NotFound {
                "NotFoundError"
            } else {
                "UnknownError"
            };
            CliError::new(name, format!("cannot open {shown}: {e}"))
        })?;
        Box::new(BufReader::with_capacity(1 << 16, file))
    };
    let mut lines = input.lines().enumerate().map(|(i, l)| (i + 1, l));
    let header = loop {
        match lines.next() {
            None => {
                return Err(
                    CliError::new("DataError", format!("{shown} is empty, not a dump")).into(),
                )
            }
            Some((_, Ok(t))) if t.trim().is_empty() => continue,
            Some((n, Ok(t))) => match parse_line(t.trim_start_matches('\u{feff}')) {
                Ok(Line::Header { version }) => break version,
                Ok(_) => {
                    return Err(CliError::new(
                        "DataError",
                        format!(
                        "dump line {n}: the first line must be the header {{\"indexaDump\":1,…}}"
                    ),
                    )
                    .into())
                }
                Err(e) => {
                    return Err(CliError::new("DataError", format!("dump line {n}: {e}")).into())
                }
            },
            Some((_, Err(e))) => {
                return Err(
                    CliError::new("UnknownError", format!("cannot read {shown}: {e}")).into(),
                )
            }
        }
    };
    let scratch = Scratch::new(factory.dir(), ".restore-")?;
    let restored = {
        let scratch_factory = Factory::open_dir(scratch.path())?;
        let mut outcome: Option<Result<(), CliError>> = None;
        let opened = scratch_factory.open(&a.db, Some(header), |tx, _, _| {
            let result = restore_into(tx, &mut lines);
            let failed = result.is_err();
            outcome = Some(result);
            if failed {
                Err(indexa::Error::Abort("the restore failed".into()))
            } else {
                Ok(())
            }
        });
        match (outcome, opened) {
            (Some(Err(e)), _) => return Err(e.into()),
            (_, Err(e)) => return Err(e.into()),
            (_, Ok(db)) => db.close(),
        }
        scratch_factory.database_path(&a.db)
    };
    factory
        .replace_database(a.db.as_str(), &restored, a.replace)
        .map_err(|e| match e {
            indexa::Error::Constraint(_) => CliError::new(
                "ConstraintError",
                format!(
                    "database {:?} was created by another process during the restore",
                    a.db
                ),
            ),
            other => CliError::from(other),
        })?;
    Ok(())
}
