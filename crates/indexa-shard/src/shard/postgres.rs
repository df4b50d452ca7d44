//! PostgreSQL shards, through tokio-postgres with a deadpool connection pool.
//!
//! Statements are prepared (and cached per connection) so the server reports the type of every
//! placeholder; each parameter is converted to that type (issue 5: `5` binds to an INT4, INT8,
//! NUMERIC or TEXT column alike).

use std::error::Error as StdError;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use indexa::{Utf16String, Value};
use rust_decimal::Decimal;
use tokio_postgres::types::{to_sql_checked, IsNull, ToSql, Type};

use super::sqlite::exact_i64;
use super::{from_epoch_ms, iso_utc, Cell, Outcome};
use crate::error::{Error, Result};
use crate::sql::rewrite_placeholders;

/// Connections a pool keeps open at most.
const POOL_SIZE: usize = 16;

/// A connection pool for `url`; it connects on first use.
pub(crate) fn pg_pool(url: &str) -> std::result::Result<Pool, String> {
    let config: tokio_postgres::Config = url.parse().map_err(|e| format!("{e}"))?;
    let manager = Manager::from_config(
        config,
        tokio_postgres::NoTls,
        ManagerConfig {
            recycling_method: RecyclingMethod::Fast,
        },
    );
    Pool::builder(manager)
        .max_size(POOL_SIZE)
        .build()
        .map_err(|e| e.to_string())
}

