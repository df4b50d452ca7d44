//! The router: places keys on shards, runs statements there, reads generated ids and hands out
//! cluster-unique ids (seed 004, "Generated Ids").

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use indexa::{Object, Value};
use indexmap::IndexMap;

use crate::catalog::{Block, Catalog, MAX_ID};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::placement::{hash_shard_index, random_index, random_token, Strategy};
use crate::shard::{Outcome, Row, Shard};
use crate::sql::{has_returning, quote_identifier, validate_identifier};

/// Column names a RETURNING row's id is read from when no `id_column` is given, in order of
/// preference, compared ignoring ASCII letter case (seed 004: "id or rowid … along with a few
/// driver aliases such as lastInsertId").
const ID_COLUMNS: [&str; 5] = ["id", "rowid", "lastInsertId", "last_row_id", "insertId"];

/// Options of [`Router::insert`] and [`Router::insert_shard`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InsertOptions {
    /// Read the generated id only from this column of the RETURNING row (not `id`, not
    /// `rowid`); without RETURNING it has no effect. Also the column a refused row is deleted
    /// by when `table` is set (default `id`).
    pub id_column: Option<String>,
    /// The table the INSERT writes to. When set, `table` and `id_column` are validated as SQL
    /// identifiers before the INSERT runs, a row refused as a collision is deleted, and a
    /// numeric generated id raises the (table, id column) sequence.
    pub table: Option<String>,
}

/// What [`Router::insert`] and [`Router::insert_shard`] return.
#[derive(Debug, Clone, PartialEq)]
pub struct InsertResult {
    /// The generated id: a number (from a rowid or a numeric column) or a string. It is mapped
    /// under its text, `String(id)` in JavaScript terms.
    pub generated_id: Value,
    /// The shard the row was written to.
    pub shard: String,
    /// The rows the RETURNING clause produced (empty without one).
    pub rows: Vec<Row>,
    /// Rows the statement inserted (on PostgreSQL with RETURNING: rows returned).
    pub rows_affected: u64,
}

/// Options of [`Router::next_id`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NextIdOptions {
    /// The id column to scan; default `id`.
    pub column: Option<String>,
    /// A floor the returned id never undercuts (e.g. a watermark after importing legacy rows).
    pub min: Option<u64>,
}

/// Routes statements to shards by key; see the crate documentation for an overview.
///
/// A `Router` is `Send + Sync`: share it between tasks with an `Arc`. It must be used on the
/// tokio runtime it was opened on.
pub struct Router {
    shards: IndexMap<String, Shard>,
    catalog: Catalog,
    strategy: Strategy,
    coordinator: bool,
    lease: u64,
    /// Leased blocks not served yet, per (table, column): the ids still to hand out.
    leases: tokio::sync::Mutex<HashMap<(String, String), Range<u64>>>,
}

impl Router {
    /// Opens the router a configuration describes: opens (creating) the SQLite shard files and
    /// the catalog, and creates the catalog's tables when missing. PostgreSQL shards connect on
    /// first use.
    ///
    /// # Errors
    /// [`Error::QueryFailed`] when a SQLite shard file cannot be opened,
    /// [`Error::CoordinatorUnavailable`] when the catalog cannot be opened or set up,
    /// [`Error::InvalidConfig`] when a PostgreSQL URL does not parse.
    pub async fn open(config: &Config) -> Result<Router> {
        let mut shards = IndexMap::with_capacity(config.shards.len());
        for (name, location) in &config.shards {
            shards.insert(name.clone(), Shard::open(name, location).await?);
        }
        let catalog = Catalog::open(&config.catalog.location).await?;
        Ok(Router {
            shards,
            catalog,
            strategy: config.strategy,
            coordinator: config.catalog.coordinator,
            lease: config.catalog.lease.max(1),
            leases: tokio::sync::Mutex::new(HashMap::new()),
        })
    }

    /// Reads a TOML configuration file ([`Config::from_file`]) and opens the router it
    /// describes ([`Router::open`]).
    ///
    /// # Errors
    /// As [`Config::from_file`] and [`Router::open`].
    pub async fn from_file(path: &Path) -> Result<Router> {
        Router::open(&Config::from_file(path)?).await
    }

