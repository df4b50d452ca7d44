//! The catalog: the id→shard mapping, the coordinator's sequences and the round-robin rotation,
//! in a SQLite file or a PostgreSQL database.
//!
//! Every write is a single atomic statement (or, on SQLite, an IMMEDIATE transaction), so any
//! number of tasks and processes may share one catalog:
//! - a mapping is written insert-if-absent and read back, so of two concurrent writers exactly
//!   one wins and both learn which;
//! - a sequence hands out a block with one `UPDATE … RETURNING`.

use std::path::Path;
use std::sync::{Arc, Mutex};

use deadpool_postgres::Pool;
use rusqlite::{Connection, OptionalExtension, TransactionBehavior};

use crate::config::Location;
use crate::error::{Error, Result};
use crate::shard::{open_sqlite, pg_pool, with_sqlite};

/// The largest id the router hands out: 2^53, the largest integer a JavaScript number holds
/// with all smaller integers.
pub const MAX_ID: u64 = 1 << 53;

const SQLITE_SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS indexa_shard_mapping (
    key TEXT PRIMARY KEY,
    shard TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS indexa_shard_sequence (
    table_name TEXT NOT NULL,
    column_name TEXT NOT NULL,
    next_id INTEGER NOT NULL,
    PRIMARY KEY (table_name, column_name)
);
CREATE TABLE IF NOT EXISTS indexa_shard_rotation (
    name TEXT PRIMARY KEY,
    position INTEGER NOT NULL
);
";

const PG_SCHEMA: &str = "
BEGIN;
SELECT pg_advisory_xact_lock(7450158226305137);
CREATE TABLE IF NOT EXISTS indexa_shard_mapping (
    key TEXT PRIMARY KEY,
    shard TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS indexa_shard_sequence (
    table_name TEXT NOT NULL,
    column_name TEXT NOT NULL,
    next_id BIGINT NOT NULL,
    PRIMARY KEY (table_name, column_name)
);
CREATE TABLE IF NOT EXISTS indexa_shard_rotation (
    name TEXT PRIMARY KEY,
    position BIGINT NOT NULL
);
COMMIT;
";

/// What asking a sequence for a block of ids found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Block {
    /// The block starts here (its length is what was asked for; ids past [`MAX_ID`] are not
    /// to be used).
    Start(u64),
    /// No sequence exists for the (table, column) yet.
    Missing,
    /// The sequence is past [`MAX_ID`].
    Exhausted,
}

/// What [`Catalog::map_all_if_absent`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mapped {
    /// Every key is mapped to the shard; these were mapped by this call.
    Here(Vec<String>),
    /// `key` is mapped to `mapped_to`, another shard; nothing was mapped.
    Elsewhere { key: String, mapped_to: String },
}

pub(crate) enum Catalog {
    Sqlite(Arc<Mutex<Connection>>),
    Postgres(Pool),
}

fn sqlite_error(e: rusqlite::Error) -> Error {
    Error::coordinator(format!("catalog: {e}"))
}

