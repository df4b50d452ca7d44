//! `indexa import`: load a JSON array or NDJSON file into an object store, all or nothing.

use std::fs;
use std::io::{self, BufRead, BufReader, IsTerminal, Write};
use std::path::{Path, PathBuf};
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
    /// Commit every N records instead of once at the end. NOT atomic: when a record fails,
    /// the chunks committed before it stay imported (the failing chunk is rolled back).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub commit_every: Option<u64>,
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

/// The records of an import file, read incrementally: memory holds one record at a time
/// (plus the read buffer), whatever the file's size.
pub struct Records {
    input: Box<dyn BufRead>,
    /// The file's name as errors show it.
    shown: String,
    format: Format,
    /// Bytes consumed so far (for progress and error offsets).
    offset: u64,
    /// Records handed out so far.
    number: usize,
    /// NDJSON: lines read so far.
    line: usize,
    /// JSON: the closing `]` was read.
    done: bool,
    buf: Vec<u8>,
}

fn read_error(shown: &str, e: io::Error) -> CliError {
    CliError::new("UnknownError", format!("cannot read {shown}: {e}"))
}

fn syntax(shown: &str, message: String) -> CliError {
    CliError::new("SyntaxError", format!("{shown}: {message}"))
}

impl Records {
    /// Opens `path` (`-` for standard input) and detects its layout: a JSON array when the
    /// first non-blank character is `[`, else NDJSON, unless `format` says.
    ///
    /// # Errors
    /// `UnknownError` if the file cannot be read; `DataError` for `--format json` on a file
    /// that is not an array.
    pub fn open(path: &Path, format: Option<Format>) -> Result<Records, CliError> {
        let shown = path.display().to_string();
        let input: Box<dyn BufRead> = if path.as_os_str() == "-" {
            Box::new(io::stdin().lock())
        } else {
            Box::new(BufReader::with_capacity(
                1 << 16,
                fs::File::open(path).map_err(|e| read_error(&shown, e))?,
            ))
        };
        let mut records = Records {
            input,
            shown,
            format: Format::Ndjson,
            offset: 0,
            number: 0,
            line: 0,
            done: false,
            buf: Vec::new(),
        };
        // A UTF-8 byte order mark, as some editors write, is not part of the JSON.
        let head = records
            .input
            .fill_buf()
            .map_err(|e| read_error(&records.shown, e))?;
        if head.starts_with(b"\xEF\xBB\xBF") {
            records.consume(3);
        }
        let detected = match records.skip_whitespace()? {
            Some(b'[') => Format::Json,
            _ => Format::Ndjson,
        };
        records.format = format.unwrap_or(detected);
        if records.format == Format::Json {
            if detected != Format::Json {
                return Err(CliError::new(
                    "DataError",
                    format!("{}: a JSON array of records was expected", records.shown),
                ));
            }
            records.consume(1);
        }
        Ok(records)
    }

    /// The layout being read.
    pub fn format(&self) -> Format {
        self.format
    }

    /// Bytes read so far.
    pub fn offset(&self) -> u64 {
        self.offset
    }

    fn consume(&mut self, n: usize) {
        self.input.consume(n);
        self.offset += n as u64;
    }

    /// Skips JSON whitespace; returns the next byte without consuming it.
    fn skip_whitespace(&mut self) -> Result<Option<u8>, CliError> {
        loop {
            let chunk = self
                .input
                .fill_buf()
                .map_err(|e| read_error(&self.shown, e))?;
            if chunk.is_empty() {
                return Ok(None);
            }
            match chunk
                .iter()
                .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            {
                Some(i) => {
                    let next = chunk[i];
                    self.consume(i);
                    return Ok(Some(next));
                }
                None => {
                    let n = chunk.len();
                    self.consume(n);
                }
            }
        }
    }