    /// The configured shard names, in configuration order.
    pub fn shard_names(&self) -> impl Iterator<Item = &str> {
        self.shards.keys().map(String::as_str)
    }

    fn shard(&self, name: &str) -> Result<&Shard> {
        if self.shards.is_empty() {
            return Err(Error::NoShards);
        }
        self.shards.get(name).ok_or_else(|| Error::ShardNotFound {
            shard: name.to_string(),
        })
    }

    /// The shard index the strategy picks for `key`.
    async fn place(&self, key: &str) -> Result<usize> {
        let n = self.shards.len();
        if n == 0 {
            return Err(Error::NoShards);
        }
        Ok(match self.strategy {
            Strategy::Hash => hash_shard_index(key, n).unwrap_or(0),
            Strategy::RoundRobin => {
                usize::try_from(self.catalog.rotate().await? % n as u64).unwrap_or(0)
            }
            Strategy::Random => random_index(n),
        })
    }

    fn shard_name_at(&self, index: usize) -> Result<&str> {
        self.shards
            .get_index(index)
            .map(|(name, _)| name.as_str())
            .ok_or(Error::NoShards)
    }

    /// The shard `key` is mapped to, if it is mapped. Reads only; writes no mapping.
    ///
    /// # Errors
    /// [`Error::CoordinatorUnavailable`] when the catalog cannot be read.
    pub async fn shard_of(&self, key: &str) -> Result<Option<String>> {
        self.catalog.mapping(key).await
    }

    /// The shard a write to `key` goes to: its mapping, or a placement stored insert-if-absent
    /// (a concurrent writer that stored first wins, and its shard is used).
    async fn route_write(&self, key: &str) -> Result<&str> {
        if self.shards.is_empty() {
            return Err(Error::NoShards);
        }
        let name = match self.catalog.mapping(key).await? {
            Some(name) => name,
            None => {
                let placed = self.shard_name_at(self.place(key).await?)?;
                self.catalog.map_if_absent(key, placed).await?
            }
        };
        let (name, _) = self
            .shards
            .get_key_value(&name)
            .ok_or(Error::ShardNotFound { shard: name })?;
        Ok(name)
    }

    /// The shard a read of `key` goes to, or `None` when the key is unmapped.
    async fn route_read(&self, key: &str) -> Result<Option<&Shard>> {
        match self.catalog.mapping(key).await? {
            Some(name) => self.shard(&name).map(Some),
            None => Ok(None),
        }
    }

    /// Runs an INSERT on the shard the strategy picks for a new key (with `hash`, the hash of a
    /// fresh random token: the id does not exist yet), reads the generated id and maps it to
    /// that shard (seed 004, "insert() runs the statement on the shard the router allocates for
    /// a new key").
    ///
    /// See [`Router::insert_shard`] for how the id is read and checked.
    ///
    /// # Errors
    /// As [`Router::insert_shard`]; [`Error::NoShards`] without shards.
    pub async fn insert(
        &self,
        sql: &str,
        params: &[Value],
        options: &InsertOptions,
    ) -> Result<InsertResult> {
        let index = match self.strategy {
            Strategy::Hash => {
                hash_shard_index(&random_token(), self.shards.len()).ok_or(Error::NoShards)?
            }
            _ => self.place("").await?,
        };
        let name = self.shard_name_at(index)?.to_string();
        self.insert_shard(&name, sql, params, options).await
    }

