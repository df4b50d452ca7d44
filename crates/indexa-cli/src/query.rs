//! Reading and writing single records: `get`, `query`, `put`, `add`, `delete`, `clear`.

use std::io::Write;

use clap::{Args, ValueEnum};
use indexa::{key_to_text, parse_value, value_to_text, Cursor, CursorDirection, TransactionMode};

use crate::error::{CliError, CmdResult, Failure};
use crate::keys::{key_arg, RangeArgs};
use crate::open::DataDir;
use crate::output::{JsonObject, Lines};
use crate::table::{OutputFormat, Row, RowWriter};

/// `indexa get`: print the value of one record.
#[derive(Debug, Clone, Args)]
pub struct GetArgs {
    /// The database.
    pub db: String,
    /// The object store.
    pub store: String,
    /// The key, as JSON text: '"ES"', 42, -1, '["ES","Madrid"]'. With --index, an index key.
    #[arg(allow_negative_numbers = true)]
    pub key: String,
    /// Look KEY up in this index of the store (the first record in index order).
    #[arg(long, value_name = "NAME")]
    pub index: Option<String>,
}

/// A cursor direction as the spec spells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum Direction {
    /// Ascending keys.
    #[default]
    #[value(name = "next")]
    Next,
    /// Descending keys.
    #[value(name = "prev")]
    Prev,
    /// Ascending; on an index, only the first record of each index key.
    #[value(name = "nextunique")]
    NextUnique,
    /// Descending; on an index, only the first record of each index key.
    #[value(name = "prevunique")]
    PrevUnique,
}

impl From<Direction> for CursorDirection {
    fn from(d: Direction) -> CursorDirection {
        match d {
            Direction::Next => CursorDirection::Next,
            Direction::Prev => CursorDirection::Prev,
            Direction::NextUnique => CursorDirection::NextUnique,
            Direction::PrevUnique => CursorDirection::PrevUnique,
        }
    }
}

/// `indexa query`: list or count the records in a key range.
#[derive(Debug, Clone, Args)]
pub struct QueryArgs {
    /// The database.
    pub db: String,
    /// The object store.
    pub store: String,
    /// Query this index of the store instead of the store's own keys.
    #[arg(long, value_name = "NAME")]
    pub index: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub range: RangeArgs,
    /// Order of the results.
    #[arg(long, value_enum, default_value_t = Direction::Next, conflicts_with = "count")]
    pub direction: Direction,
    /// Print at most N records.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), conflicts_with = "count")]
    pub limit: Option<u64>,
    /// Print {"key":…,"primaryKey":…} without the value.
    #[arg(long, conflicts_with_all = ["count", "values_only"])]
    pub keys_only: bool,
    /// Print only the values (ndjson: one value per line; table and csv: no key columns).
    #[arg(long, conflicts_with = "count")]
    pub values_only: bool,
    /// Skip the first N matching records.
    #[arg(long, value_name = "N", conflicts_with = "count")]
    pub offset: Option<u64>,
    /// The output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Ndjson, conflicts_with = "count")]
    pub format: OutputFormat,
    /// Print only the number of matching records.
    #[arg(long)]
    pub count: bool,
}

/// `indexa put` and `indexa add`: store one record.
#[derive(Debug, Clone, Args)]
pub struct WriteArgs {
    /// The database.
    pub db: String,
    /// The object store.
    pub store: String,
    /// The value, as JSON text ({"$date":…} and the other tags of the text form allowed).
    #[arg(allow_negative_numbers = true)]
    pub value: String,
    /// The key, for a store with out-of-line keys (JSON text).
    #[arg(long, value_name = "KEY", allow_negative_numbers = true)]
    pub key: Option<String>,
}

/// `indexa delete`: delete one key or a key range.
#[derive(Debug, Clone, Args)]
pub struct DeleteArgs {
    /// The database.
    pub db: String,
    /// The object store.
    pub store: String,
    /// The key to delete (JSON text); or use the range options instead.
    #[arg(
        allow_negative_numbers = true,
        conflicts_with_all = ["only", "lower", "upper", "prefix"],
        required_unless_present_any = ["only", "lower", "upper", "prefix"]
    )]
    pub key: Option<String>,
    #[command(flatten)]
    #[allow(missing_docs)]
    pub range: RangeArgs,
}

/// `indexa clear` and `indexa export`: a database and one of its object stores.
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// The database.
    pub db: String,
    /// The object store.
    pub store: String,
}

/// Runs `indexa get`.
///
/// # Errors
/// Input and engine errors; [`Failure::Quiet`] when there is no such record.
pub fn get<W: Write>(dir: &DataDir, a: &GetArgs, out: &mut Lines<W>) -> CmdResult {
    let key = key_arg("KEY", &a.key)?;
    let db = dir.open_existing(&a.db)?;
    let tx = db.transaction(&[&a.store], TransactionMode::ReadOnly)?;
    let store = tx.object_store(&a.store)?;
    let value = match &a.index {
        Some(name) => store.index(name)?.get(key)?,
        None => store.get(key)?,
    };
    tx.commit()?;
    match value {
        Some(v) => Ok(out.line(&value_to_text(&v))?),
        None => Err(Failure::Quiet),
    }
}

