//! PostgreSQL shards, through tokio-postgres with a deadpool connection pool.
//!
//! Statements are prepared (and cached per connection) so the server reports the type of every
//! placeholder; each parameter is converted to that type (issue 5: `5` binds to an INT4, INT8,
//! NUMERIC or TEXT column alike).

use std::error::Error as StdError;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use indexa::{Utf16String, Value};
use rust_decimal::prelude::ToPrimitive;
use rust_decimal::Decimal;
use tokio_postgres::types::{to_sql_checked, IsNull, ToSql, Type};

use super::sqlite::exact_i64;
use super::{from_epoch_ms, iso_utc, Outcome, Row};
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
        let (sql, _) = rewrite_placeholders(sql);
        let client = self.pool.get().await.map_err(|e| self.fail(&e))?;
        let statement = client
            .prepare_cached(&sql)
            .await
            .map_err(|e| self.fail(&e))?;
        let types = statement.params();
        if types.len() != params.len() {
            return Err(Error::query(
                &self.name,
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
                PgParam::convert(value, ty).map_err(|message| {
                    Error::query(&self.name, format!("parameter {}: {message}", i + 1))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let refs: Vec<&(dyn ToSql + Sync)> =
            bound.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
        if statement.columns().is_empty() {
            let rows_affected = client
                .execute(&statement, &refs)
                .await
                .map_err(|e| self.fail(&e))?;
            return Ok(Outcome {
                rows: Vec::new(),
                rows_affected,
                inserted_rowid: None,
            });
        }
        let rows = client
            .query(&statement, &refs)
            .await
            .map_err(|e| self.fail(&e))?;
        let names: Vec<Utf16String> = statement
            .columns()
            .iter()
            .map(|c| Utf16String::from(c.name()))
            .collect();
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let mut object = Row::with_capacity_and_hasher(names.len(), Default::default());
            for (i, (name, column)) in names.iter().zip(row.columns()).enumerate() {
                let value = column_value(row, i, column.type_()).map_err(|message| {
                    Error::query(&self.name, format!("column {}: {message}", column.name()))
                })?;
                object.insert(name.clone(), value);
            }
            out.push(object);
        }
        Ok(Outcome {
            rows_affected: out.len() as u64,
            rows: out,
            inserted_rowid: None,
        })
    }

    pub(crate) async fn execute_batch(&self, sql: &str) -> Result<()> {
        let client = self.pool.get().await.map_err(|e| self.fail(&e))?;
        client.batch_execute(sql).await.map_err(|e| self.fail(&e))
    }
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
            _ => {
                return Err(format!(
                    "placeholders of type {} are not supported; cast the placeholder, e.g. CAST(? AS TEXT)",
                    ty.name()
                ))
            }
        })
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
) -> std::result::Result<Value, String> {
    fn get<'a, T: tokio_postgres::types::FromSql<'a>>(
        row: &'a tokio_postgres::Row,
        i: usize,
    ) -> std::result::Result<Option<T>, String> {
        row.try_get::<_, Option<T>>(i).map_err(|e| pg_message(&e))
    }
    let number = |n: Option<f64>| n.map_or(Value::Null, Value::Number);
    Ok(match *ty {
        Type::BOOL => get::<bool>(row, i)?.map_or(Value::Null, Value::Bool),
        Type::INT2 => number(get::<i16>(row, i)?.map(f64::from)),
        Type::INT4 => number(get::<i32>(row, i)?.map(f64::from)),
        Type::INT8 => number(get::<i64>(row, i)?.map(|v| v as f64)),
        Type::OID => number(get::<u32>(row, i)?.map(f64::from)),
        Type::FLOAT4 => number(get::<f32>(row, i)?.map(f64::from)),
        Type::FLOAT8 => number(get::<f64>(row, i)?),
        Type::NUMERIC => number(match get::<Decimal>(row, i)? {
            Some(d) => Some(
                d.to_f64()
                    .ok_or_else(|| format!("numeric {d} is not a number"))?,
            ),
            None => None,
        }),
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
    })
}
