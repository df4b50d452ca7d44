//! `indexa batch`: the NDJSON batch protocol (see `docs/batch-protocol.md`).
//!
//! Operations are read one per line and run in one transaction; each gets one output line,
//! flushed as it is written, and the last line says whether the transaction committed.
//! [`run`] takes any reader and writer, so the protocol can be driven in-process.

use std::io::{self, BufRead, Write};

use clap::{Args, ValueEnum};
use indexa::{
    convert_value_to_key, key_to_text, parse_value, value_to_text, Cursor, CursorDirection,
    Durability, Factory, Index, Key, KeyPath, KeyRange, Object, ObjectStore, Query, Transaction,
    TransactionMode, Utf16String, Value,
};

use crate::open::DataDir;
use crate::output::{JsonObject, Lines};
use crate::query::position_text;

/// `--mode` of a batch on an existing database.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Mode {
    /// Reads only.
    #[value(name = "readonly")]
    ReadOnly,
    /// Reads and writes records.
    #[default]
    #[value(name = "readwrite")]
    ReadWrite,
}

/// `--durability` of a batch's transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum DurabilityArg {
    /// The default (strict in Indexa).
    #[default]
    #[value(name = "default")]
    Default,
    /// On stable storage when the commit returns.
    #[value(name = "strict")]
    Strict,
    /// May be lost on power loss, never half-applied.
    #[value(name = "relaxed")]
    Relaxed,
}

/// `indexa batch`: run NDJSON operations from stdin in one transaction.
#[derive(Debug, Clone, Args)]
pub struct BatchArgs {
    /// The database.
    pub db: String,
    /// Open at this version: above the current one, the batch is the upgrade
    /// (versionchange) transaction and may change the schema.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub version: Option<u64>,
    /// The transaction's mode when the batch is not an upgrade.
    #[arg(long, value_enum, default_value_t = Mode::ReadWrite)]
    pub mode: Mode,
    /// The transaction's durability when the batch is not an upgrade.
    #[arg(long, value_enum, default_value_t = DurabilityArg::Default)]
    pub durability: DurabilityArg,
}

/// How a batch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The transaction committed (`{"transaction":"committed"}`).
    Committed,
    /// The transaction aborted (`{"transaction":"aborted"}`).
    Aborted,
    /// The database could not be opened (one `{"error":…}` line, no transaction line).
    OpenFailed,
}

/// Runs a batch against database `args.db` in the data directory `dir` (see [`run`]).
///
/// # Errors
/// Only errors writing `output`.
pub fn run_in_dir<R: BufRead, W: Write>(
    dir: &DataDir,
    args: &BatchArgs,
    input: R,
    mut output: W,
) -> io::Result<Outcome> {
    let made = match dir.url() {
        Some(url) => Factory::open_url(url),
        None => Factory::open_dir(dir.path()),
    };
    match made {
        Ok(mut factory) => {
            factory.set_lock_timeout(dir.lock_timeout());
            run(&factory, &args.db, args, input, output)
        }
        Err(e) => {
            writeln!(output, "{}", error_line(&e))?;
            output.flush()?;
            Ok(Outcome::OpenFailed)
        }
    }
}

/// Runs a batch against database `db` of `factory`, reading operations from `input` and
/// writing the protocol's lines to `output`.
///
/// # Errors
/// Only errors writing `output`; the transaction is then aborted.
pub fn run<R: BufRead, W: Write>(
    factory: &Factory,
    db: &str,
    args: &BatchArgs,
    input: R,
    output: W,
) -> io::Result<Outcome> {
    let mut session = Session {
        input,
        out: Lines::flushed(output),
    };
    let mut ran: Option<io::Result<Outcome>> = None;
    let opened = factory.open(db, args.version, |tx, _, _| {
        ran = Some(session.run(tx));
        // The batch committed or aborted the transaction itself.
        Ok(())
    });
    if let Some(result) = ran {
        return result;
    }
    let started = opened.and_then(|database| {
        let mode = match args.mode {
            Mode::ReadOnly => TransactionMode::ReadOnly,
            Mode::ReadWrite => TransactionMode::ReadWrite,
        };
        let durability = match args.durability {
            DurabilityArg::Default => Durability::Default,
            DurabilityArg::Strict => Durability::Strict,
            DurabilityArg::Relaxed => Durability::Relaxed,
        };
        database.transaction_over_all_stores(mode, durability)
    });
    match started {
        Ok(tx) => session.run(&tx),
        Err(e) => {
            session.out.line(&error_line(&e))?;
            Ok(Outcome::OpenFailed)
        }
    }
}