    /// Runs an INSERT on the named shard, reads the generated id and maps it to the shard.
    ///
    /// The id (seed 004, "CollegeDB reads the generated id…"): when `sql` has a RETURNING
    /// clause and returns a row, the column `id` or `rowid` (any letter case) or a driver alias
    /// (`lastInsertId`, `last_row_id`, `insertId`), or only `options.id_column` when set, never
    /// another column. When no row is returned: SQLite's last-insert rowid, only if this
    /// statement inserted a row that got a new rowid (not after an ignored insert or into a
    /// WITHOUT ROWID table; a rowid of 0 counts as none); PostgreSQL has no such id.
    ///
    /// With more than one shard configured the mapping is stored insert-if-absent: an id
    /// already mapped to another shard is a collision; mapped to the same shard is not.
    ///
    /// # Errors
    /// - [`Error::InvalidIdentifier`] before anything runs, when `options.table` or the id
    ///   column is not a plain identifier (only checked with `table`);
    /// - [`Error::ShardNotFound`] for an unknown shard; [`Error::NoShards`] without shards;
    /// - [`Error::QueryFailed`] when the statement fails;
    /// - [`Error::GeneratedKeyUnavailable`] when no id can be read (the row stays);
    /// - [`Error::GeneratedKeyCollision`] when the id is mapped to another shard. With
    ///   `options.table` the router first deletes the row (`DELETE FROM table WHERE id_column =
    ///   id`) and reports `row_removed`; if the delete fails or matches no row, the error keeps
    ///   its code, names the leftover row and carries the failure as its cause. Without `table`
    ///   the row stays.
    /// - [`Error::CoordinatorUnavailable`] when the catalog fails.
    pub async fn insert_shard(
        &self,
        shard: &str,
        sql: &str,
        params: &[Value],
        options: &InsertOptions,
    ) -> Result<InsertResult> {
        let id_column = options.id_column.as_deref().unwrap_or("id");
        if let Some(table) = &options.table {
            validate_identifier(table)?;
            validate_identifier(id_column)?;
        }
        let (name, target) = self.named_shard(shard)?;
        let outcome = target.query(sql, params).await?;
        let returning = has_returning(sql, target.dialect());
        let generated_id =
            read_generated_id(name, &outcome, returning, options.id_column.as_deref())?;
        let key = key_text(&generated_id);
        let mapped_to = self.catalog.map_if_absent(&key, name).await?;
        if self.shards.len() > 1 && mapped_to != name {
            return Err(self
                .refuse_collision(name, target, generated_id, mapped_to, options)
                .await);
        }
        if let (Some(table), Value::Number(n)) = (&options.table, &generated_id) {
            self.observe_id(table, id_column, *n).await?;
        }
        Ok(InsertResult {
            generated_id,
            shard: name.to_string(),
            rows: outcome.rows,
            rows_affected: outcome.rows_affected,
        })
    }

    fn named_shard(&self, shard: &str) -> Result<(&str, &Shard)> {
        self.shard(shard)?;
        self.shards
            .get_key_value(shard)
            .map(|(name, target)| (name.as_str(), target))
            .ok_or_else(|| Error::ShardNotFound {
                shard: shard.to_string(),
            })
    }

    /// Builds the collision error, deleting the refused row first when the table is known.
    async fn refuse_collision(
        &self,
        name: &str,
        target: &Shard,
        id: Value,
        mapped_to: String,
        options: &InsertOptions,
    ) -> Error {
        let mut row_removed = false;
        let mut cause = None;
        if let Some(table) = &options.table {
            let id_column = options.id_column.as_deref().unwrap_or("id");
            let dialect = target.dialect();
            let delete = format!(
                "DELETE FROM {} WHERE {} = ?",
                quote_identifier(table, dialect),
                quote_identifier(id_column, dialect)
            );
            match target.query(&delete, std::slice::from_ref(&id)).await {
                Ok(outcome) if outcome.rows_affected > 0 => row_removed = true,
                Ok(_) => {
                    cause = Some(Box::new(Error::query(
                        name,
                        format!(
                            "DELETE FROM {table} WHERE {id_column} = {} matched no row",
                            crate::text::to_text(&id)
                        ),
                    )))
                }
                Err(error) => cause = Some(Box::new(error)),
            }
        }
        Error::GeneratedKeyCollision {
            shard: name.to_string(),
            id: Box::new(id),
            mapped_to,
            table: options.table.clone(),
            row_removed,
            cause,
        }
    }

    /// Raises the (table, column) sequence past a numeric id the router saw (IndexedDB's
    /// "possibly update the key generator": floor(min(id, 2^53)) + 1), in the catalog and in
    /// this process's leased block.
    async fn observe_id(&self, table: &str, column: &str, id: f64) -> Result<()> {
        if id.is_nan() || id < 1.0 {
            return Ok(());
        }
        // In range [1, 2^53] after the clamp, so the conversion is exact.
        let seen = id.min(MAX_ID as f64).floor() as u64;
        self.catalog.raise(table, column, seen + 1).await?;
        let mut leases = self.leases.lock().await;
        if let Some(block) = leases.get_mut(&(table.to_string(), column.to_string())) {
            if block.contains(&seen) {
                block.start = seen + 1;
            }
        }
        Ok(())
    }