fn pg_error(e: &(dyn std::error::Error + 'static)) -> Error {
    Error::coordinator(format!("catalog: {}", crate::shard::pg_message(e)))
}

/// Values stored in the catalog are below 2^62, so they convert both ways.
fn to_i64(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn to_u64(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

impl Catalog {
    /// Opens the catalog and creates its tables when missing.
    pub(crate) async fn open(location: &Location) -> Result<Catalog> {
        match location {
            Location::Sqlite(path) => {
                let path: Box<Path> = path.as_path().into();
                let conn = tokio::task::spawn_blocking(move || -> rusqlite::Result<Connection> {
                    let conn = open_sqlite(&path)?;
                    conn.execute_batch(SQLITE_SCHEMA)?;
                    Ok(conn)
                })
                .await
                .map_err(|e| Error::coordinator(format!("catalog: {e}")))?
                .map_err(sqlite_error)?;
                Ok(Catalog::Sqlite(Arc::new(Mutex::new(conn))))
            }
            Location::Postgres(url) => {
                let pool = pg_pool(url).map_err(|e| Error::config(format!("catalog: {e}")))?;
                let client = pool.get().await.map_err(|e| pg_error(&e))?;
                client
                    .batch_execute(PG_SCHEMA)
                    .await
                    .map_err(|e| pg_error(&e))?;
                drop(client);
                Ok(Catalog::Postgres(pool))
            }
        }
    }

    async fn pg(pool: &Pool) -> Result<deadpool_postgres::Object> {
        pool.get().await.map_err(|e| pg_error(&e))
    }

    /// The shard `key` is mapped to, if any.
    pub(crate) async fn mapping(&self, key: &str) -> Result<Option<String>> {
        match self {
            Catalog::Sqlite(conn) => {
                let key = key.to_string();
                with_sqlite(conn, move |c| {
                    c.prepare_cached("SELECT shard FROM indexa_shard_mapping WHERE key = ?1")
                        .and_then(|mut s| s.query_row([&key], |r| r.get(0)).optional())
                        .map_err(sqlite_error)
                })
                .await
            }
            Catalog::Postgres(pool) => {
                let client = Self::pg(pool).await?;
                let stmt = client
                    .prepare_cached("SELECT shard FROM indexa_shard_mapping WHERE key = $1")
                    .await
                    .map_err(|e| pg_error(&e))?;
                let row = client
                    .query_opt(&stmt, &[&key])
                    .await
                    .map_err(|e| pg_error(&e))?;
                Ok(row.map(|r| r.get(0)))
            }
        }
    }

    /// Maps `key` to `shard` unless it is already mapped; returns the shard it is mapped to
    /// afterwards (`shard` if this call won, the earlier writer's otherwise).
    pub(crate) async fn map_if_absent(&self, key: &str, shard: &str) -> Result<String> {
        match self {
            Catalog::Sqlite(conn) => {
                let (key, shard) = (key.to_string(), shard.to_string());
                with_sqlite(conn, move |c| {
                    let tx = c
                        .transaction_with_behavior(TransactionBehavior::Immediate)
                        .map_err(sqlite_error)?;
                    tx.prepare_cached(
                        "INSERT INTO indexa_shard_mapping (key, shard) VALUES (?1, ?2) \
                         ON CONFLICT (key) DO NOTHING",
                    )
                    .and_then(|mut s| s.execute([&key, &shard]))
                    .map_err(sqlite_error)?;
                    let winner: String = tx
                        .prepare_cached("SELECT shard FROM indexa_shard_mapping WHERE key = ?1")
                        .and_then(|mut s| s.query_row([&key], |r| r.get(0)))
                        .map_err(sqlite_error)?;
                    tx.commit().map_err(sqlite_error)?;
                    Ok(winner)
                })
                .await
            }
            Catalog::Postgres(pool) => {
                let client = Self::pg(pool).await?;
                // One statement: the CTE's insert and the read of an existing row see the same
                // snapshot, so exactly one of them yields the row.
                let stmt = client
                    .prepare_cached(
                        "WITH inserted AS (
                             INSERT INTO indexa_shard_mapping (key, shard) VALUES ($1, $2)
                             ON CONFLICT (key) DO NOTHING RETURNING shard)
                         SELECT shard FROM inserted
                         UNION ALL
                         SELECT shard FROM indexa_shard_mapping WHERE key = $1",
                    )
                    .await
                    .map_err(|e| pg_error(&e))?;
                let rows = client
                    .query(&stmt, &[&key, &shard])
                    .await
                    .map_err(|e| pg_error(&e))?;
                match rows.first() {
                    Some(row) => Ok(row.get(0)),
                    // The conflicting row was committed after this statement's snapshot: read
                    // it with a fresh one.
                    None => self
                        .mapping(key)
                        .await?
                        .ok_or_else(|| Error::coordinator("catalog: mapping vanished")),
                }
            }
        }
    }

    /// Maps every key of `keys` to `shard` as one unit: each key not mapped yet is mapped to
    /// `shard`. With `refuse_elsewhere`, a key already mapped to another shard maps none of
    /// them and is reported as [`Mapped::Elsewhere`]. Returns the keys this call mapped.
    pub(crate) async fn map_all_if_absent(
        &self,
        keys: &[String],
        shard: &str,
        refuse_elsewhere: bool,
    ) -> Result<Mapped> {
        match self {
            Catalog::Sqlite(conn) => {
                let (keys, shard) = (keys.to_vec(), shard.to_string());
                with_sqlite(conn, move |c| {
                    let tx = c
                        .transaction_with_behavior(TransactionBehavior::Immediate)
                        .map_err(sqlite_error)?;
                    let mut added = Vec::new();
                    for key in &keys {
                        let inserted = tx
                            .prepare_cached(
                                "INSERT INTO indexa_shard_mapping (key, shard) VALUES (?1, ?2) \
                                 ON CONFLICT (key) DO NOTHING",
                            )
                            .and_then(|mut s| s.execute([key, &shard]))
                            .map_err(sqlite_error)?;
                        if inserted == 1 {
                            added.push(key.clone());
                            continue;
                        }
                        let mapped_to: String = tx
                            .prepare_cached("SELECT shard FROM indexa_shard_mapping WHERE key = ?1")
                            .and_then(|mut s| s.query_row([key], |r| r.get(0)))
                            .map_err(sqlite_error)?;
                        if refuse_elsewhere && mapped_to != shard {
                            // Dropping the transaction rolls back the keys mapped so far.
                            return Ok(Mapped::Elsewhere {
                                key: key.clone(),
                                mapped_to,
                            });
                        }
                    }
                    tx.commit().map_err(sqlite_error)?;
                    Ok(Mapped::Here(added))
                })
                .await
            }
            Catalog::Postgres(pool) => {
                let mut client = Self::pg(pool).await?;
                // Dropped without commit (an error, a cancelled call), the transaction is
                // rolled back.
                let tx = client.transaction().await.map_err(|e| pg_error(&e))?;
                let mapped = Self::pg_map_all(&tx, keys, shard, refuse_elsewhere).await?;
                if let Mapped::Here(_) = mapped {
                    tx.commit().await.map_err(|e| pg_error(&e))?;
                }
                Ok(mapped)
            }
        }
    }

    async fn pg_map_all(
        client: &deadpool_postgres::Transaction<'_>,
        keys: &[String],
        shard: &str,
        refuse_elsewhere: bool,
    ) -> Result<Mapped> {
        let insert = client
            .prepare_cached(
                "INSERT INTO indexa_shard_mapping (key, shard) VALUES ($1, $2) \
                 ON CONFLICT (key) DO NOTHING",
            )
            .await
            .map_err(|e| pg_error(&e))?;
        let read = client
            .prepare_cached("SELECT shard FROM indexa_shard_mapping WHERE key = $1")
            .await
            .map_err(|e| pg_error(&e))?;
        let mut added = Vec::new();
        for key in keys {
            // ON CONFLICT waits for a concurrent writer of the same key to finish; the read
            // that follows is a new statement, so (read committed) it sees that writer's row.
            let inserted = client
                .execute(&insert, &[key, &shard])
                .await
                .map_err(|e| pg_error(&e))?;
            if inserted == 1 {
                added.push(key.clone());
                continue;
            }
            let mapped_to: String = client
                .query_one(&read, &[key])
                .await
                .map_err(|e| pg_error(&e))?
                .get(0);
            if refuse_elsewhere && mapped_to != shard {
                return Ok(Mapped::Elsewhere {
                    key: key.clone(),
                    mapped_to,
                });
            }
        }
        Ok(Mapped::Here(added))
    }

    /// Removes the mappings of `keys` to `shard` (the undo of [`Catalog::map_all_if_absent`]
    /// when the shard's transaction did not commit).
    pub(crate) async fn unmap(&self, keys: &[String], shard: &str) -> Result<()> {
        const SQL: &str = "DELETE FROM indexa_shard_mapping WHERE key = $1 AND shard = $2";
        match self {
            Catalog::Sqlite(conn) => {
                let (keys, shard) = (keys.to_vec(), shard.to_string());
                with_sqlite(conn, move |c| {
                    let tx = c
                        .transaction_with_behavior(TransactionBehavior::Immediate)
                        .map_err(sqlite_error)?;
                    for key in &keys {
                        tx.prepare_cached(&SQL.replace('$', "?"))
                            .and_then(|mut s| s.execute([key, &shard]))
                            .map_err(sqlite_error)?;
                    }
                    tx.commit().map_err(sqlite_error)
                })
                .await
            }
            Catalog::Postgres(pool) => {
                let client = Self::pg(pool).await?;
                for key in keys {
                    client
                        .execute(SQL, &[key, &shard])
                        .await
                        .map_err(|e| pg_error(&e))?;
                }
                Ok(())
            }
        }
    }

    /// Takes `count` ids from the (table, column) sequence, starting at or above `floor`.
    pub(crate) async fn take_block(
        &self,
        table: &str,
        column: &str,
        floor: u64,
        count: u64,
    ) -> Result<Block> {
        let (floor, count) = (to_i64(floor), to_i64(count));
        let limit = to_i64(MAX_ID);
        let start = match self {
            Catalog::Sqlite(conn) => {
                let (table, column) = (table.to_string(), column.to_string());
                with_sqlite(conn, move |c| {
                    let tx = c
                        .transaction_with_behavior(TransactionBehavior::Immediate)
                        .map_err(sqlite_error)?;
                    let taken: Option<i64> = tx
                        .prepare_cached(
                            "UPDATE indexa_shard_sequence SET next_id = max(next_id, ?1) + ?2 \
                             WHERE table_name = ?3 AND column_name = ?4 AND max(next_id, ?1) <= ?5 \
                             RETURNING next_id - ?2",
                        )
                        .and_then(|mut s| {
                            s.query_row(
                                rusqlite::params![floor, count, table, column, limit],
                                |r| r.get(0),
                            )
                            .optional()
                        })
                        .map_err(sqlite_error)?;
                    let block = match taken {
                        Some(start) => Block::Start(to_u64(start)),
                        None => {
                            let exists = tx
                                .prepare_cached(
                                    "SELECT 1 FROM indexa_shard_sequence \
                                     WHERE table_name = ?1 AND column_name = ?2",
                                )
                                .and_then(|mut s| s.exists([&table, &column]))
                                .map_err(sqlite_error)?;
                            if exists {
                                Block::Exhausted
                            } else {
                                Block::Missing
                            }
                        }
                    };
                    tx.commit().map_err(sqlite_error)?;
                    Ok(block)
                })
                .await?
            }
            Catalog::Postgres(pool) => {
                let client = Self::pg(pool).await?;
                let stmt = client
                    .prepare_cached(
                        "UPDATE indexa_shard_sequence SET next_id = GREATEST(next_id, $1) + $2 \
                         WHERE table_name = $3 AND column_name = $4 AND GREATEST(next_id, $1) <= $5 \
                         RETURNING next_id - $2",
                    )
                    .await
                    .map_err(|e| pg_error(&e))?;
                // The sequence may be created between the UPDATE and the check of its
                // existence (the two statements see different snapshots): then try again.
                loop {
                    let row = client
                        .query_opt(&stmt, &[&floor, &count, &table, &column, &limit])
                        .await
                        .map_err(|e| pg_error(&e))?;
                    if let Some(row) = row {
                        break Block::Start(to_u64(row.get(0)));
                    }
                    let next: Option<i64> = client
                        .query_opt(
                            "SELECT next_id FROM indexa_shard_sequence \
                             WHERE table_name = $1 AND column_name = $2",
                            &[&table, &column],
                        )
                        .await
                        .map_err(|e| pg_error(&e))?
                        .map(|row| row.get(0));
                    match next {
                        None => break Block::Missing,
                        Some(next) if next.max(floor) > limit => break Block::Exhausted,
                        Some(_) => continue,
                    }
                }
            }
        };
        Ok(start)
    }

    /// Creates the (table, column) sequence with `next` as its next id, unless it exists.
    pub(crate) async fn seed(&self, table: &str, column: &str, next: u64) -> Result<()> {
        let next = to_i64(next);
        const SQL: &str = "INSERT INTO indexa_shard_sequence (table_name, column_name, next_id) \
                           VALUES ($1, $2, $3) ON CONFLICT (table_name, column_name) DO NOTHING";
        match self {
            Catalog::Sqlite(conn) => {
                let (table, column) = (table.to_string(), column.to_string());
                with_sqlite(conn, move |c| {
                    c.prepare_cached(&SQL.replace('$', "?"))
                        .and_then(|mut s| s.execute(rusqlite::params![table, column, next]))
                        .map(drop)
                        .map_err(sqlite_error)
                })
                .await
            }
            Catalog::Postgres(pool) => {
                let client = Self::pg(pool).await?;
                client
                    .execute(SQL, &[&table, &column, &next])
                    .await
                    .map(drop)
                    .map_err(|e| pg_error(&e))
            }
        }
    }

    /// Raises the (table, column) sequence so its next id is at least `next`, when the sequence
    /// exists.
    pub(crate) async fn raise(&self, table: &str, column: &str, next: u64) -> Result<()> {
        let next = to_i64(next);
        match self {
            Catalog::Sqlite(conn) => {
                let (table, column) = (table.to_string(), column.to_string());
                with_sqlite(conn, move |c| {
                    c.prepare_cached(
                        "UPDATE indexa_shard_sequence SET next_id = ?1 \
                         WHERE table_name = ?2 AND column_name = ?3 AND next_id < ?1",
                    )
                    .and_then(|mut s| s.execute(rusqlite::params![next, table, column]))
                    .map(drop)
                    .map_err(sqlite_error)
                })
                .await
            }
            Catalog::Postgres(pool) => {
                let client = Self::pg(pool).await?;
                let stmt = client
                    .prepare_cached(
                        "UPDATE indexa_shard_sequence SET next_id = $1 \
                         WHERE table_name = $2 AND column_name = $3 AND next_id < $1",
                    )
                    .await
                    .map_err(|e| pg_error(&e))?;
                client
                    .execute(&stmt, &[&next, &table, &column])
                    .await
                    .map(drop)
                    .map_err(|e| pg_error(&e))
            }
        }
    }

    /// Advances the shared round-robin rotation; returns its position before this call
    /// (0, 1, 2, …).
    pub(crate) async fn rotate(&self) -> Result<u64> {
        const SQL: &str = "INSERT INTO indexa_shard_rotation (name, position) VALUES ('insert', 0) \
                           ON CONFLICT (name) DO UPDATE SET position = indexa_shard_rotation.position + 1 \
                           RETURNING position";
        match self {
            Catalog::Sqlite(conn) => {
                with_sqlite(conn, move |c| {
                    c.prepare_cached(SQL)
                        .and_then(|mut s| s.query_row([], |r| r.get::<_, i64>(0)))
                        .map(to_u64)
                        .map_err(sqlite_error)
                })
                .await
            }
            Catalog::Postgres(pool) => {
                let client = Self::pg(pool).await?;
                let row = client.query_one(SQL, &[]).await.map_err(|e| pg_error(&e))?;
                Ok(to_u64(row.get(0)))
            }
        }
    }
}