/// The protocol's error line: `{"error":{"name":…,"message":…}}`.
fn error_line(e: &indexa::Error) -> String {
    JsonObject::new().raw("error", &error_object(e)).finish()
}

fn error_object(e: &indexa::Error) -> String {
    JsonObject::new()
        .value("name", &Value::string(e.name()))
        .value("message", &Value::string(e.message()))
        .finish()
}

fn type_error(message: impl Into<String>) -> indexa::Error {
    indexa::Error::Type(message.into())
}

fn data_error(message: impl Into<String>) -> indexa::Error {
    indexa::Error::Data(message.into())
}

/// What an operation produced.
enum Done {
    /// `{"result":R}`; `failed` for a cursor op whose last step failed.
    Result { text: String, failed: bool },
    /// The `commit` op.
    Commit,
    /// The `abort` op.
    Abort,
}

struct Session<R, W: Write> {
    input: R,
    out: Lines<W>,
}

impl<R: BufRead, W: Write> Session<R, W> {
    /// Runs every line against `tx` and ends it; writes the transaction line.
    fn run(&mut self, tx: &Transaction) -> io::Result<Outcome> {
        let outcome = self.run_lines(tx);
        if !tx.is_finished() {
            // Output failed: nobody saw the results, so nothing is committed.
            tx.abort();
        }
        let outcome = outcome?;
        let state = match outcome {
            Outcome::Committed => "committed",
            _ => "aborted",
        };
        self.out.line(
            &JsonObject::new()
                .value("transaction", &Value::string(state))
                .finish(),
        )?;
        Ok(outcome)
    }

