//! Inspecting and removing databases: `info`, `list`, `export`, `drop`.

use std::io::{self, Write};

use clap::Args;
use indexa::{
    value_to_text, CursorDirection, Durability, TransactionMode, Utf16String, Value,
    MAX_GENERATED_KEY,
};

use crate::error::{CmdResult, Failure};
use crate::open::DataDir;
use crate::output::{number, object, JsonObject, Lines};
use crate::query::StoreArgs;

/// `indexa info`: describe one database.
#[derive(Debug, Clone, Args)]
pub struct InfoArgs {
    /// The database.
    pub db: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `indexa list`: list the databases.
#[derive(Debug, Clone, Args)]
pub struct ListArgs {
    /// Print one JSON object per database ({"name":…,"version":…}) instead of text.
    #[arg(long)]
    pub json: bool,
}

/// `indexa drop`: delete a database.
#[derive(Debug, Clone, Args)]
pub struct DropArgs {
    /// The database.
    pub db: String,
    /// Succeed quietly when the database does not exist.
    #[arg(long)]
    pub if_exists: bool,
}

/// Runs `indexa info`.
///
/// # Errors
/// `NotFoundError` for a missing database; engine and output errors.
pub fn info<W: Write>(dir: &DataDir, a: &InfoArgs, out: &mut Lines<W>) -> CmdResult {
    let db = dir.open_existing(&a.db)?;
    let tx = db.transaction_over_all_stores(TransactionMode::ReadOnly, Durability::Default)?;
    let mut stores = Vec::new();
    for name in tx.object_store_names_utf16() {
        let store = tx.object_store(&name)?;
        let mut indexes = Vec::new();
        for ix_name in store.index_names_utf16()? {
            let ix = store.index(&ix_name)?;
            indexes.push(object(vec![
                ("name", Value::String(ix_name)),
                ("keyPath", ix.key_path()?.to_value()),
                ("unique", Value::Bool(ix.unique()?)),
                ("multiEntry", Value::Bool(ix.multi_entry()?)),
            ]));
        }
        let current = store.current_number()?;
        stores.push(object(vec![
            ("name", Value::String(name)),
            (
                "keyPath",
                store.key_path()?.map_or(Value::Null, |kp| kp.to_value()),
            ),
            ("autoIncrement", Value::Bool(store.auto_increment()?)),
            // A generator past 2^53 (current number 2^53 + 1, which JSON numbers cannot
            // carry exactly) is reported as exhausted, with no current number.
            (
                "currentNumber",
                current
                    .filter(|n| *n <= MAX_GENERATED_KEY)
                    .map_or(Value::Null, number),
            ),
            (
                "keyGeneratorExhausted",
                current.map_or(Value::Null, |n| Value::Bool(n > MAX_GENERATED_KEY)),
            ),
            ("count", number(store.count(None)?)),
            ("indexes", Value::Array(indexes)),
        ]));
    }
    tx.commit()?;
    let info = object(vec![
        ("name", Value::String(db.name_units().clone())),
        ("version", number(db.version())),
        ("objectStores", Value::Array(stores)),
    ]);
    if a.json {
        return Ok(out.line(&value_to_text(&info))?);
    }
    write_info_text(&info, out)
}

/// The text form of `info`: one line for the database, then each store and its indexes.
fn write_info_text<W: Write>(info: &Value, out: &mut Lines<W>) -> CmdResult {
    let text = |v: Option<&Value>| v.map_or_else(String::new, value_to_text);
    out.line(&format!(
        "database {} version {}",
        text(info.get("name")),
        text(info.get("version"))
    ))?;
    let Some(Value::Array(stores)) = info.get("objectStores") else {
        return Ok(());
    };
    for store in stores {
        let key_path = match store.get("keyPath") {
            Some(Value::Null) | None => "out-of-line keys".to_owned(),
            kp => format!("key path {}", text(kp)),
        };
        let generator = match (
            store.get("currentNumber"),
            store.get("keyGeneratorExhausted"),
        ) {
            (Some(Value::Number(n)), _) => format!(", key generator at {n}"),
            (_, Some(Value::Bool(true))) => ", key generator exhausted".to_owned(),
            _ => String::new(),
        };
        let count = text(store.get("count"));
        let noun = if count == "1" { "record" } else { "records" };
        out.line(&format!(
            "  store {}: {count} {noun}, {key_path}{generator}",
            text(store.get("name")),
        ))?;
        let Some(Value::Array(indexes)) = store.get("indexes") else {
            continue;
        };
        for ix in indexes {
            let mut flags = String::new();
            if ix.get("unique") == Some(&Value::Bool(true)) {
                flags.push_str(", unique");
            }
            if ix.get("multiEntry") == Some(&Value::Bool(true)) {
                flags.push_str(", multiEntry");
            }
            out.line(&format!(
                "    index {}: key path {}{flags}",
                text(ix.get("name")),
                text(ix.get("keyPath")),
            ))?;
        }
    }
    Ok(())
}

/// Runs `indexa list`: one line per database, `NAME<TAB>VERSION`, sorted by name. A name
/// is written as it is when it is plain (no control character, backslash, U+2028, U+2029 or
/// lone surrogate, and no leading `"`), else as a JSON string. Then each
/// file under a database file name that could not be read (see
/// [`indexa::Factory::scan_databases`]) is reported on stderr as
/// `indexa: UnknownError: <file and why>`, and the exit status is 1.
///
/// # Errors
/// `UnknownError` if the data directory cannot be read; output errors; [`Failure::Quiet`]
/// when a file could not be read.
pub fn list<W: Write>(dir: &DataDir, a: &ListArgs, out: &mut Lines<W>) -> CmdResult {
    let Some(factory) = dir.existing_factory()? else {
        return Ok(());
    };
    let scan = factory.scan_databases()?;
    for (name, version) in scan.databases {
        if a.json {
            let line = JsonObject::new()
                .value("name", &Value::String(name))
                .value("version", &number(version))
                .finish();
            out.line(&line)?;
        } else {
            out.line(&format!("{}\t{version}", list_name(name)))?;
        }
    }
    if scan.unreadable.is_empty() {
        return Ok(());
    }
    // The lines on stdout are written when the buffer is dropped.
    let mut stderr = io::stderr().lock();
    for e in &scan.unreadable {
        let _ = writeln!(stderr, "indexa: {}: {}", e.name(), e.message());
    }
    Err(Failure::Quiet)
}

/// A database name as `indexa list` writes it: as it is when it holds no control character
/// (tab and newline included), no backslash, no line or paragraph separator (U+2028, U+2029)
/// and no lone surrogate, and does not start with `"`; otherwise as a JSON string (quoted,
/// escaped, a lone surrogate as its `\uXXXX` escape), which starts with `"` — so a name can
/// never forge a line or a column, and reading one back is unambiguous.
fn list_name(name: Utf16String) -> String {
    let plain = name.to_string().filter(|text| {
        !text.starts_with('"')
            && !text
                .chars()
                .any(|c| c.is_control() || matches!(c, '\\' | '\u{2028}' | '\u{2029}'))
    });
    match plain {
        Some(text) => text,
        None => value_to_text(&Value::String(name)),
    }
}

/// Runs `indexa export`: one `{"key":…,"value":…}` line per record, in key order.
///
/// # Errors
/// Engine and output errors.
pub fn export<W: Write>(dir: &DataDir, a: &StoreArgs, out: &mut Lines<W>) -> CmdResult {
    let db = dir.open_existing(&a.db)?;
    let tx = db.transaction(&[&a.store], TransactionMode::ReadOnly)?;
    let mut cursor = tx
        .object_store(&a.store)?
        .open_cursor(None, CursorDirection::Next)?;
    while let (Some(key), Some(value)) = (cursor.primary_key(), cursor.value()?) {
        out.line(
            &JsonObject::new()
                .key("key", key)
                .value("value", value)
                .finish(),
        )?;
        cursor.continue_key(&tx, None)?;
    }
    Ok(())
}

/// Runs `indexa drop`.
///
/// # Errors
/// `NotFoundError` for a missing database (unless `--if-exists`); `UnknownError` if its
/// files cannot be removed.
pub fn drop_database(dir: &DataDir, a: &DropArgs) -> CmdResult {
    let version = match dir.existing_factory()? {
        Some(factory) => factory.delete_database(&a.db)?,
        None => 0,
    };
    if version == 0 && !a.if_exists {
        return Err(dir.missing(&a.db).into());
    }
    Ok(())
}
