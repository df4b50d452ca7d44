//! The router: places keys on shards, runs statements there, reads generated ids and hands out
//! cluster-unique ids (seed 004, "Generated Ids").

use std::collections::HashMap;
use std::ops::Range;
use std::path::Path;

use indexa::{Object, Value};
use indexmap::IndexMap;
use rust_decimal::prelude::ToPrimitive;

use crate::catalog::{Block, Catalog, Mapped, MAX_ID};
use crate::config::Config;
use crate::error::{Error, Result};
use crate::generated_id::{read_generated_ids, GeneratedId};
use crate::placement::{hash_shard_index, random_index, random_token, Strategy};
use crate::shard::{Cell, Outcome, Row, Shard, Unit};
use crate::sql::{has_returning, quote_identifier, validate_identifier, Dialect};

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
    /// The generated id (of the first row, for a statement that inserted several): an exact
    /// integer or a string, mapped under its text ([`GeneratedId::key`]).
    pub generated_id: GeneratedId,
    /// Every id the statement generated, in row order (one RETURNING row each); every one of
    /// them is mapped to `shard`.
    pub generated_ids: Vec<GeneratedId>,
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

    /// Runs an INSERT on the named shard, reads every id it generated and maps them to the
    /// shard, as one unit: the statement runs in a transaction on the shard that commits only
    /// once every id is read and mapped.
    ///
    /// The ids (seed 004, "CollegeDB reads the generated id…"): when `sql` has a RETURNING
    /// clause and returns rows, from each row the column `id` or `rowid` (any letter case) or a
    /// driver alias (`lastInsertId`, `last_row_id`, `insertId`), or only `options.id_column`
    /// when set, never another column. When no row is returned: SQLite's last-insert rowid,
    /// only if this statement inserted exactly one row that got a new rowid (not after an
    /// ignored insert or into a WITHOUT ROWID table; a rowid of 0 counts as none); PostgreSQL
    /// has no such id. Integer ids are exact 64-bit integers; text and `uuid` keys are string
    /// ids.
    ///
    /// With more than one shard configured the ids are mapped all or none: an id already
    /// mapped to another shard is a collision and none of the statement's ids is mapped; mapped
    /// to the same shard is not a collision.
    ///
    /// # Errors
    /// Every error except a collision without `options.table` leaves the shard without any
    /// row of the statement (its transaction is rolled back) and writes no mapping:
    /// - [`Error::InvalidIdentifier`] before the INSERT runs, when `options.table` or the id
    ///   column is not a plain identifier, or the table has no such column on the shard (only
    ///   checked with `table`);
    /// - [`Error::ShardNotFound`] for an unknown shard; [`Error::NoShards`] without shards;
    /// - [`Error::QueryFailed`] when the statement fails or a returned value does not convert;
    /// - [`Error::GeneratedKeyUnavailable`] when an id cannot be read exactly (a row without
    ///   the id column, a value that is not an integer in the 64-bit range or a string, a
    ///   multi-row insert without RETURNING);
    /// - [`Error::GeneratedKeyCollision`] when an id is mapped to another shard. With
    ///   `options.table` the statement is undone on the shard (exactly the rows it wrote, none
    ///   other) and `row_removed` is true; if undoing it fails, `row_removed` is false and the
    ///   failure is the cause. Without `table` the rows stay, committed, as the seed says
    ///   ("Without table, the row stays on the shard").
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
        let mut unit = target.begin().await?;
        let step = self
            .insert_in_unit(&mut unit, name, target.dialect(), sql, params, options)
            .await;
        match step {
            Ok(Step::Mapped(result, added)) => {
                // The sequence sees the ids before the rows are committed: a failure here
                // undoes the statement and its mappings.
                let seen = match &options.table {
                    Some(table) => {
                        self.observe_ids(table, id_column, &result.generated_ids)
                            .await
                    }
                    None => Ok(()),
                };
                let committed = match seen {
                    Ok(()) => unit.commit().await,
                    Err(error) => {
                        let _ = unit.rollback().await;
                        Err(error)
                    }
                };
                if let Err(error) = committed {
                    // The rows are not on the shard: neither may their mappings be.
                    self.catalog.unmap(&added, name).await?;
                    return Err(error);
                }
                Ok(result)
            }
            Ok(Step::Collision {
                id,
                mapped_to,
                rows,
            }) => {
                let (row_removed, cause) = match options.table {
                    Some(_) => match unit.rollback().await {
                        Ok(()) => (true, None),
                        Err(error) => (false, Some(Box::new(error))),
                    },
                    None => {
                        // The seed's rule: without the table the rows stay, committed.
                        unit.commit().await?;
                        (false, None)
                    }
                };
                Err(Error::GeneratedKeyCollision {
                    shard: name.to_string(),
                    id,
                    mapped_to,
                    table: options.table.clone(),
                    rows,
                    row_removed,
                    cause,
                })
            }
            Err(error) => {
                // A failed rollback still keeps nothing: the unit closes its connection.
                let _ = unit.rollback().await;
                Err(error)
            }
        }
    }

    /// The statement and the mapping of its ids, inside the shard transaction `unit`.
    async fn insert_in_unit(
        &self,
        unit: &mut Unit,
        name: &str,
        dialect: Dialect,
        sql: &str,
        params: &[Value],
        options: &InsertOptions,
    ) -> Result<Step> {
        if let Some(table) = &options.table {
            let id_column = options.id_column.as_deref().unwrap_or("id");
            verify_column(unit, name, dialect, table, id_column).await?;
        }
        let outcome = unit.query(sql, params).await?;
        let ids = read_generated_ids(
            name,
            &outcome,
            has_returning(sql, dialect),
            options.id_column.as_deref(),
        )?;
        let mut keys: Vec<String> = Vec::with_capacity(ids.len());
        for id in &ids {
            let key = id.key();
            if !keys.contains(&key) {
                keys.push(key);
            }
        }
        match self
            .catalog
            .map_all_if_absent(&keys, name, self.shards.len() > 1)
            .await?
        {
            Mapped::Here(added) => Ok(Step::Mapped(
                InsertResult {
                    generated_id: ids[0].clone(),
                    generated_ids: ids,
                    shard: name.to_string(),
                    rows: outcome.rows(),
                    rows_affected: outcome.rows_affected,
                },
                added,
            )),
            Mapped::Elsewhere { key, mapped_to } => {
                let rows = ids.len();
                let id = ids
                    .into_iter()
                    .find(|id| id.key() == key)
                    .unwrap_or(GeneratedId::Text(key));
                Ok(Step::Collision {
                    id,
                    mapped_to,
                    rows,
                })
            }
        }
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

    /// The one name of a (table, column) sequence, so that every spelling of one table shares
    /// one sequence: names folded to lower case (SQLite ignores the letter case of
    /// identifiers, PostgreSQL folds unquoted ones) and the default schema dropped (`main.`
    /// when a shard is SQLite, `public.` when a shard is PostgreSQL).
    fn sequence_identity(&self, table: &str, column: &str) -> (String, String) {
        let table = table.to_ascii_lowercase();
        let has = |dialect| self.shards.values().any(|shard| shard.dialect() == dialect);
        let table = match table.split_once('.') {
            Some(("main", name)) if has(Dialect::Sqlite) => name.to_string(),
            Some(("public", name)) if has(Dialect::Postgres) => name.to_string(),
            _ => table,
        };
        (table, column.to_ascii_lowercase())
    }

    /// Raises the (table, column) sequence past the largest integer id of `ids`.
    async fn observe_ids(&self, table: &str, column: &str, ids: &[GeneratedId]) -> Result<()> {
        let highest = ids
            .iter()
            .filter_map(|id| match id {
                GeneratedId::Integer(i) => Some(*i),
                GeneratedId::Text(_) => None,
            })
            .max();
        match highest {
            // Rounding to a double only matters past 2^53, where the sequence stops anyway.
            Some(highest) => self.observe_id(table, column, highest as f64).await,
            None => Ok(()),
        }
    }

    /// Raises the (table, column) sequence past a numeric id the router saw (IndexedDB's
    /// "possibly update the key generator": floor(min(id, 2^53)) + 1), in the catalog and in
    /// this process's leased block.
    async fn observe_id(&self, table: &str, column: &str, id: f64) -> Result<()> {
        if id.is_nan() || id < 1.0 {
            return Ok(());
        }
        let (table, column) = self.sequence_identity(table, column);
        let (table, column) = (table.as_str(), column.as_str());
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
        let (table, column) = self.sequence_identity(table, column);
        let (table, column) = (table.as_str(), column.as_str());
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

    /// MAX(column) over every shard, plus one; 1 when every shard is empty or holds only
    /// values below 1; at most 2^53 + 1.
    async fn cross_shard_next(&self, table: &str, column: &str) -> Result<u64> {
        let mut max = 0i64;
        for (name, shard) in &self.shards {
            if let Some(shard_max) = shard_maximum(name, shard, table, column).await? {
                max = max.max(shard_max);
            }
        }
        // Clamped to [0, 2^53], so the conversion is exact.
        Ok(max.clamp(0, MAX_ID as i64) as u64 + 1)
    }

    /// Writes a row under `key`: `INSERT INTO table (columns…) VALUES (…)` with the object's
    /// fields in order (`DEFAULT VALUES` for an empty object), on the key's shard; an unmapped
    /// key is placed with the strategy and mapped (seed 004, "insertInto(String(id), …)").
    /// Every numeric field, and every string field holding an integer (`"5"`), raises the
    /// (table, field) sequence past it; the INSERT runs in a
    /// transaction on the shard that commits after that, so an error leaves no row. Returns
    /// the shard.
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
        // One unit: the row is kept only when the sequences saw its ids, so a reported
        // failure leaves nothing on the shard.
        let mut unit = shard.begin().await?;
        let written = async {
            unit.query(&sql, &params).await?;
            for (column, value) in columns.iter().zip(values.values()) {
                // A number, or an integer written as a string (how an id past 2^53 is passed
                // exactly; how a text id column holds its integers).
                let seen = match value {
                    Value::Number(n) => Some(*n),
                    Value::String(text) => {
                        text.to_string_lossy().parse::<i64>().ok().map(|i| i as f64)
                    }
                    _ => None,
                };
                if let Some(id) = seen {
                    self.observe_id(table, column, id).await?;
                }
            }
            Ok(())
        }
        .await;
        match written {
            Ok(()) => unit.commit().await?,
            Err(error) => {
                // A failed rollback still keeps nothing: the unit closes its connection.
                let _ = unit.rollback().await;
                return Err(error);
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
        Ok(self
            .query_routed(key, sql, params)
            .await?
            .and_then(first_row))
    }

    /// What `sql` returns on `key`'s shard, integers exact; `None` when the key is unmapped.
    pub(crate) async fn query_routed(
        &self,
        key: &str,
        sql: &str,
        params: &[Value],
    ) -> Result<Option<Outcome>> {
        match self.route_read(key).await? {
            Some(shard) => Ok(Some(shard.query(sql, params).await?)),
            None => Ok(None),
        }
    }

    /// What `sql` returns on the named shard, integers exact.
    pub(crate) async fn query_shard(
        &self,
        shard: &str,
        sql: &str,
        params: &[Value],
    ) -> Result<Outcome> {
        self.shard(shard)?.query(sql, params).await
    }

    /// What `sql` returns on every shard, in configuration order, integers exact.
    pub(crate) async fn query_all_shards(
        &self,
        sql: &str,
        params: &[Value],
    ) -> Result<Vec<Outcome>> {
        if self.shards.is_empty() {
            return Err(Error::NoShards);
        }
        let mut outcomes = Vec::with_capacity(self.shards.len());
        for shard in self.shards.values() {
            outcomes.push(shard.query(sql, params).await?);
        }
        Ok(outcomes)
    }

    /// Every row `sql` returns on `key`'s shard; empty when the key is unmapped (no mapping is
    /// written).
    ///
    /// # Errors
    /// As [`Router::first`].
    pub async fn all(&self, key: &str, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        Ok(self
            .query_routed(key, sql, params)
            .await?
            .map(|outcome| outcome.rows())
            .unwrap_or_default())
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
        Ok(first_row(self.query_shard(shard, sql, params).await?))
    }

    /// Every row `sql` returns on the named shard.
    ///
    /// # Errors
    /// As [`Router::first_shard`].
    pub async fn all_shard(&self, shard: &str, sql: &str, params: &[Value]) -> Result<Vec<Row>> {
        Ok(self.query_shard(shard, sql, params).await?.rows())
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
        Ok(self
            .query_all_shards(sql, params)
            .await?
            .iter()
            .flat_map(Outcome::rows)
            .collect())
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
    outcome.rows().into_iter().next()
}

/// The largest value of `column` in `table` on one shard, rounded down to an integer; `None`
/// for an empty table or a column of NULLs.
///
/// Numbers compare as numbers. A column holding text (a SQLite TEXT value, a PostgreSQL
/// `text`/`varchar` column) is compared numerically when every value is an integer written in
/// decimal digits (an optional `-` first); otherwise it has no numeric maximum. Never a text
/// comparison, where `'99'` sorts after `'500'`.
///
/// # Errors
/// [`Error::QueryFailed`] naming the column when a value is not an integer (text) or not a
/// number (another type), or the query fails.
async fn shard_maximum(
    name: &str,
    shard: &Shard,
    table: &str,
    column: &str,
) -> Result<Option<i64>> {
    let dialect = shard.dialect();
    let (t, c) = (
        quote_identifier(table, dialect),
        quote_identifier(column, dialect),
    );
    let not_a_number = |what: &str| {
        Error::query(
            name,
            format!("MAX({column}) of {table}: the column {column} holds {what}, so it has no numeric maximum"),
        )
    };
    let outcome = shard
        .query(&format!("SELECT MAX({c}) AS max_id FROM {t}"), &[])
        .await?;
    let cell = outcome.cells.first().and_then(|row| row.first()).cloned();
    let cell = match cell {
        Some(Cell::Other(Value::String(_))) => {
            // Text sorts after every number (SQLite) or the whole column is text
            // (PostgreSQL): take the maximum over the integer texts, refusing any other text.
            let integer_text = match dialect {
                Dialect::Sqlite => format!(
                    "(typeof({c}) = 'text' AND ((({c}) GLOB '[0-9]*' AND ({c}) NOT GLOB '*[^0-9]*') \
                     OR (({c}) GLOB '-[0-9]*' AND substr({c}, 2) NOT GLOB '*[^0-9]*')))"
                ),
                Dialect::Postgres => format!("(({c})::text ~ '^-?[0-9]+$')"),
            };
            let numeric = match dialect {
                Dialect::Sqlite => format!(
                    "CASE WHEN {integer_text} THEN CAST({c} AS INTEGER) \
                     WHEN typeof({c}) IN ('integer', 'real') THEN {c} END"
                ),
                Dialect::Postgres => {
                    format!("CASE WHEN {integer_text} THEN ({c})::text::numeric END")
                }
            };
            let sql = format!(
                "SELECT MAX({numeric}) AS max_id, \
                 COUNT(CASE WHEN {c} IS NOT NULL AND NOT ({numeric}) IS NOT NULL THEN 1 END) AS not_integer \
                 FROM {t}"
            );
            let outcome = shard.query(&sql, &[]).await?;
            let row = outcome.cells.first();
            if let Some(Cell::Integer(n)) = row.and_then(|r| r.get(1)) {
                if *n > 0 {
                    return Err(not_a_number(&format!("{n} value(s) that are not integers")));
                }
            }
            row.and_then(|r| r.first()).cloned()
        }
        other => other,
    };
    match cell {
        None | Some(Cell::Other(Value::Null)) => Ok(None),
        Some(Cell::Integer(i)) => Ok(Some(i)),
        Some(Cell::Numeric(d)) => Ok(Some(d.floor().to_i64().unwrap_or(
            if d.is_sign_negative() {
                i64::MIN
            } else {
                i64::MAX
            },
        ))),
        // `as` saturates, and every double at or past 2^63 is past the id limit anyway.
        Some(Cell::Other(Value::Number(n))) if !n.is_nan() => Ok(Some(n.floor() as i64)),
        Some(Cell::Other(other)) => Err(not_a_number(&crate::text::to_text(&other))),
    }
}

/// Where an insert's unit stands once the statement ran and its ids were read.
enum Step {
    /// Every id is mapped to the shard; the keys this insert mapped (to undo if the commit
    /// fails).
    Mapped(InsertResult, Vec<String>),
    /// `id` is mapped to `mapped_to`, another shard; nothing was mapped. `rows`: how many
    /// rows the statement wrote.
    Collision {
        id: GeneratedId,
        mapped_to: String,
        rows: usize,
    },
}

/// Checks, on the unit's connection, that `table` has a column `column` (as the backend
/// resolves the unquoted names).
///
/// # Errors
/// [`Error::InvalidIdentifier`] naming the table and column when there is no such column
/// (or table); [`Error::QueryFailed`] when the check itself fails.
async fn verify_column(
    unit: &mut Unit,
    shard: &str,
    dialect: Dialect,
    table: &str,
    column: &str,
) -> Result<()> {
    let (sql, params) = match dialect {
        Dialect::Sqlite => {
            let (schema, name) = table.rsplit_once('.').unwrap_or(("main", table));
            (
                "SELECT 1 FROM pragma_table_info(?, ?) WHERE name = ? COLLATE NOCASE",
                vec![Value::from(name), Value::from(schema), Value::from(column)],
            )
        }
        Dialect::Postgres => (
            "SELECT 1 FROM pg_attribute WHERE attrelid = to_regclass(?) \
             AND attname = ? AND attnum > 0 AND NOT attisdropped",
            vec![
                Value::from(quote_identifier(table, dialect)),
                Value::from(column.to_ascii_lowercase()),
            ],
        ),
    };
    let found = unit.query(sql, &params).await?;
    if found.cells.is_empty() {
        return Err(Error::InvalidIdentifier {
            identifier: column.to_string(),
            reason: format!("table {table} on shard {shard} has no column {column}"),
        });
    }
    Ok(())
}
