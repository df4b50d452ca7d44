//! Shards: named SQL databases the router sends statements to.

mod postgres;
mod sqlite;

use indexa::Value;

use crate::config::Location;
use crate::error::Result;
use crate::sql::Dialect;

pub(crate) use postgres::{pg_message, pg_pool, PgShard, PgUnit};
pub(crate) use sqlite::{open_sqlite, with_sqlite, SqliteShard, SqliteUnit};

/// One result row: column name → value, in the column order of the result.
///
/// A row holds JavaScript values, so an integer beyond 2^53 is the nearest double here; the
/// generated ids ([`crate::GeneratedId`]) and the `indexa shard` output keep every integer
/// exact.
///
/// Columns map to values as issue 5 lists: integers and reals (and PostgreSQL numerics) →
/// [`Value::Number`], text → [`Value::String`], booleans → [`Value::Bool`], blobs/bytea →
/// [`Value::Binary`], NULL → [`Value::Null`], PostgreSQL timestamps and dates → ISO-8601
/// strings. When two columns share a name, the later value wins at the first one's position.
pub type Row = indexa::Object;

/// One result value with integers kept exact: a generated id or a maximum is read from these,
/// never from a rounded [`Value::Number`].
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Cell {
    /// A SQLite INTEGER, a PostgreSQL `int2`/`int4`/`int8`/`oid`.
    Integer(i64),
    /// A PostgreSQL `numeric`.
    Numeric(rust_decimal::Decimal),
    /// Anything else, as the row holds it.
    Other(Value),
}

impl Cell {
    /// The value a row shows (integers beyond 2^53 rounded, as a JavaScript number holds them).
    pub(crate) fn to_value(&self) -> Value {
        use rust_decimal::prelude::ToPrimitive;
        match self {
            Cell::Integer(i) => Value::Number(*i as f64),
            Cell::Numeric(d) => d.to_f64().map_or(Value::Null, Value::Number),
            Cell::Other(value) => value.clone(),
        }
    }
}

/// What a statement produced.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// The result column names, in result order.
    pub columns: Vec<indexa::Utf16String>,
    /// The rows it returned (a SELECT's rows or a RETURNING clause's rows), one cell per column.
    pub cells: Vec<Vec<Cell>>,
    /// Rows inserted, updated or deleted (for a statement that returns rows on PostgreSQL: the
    /// number of rows returned).
    pub rows_affected: u64,
    /// SQLite's last-insert rowid, only when this statement really inserted a row that got a new
    /// rowid.
    pub inserted_rowid: Option<i64>,
}

impl Outcome {
    /// The rows as objects: column name → value, in result order (a later column of the same
    /// name wins at the first one's position).
    pub(crate) fn rows(&self) -> Vec<Row> {
        self.cells
            .iter()
            .map(|cells| {
                let mut row = Row::with_capacity(cells.len());
                for (name, cell) in self.columns.iter().zip(cells) {
                    row.insert(name.clone(), cell.to_value());
                }
                row
            })
            .collect()
    }

    /// The cell of the last column named `name` in row `row`, if there is one.
    pub(crate) fn cell(&self, row: usize, name: &indexa::Utf16String) -> Option<&Cell> {
        let index = self.columns.iter().rposition(|c| c == name)?;
        self.cells.get(row)?.get(index)
    }
}

/// A configured shard.
pub(crate) enum Shard {
    Sqlite(SqliteShard),
    Postgres(PgShard),
}

impl Shard {
    /// Opens a shard: a SQLite file is opened (and created) now; a PostgreSQL pool connects on
    /// first use.
    pub(crate) async fn open(name: &str, location: &Location) -> Result<Shard> {
        match location {
            Location::Sqlite(path) => Ok(Shard::Sqlite(SqliteShard::open(name, path).await?)),
            Location::Postgres(url) => Ok(Shard::Postgres(PgShard::open(name, url)?)),
        }
    }