    /// The next element of the JSON array, as text: the bytes up to the `,` or `]` at depth 0
    /// outside strings. `None` after the closing `]`.
    fn next_element(&mut self) -> Result<Option<(String, u64)>, CliError> {
        if self.done {
            return Ok(None);
        }
        if self.number == 0 && self.skip_whitespace()? == Some(b']') {
            // An empty array.
            self.consume(1);
            return self.close().map(|()| None);
        }
        self.buf.clear();
        let start = self.offset;
        let (mut depth, mut in_string, mut escaped) = (0u32, false, false);
        let end = loop {
            let chunk = self
                .input
                .fill_buf()
                .map_err(|e| read_error(&self.shown, e))?;
            if chunk.is_empty() {
                return Err(syntax(
                    &self.shown,
                    format!(
                        "the array is not closed (the file ends at byte {})",
                        self.offset
                    ),
                ));
            }
            let mut found = None;
            for (i, &b) in chunk.iter().enumerate() {
                if in_string {
                    match (escaped, b) {
                        (true, _) => escaped = false,
                        (false, b'\\') => escaped = true,
                        (false, b'"') => in_string = false,
                        _ => {}
                    }
                    continue;
                }
                match b {
                    b'"' => in_string = true,
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' if depth > 0 => depth -= 1,
                    b',' | b']' if depth == 0 => {
                        found = Some((i, b));
                        break;
                    }
                    _ => {}
                }
            }
            match found {
                Some((i, b)) => {
                    self.buf.extend_from_slice(&chunk[..i]);
                    self.consume(i);
                    break b;
                }
                None => {
                    let n = chunk.len();
                    self.buf.extend_from_slice(chunk);
                    self.consume(n);
                }
            }
        };
        if self
            .buf
            .iter()
            .all(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        {
            return Err(syntax(
                &self.shown,
                format!("expected a value at byte {}", self.offset),
            ));
        }
        self.consume(1);
        if end == b']' {
            self.close()?;
        }
        let text = String::from_utf8(std::mem::take(&mut self.buf)).map_err(|e| {
            syntax(
                &self.shown,
                format!(
                    "not UTF-8 text (byte {})",
                    start + e.utf8_error().valid_up_to() as u64
                ),
            )
        })?;
        Ok(Some((text, start)))
    }

    /// After the closing `]` (consumed): only whitespace may follow.
    fn close(&mut self) -> Result<(), CliError> {
        self.done = true;
        match self.skip_whitespace()? {
            None => Ok(()),
            Some(_) => Err(syntax(
                &self.shown,
                format!("unexpected text after the array at byte {}", self.offset),
            )),
        }
    }

    /// The next non-blank NDJSON line, with its 1-based line number.
    fn next_line(&mut self) -> Result<Option<(String, usize)>, CliError> {
        loop {
            self.buf.clear();
            let n = self
                .input
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| read_error(&self.shown, e))?;
            if n == 0 {
                return Ok(None);
            }
            let start = self.offset;
            self.offset += n as u64;
            self.line += 1;
            if self.buf.iter().all(|b| b.is_ascii_whitespace()) {
                continue;
            }
            while self.buf.last().is_some_and(|b| matches!(b, b'\n' | b'\r')) {
                self.buf.pop();
            }
            let text = String::from_utf8(std::mem::take(&mut self.buf)).map_err(|e| {
                syntax(
                    &self.shown,
                    format!(
                        "not UTF-8 text (byte {})",
                        start + e.utf8_error().valid_up_to() as u64
                    ),
                )
            })?;
            return Ok(Some((text, self.line)));
        }
    }

    /// The next record. `Err` is a fault of the file's structure, which ends the import
    /// (unlike a record that fails, which `--skip-invalid` may skip).
    fn next_item(&mut self) -> Result<Option<Item>, CliError> {
        let (text, line) = if self.format == Format::Json {
            match self.next_element()? {
                Some((text, _)) => (text, None),
                None => return Ok(None),
            }
        } else {
            match self.next_line()? {
                Some((text, line)) => (text, Some(line)),
                None => return Ok(None),
            }
        };
        self.number += 1;
        let number = self.number;
        let record = parse_value(&text).map_err(CliError::from).and_then(|v| {
            if self.format == Format::Export {
                export_record(v)
            } else {
                Ok((v, None))
            }
        });
        Ok(Some(Item {
            number,
            line: line.filter(|l| *l != number),
            record,
        }))
    }
}

/// True for a value that is exactly `{"key":…,"value":…}`, as `indexa export` writes.
fn export_shaped(value: &Value) -> bool {
    matches!(value, Value::Object(map) if map.len() == 2
        && map.contains_key(&indexa::Utf16String::from("key"))
        && map.contains_key(&indexa::Utf16String::from("value")))
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

/// Counts of one import run, and what the records looked like.
struct Tally {
    imported: u64,
    skipped: u64,
    /// Every record read so far is exactly `{"key":…,"value":…}`.
    all_export_shaped: bool,
}

impl Tally {
    fn read(&self) -> u64 {
        self.imported + self.skipped
    }
}

/// The error for an `indexa export` file imported without `--format export`.
fn export_file_error(a: &ImportArgs, format: Format) -> CliError {
    let as_is = if format == Format::Json {
        "json"
    } else {
        "ndjson"
    };
    CliError::new(
        "DataError",
        format!(
            "every record of {} is {{\"key\":…,\"value\":…}}, as `indexa export` writes: import it with --format export (or --format {as_is} to store the records as they are)",
            a.file.display()
        ),
    )
}

/// Adds (or puts) records in `tx` until the file ends (returns `true`) or `limit` records
/// were read (returns `false`); stops at the first failure unless skipping. Without
/// `--format`, a chunk goes on past `limit` while every record read so far is
/// `{"key":…,"value":…}`: whether the file is an `indexa export` file (refused) is known
/// before anything is committed.
fn load(
    tx: &Transaction,
    store: &ObjectStore<'_>,
    records: &mut Records,
    limit: Option<u64>,
    a: &ImportArgs,
    progress: &ProgressBar,
    tally: &mut Tally,
) -> Result<bool, CliError> {
    // An exported key goes back as the key argument only for out-of-line keys; with in-line
    // keys it is already inside the value.
    let in_line = store.key_path()?.is_some();
    let mut stderr = io::stderr().lock();
    let mut read = 0;
    let done = loop {
        let undecided = a.format.is_none() && tally.all_export_shaped;
        if limit.is_some_and(|n| read >= n) && !undecided {
            break false;
        }
        let Some(Item {
            number,
            line,
            record,
        }) = records.next_item()?
        else {
            break true;
        };
        read += 1;
        let label = || Item::label(number, line);
        tally.all_export_shaped &= matches!(&record, Ok((v, None)) if export_shaped(v));
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
            Err(e) if a.format.is_none() && tally.all_export_shaped => {
                return Err(
                    export_file_error(a, records.format()).context(format!("{}: {e}", label()))
                )
            }
            Err(e) => return Err(e.context(label())),
        }
        if tally.read() % 1024 == 0 {
            progress.set_position(records.offset());
            progress.set_message(format!("{} records", tally.read()));
        }
    };
    // Checked before every commit, so an export file never commits a chunk.
    if a.format.is_none() && tally.read() > 0 && tally.all_export_shaped {
        return Err(export_file_error(a, records.format()));
    }
    Ok(done)
}

