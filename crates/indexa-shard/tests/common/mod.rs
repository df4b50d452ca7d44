//! Test clusters: SQLite files in a temporary directory, or databases on the PostgreSQL server
//! `INDEXA_TEST_PG_URL` points at (see `scripts/pg-test-cluster.sh`).

#![allow(dead_code)]

use std::sync::atomic::{AtomicUsize, Ordering};

use indexa::{Object, Value};
use indexa_shard::{Config, GeneratedId, Router, Row};
use tempfile::TempDir;

pub mod scenarios;

/// The acceptance scenarios that run the same on every backend: one `#[tokio::test]` per
/// scenario of [`scenarios`], on `Kind::$kind` (use with `#[macro_use] mod common;`).
#[allow(unused_macros)] // cli.rs and reliability.rs share this module without it
macro_rules! scenarios_on {
    ($kind:ident) => {
        scenarios_on!(@each $kind;
            collision_with_table_removes_the_row,
            collision_without_table_keeps_the_row,
            collision_cleanup_removes_only_its_own_row,
            cleanup_column_is_verified_before_insert,
            ids_above_two_pow_53_are_exact,
            multi_row_insert_checks_every_id,
            failure_after_insert_keeps_nothing,
            every_spelling_shares_one_sequence,
            text_column_maximum_is_numeric,
            concurrent_inserts_of_one_id_keep_one_row,
            same_shard_is_not_a_collision,
            one_shard_has_no_check,
            returning_uuid_with_id_column,
            missing_id_column_is_unavailable,
            id_aliases_are_read,
            next_id_without_coordinator,
            next_id_with_coordinator,
            next_id_min_on_fresh_sequence,
            seeding_fails_with_a_failing_shard,
            routed_reads_and_writes,
            unknown_shard,
            invalid_identifier_before_insert,
            values_round_trip,
            round_robin_rotates,
        );
        scenarios_on!(@lease $kind;
            seen_ids_push_the_sequence_lease_1 = seen_ids_push_the_sequence(1),
            seen_ids_push_the_sequence_lease_100 = seen_ids_push_the_sequence(100),
            concurrent_next_id_lease_1 = concurrent_next_id_is_unique(1),
            concurrent_next_id_lease_100 = concurrent_next_id_is_unique(100),
        );
    };
    (@each $kind:ident; $($name:ident),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                common::scenarios::$name(common::Kind::$kind).await;
            }
        )*
    };
    (@lease $kind:ident; $($name:ident = $scenario:ident($lease:expr)),* $(,)?) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                common::scenarios::$scenario(common::Kind::$kind, $lease).await;
            }
        )*
    };
}

/// Which kind of database the shards (and, for `Postgres`, the catalog) are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Sqlite,
    Postgres,
}

/// The base URL of the test server, or `None` when PostgreSQL tests are skipped on purpose
/// (`INDEXA_SKIP_PG=1`). Without either variable the test fails: a PostgreSQL test must not
/// pass without a server.
pub fn pg_base() -> Option<String> {
    if std::env::var("INDEXA_SKIP_PG").as_deref() == Ok("1") {
        eprintln!("skipped: INDEXA_SKIP_PG=1");
        return None;
    }
    match std::env::var("INDEXA_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url.trim_end_matches('/').to_string()),
        _ => panic!(
            "INDEXA_TEST_PG_URL is not set: run `eval \"$(scripts/pg-test-cluster.sh start)\"` \
             first (or set INDEXA_SKIP_PG=1 to skip the PostgreSQL tests)"
        ),
    }
}

static DATABASES: AtomicUsize = AtomicUsize::new(0);

/// Creates a fresh database on the test server and returns its URL.
pub async fn pg_database(base: &str, label: &str) -> String {
    let name = format!(
        "t{}_{}_{}_{:08x}",
        std::process::id(),
        DATABASES.fetch_add(1, Ordering::SeqCst),
        label.replace('-', "_"),
        rand_suffix()
    );
    let (client, connection) =
        tokio_postgres::connect(&format!("{base}/postgres"), tokio_postgres::NoTls)
            .await
            .expect("connect to the test server");
    let task = tokio::spawn(connection);
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await
        .expect("create a test database");
    drop(client);
    let _ = task.await;
    format!("{base}/{name}")
}

/// PostgreSQL test databases (by URL), dropped with this value so that a run leaves none.
#[derive(Default)]
pub struct Databases(pub Vec<String>);

impl Drop for Databases {
    fn drop(&mut self) {
        let urls = std::mem::take(&mut self.0);
        if urls.is_empty() {
            return;
        }
        // Drop runs inside a test's tokio runtime, which must not block: the work gets a
        // thread and a runtime of its own.
        let dropper = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                for url in urls {
                    let Some((base, name)) = url.rsplit_once('/') else {
                        continue;
                    };
                    let admin = format!("{base}/postgres");
                    // A server a test stopped has nothing left to drop.
                    let Ok((client, connection)) =
                        tokio_postgres::connect(&admin, tokio_postgres::NoTls).await
                    else {
                        continue;
                    };
                    let task = tokio::spawn(connection);
                    let _ = client
                        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                        .await;
                    drop(client);
                    let _ = task.await;
                }
            });
        });
        let _ = dropper.join();
    }
}