    fn run_lines(&mut self, tx: &Transaction) -> io::Result<Outcome> {
        let mut buf = Vec::new();
        loop {
            buf.clear();
            let read = self.input.read_until(b'\n', &mut buf);
            let line = match read {
                Ok(0) => break,
                Ok(_) => {
                    std::str::from_utf8(buf.strip_suffix(b"\n").unwrap_or(&buf)).map_err(|e| {
                        indexa::Error::Syntax(format!(
                            "the line is not UTF-8 text (byte {})",
                            e.valid_up_to()
                        ))
                    })
                }
                Err(e) => Err(indexa::Error::Unknown(format!(
                    "cannot read the input: {e}"
                ))),
            };
            if let Ok(text) = line {
                if text.trim_matches([' ', '\t', '\r', '\n']).is_empty() {
                    continue;
                }
            }
            let (prevent, result) = match line {
                Ok(text) => run_line(tx, text),
                Err(e) => (false, Err(e)),
            };
            match result {
                Ok(Done::Result { text, failed }) => {
                    self.out
                        .line(&JsonObject::new().raw("result", &text).finish())?;
                    if failed && (tx.is_finished() || !prevent) {
                        tx.abort();
                        return Ok(Outcome::Aborted);
                    }
                }
                Ok(Done::Commit) => {
                    return match tx.commit() {
                        Ok(()) => {
                            self.out.line(r#"{"result":null}"#)?;
                            Ok(Outcome::Committed)
                        }
                        Err(e) => {
                            self.out.line(&error_line(&e))?;
                            tx.abort();
                            Ok(Outcome::Aborted)
                        }
                    };
                }
                Ok(Done::Abort) => {
                    tx.abort();
                    self.out.line(r#"{"result":null}"#)?;
                    return Ok(Outcome::Aborted);
                }
                Err(e) => {
                    self.out.line(&error_line(&e))?;
                    if tx.is_finished() || !prevent {
                        tx.abort();
                        return Ok(Outcome::Aborted);
                    }
                }
            }
        }
        match tx.commit() {
            Ok(()) => Ok(Outcome::Committed),
            Err(e) => {
                self.out.line(&error_line(&e))?;
                tx.abort();
                Ok(Outcome::Aborted)
            }
        }
    }
}

/// Schema operations need the upgrade (versionchange) transaction.
fn require_upgrade(tx: &Transaction) -> indexa::Result<()> {
    if tx.mode() == TransactionMode::VersionChange {
        Ok(())
    } else {
        Err(indexa::Error::InvalidState(
            "the schema can only change in a versionchange transaction".into(),
        ))
    }
}

/// Parses and runs one line; returns whether the op asked for `preventDefault`.
fn run_line(tx: &Transaction, line: &str) -> (bool, indexa::Result<Done>) {
    let value = match parse_value(line) {
        Ok(v) => v,
        Err(e) => return (false, Err(e)),
    };
    let Value::Object(map) = value else {
        return (false, Err(type_error("an operation must be a JSON object")));
    };
    let prevent = match map.get(&Utf16String::from("preventDefault")) {
        None => false,
        Some(Value::Bool(b)) => *b,
        Some(_) => {
            return (
                false,
                Err(type_error("\"preventDefault\" must be a boolean")),
            )
        }
    };
    let op = match Op::new(&map) {
        Ok(op) => op,
        Err(e) => return (prevent, Err(e)),
    };
    if !prevent {
        return (prevent, op.run(tx));
    }
    // preventDefault: a failed op, including a cursor op with a failed step after others
    // succeeded, must leave no trace.
    let mut failed_cursor_op = None;
    let result = tx.atomically(|tx| match op.run(tx)? {
        Done::Result { text, failed: true } => {
            failed_cursor_op = Some(text);
            Err(indexa::Error::Abort("a cursor step failed".into()))
        }
        done => Ok(done),
    });
    match (failed_cursor_op, result) {
        (Some(text), _) => (prevent, Ok(Done::Result { text, failed: true })),
        (None, result) => (prevent, result),
    }
}

/// The arguments each op accepts (besides `op` and `preventDefault`).
const OPS: &[(&str, &[&str])] = &[
    ("createObjectStore", &["name", "keyPath", "autoIncrement"]),
    ("deleteObjectStore", &["name"]),
    (
        "createIndex",
        &["store", "name", "keyPath", "unique", "multiEntry"],
    ),
    ("deleteIndex", &["store", "name"]),
    ("add", &["store", "value", "key"]),
    ("put", &["store", "value", "key"]),
    ("get", &["store", "index", "query"]),
    ("getKey", &["store", "index", "query"]),
    ("getAll", &["store", "index", "query", "count", "direction"]),
    (
        "getAllKeys",
        &["store", "index", "query", "count", "direction"],
    ),
    ("count", &["store", "index", "query"]),
    ("delete", &["store", "query"]),
    ("clear", &["store"]),
    (
        "openCursor",
        &["store", "index", "query", "direction", "steps"],
    ),
    (
        "openKeyCursor",
        &["store", "index", "query", "direction", "steps"],
    ),
    ("abort", &[]),
    ("commit", &[]),
];

/// One parsed operation line.
struct Op<'a> {
    name: &'static str,
    map: &'a Object,
}

/// An object store, or one of its indexes.
enum Source<'t> {
    Store(ObjectStore<'t>),
    Index(Index<'t>),
}

impl<'a> Op<'a> {
    fn new(map: &'a Object) -> indexa::Result<Op<'a>> {
        let name = match map.get(&Utf16String::from("op")) {
            None => return Err(type_error("missing argument \"op\"")),
            Some(Value::String(s)) => s,
            Some(_) => return Err(type_error("\"op\" must be a string")),
        };
        let (op, allowed) = OPS.iter().find(|(n, _)| name.eq_str(n)).ok_or_else(|| {
            type_error(format!(
                "unknown op {}",
                value_to_text(&Value::String(name.clone()))
            ))
        })?;
        for field in map.keys() {
            let known = field.eq_str("op")
                || field.eq_str("preventDefault")
                || allowed.iter().any(|a| field.eq_str(a));
            if !known {
                return Err(type_error(format!(
                    "{op}: unknown argument {}",
                    value_to_text(&Value::String(field.clone()))
                )));
            }
        }
        Ok(Op { name: op, map })
    }

    /// The argument `name`; `None` when absent or null.
    fn get(&self, name: &str) -> Option<&'a Value> {
        match self.map.get(&Utf16String::from(name)) {
            None | Some(Value::Null) => None,
            Some(v) => Some(v),
        }
    }

    fn missing(&self, name: &str) -> indexa::Error {
        type_error(format!("{}: missing argument {name:?}", self.name))
    }

    fn wrong_type(&self, name: &str, expected: &str) -> indexa::Error {
        type_error(format!(
            "{}: argument {name:?} must be {expected}",
            self.name
        ))
    }

    fn string(&self, name: &str) -> indexa::Result<String> {
        self.opt_string(name)?.ok_or_else(|| self.missing(name))
    }

    fn opt_string(&self, name: &str) -> indexa::Result<Option<String>> {
        match self.get(name) {
            None => Ok(None),
            Some(Value::String(s)) => s
                .to_string()
                .map(Some)
                .ok_or_else(|| self.wrong_type(name, "a valid Unicode string")),
            Some(_) => Err(self.wrong_type(name, "a string")),
        }
    }

    fn flag(&self, name: &str) -> indexa::Result<bool> {
        match self.get(name) {
            None => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(self.wrong_type(name, "a boolean")),
        }
    }

    /// The key path argument `name`, type-checked but not yet validated: the spec checks
    /// the transaction's mode (InvalidStateError) before the key path (SyntaxError).
    fn key_path(&self, name: &str) -> indexa::Result<Option<&Value>> {
        match self.get(name) {
            None => Ok(None),
            Some(v @ (Value::String(_) | Value::Array(_))) => Ok(Some(v)),
            Some(_) => Err(self.wrong_type(name, "a string or an array of strings")),
        }
    }

    fn store<'t>(&self, tx: &'t Transaction) -> indexa::Result<ObjectStore<'t>> {
        tx.object_store(&self.string("store")?)
    }