    /// A cluster-unique id for `table` (seed 004, "nextId()").
    ///
    /// - Without a coordinator (`coordinator = false`): MAX(column) across **every** shard, plus
    ///   one (1 when all are empty), never below `min`. Two concurrent callers can get the same
    ///   id: pair it with a unique constraint, or use the coordinator.
    /// - With the coordinator: the first call for a (table, column) seeds an atomic sequence in
    ///   the catalog from the cross-shard maximum (one query per shard); later calls cost one
    ///   catalog call and no shard queries. With `lease = N` a call takes N ids at once and this
    ///   router serves them from memory: ids are unique but not ordered across processes, and
    ///   ids left unserved (a crash, a one-shot CLI call) are a gap, never a duplicate.
    ///
    /// Ids the router sees push the sequence: a numeric id written by [`Router::insert_into`]
    /// or read by an insert with `table` raises the sequence past it. SQL run through
    /// [`Router::run`], [`Router::run_shard`] or [`Router::exec_all`] is not parsed, so ids it
    /// writes are not seen.
    ///
    /// # Errors
    /// - [`Error::InvalidIdentifier`] for a bad table or column name;
    /// - [`Error::QueryFailed`] when a shard fails while the maximum is read (never a low id);
    /// - [`Error::CoordinatorUnavailable`] when the catalog fails;
    /// - [`Error::IdLimitExceeded`] when the id would pass 2^53;
    /// - [`Error::NoShards`] without shards.
    pub async fn next_id(&self, table: &str, options: &NextIdOptions) -> Result<u64> {
        let column = options.column.as_deref().unwrap_or("id");
        validate_identifier(table)?;
        validate_identifier(column)?;
        if self.shards.is_empty() {
            return Err(Error::NoShards);
        }
        let limit = || Error::IdLimitExceeded {
            table: table.to_string(),
            column: column.to_string(),
        };
        let floor = options.min.unwrap_or(1).max(1);
        if floor > MAX_ID {
            return Err(limit());
        }
        if !self.coordinator {
            let id = self.cross_shard_next(table, column).await?.max(floor);
            return if id > MAX_ID { Err(limit()) } else { Ok(id) };
        }
        if self.lease == 1 {
            return Ok(self.take(table, column, floor, 1).await?.start);
        }
        let mut leases = self.leases.lock().await;
        let block = leases
            .entry((table.to_string(), column.to_string()))
            .or_insert(0..0);
        block.start = block.start.max(floor);
        if block.is_empty() {
            *block = self.take(table, column, floor, self.lease).await?;
        }
        let id = block.start;
        block.start += 1;
        Ok(id)
    }

    /// Takes a block of up to `count` ids (cut at 2^53) from the coordinator, seeding the
    /// sequence first when it does not exist.
    async fn take(&self, table: &str, column: &str, floor: u64, count: u64) -> Result<Range<u64>> {
        // Seeding creates the sequence, so the second round finds it.
        for _ in 0..2 {
            match self.catalog.take_block(table, column, floor, count).await? {
                Block::Start(start) => return Ok(start..(start + count).min(MAX_ID + 1)),
                Block::Exhausted => break,
                Block::Missing => {
                    let next = self.cross_shard_next(table, column).await?;
                    self.catalog.seed(table, column, next).await?;
                }
            }
        }
        Err(Error::IdLimitExceeded {
            table: table.to_string(),
            column: column.to_string(),
        })
    }

    /// MAX(column) over every shard, plus one; 1 when every shard is empty; at most 2^53 + 1.
    async fn cross_shard_next(&self, table: &str, column: &str) -> Result<u64> {
        let mut max = 0.0f64;
        for (name, shard) in &self.shards {
            let dialect = shard.dialect();
            let sql = format!(
                "SELECT MAX({}) AS max_id FROM {}",
                quote_identifier(column, dialect),
                quote_identifier(table, dialect)
            );
            let outcome = shard.query(&sql, &[]).await?;
            let value = outcome
                .rows
                .first()
                .and_then(|row| row.values().next())
                .cloned()
                .unwrap_or(Value::Null);
            let shard_max = match &value {
                Value::Null => 0.0,
                Value::Number(n) if !n.is_nan() => *n,
                Value::String(s) => s.to_string_lossy().trim().parse::<f64>().map_err(|_| {
                    Error::query(name, format!("MAX({column}) of {table} is not a number"))
                })?,
                _ => {
                    return Err(Error::query(
                        name,
                        format!("MAX({column}) of {table} is not a number"),
                    ))
                }
            };
            max = max.max(shard_max);
        }
        // Clamped to [0, 2^53], so the conversion is exact.
        Ok(max.clamp(0.0, MAX_ID as f64).floor() as u64 + 1)
    }

