//! `indexa import`: load a JSON array or NDJSON file into an object store, all or nothing.

use std::fs;
use std::io::{self, IsTerminal, Read, Write};
use std::path::PathBuf;
use std::time::Instant;

use clap::{Args, ValueEnum};
use indexa::{
    convert_value_to_key, parse_value, value_to_text, Key, KeyPath, ObjectStore, Transaction,
    TransactionMode, Value,
};
use indicatif::{ProgressBar, ProgressStyle};

use crate::error::{CliError, CmdResult};
use crate::keys::{key_path_arg, IndexSpec};
use crate::open::DataDir;

/// The layout of an import file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One JSON array of records.
    Json,
    /// One JSON record per line (blank lines ignored).
    Ndjson,
    /// `indexa export` output: one {"key":…,"value":…} per line.
    Export,
}

/// `indexa import`: add the records of a file to an object store.
#[derive(Debug, Clone, Args)]
pub struct ImportArgs {
    /// The database (created when missing).
    pub db: String,
    /// The object store (created when missing, with --key-path, --auto-increment, --index).
    pub store: String,
    /// The file: a JSON array or NDJSON (detected from the first non-blank character); `-`
    /// reads standard input.
    pub file: PathBuf,
    /// The file's layout, instead of detecting json/ndjson (`export` must be given).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// In-line keys at this key path when creating the store: `id`, `name.common`,
    /// `country,name` (compound), or '["a"]' (one-element compound).
    #[arg(long, value_name = "KEYPATH")]
    pub key_path: Option<String>,
    /// Give a created store a key generator.
    #[arg(long)]
    pub auto_increment: bool,
    /// Create this index when missing: NAME=KEYPATH, optionally followed by :unique and/or
    /// :multi (repeatable; KEYPATH as for --key-path; a bare NAME indexes the key path NAME).
    #[arg(long, value_name = "NAME[=KEYPATH][:unique][:multi]")]
    pub index: Vec<String>,
    /// Store records with `put`, replacing existing ones, instead of `add`.
    #[arg(long)]
    pub put: bool,
    /// Skip records that fail (reporting each on stderr) instead of importing nothing.
    #[arg(long)]
    pub skip_invalid: bool,
    /// Show no progress bar.
    #[arg(long)]
    pub quiet: bool,
}

/// One record of the file, or why it could not be read.
struct Item {
    /// Its 1-based number among the file's records.
    number: usize,
    /// `line L` for NDJSON records not on line `number`.
    line: Option<usize>,
    record: Result<(Value, Option<Key>), CliError>,
}

impl Item {
    /// How errors name record `number` (found on `line`, if that differs).
    fn label(number: usize, line: Option<usize>) -> String {
        match line {
            Some(line) => format!("record {number} (line {line})"),
            None => format!("record {number}"),
        }
    }
}