fn rand_suffix() -> u32 {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    nanos ^ std::process::id().rotate_left(16)
}

/// A router over test shards, with the directory its files live in.
pub struct Cluster {
    pub router: Router,
    pub kind: Kind,
    pub dir: TempDir,
    pub config_text: String,
    pub shard_urls: Vec<String>,
    pub catalog_url: String,
    /// The PostgreSQL databases of the shards and the catalog, dropped after the router.
    pub databases: Databases,
}

/// Options of a test cluster.
#[derive(Debug, Clone)]
pub struct Setup {
    pub shards: usize,
    pub coordinator: bool,
    pub lease: u64,
    pub strategy: &'static str,
}

impl Default for Setup {
    fn default() -> Self {
        Setup {
            shards: 2,
            coordinator: false,
            lease: 1,
            strategy: "hash",
        }
    }
}

pub const SHARD_NAMES: [&str; 4] = ["db-a", "db-b", "db-c", "db-d"];

/// Builds a cluster of `kind`; `None` when PostgreSQL tests are skipped.
pub async fn cluster(kind: Kind, setup: Setup) -> Option<Cluster> {
    let dir = tempfile::tempdir().expect("temporary directory");
    let (shard_urls, catalog_url) = match kind {
        Kind::Sqlite => (
            (0..setup.shards)
                .map(|i| format!("sqlite:{}.db", SHARD_NAMES[i]))
                .collect::<Vec<_>>(),
            "sqlite:catalog.db".to_string(),
        ),
        Kind::Postgres => {
            let base = pg_base()?;
            let mut urls = Vec::new();
            for name in SHARD_NAMES.iter().take(setup.shards) {
                urls.push(pg_database(&base, name).await);
            }
            (urls, pg_database(&base, "catalog").await)
        }
    };
    let mut text = format!(
        "strategy = \"{}\"\n[catalog]\nurl = \"{catalog_url}\"\ncoordinator = {}\nlease = {}\n[shards]\n",
        setup.strategy, setup.coordinator, setup.lease
    );
    for (name, url) in SHARD_NAMES.iter().zip(&shard_urls) {
        text.push_str(&format!("{name} = \"{url}\"\n"));
    }
    let router = open(&text, &dir).await;
    let databases = match kind {
        Kind::Sqlite => Databases::default(),
        Kind::Postgres => Databases(shard_urls.iter().chain([&catalog_url]).cloned().collect()),
    };
    Some(Cluster {
        router,
        kind,
        dir,
        config_text: text,
        shard_urls,
        catalog_url,
        databases,
    })
}

pub async fn open(text: &str, dir: &TempDir) -> Router {
    let config = Config::from_toml(text, dir.path()).expect("valid test configuration");
    Router::open(&config).await.expect("router opens")
}

impl Cluster {
    /// Another router on the same shards and catalog with other settings.
    pub async fn reopen(&self, edit: impl FnOnce(&str) -> String) -> Router {
        open(&edit(&self.config_text), &self.dir).await
    }

    /// Writes the configuration to a file in the cluster's directory and returns its path.
    pub fn config_file(&self) -> std::path::PathBuf {
        let path = self.dir.path().join("shards.toml");
        std::fs::write(&path, &self.config_text).expect("write config");
        path
    }

    /// The seed's `auto_users` table on every shard.
    pub async fn create_auto_users(&self) {
        let ddl = match self.kind {
            Kind::Sqlite => {
                "CREATE TABLE auto_users (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, email TEXT UNIQUE, created_at INTEGER)"
            }
            Kind::Postgres => {
                "CREATE TABLE auto_users (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, name VARCHAR(255) NOT NULL, email VARCHAR(255) UNIQUE, created_at BIGINT)"
            }
        };
        self.router.exec_all(ddl).await.expect("create auto_users");
    }

    /// The seed's insert into `auto_users`: plain on SQLite (the rowid gives the id), with
    /// `RETURNING id` on PostgreSQL.
    pub fn insert_user_sql(&self) -> &'static str {
        match self.kind {
            Kind::Sqlite => "INSERT INTO auto_users (name) VALUES (?)",
            Kind::Postgres => "INSERT INTO auto_users (name) VALUES (?) RETURNING id",
        }
    }

    /// The names in `auto_users` on one shard, by id.
    pub async fn user_names(&self, shard: &str) -> Vec<Value> {
        self.router
            .all_shard(shard, "SELECT name FROM auto_users ORDER BY id", &[])
            .await
            .expect("read auto_users")
            .into_iter()
            .map(|row| field(&row, "name"))
            .collect()
    }
}

/// A row's field (Null when missing).
pub fn field(row: &Row, name: &str) -> Value {
    Value::Object(row.clone())
        .get(name)
        .cloned()
        .unwrap_or(Value::Null)
}

pub fn num(n: f64) -> Value {
    Value::Number(n)
}

/// An integer generated id.
pub fn int(i: i64) -> GeneratedId {
    GeneratedId::Integer(i)
}

/// A text generated id.
pub fn text(t: &str) -> GeneratedId {
    GeneratedId::Text(t.to_string())
}

pub fn s(text: &str) -> Value {
    Value::from(text)
}

pub fn obj(fields: &[(&str, Value)]) -> Object {
    fields
        .iter()
        .map(|(k, v)| ((*k).into(), v.clone()))
        .collect()
}