/// The full text of a database error: the server's message, detail and hint when there are.
pub(crate) fn pg_message(error: &(dyn StdError + 'static)) -> String {
    let mut message = error.to_string();
    let mut source = error.source();
    while let Some(inner) = source {
        if let Some(db) = inner.downcast_ref::<tokio_postgres::error::DbError>() {
            message = format!("{}: {}", db.code().code(), db.message());
            if let Some(detail) = db.detail() {
                message.push_str(&format!(" ({detail})"));
            }
            break;
        }
        let text = inner.to_string();
        if !message.contains(&text) {
            message = format!("{message}: {text}");
        }
        source = inner.source();
    }
    message
}

pub(crate) struct PgShard {
    name: String,
    pool: Pool,
}

impl PgShard {
    pub(crate) fn open(name: &str, url: &str) -> Result<PgShard> {
        let pool = pg_pool(url).map_err(|e| Error::config(format!("shard {name}: {e}")))?;
        Ok(PgShard {
            name: name.to_string(),
            pool,
        })
    }

    fn fail(&self, error: &(dyn StdError + 'static)) -> Error {
        Error::query(&self.name, pg_message(error))
    }

    pub(crate) async fn query(&self, sql: &str, params: &[Value]) -> Result<Outcome> {
        let client = self.pool.get().await.map_err(|e| self.fail(&e))?;
        query_on(&self.name, &client, sql, params).await
    }

    pub(crate) async fn execute_batch(&self, sql: &str) -> Result<()> {
        let client = self.pool.get().await.map_err(|e| self.fail(&e))?;
        client.batch_execute(sql).await.map_err(|e| self.fail(&e))
    }

    /// Starts a unit: `BEGIN` on a pooled connection that the unit keeps to itself.
    pub(crate) async fn begin(&self) -> Result<PgUnit> {
        let client = self.pool.get().await.map_err(|e| self.fail(&e))?;
        client
            .batch_execute("BEGIN")
            .await
            .map_err(|e| self.fail(&e))?;
        Ok(PgUnit {
            name: self.name.clone(),
            client: Some(client),
            finished: false,
        })
    }
}

/// A transaction on one PostgreSQL connection of a shard's pool.
pub(crate) struct PgUnit {
    name: String,
    client: Option<deadpool_postgres::Object>,
    pub(super) finished: bool,
}

impl PgUnit {
    fn client(&self) -> Result<&deadpool_postgres::Object> {
        self.client
            .as_ref()
            .ok_or_else(|| Error::query(&self.name, "the transaction's connection is gone"))
    }

    pub(crate) async fn query(&mut self, sql: &str, params: &[Value]) -> Result<Outcome> {
        query_on(&self.name, self.client()?, sql, params).await
    }

    pub(crate) async fn execute(&mut self, sql: &str) -> Result<()> {
        self.client()?
            .batch_execute(sql)
            .await
            .map_err(|e| Error::query(&self.name, pg_message(&e)))
    }
}

impl Drop for PgUnit {
    fn drop(&mut self) {
        if let (false, Some(client)) = (self.finished, self.client.take()) {
            // Not committed or rolled back: close the connection instead of returning it to the
            // pool mid-transaction; the server rolls the transaction back.
            drop(deadpool_postgres::Object::take(client));
        }
    }
}

/// Runs one statement on `client`, `?` placeholders rewritten and every parameter converted
/// to the type the server reports for it.
async fn query_on(
    name: &str,
    client: &deadpool_postgres::Object,
    sql: &str,
    params: &[Value],
) -> Result<Outcome> {
    let fail = |e: &(dyn StdError + 'static)| Error::query(name, pg_message(e));
    let (sql, _) = rewrite_placeholders(sql);
    let statement = client.prepare_cached(&sql).await.map_err(|e| fail(&e))?;
    let types = statement.params();
    if types.len() != params.len() {
        return Err(Error::query(
            name,
            format!(
                "the statement has {} placeholder(s) but {} parameter(s) were given",
                types.len(),
                params.len()
            ),
        ));
    }
    let bound = params
        .iter()
        .zip(types)
        .enumerate()
        .map(|(i, (value, ty))| {
            PgParam::convert(value, ty)
                .map_err(|message| Error::query(name, format!("parameter {}: {message}", i + 1)))
        })
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<&(dyn ToSql + Sync)> = bound.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
    if statement.columns().is_empty() {
        let rows_affected = client
            .execute(&statement, &refs)
            .await
            .map_err(|e| fail(&e))?;
        return Ok(Outcome {
            rows_affected,
            ..Outcome::default()
        });
    }
    let rows = client
        .query(&statement, &refs)
        .await
        .map_err(|e| fail(&e))?;
    let columns: Vec<Utf16String> = statement
        .columns()
        .iter()
        .map(|c| Utf16String::from(c.name()))
        .collect();
    let mut cells = Vec::with_capacity(rows.len());
    for row in &rows {
        let mut out = Vec::with_capacity(columns.len());
        for (i, column) in row.columns().iter().enumerate() {
            out.push(column_value(row, i, column.type_()).map_err(|message| {
                Error::query(name, format!("column {}: {message}", column.name()))
            })?);
        }
        cells.push(out);
    }
    Ok(Outcome {
        columns,
        rows_affected: cells.len() as u64,
        cells,
        inserted_rowid: None,
    })
}

/// A parameter already converted to the type the server reported for its placeholder.
#[derive(Debug)]
enum PgParam {
    Null,
    Bool(bool),
    Int2(i16),
    Int4(i32),
    Int8(i64),
    Oid(u32),
    Float4(f32),
    Float8(f64),
    Numeric(Decimal),
    Text(String),
    Bytea(Vec<u8>),
    Timestamp(time::PrimitiveDateTime),
    Timestamptz(time::OffsetDateTime),
    Date(time::Date),
    Uuid([u8; 16]),
}

impl PgParam {
    fn convert(value: &Value, ty: &Type) -> std::result::Result<PgParam, String> {
        if matches!(value, Value::Null | Value::Undefined) {
            return Ok(PgParam::Null);
        }
        let mismatch = || {
            format!(
                "{} does not convert to {}",
                crate::text::to_text(value),
                ty.name()
            )
        };
        let integer = || -> std::result::Result<i64, String> {
            match value {
                Value::Number(n) => exact_i64(*n).ok_or_else(mismatch),
                Value::String(s) => s.to_string_lossy().trim().parse().map_err(|_| mismatch()),
                Value::Bool(b) => Ok(i64::from(*b)),
                _ => Err(mismatch()),
            }
        };
        let float = || -> std::result::Result<f64, String> {
            match value {
                Value::Number(n) => Ok(*n),
                Value::String(s) => s.to_string_lossy().trim().parse().map_err(|_| mismatch()),
                _ => Err(mismatch()),
            }
        };
        let datetime = || -> std::result::Result<time::OffsetDateTime, String> {
            match value {
                Value::Date(ms) | Value::Number(ms) => from_epoch_ms(*ms).ok_or_else(mismatch),
                Value::String(s) => parse_datetime(&s.to_string_lossy()).ok_or_else(mismatch),
                _ => Err(mismatch()),
            }
        };
        Ok(match *ty {
            Type::BOOL => match value {
                Value::Bool(b) => PgParam::Bool(*b),
                Value::String(s) if s.eq_str("true") => PgParam::Bool(true),
                Value::String(s) if s.eq_str("false") => PgParam::Bool(false),
                _ => return Err(mismatch()),
            },
            Type::INT2 => PgParam::Int2(i16::try_from(integer()?).map_err(|_| mismatch())?),
            Type::INT4 => PgParam::Int4(i32::try_from(integer()?).map_err(|_| mismatch())?),
            Type::INT8 => PgParam::Int8(integer()?),
            Type::OID => PgParam::Oid(u32::try_from(integer()?).map_err(|_| mismatch())?),
            Type::FLOAT4 => PgParam::Float4(float()? as f32),
            Type::FLOAT8 => PgParam::Float8(float()?),
            Type::NUMERIC => PgParam::Numeric(match value {
                Value::Number(n) => Decimal::try_from(*n).map_err(|_| mismatch())?,
                Value::String(s) => s
                    .to_string_lossy()
                    .trim()
                    .parse::<Decimal>()
                    .map_err(|_| mismatch())?,
                _ => return Err(mismatch()),
            }),
            Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
                PgParam::Text(match value {
                    Value::String(s) => s.to_string_lossy(),
                    other => crate::text::to_text(other),
                })
            }
            Type::BYTEA => match value {
                Value::Binary(bytes) => PgParam::Bytea(bytes.clone()),
                _ => return Err(mismatch()),
            },
            Type::TIMESTAMPTZ => PgParam::Timestamptz(datetime()?),
            Type::TIMESTAMP => {
                let t = datetime()?;
                PgParam::Timestamp(time::PrimitiveDateTime::new(t.date(), t.time()))
            }
            Type::DATE => PgParam::Date(datetime()?.date()),
            Type::UUID => match value {
                Value::String(s) => {
                    PgParam::Uuid(parse_uuid(&s.to_string_lossy()).ok_or_else(mismatch)?)
                }
                _ => return Err(mismatch()),
            },
            _ => {
                return Err(format!(
                    "placeholders of type {} are not supported; cast the placeholder, e.g. CAST(? AS TEXT)",
                    ty.name()
                ))
            }
        })
    }
}

/// A UUID in PostgreSQL's input forms (32 hex digits, optionally hyphenated, optionally in
/// braces) as its 16 bytes.
fn parse_uuid(text: &str) -> Option<[u8; 16]> {
    let text = text.trim();
    let text = text
        .strip_prefix('{')
        .and_then(|t| t.strip_suffix('}'))
        .unwrap_or(text);
    let digits: Vec<u8> = text
        .bytes()
        .filter(|&b| b != b'-')
        .map(|b| (b as char).to_digit(16).map(|d| d as u8))
        .collect::<Option<_>>()?;
    if digits.len() != 32 || text.starts_with('-') || text.ends_with('-') || text.contains("--") {
        return None;
    }
    let mut bytes = [0u8; 16];
    for (i, pair) in digits.chunks(2).enumerate() {
        bytes[i] = pair[0] << 4 | pair[1];
    }
    Some(bytes)
}

/// A UUID's 16 bytes in PostgreSQL's output form (`xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx`).
fn format_uuid(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(36);
    for (i, b) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push_str(&format!("{b:02x}"));
    }
    out
}

/// A `uuid` column read as its 16 bytes.
struct UuidBytes(Vec<u8>);

impl<'a> tokio_postgres::types::FromSql<'a> for UuidBytes {
    fn from_sql(
        _: &Type,
        raw: &'a [u8],
    ) -> std::result::Result<Self, Box<dyn StdError + Sync + Send>> {
        if raw.len() == 16 {
            Ok(UuidBytes(raw.to_vec()))
        } else {
            Err("a uuid is 16 bytes".into())
        }
    }

    fn accepts(ty: &Type) -> bool {
        *ty == Type::UUID
    }
}

/// Parses an RFC 3339 date-time, or one without an offset (taken as UTC), or a bare date.
fn parse_datetime(text: &str) -> Option<time::OffsetDateTime> {
    use time::format_description::well_known::Rfc3339;
    use time::macros::format_description;
    let text = text.trim();
    if let Ok(t) = time::OffsetDateTime::parse(text, &Rfc3339) {
        return Some(t);
    }
    let local = text.replace(' ', "T");
    let with_fraction =
        format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond]");
    let without_fraction = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]");
    if let Ok(t) = time::PrimitiveDateTime::parse(&local, &with_fraction)
        .or_else(|_| time::PrimitiveDateTime::parse(&local, &without_fraction))
    {
        return Some(t.assume_utc());
    }
    time::Date::parse(text, &format_description!("[year]-[month]-[day]"))
        .ok()
        .map(|d| d.midnight().assume_utc())
}