    /// Writes a row under `key`: `INSERT INTO table (columns…) VALUES (…)` with the object's
    /// fields in order (`DEFAULT VALUES` for an empty object), on the key's shard; an unmapped
    /// key is placed with the strategy and mapped (seed 004, "insertInto(String(id), …)").
    /// Every numeric field raises the (table, field) sequence past it. Returns the shard.
    ///
    /// # Errors
    /// [`Error::InvalidIdentifier`] for a bad table or field name (before anything runs),
    /// [`Error::QueryFailed`], [`Error::CoordinatorUnavailable`], [`Error::NoShards`],
    /// [`Error::ShardNotFound`] when the key is mapped to a shard no longer configured.
    pub async fn insert_into(&self, key: &str, table: &str, values: &Object) -> Result<String> {
        validate_identifier(table)?;
        let mut columns = Vec::with_capacity(values.len());
        for name in values.keys() {
            let name = name.to_string().ok_or_else(|| Error::InvalidIdentifier {
                identifier: name.to_string_lossy(),
                reason: "contains a lone surrogate".into(),
            })?;
            validate_identifier(&name)?;
            columns.push(name);
        }
        let name = self.route_write(key).await?;
        let shard = self.shard(name)?;
        let dialect = shard.dialect();
        let sql = if columns.is_empty() {
            format!(
                "INSERT INTO {} DEFAULT VALUES",
                quote_identifier(table, dialect)
            )
        } else {
            format!(
                "INSERT INTO {} ({}) VALUES ({})",
                quote_identifier(table, dialect),
                columns
                    .iter()
                    .map(|c| quote_identifier(c, dialect))
                    .collect::<Vec<_>>()
                    .join(", "),
                vec!["?"; columns.len()].join(", ")
            )
        };
        let params: Vec<Value> = values.values().cloned().collect();
        shard.query(&sql, &params).await?;
        for (column, value) in columns.iter().zip(values.values()) {
            if let Value::Number(n) = value {
                self.observe_id(table, column, *n).await?;
            }
        }
        Ok(name.to_string())
    }

    /// The first row `sql` returns on `key`'s shard; `None` when the key is unmapped (no
    /// mapping is written) or no row matches.
    ///
    /// # Errors
    /// [`Error::QueryFailed`], [`Error::CoordinatorUnavailable`], [`Error::ShardNotFound`] when
    /// the key is mapped to a shard no longer configured, [`Error::NoShards`].
    pub async fn first(&self, key: &str, sql: &str, params: &[Value]) -> Result<Option<Row>> {
        match self.route_read(key).await? {
            Some(shard) => Ok(first_row(shard.query(sql, params).await?)),
            None => Ok(None),
        }
    }

    /// Every row `sql` returns on `key`'s shard; empty when the key is unmapped (no mapping is
    /// written).
    ///
    /// # Errors
    /// As [`Router::first`].
    pub async fn all(&self, key: &str, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        match self.route_read(key).await? {
            Some(shard) => Ok(shard.query(sql, params).await?.rows),
            None => Ok(Vec::new()),
        }
    }

    /// Runs a write on `key`'s shard (an unmapped key is placed with the strategy and mapped);
    /// returns the rows affected. The SQL is not parsed: ids it writes do not push sequences.
    ///
    /// # Errors
    /// As [`Router::first`].
    pub async fn run(&self, key: &str, sql: &str, params: &[Value]) -> Result<u64> {
        let name = self.route_write(key).await?;
        Ok(self.shard(name)?.query(sql, params).await?.rows_affected)
    }