    fn source<'t>(&self, tx: &'t Transaction) -> indexa::Result<Source<'t>> {
        let store = self.store(tx)?;
        Ok(match self.opt_string("index")? {
            Some(name) => Source::Index(store.index(&name)?),
            None => Source::Store(store),
        })
    }

    /// The `query` argument; `None` when absent or null.
    fn query(&self) -> indexa::Result<Option<KeyRange>> {
        self.get("query").map(parse_query).transpose()
    }

    /// The `query` argument of get, getKey and delete, where "all" is not allowed.
    fn required_query(&self) -> indexa::Result<KeyRange> {
        self.query()?.ok_or_else(|| {
            data_error(format!(
                "{}: the query must be a key or a key range",
                self.name
            ))
        })
    }

    fn direction(&self) -> indexa::Result<CursorDirection> {
        match self.get("direction") {
            None => Ok(CursorDirection::Next),
            Some(Value::String(s)) => s.to_string_lossy().parse(),
            Some(_) => Err(self.wrong_type("direction", "a string")),
        }
    }

    fn count(&self) -> indexa::Result<u32> {
        match self.get("count") {
            None => Ok(0),
            Some(v) => integer(v, u64::from(u32::MAX))
                .map(|n| n as u32)
                .ok_or_else(|| self.wrong_type("count", "an integer from 0 to 4294967295")),
        }
    }

    fn run(&self, tx: &Transaction) -> indexa::Result<Done> {
        let text = match self.name {
            "createObjectStore" => {
                let name = self.string("name")?;
                let key_path = self.key_path("keyPath")?;
                let auto_increment = self.flag("autoIncrement")?;
                require_upgrade(tx)?;
                let key_path = key_path.map(KeyPath::from_value).transpose()?;
                tx.create_object_store(&name, key_path, auto_increment)?;
                null()
            }
            "deleteObjectStore" => {
                tx.delete_object_store(&self.string("name")?)?;
                null()
            }
            "createIndex" => {
                let store = self.store(tx)?;
                let name = self.string("name")?;
                let key_path = self
                    .key_path("keyPath")?
                    .ok_or_else(|| self.missing("keyPath"))?;
                require_upgrade(tx)?;
                let key_path = KeyPath::from_value(key_path)?;
                store.create_index(
                    &name,
                    key_path,
                    self.flag("unique")?,
                    self.flag("multiEntry")?,
                )?;
                null()
            }
            "deleteIndex" => {
                let store = self.store(tx)?;
                store.delete_index(&self.string("name")?)?;
                null()
            }
            "add" | "put" => {
                let store = self.store(tx)?;
                let value = self
                    .map
                    .get(&Utf16String::from("value"))
                    .ok_or_else(|| self.missing("value"))?
                    .clone();
                let key = match self.map.get(&Utf16String::from("key")) {
                    None => None,
                    Some(v) => Some(value_key(v)?),
                };
                let key = if self.name == "add" {
                    store.add(value, key)?
                } else {
                    store.put(value, key)?
                };
                key_to_text(&key)
            }
            "get" => {
                let source = self.source(tx)?;
                let range = self.required_query()?;
                let value = match source {
                    Source::Store(s) => s.get(range)?,
                    Source::Index(ix) => ix.get(range)?,
                };
                value_to_text(&value.unwrap_or(Value::Undefined))
            }
            "getKey" => {
                let source = self.source(tx)?;
                let range = self.required_query()?;
                let key = match source {
                    Source::Store(s) => s.get_key(range)?,
                    Source::Index(ix) => ix.get_key(range)?,
                };
                key.map_or_else(|| value_to_text(&Value::Undefined), |k| key_to_text(&k))
            }
            "getAll" | "getAllKeys" => {
                let source = self.source(tx)?;
                let query = Query::from(self.query()?)
                    .count(self.count()?)
                    .direction(self.direction()?);
                let items: Vec<Value> = match (source, self.name == "getAll") {
                    (Source::Store(s), true) => s.get_all(query)?,
                    (Source::Index(ix), true) => ix.get_all(query)?,
                    (Source::Store(s), false) => keys_to_values(s.get_all_keys(query)?),
                    (Source::Index(ix), false) => keys_to_values(ix.get_all_keys(query)?),
                };
                value_to_text(&Value::Array(items))
            }
            "count" => {
                let source = self.source(tx)?;
                let range = self.query()?;
                let n = match source {
                    Source::Store(s) => s.count(range)?,
                    Source::Index(ix) => ix.count(range)?,
                };
                value_to_text(&Value::Number(n as f64))
            }
            "delete" => {
                let store = self.store(tx)?;
                store.delete(self.required_query()?)?;
                null()
            }
            "clear" => {
                self.store(tx)?.clear()?;
                null()
            }
            "openCursor" | "openKeyCursor" => return self.cursor(tx),
            "commit" => return Ok(Done::Commit),
            _ => return Ok(Done::Abort),
        };
        Ok(Done::Result {
            text,
            failed: false,
        })
    }

    fn cursor(&self, tx: &Transaction) -> indexa::Result<Done> {
        let source = self.source(tx)?;
        let range = self.query()?;
        let direction = self.direction()?;
        let steps = match self.get("steps") {
            None => None,
            Some(Value::Array(steps)) => Some(steps),
            Some(_) => return Err(self.wrong_type("steps", "an array")),
        };
        let keys_only = self.name == "openKeyCursor";
        let mut cursor = match (source, keys_only) {
            (Source::Store(s), false) => s.open_cursor(range, direction)?,
            (Source::Store(s), true) => s.open_key_cursor(range, direction)?,
            (Source::Index(ix), false) => ix.open_cursor(range, direction)?,
            (Source::Index(ix), true) => ix.open_key_cursor(range, direction)?,
        };
        let mut items = Vec::new();
        let mut failed = false;
        match steps {
            None => {
                while let Some(position) = position_text(&cursor)? {
                    items.push(position);
                    cursor.continue_key(tx, None)?;
                }
            }
            Some(steps) => {
                items.push(position_or_null(&cursor)?);
                for step in steps {
                    match run_step(tx, &mut cursor, step) {
                        Ok(()) => items.push(position_or_null(&cursor)?),
                        Err(e) => {
                            items.push(JsonObject::new().raw("error", &error_object(&e)).finish());
                            failed = true;
                            break;
                        }
                    }
                }
            }
        }
        Ok(Done::Result {
            text: format!("[{}]", items.join(",")),
            failed,
        })
    }
}