impl ToSql for PgParam {
    fn to_sql(
        &self,
        ty: &Type,
        out: &mut bytes::BytesMut,
    ) -> std::result::Result<IsNull, Box<dyn StdError + Sync + Send>> {
        match self {
            PgParam::Null => Ok(IsNull::Yes),
            PgParam::Bool(v) => v.to_sql(ty, out),
            PgParam::Int2(v) => v.to_sql(ty, out),
            PgParam::Int4(v) => v.to_sql(ty, out),
            PgParam::Int8(v) => v.to_sql(ty, out),
            PgParam::Oid(v) => v.to_sql(ty, out),
            PgParam::Float4(v) => v.to_sql(ty, out),
            PgParam::Float8(v) => v.to_sql(ty, out),
            PgParam::Numeric(v) => v.to_sql(ty, out),
            PgParam::Text(v) => v.to_sql(ty, out),
            PgParam::Bytea(v) => v.to_sql(ty, out),
            PgParam::Timestamp(v) => v.to_sql(ty, out),
            PgParam::Timestamptz(v) => v.to_sql(ty, out),
            PgParam::Date(v) => v.to_sql(ty, out),
            PgParam::Uuid(v) => {
                out.extend_from_slice(v);
                Ok(IsNull::No)
            }
        }
    }