    /// The first row `sql` returns on the named shard, or `None`.
    ///
    /// # Errors
    /// [`Error::ShardNotFound`], [`Error::NoShards`], [`Error::QueryFailed`].
    pub async fn first_shard(
        &self,
        shard: &str,
        sql: &str,
        params: &[Value],
    ) -> Result<Option<Row>> {
        Ok(first_row(self.shard(shard)?.query(sql, params).await?))
    }

    /// Every row `sql` returns on the named shard.
    ///
    /// # Errors
    /// As [`Router::first_shard`].
    pub async fn all_shard(&self, shard: &str, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        Ok(self.shard(shard)?.query(sql, params).await?.rows)
    }

    /// Runs one statement on the named shard; returns the rows affected. Not parsed: ids it
    /// writes do not push sequences.
    ///
    /// # Errors
    /// As [`Router::first_shard`].
    pub async fn run_shard(&self, shard: &str, sql: &str, params: &[Value]) -> Result<u64> {
        Ok(self.shard(shard)?.query(sql, params).await?.rows_affected)
    }

    /// Runs `sql` on every shard, in configuration order, and returns all rows as one list.
    ///
    /// # Errors
    /// [`Error::NoShards`]; [`Error::QueryFailed`] naming the first shard that fails.
    pub async fn all_shards(&self, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        if self.shards.is_empty() {
            return Err(Error::NoShards);
        }
        let mut rows = Vec::new();
        for shard in self.shards.values() {
            rows.extend(shard.query(sql, params).await?.rows);
        }
        Ok(rows)
    }

    /// Runs a script of one or more statements without parameters (e.g. DDL) on every shard,
    /// in configuration order; returns the shard names. Not parsed: ids it writes do not push
    /// sequences.
    ///
    /// # Errors
    /// [`Error::NoShards`]; [`Error::QueryFailed`] naming the first shard that fails (shards
    /// before it have run the script).
    pub async fn exec_all(&self, sql: &str) -> Result<Vec<String>> {
        if self.shards.is_empty() {
            return Err(Error::NoShards);
        }
        for shard in self.shards.values() {
            shard.execute_batch(sql).await?;
        }
        Ok(self.shards.keys().cloned().collect())
    }
}

fn first_row(outcome: Outcome) -> Option<Row> {
    outcome.rows.into_iter().next()
}

/// The text a generated id is mapped under: `String(id)` in JavaScript terms.
pub(crate) fn key_text(id: &Value) -> String {
    match id {
        Value::String(s) => s.to_string_lossy(),
        other => crate::text::to_text(other),
    }
}

fn read_generated_id(
    shard: &str,
    outcome: &Outcome,
    returning: bool,
    id_column: Option<&str>,
) -> Result<Value> {
    let unavailable = |reason: String| Error::GeneratedKeyUnavailable {
        shard: shard.to_string(),
        reason,
    };
    if let (true, Some(row)) = (returning, outcome.rows.first()) {
        let wanted: Vec<&str> = match id_column {
            Some(column) => vec![column],
            None => ID_COLUMNS.to_vec(),
        };
        let found = wanted.iter().find_map(|want| {
            row.iter()
                .find(|(name, _)| name.eq_str(want))
                .or_else(|| {
                    row.iter()
                        .find(|(name, _)| name.to_string_lossy().eq_ignore_ascii_case(want))
                })
                .map(|(name, value)| (name.to_string_lossy(), value))
        });
        return match found {
            Some((_, value @ Value::Number(n))) if n.is_finite() => Ok(value.clone()),
            Some((_, value @ Value::String(_))) => Ok(value.clone()),
            Some((name, value)) => Err(unavailable(format!(
                "the RETURNING column {name} holds {}, not a number or string",
                crate::text::to_text(value)
            ))),
            None => Err(unavailable(match id_column {
                Some(column) => format!("the RETURNING row has no column {column}"),
                None => "the RETURNING row has no id, rowid, lastInsertId, last_row_id or insertId column; name the key column with id_column".to_string(),
            })),
        };
    }
    match outcome.inserted_rowid {
        Some(rowid) => Ok(Value::Number(rowid as f64)),
        None => Err(unavailable(
            "the statement returned no row and inserted no row with a new rowid; add RETURNING with the key column"
                .to_string(),
        )),
    }
}