/// Warns (stderr) about each `--index` that holds no entry although the store has records:
/// its key path matched no record, which is usually a typo.
fn warn_about_empty_indexes(
    dir: &DataDir,
    a: &ImportArgs,
    wanted: &[IndexSpec],
) -> Result<(), CliError> {
    if wanted.is_empty() {
        return Ok(());
    }
    let db = dir.open_existing(&a.db)?;
    let tx = db.transaction(&[&a.store], TransactionMode::ReadOnly)?;
    let store = tx.object_store(&a.store)?;
    if store.count(None)? == 0 {
        return Ok(());
    }
    let mut stderr = io::stderr().lock();
    for spec in wanted {
        if store.index(&spec.name)?.count(None)? == 0 {
            let _ = writeln!(
                stderr,
                "indexa: warning: index {:?} (key path {}) matched no record of {}/{}",
                spec.name,
                key_path_text(Some(&spec.key_path)),
                a.db,
                a.store
            );
        }
    }
    Ok(())
}

/// Runs `indexa import`.
///
/// # Errors
/// Input errors; the first failing record (with its number) unless `--skip-invalid`; engine
/// errors. On error nothing changes: no records, no store, no index, no version bump —
/// except with `--commit-every`, where the chunks committed before the error stay.
pub fn import(dir: &DataDir, a: &ImportArgs) -> CmdResult {
    let started = Instant::now();
    let key_path = a.key_path.as_deref().map(key_path_arg).transpose()?;
    let wanted = a
        .index
        .iter()
        .map(|s| IndexSpec::parse(s))
        .collect::<Result<Vec<_>, _>>()?;
    let mut records = Records::open(&a.file, a.format)?;
    let size = fs::metadata(&a.file).map(|m| m.len()).unwrap_or(0);
    let progress = if !a.quiet && size >= 1 << 20 && io::stderr().is_terminal() {
        let bar = ProgressBar::new(size);
        if let Ok(style) = ProgressStyle::with_template(
            "{bar:40} {binary_bytes}/{binary_total_bytes} ({binary_bytes_per_sec}, {eta} left) {msg}",
        ) {
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
    let mut tally = Tally {
        imported: 0,
        skipped: 0,
        all_export_shaped: true,
    };
    let mut done = false;
    if create_store || !create.is_empty() {
        let mut outcome: Option<Result<bool, CliError>> = None;
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
                load(
                    tx,
                    &store,
                    &mut records,
                    a.commit_every,
                    a,
                    &progress,
                    &mut tally,
                )
            })();
            let failed = result.is_err();
            outcome = Some(result);
            if failed {
                Err(indexa::Error::Abort("the import failed".into()))
            } else {
                Ok(())
            }
        });
        done = match (outcome, opened) {
            (Some(Err(e)), _) => return Err(e.into()),
            (Some(Ok(done)), Ok(_)) => done,
            (Some(Ok(_)), Err(e)) => return Err(e.into()),
            (None, Err(e)) => return Err(e.into()),
            (None, Ok(_)) => {
                return Err(CliError::new(
                    "AbortError",
                    format!("database {:?} was upgraded by another process during the import; nothing was imported", a.db),
                )
                .into())
            }
        };
    }
    if !done {
        let db = dir.open_existing(&a.db)?;
        while !done {
            let tx = db.transaction(&[&a.store], TransactionMode::ReadWrite)?;
            let store = tx.object_store(&a.store)?;
            done = load(
                &tx,
                &store,
                &mut records,
                a.commit_every,
                a,
                &progress,
                &mut tally,
            )?;
            tx.commit()?;
        }
    }
    progress.finish_and_clear();
    warn_about_empty_indexes(dir, a, &wanted)?;
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