fn null() -> String {
    "null".to_owned()
}

fn keys_to_values(keys: Vec<Key>) -> Vec<Value> {
    keys.iter().map(Value::from).collect()
}

fn position_or_null(cursor: &Cursor) -> indexa::Result<String> {
    Ok(position_text(cursor)?.unwrap_or_else(null))
}

/// A non-negative integer no larger than `max`.
fn integer(v: &Value, max: u64) -> Option<u64> {
    match v {
        Value::Number(n) if n.fract() == 0.0 && *n >= 0.0 && *n <= max as f64 => Some(*n as u64),
        _ => None,
    }
}

/// A key given as a value (`key`, a range bound, a cursor target).
fn value_key(v: &Value) -> indexa::Result<Key> {
    convert_value_to_key(v)
        .ok_or_else(|| data_error(format!("{} is not a valid key", value_to_text(v))))
}

/// A query: a key, or a range object with only `lower`, `upper`, `lowerOpen`, `upperOpen`.
fn parse_query(v: &Value) -> indexa::Result<KeyRange> {
    let Value::Object(map) = v else {
        return value_key(v).map(KeyRange::only);
    };
    const FIELDS: [&str; 4] = ["lower", "upper", "lowerOpen", "upperOpen"];
    if !map.keys().all(|k| FIELDS.iter().any(|f| k.eq_str(f))) {
        return Err(data_error(format!(
            "{} is not a valid key or key range",
            value_to_text(v)
        )));
    }
    let bound = |name: &str| map.get(&Utf16String::from(name)).map(value_key).transpose();
    let open = |name: &str| match map.get(&Utf16String::from(name)) {
        None => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(_) => Err(type_error(format!(
            "a key range's {name:?} must be a boolean"
        ))),
    };
    KeyRange::from_bounds(
        bound("lower")?,
        bound("upper")?,
        open("lowerOpen")?,
        open("upperOpen")?,
    )
}