    pub(crate) fn dialect(&self) -> Dialect {
        match self {
            Shard::Sqlite(_) => Dialect::Sqlite,
            Shard::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Runs one statement with `?` placeholders bound to `params`.
    pub(crate) async fn query(&self, sql: &str, params: &[Value]) -> Result<Outcome> {
        match self {
            Shard::Sqlite(shard) => shard.query(sql, params).await,
            Shard::Postgres(shard) => shard.query(sql, params).await,
        }
    }

    /// Runs a script of one or more statements without parameters (e.g. DDL).
    pub(crate) async fn execute_batch(&self, sql: &str) -> Result<()> {
        match self {
            Shard::Sqlite(shard) => shard.execute_batch(sql).await,
            Shard::Postgres(shard) => shard.execute_batch(sql).await,
        }
    }

    /// Opens a transaction on one connection of the shard: statements run through the
    /// [`Unit`] see each other's writes, and nothing is kept unless it is committed.
    pub(crate) async fn begin(&self) -> Result<Unit> {
        match self {
            Shard::Sqlite(shard) => Ok(Unit::Sqlite(shard.begin().await?)),
            Shard::Postgres(shard) => Ok(Unit::Postgres(Box::new(shard.begin().await?))),
        }
    }
}

/// A transaction on one shard connection. Dropped without [`Unit::commit`], it is rolled back
/// (a PostgreSQL connection is closed instead of returned to its pool).
pub(crate) enum Unit {
    Sqlite(SqliteUnit),
    Postgres(Box<PgUnit>),
}

impl Unit {
    /// Runs one statement inside the transaction.
    pub(crate) async fn query(&mut self, sql: &str, params: &[Value]) -> Result<Outcome> {
        match self {
            Unit::Sqlite(unit) => unit.query(sql, params).await,
            Unit::Postgres(unit) => unit.query(sql, params).await,
        }
    }

    /// Runs a parameterless control statement (`SAVEPOINT`, `ROLLBACK TO`, …).
    pub(crate) async fn execute(&mut self, sql: &str) -> Result<()> {
        match self {
            Unit::Sqlite(unit) => unit.execute(sql).await,
            Unit::Postgres(unit) => unit.execute(sql).await,
        }
    }

    /// Commits the transaction.
    pub(crate) async fn commit(mut self) -> Result<()> {
        self.execute("COMMIT").await?;
        self.finish();
        Ok(())
    }

    /// Rolls the transaction back.
    pub(crate) async fn rollback(mut self) -> Result<()> {
        self.execute("ROLLBACK").await?;
        self.finish();
        Ok(())
    }

    fn finish(&mut self) {
        match self {
            Unit::Sqlite(unit) => unit.finished = true,
            Unit::Postgres(unit) => unit.finished = true,
        }
    }
}

/// Formats a UTC time as JavaScript's `toISOString` does (`2024-01-02T03:04:05.678Z`), with
/// six fractional digits when the time has sub-millisecond precision.
pub(crate) fn iso_utc(datetime: time::PrimitiveDateTime, utc: bool) -> String {
    let date = datetime.date();
    let year = date.year();
    let year = if (0..=9999).contains(&year) {
        format!("{year:04}")
    } else {
        format!(
            "{}{:06}",
            if year < 0 { '-' } else { '+' },
            year.unsigned_abs()
        )
    };
    let micros = datetime.microsecond();
    let fraction = if micros % 1000 == 0 {
        format!("{:03}", micros / 1000)
    } else {
        format!("{micros:06}")
    };
    format!(
        "{year}-{:02}-{:02}T{:02}:{:02}:{:02}.{fraction}{}",
        u8::from(date.month()),
        date.day(),
        datetime.hour(),
        datetime.minute(),
        datetime.second(),
        if utc { "Z" } else { "" }
    )
}

/// A JavaScript time value (ms since the epoch) as a UTC date-time, if in range.
pub(crate) fn from_epoch_ms(ms: f64) -> Option<time::OffsetDateTime> {
    if !ms.is_finite() {
        return None;
    }
    let nanos = (ms * 1_000_000.0).round() as i128;
    time::OffsetDateTime::from_unix_timestamp_nanos(nanos).ok()
}