/// Reads the file into its records.
fn read_records(path: &PathBuf, format: Option<Format>) -> Result<Vec<Item>, CliError> {
    let shown = path.display().to_string();
    let mut bytes = Vec::new();
    let read = if path.as_os_str() == "-" {
        io::stdin().lock().read_to_end(&mut bytes).map(|_| ())
    } else {
        fs::File::open(path).and_then(|mut f| f.read_to_end(&mut bytes).map(|_| ()))
    };
    read.map_err(|e| CliError::new("UnknownError", format!("cannot read {shown}: {e}")))?;
    // A UTF-8 byte order mark, as some editors write, is not part of the JSON.
    if bytes.starts_with(b"\xEF\xBB\xBF") {
        bytes.drain(..3);
    }
    let text = String::from_utf8(bytes).map_err(|e| {
        CliError::new(
            "SyntaxError",
            format!(
                "{shown}: not UTF-8 text (byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })?;
    let format = format.unwrap_or_else(|| {
        if text.trim_start().starts_with('[') {
            Format::Json
        } else {
            Format::Ndjson
        }
    });
    if format == Format::Json {
        let value = parse_value(&text).map_err(|e| CliError::from(e).context(&shown))?;
        let Value::Array(records) = value else {
            return Err(CliError::new(
                "DataError",
                format!("{shown}: a JSON array of records was expected"),
            ));
        };
        return Ok(records
            .into_iter()
            .enumerate()
            .map(|(i, v)| Item {
                number: i + 1,
                line: None,
                record: Ok((v, None)),
            })
            .collect());
    }
    let mut items = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let number = items.len() + 1;
        let record = parse_value(line).map_err(CliError::from).and_then(|v| {
            if format == Format::Export {
                export_record(v)
            } else {
                Ok((v, None))
            }
        });
        items.push(Item {
            number,
            line: (i + 1 != number).then_some(i + 1),
            record,
        });
    }
    Ok(items)
}

/// Splits an `indexa export` line `{"key":K,"value":V}`.
fn export_record(line: Value) -> Result<(Value, Option<Key>), CliError> {
    let bad = || {
        CliError::new(
            "DataError",
            "an export line must be {\"key\":…,\"value\":…}",
        )
    };
    let Value::Object(mut map) = line else {
        return Err(bad());
    };
    let (Some(key), Some(value)) = (
        map.shift_remove(&indexa::Utf16String::from("key")),
        map.shift_remove(&indexa::Utf16String::from("value")),
    ) else {
        return Err(bad());
    };
    if !map.is_empty() {
        return Err(bad());
    }
    let key = convert_value_to_key(&key).ok_or_else(|| {
        CliError::new(
            "DataError",
            format!("{} is not a valid key", value_to_text(&key)),
        )
    })?;
    Ok((value, Some(key)))
}

/// What the store and its indexes look like now, when they exist.
struct Existing {
    version: u64,
    store: Option<StoreShape>,
}

struct StoreShape {
    key_path: Option<KeyPath>,
    auto_increment: bool,
    indexes: Vec<IndexSpec>,
}

fn inspect(dir: &DataDir, db: &str, store: &str) -> Result<Existing, CliError> {
    let factory = dir.factory()?;
    let version = DataDir::version_of(&factory, db)?;
    if version == 0 {
        return Ok(Existing {
            version,
            store: None,
        });
    }
    let database = dir.open_existing(db)?;
    if !database.object_store_names().iter().any(|n| n == store) {
        return Ok(Existing {
            version: database.version(),
            store: None,
        });
    }
    let tx = database.transaction(&[store], TransactionMode::ReadOnly)?;
    let s = tx.object_store(store)?;
    let mut indexes = Vec::new();
    for name in s.index_names()? {
        let ix = s.index(&name)?;
        indexes.push(IndexSpec {
            name,
            key_path: ix.key_path()?,
            unique: ix.unique()?,
            multi_entry: ix.multi_entry()?,
        });
    }
    let shape = StoreShape {
        key_path: s.key_path()?,
        auto_increment: s.auto_increment()?,
        indexes,
    };
    tx.commit()?;
    Ok(Existing {
        version: database.version(),
        store: Some(shape),
    })
}

fn key_path_text(kp: Option<&KeyPath>) -> String {
    kp.map_or_else(|| "none".to_owned(), |kp| value_to_text(&kp.to_value()))
}

/// Checks that the options agree with an existing store; returns the indexes to create.
fn missing_indexes<'a>(
    a: &ImportArgs,
    key_path: &Option<KeyPath>,
    wanted: &'a [IndexSpec],
    shape: &StoreShape,
) -> Result<Vec<&'a IndexSpec>, CliError> {
    let conflict = |what: String| {
        CliError::new(
            "ConstraintError",
            format!("object store {:?} already exists {what}", a.store),
        )
    };
    if a.key_path.is_some() && *key_path != shape.key_path {
        return Err(conflict(format!(
            "with key path {}, not {}",
            key_path_text(shape.key_path.as_ref()),
            key_path_text(key_path.as_ref())
        )));
    }
    if a.auto_increment && !shape.auto_increment {
        return Err(conflict("without a key generator".to_owned()));
    }
    let mut missing = Vec::new();
    for spec in wanted {
        match shape.indexes.iter().find(|ix| ix.name == spec.name) {
            None => missing.push(spec),
            Some(ix) if ix == spec => {}
            Some(ix) => {
                return Err(conflict(format!(
                    "with a different index {:?} (key path {}, unique {}, multiEntry {})",
                    ix.name,
                    key_path_text(Some(&ix.key_path)),
                    ix.unique,
                    ix.multi_entry
                )))
            }
        }
    }
    Ok(missing)
}

/// Counts of one import run.
struct Tally {
    imported: u64,
    skipped: u64,
}

/// Adds (or puts) every record in `tx`; stops at the first failure unless skipping.
fn load(
    tx: &Transaction,
    store: &ObjectStore<'_>,
    items: Vec<Item>,
    a: &ImportArgs,
    progress: &ProgressBar,
) -> Result<Tally, CliError> {
    let mut tally = Tally {
        imported: 0,
        skipped: 0,
    };
    // An exported key goes back as the key argument only for out-of-line keys; with in-line
    // keys it is already inside the value.
    let in_line = store.key_path()?.is_some();
    let mut stderr = io::stderr().lock();
    for item in items {
        let Item {
            number,
            line,
            record,
        } = item;
        let label = || Item::label(number, line);
        let result = record.and_then(|(value, key)| {
            let key = key.filter(|_| !in_line);
            let stored = if a.put {
                store.put(value, key)
            } else {
                store.add(value, key)
            };
            stored.map(|_| ()).map_err(CliError::from)
        });
        match result {
            Ok(()) => tally.imported += 1,
            Err(e) if a.skip_invalid && !tx.is_finished() => {
                tally.skipped += 1;
                progress.suspend(|| {
                    // A lost diagnostic line is no reason to stop the import.
                    let _ = writeln!(stderr, "indexa: skipped {}: {e}", label());
                });
            }
            Err(e) => return Err(e.context(label())),
        }
        if (tally.imported + tally.skipped) % 1024 == 0 {
            progress.set_position(tally.imported + tally.skipped);
        }
    }
    Ok(tally)
}

/// Runs `indexa import`.
///
/// # Errors
/// Input errors; the first failing record (with its number) unless `--skip-invalid`; engine
/// errors. On error nothing changes: no records, no store, no index, no version bump.
pub fn import(dir: &DataDir, a: &ImportArgs) -> CmdResult {
    let started = Instant::now();
    let key_path = a.key_path.as_deref().map(key_path_arg).transpose()?;
    let wanted = a
        .index
        .iter()
        .map(|s| IndexSpec::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let items = read_records(&a.file, a.format)?;
    let total = items.len() as u64;
    let progress = if !a.quiet && total >= 10_000 && io::stderr().is_terminal() {
        let bar = ProgressBar::new(total);
        if let Ok(style) =
            ProgressStyle::with_template("{bar:40} {pos}/{len} records ({per_sec}, {eta} left)")
        {
            bar.set_style(style);
        }
        bar
    } else {
        ProgressBar::hidden()
    };

    let existing = inspect(dir, &a.db, &a.store)?;
    let create_store = existing.store.is_none();
    let create: Vec<&IndexSpec> = match &existing.store {
        None => wanted.iter().collect(),
        Some(shape) => missing_indexes(a, &key_path, &wanted, shape)?,
    };
    let factory = dir.factory()?;
    let tally = if create_store || !create.is_empty() {
        let mut outcome: Option<Result<Tally, CliError>> = None;
        let opened = factory.open(&a.db, Some(existing.version + 1), |tx, _, _| {
            let result = (|| {
                let store = if create_store {
                    tx.create_object_store(&a.store, key_path.clone(), a.auto_increment)
                        .map_err(|e| {
                            CliError::from(e).context(format!("object store {:?}", a.store))
                        })?
                } else {
                    tx.object_store(&a.store)?
                };
                for spec in &create {
                    store
                        .create_index(
                            &spec.name,
                            spec.key_path.clone(),
                            spec.unique,
                            spec.multi_entry,
                        )
                        .map_err(|e| CliError::from(e).context(format!("index {:?}", spec.name)))?;
                }
                load(tx, &store, items, a, &progress)
            })();
            let failed = result.is_err();
            outcome = Some(result);
            if failed {
                Err(indexa::Error::Abort("the import failed".into()))
            } else {
                Ok(())
            }
        });
        match (outcome, opened) {
            (Some(Err(e)), _) => return Err(e.into()),
            (Some(Ok(tally)), Ok(_)) => tally,
            (Some(Ok(_)), Err(e)) => return Err(e.into()),
            (None, Err(e)) => return Err(e.into()),
            (None, Ok(_)) => {
                return Err(CliError::new(
                    "AbortError",
                    format!("database {:?} was upgraded by another process during the import; nothing was imported", a.db),
                )
                .into())
            }
        }
    } else {
        let db = dir.open_existing(&a.db)?;
        let tx = db.transaction(&[&a.store], TransactionMode::ReadWrite)?;
        let store = tx.object_store(&a.store)?;
        let tally = load(&tx, &store, items, a, &progress)?;
        tx.commit()?;
        tally
    };
    progress.finish_and_clear();
    let seconds = started.elapsed().as_secs_f64();
    let rate = if seconds > 0.0 {
        (tally.imported as f64 / seconds).round()
    } else {
        0.0
    };
    let skipped = if tally.skipped > 0 {
        format!(", skipped {} invalid records", tally.skipped)
    } else {
        String::new()
    };
    // The summary is informational: a closed stderr must not turn success into failure.
    let _ = writeln!(
        io::stderr().lock(),
        "imported {} {} into {}/{} in {seconds:.2}s ({rate} records/s){skipped}",
        tally.imported,
        if tally.imported == 1 {
            "record"
        } else {
            "records"
        },
        a.db,
        a.store
    );
    Ok(())
}