    fn accepts(_: &Type) -> bool {
        // The conversion already matched the placeholder's type.
        true
    }

    to_sql_checked!();
}

fn column_value(
    row: &tokio_postgres::Row,
    i: usize,
    ty: &Type,
) -> std::result::Result<Cell, String> {
    fn get<'a, T: tokio_postgres::types::FromSql<'a>>(
        row: &'a tokio_postgres::Row,
        i: usize,
    ) -> std::result::Result<Option<T>, String> {
        row.try_get::<_, Option<T>>(i).map_err(|e| pg_message(&e))
    }
    let number = |n: Option<f64>| n.map_or(Value::Null, Value::Number);
    let integer = |n: Option<i64>| n.map_or(Cell::Other(Value::Null), Cell::Integer);
    Ok(Cell::Other(match *ty {
        Type::INT2 => return Ok(integer(get::<i16>(row, i)?.map(i64::from))),
        Type::INT4 => return Ok(integer(get::<i32>(row, i)?.map(i64::from))),
        Type::INT8 => return Ok(integer(get::<i64>(row, i)?)),
        Type::OID => return Ok(integer(get::<u32>(row, i)?.map(i64::from))),
        Type::NUMERIC => {
            return Ok(get::<Decimal>(row, i)?.map_or(Cell::Other(Value::Null), Cell::Numeric))
        }
        Type::UUID => {
            get::<UuidBytes>(row, i)?.map_or(Value::Null, |u| Value::from(format_uuid(&u.0)))
        }
        Type::BOOL => get::<bool>(row, i)?.map_or(Value::Null, Value::Bool),
        Type::FLOAT4 => number(get::<f32>(row, i)?.map(f64::from)),
        Type::FLOAT8 => number(get::<f64>(row, i)?),
        Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN => {
            get::<String>(row, i)?.map_or(Value::Null, Value::from)
        }
        Type::BYTEA => get::<Vec<u8>>(row, i)?.map_or(Value::Null, Value::Binary),
        Type::TIMESTAMP => get::<time::PrimitiveDateTime>(row, i)?
            .map_or(Value::Null, |t| Value::from(iso_utc(t, false))),
        Type::TIMESTAMPTZ => get::<time::OffsetDateTime>(row, i)?.map_or(Value::Null, |t| {
            let t = t.to_offset(time::UtcOffset::UTC);
            Value::from(iso_utc(
                time::PrimitiveDateTime::new(t.date(), t.time()),
                true,
            ))
        }),
        Type::DATE => get::<time::Date>(row, i)?.map_or(Value::Null, |d| {
            Value::from(format!(
                "{:04}-{:02}-{:02}",
                d.year(),
                u8::from(d.month()),
                d.day()
            ))
        }),
        _ => {
            return Err(format!(
                "columns of type {} are not supported; cast the column, e.g. CAST(col AS TEXT)",
                ty.name()
            ))
        }
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_text_forms() {
        let bytes = [
            0x0f, 0x8f, 0xad, 0x5b, 0xd9, 0xcb, 0x46, 0x9f, 0xa1, 0x65, 0x70, 0x86, 0x77, 0x28,
            0x95, 0x0e,
        ];
        assert_eq!(format_uuid(&bytes), "0f8fad5b-d9cb-469f-a165-70867728950e");
        for text in [
            "0f8fad5b-d9cb-469f-a165-70867728950e",
            "0F8FAD5B-D9CB-469F-A165-70867728950E",
            "0f8fad5bd9cb469fa16570867728950e",
            "{0f8fad5b-d9cb-469f-a165-70867728950e}",
        ] {
            assert_eq!(parse_uuid(text), Some(bytes), "{text}");
        }
        for bad in [
            "",
            "0f8fad5b-d9cb-469f-a165-70867728950",
            "0f8fad5b-d9cb-469f-a165-70867728950e0",
            "-0f8fad5bd9cb469fa16570867728950e",
            "0f8fad5b--d9cb469fa16570867728950e",
            "0f8fad5b-d9cb-469f-a165-70867728950g",
        ] {
            assert_eq!(parse_uuid(bad), None, "{bad}");
        }
    }
}