/// Runs one cursor step: `{"continue":K|null}`, `{"advance":N}`,
/// `{"continuePrimaryKey":[K,PK]}`, `{"update":V}` or `{"delete":true}`.
fn run_step(tx: &Transaction, cursor: &mut Cursor, step: &Value) -> indexa::Result<()> {
    let bad = || {
        type_error(
            "a step is one of {\"continue\":K|null}, {\"advance\":N}, {\"continuePrimaryKey\":[K,PK]}, {\"update\":V}, {\"delete\":true}",
        )
    };
    let Value::Object(map) = step else {
        return Err(bad());
    };
    let mut members = map.iter();
    let (Some((name, arg)), None) = (members.next(), members.next()) else {
        return Err(bad());
    };
    let name = name.to_string().ok_or_else(bad)?;
    match (name.as_str(), arg) {
        ("continue", Value::Null) => cursor.continue_key(tx, None),
        ("continue", k) => cursor.continue_key(tx, Some(&value_key(k)?)),
        ("advance", n) => {
            let n = integer(n, u64::from(u32::MAX))
                .ok_or_else(|| type_error("advance needs an integer from 1 to 4294967295"))?;
            cursor.advance(tx, n as u32)
        }
        ("continuePrimaryKey", Value::Array(pair)) if pair.len() == 2 => {
            let (key, primary_key) = (value_key(&pair[0])?, value_key(&pair[1])?);
            cursor.continue_primary_key(tx, &key, &primary_key)
        }
        ("continuePrimaryKey", _) => Err(type_error("continuePrimaryKey needs [key, primaryKey]")),
        ("update", v) => cursor.update(tx, v.clone()).map(|_| ()),
        ("delete", Value::Bool(true)) => cursor.delete(tx),
        _ => Err(bad()),
    }
}