/// The line for a cursor's position: `{"key":…,"primaryKey":…,"value":…}` (no value for a
/// key cursor); `None` when the cursor is done.
///
/// # Errors
/// As [`Cursor::value`].
pub fn position_text(cursor: &Cursor) -> indexa::Result<Option<String>> {
    let (Some(key), Some(primary_key)) = (cursor.key(), cursor.primary_key()) else {
        return Ok(None);
    };
    let mut o = JsonObject::new()
        .key("key", key)
        .key("primaryKey", primary_key);
    if let Some(v) = cursor.value()? {
        o = o.value("value", v);
    }
    Ok(Some(o.finish()))
}

/// Runs `indexa query`.
///
/// # Errors
/// Input and engine errors; output errors.
pub fn query<W: Write>(dir: &DataDir, a: &QueryArgs, out: &mut Lines<W>) -> CmdResult {
    let range = a.range.range()?;
    let db = dir.open_existing(&a.db)?;
    let tx = db.transaction(&[&a.store], TransactionMode::ReadOnly)?;
    let store = tx.object_store(&a.store)?;
    let index = a.index.as_deref().map(|n| store.index(n)).transpose()?;
    if a.count {
        let n = match &index {
            Some(ix) => ix.count(range)?,
            None => store.count(range)?,
        };
        return Ok(out.line(&n.to_string())?);
    }
    let direction = a.direction.into();
    let mut cursor = match (&index, a.keys_only) {
        (Some(ix), false) => ix.open_cursor(range, direction)?,
        (Some(ix), true) => ix.open_key_cursor(range, direction)?,
        (None, false) => store.open_cursor(range, direction)?,
        (None, true) => store.open_key_cursor(range, direction)?,
    };
    if let Some(n) = a.offset.filter(|n| *n > 0 && cursor.key().is_some()) {
        match u32::try_from(n) {
            Ok(n) => cursor.advance(&tx, n)?,
            // Past any store's size: nothing is left to print.
            Err(_) => return RowWriter::new(out, a.format, a.values_only).finish(),
        }
    }
    let mut rows = RowWriter::new(out, a.format, a.values_only);
    let mut printed = 0u64;
    while let (Some(key), Some(primary_key)) = (cursor.key(), cursor.primary_key()) {
        if a.limit.is_some_and(|limit| printed >= limit) {
            break;
        }
        rows.row(&Row {
            key: key.clone(),
            primary_key: primary_key.clone(),
            value: cursor.value()?.cloned(),
        })?;
        printed += 1;
        cursor.continue_key(&tx, None)?;
    }
    rows.finish()
}

/// Runs `indexa put` (`overwrite`) or `indexa add`, printing the record's key.
///
/// # Errors
/// Input and engine errors (e.g. `ConstraintError` from `add` on an existing key).
pub fn write<W: Write>(
    dir: &DataDir,
    a: &WriteArgs,
    overwrite: bool,
    out: &mut Lines<W>,
) -> CmdResult {
    let value = parse_value(&a.value).map_err(|e| CliError::from(e).context("VALUE"))?;
    let key = a.key.as_deref().map(|k| key_arg("--key", k)).transpose()?;
    let db = dir.open_existing(&a.db)?;
    let tx = db.transaction(&[&a.store], TransactionMode::ReadWrite)?;
    let store = tx.object_store(&a.store)?;
    let key = if overwrite {
        store.put(value, key)?
    } else {
        store.add(value, key)?
    };
    tx.commit()?;
    Ok(out.line(&key_to_text(&key))?)
}

/// Runs `indexa delete`.
///
/// # Errors
/// Input and engine errors.
pub fn delete(dir: &DataDir, a: &DeleteArgs) -> CmdResult {
    let range = match &a.key {
        Some(k) => indexa::KeyRange::only(key_arg("KEY", k)?),
        None => a
            .range
            .range()?
            .ok_or_else(|| CliError::new("DataError", "give a KEY or a key range to delete"))?,
    };
    let db = dir.open_existing(&a.db)?;
    let tx = db.transaction(&[&a.store], TransactionMode::ReadWrite)?;
    tx.object_store(&a.store)?.delete(range)?;
    Ok(tx.commit()?)
}

/// Runs `indexa clear`.
///
/// # Errors
/// Engine errors.
pub fn clear(dir: &DataDir, a: &StoreArgs) -> CmdResult {
    let db = dir.open_existing(&a.db)?;
    let tx = db.transaction(&[&a.store], TransactionMode::ReadWrite)?;
    tx.object_store(&a.store)?.clear()?;
    Ok(tx.commit()?)
}
