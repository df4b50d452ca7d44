//! Shards: named SQL databases the router sends statements to.

mod postgres;
mod sqlite;

use indexa::Value;

use crate::config::Location;
use crate::error::Result;
use crate::sql::Dialect;

pub(crate) use postgres::{pg_message, pg_pool, PgShard};
pub(crate) use sqlite::{open_sqlite, with_sqlite, SqliteShard};

/// One result row: column name → value, in the column order of the result.
///
/// Columns map to values as issue 5 lists: integers and reals (and PostgreSQL numerics) →
/// [`Value::Number`], text → [`Value::String`], booleans → [`Value::Bool`], blobs/bytea →
/// [`Value::Binary`], NULL → [`Value::Null`], PostgreSQL timestamps and dates → ISO-8601
/// strings. When two columns share a name, the later value wins at the first one's position.
pub type Row = indexa::Object;

/// What a statement produced.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// The rows it returned (a SELECT's rows or a RETURNING clause's rows).
    pub rows: Vec<Row>,
    /// Rows inserted, updated or deleted (for a statement that returns rows on PostgreSQL: the
    /// number of rows returned).
    pub rows_affected: u64,
    /// SQLite's last-insert rowid, only when this statement really inserted a row that got a new
    /// rowid.
    pub inserted_rowid: Option<i64>,
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
