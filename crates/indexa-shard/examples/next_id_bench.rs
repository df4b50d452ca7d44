//! Throughput of `next_id`, in ids per second, on a SQLite catalog with two SQLite shards and,
//! when `INDEXA_TEST_PG_URL` is set, on a PostgreSQL catalog with two PostgreSQL shards:
//!
//! - per-call coordinator (`lease = 1`): one catalog call per id;
//! - leased blocks (`lease = 100`): one catalog call per 100 ids;
//! - the model without a lease and with a MAX read: a MAX query on each of the N shards plus
//!   one coordinator call per id.
//!
//! ```text
//! cargo run --release -p indexa-shard --example next_id_bench [-- IDS_PER_MODE]
//! ```
//!
//! The PostgreSQL run creates three databases on the server (see `scripts/pg-test-cluster.sh`).

use std::time::Instant;

use indexa_shard::{Config, NextIdOptions, Router};

const SHARDS: usize = 2;
const ROWS_PER_SHARD: usize = 1000;

#[derive(Clone, Copy)]
enum Mode {
    PerCall,
    Leased,
    MaxPlusCoordinator,
}

impl Mode {
    fn label(self) -> &'static str {
        match self {
            Mode::PerCall => "per-call coordinator (lease 1)",
            Mode::Leased => "leased blocks (lease 100)",
            Mode::MaxPlusCoordinator => "N MAX queries + 1 coordinator call",
        }
    }
}

fn config_text(catalog: &str, shards: &[String], coordinator: bool, lease: u64) -> String {
    let mut text = format!(
        "[catalog]\nurl = \"{catalog}\"\ncoordinator = {coordinator}\nlease = {lease}\n[shards]\n"
    );
    for (i, url) in shards.iter().enumerate() {
        text.push_str(&format!("shard{i} = \"{url}\"\n"));
    }
    text
}

async fn open(text: &str, dir: &std::path::Path) -> Result<Router, indexa_shard::Error> {
    Router::open(&Config::from_toml(text, dir)?).await
}

/// Ids per second for one mode.
async fn measure(
    mode: Mode,
    catalog: &str,
    shards: &[String],
    dir: &std::path::Path,
    ids: usize,
) -> Result<f64, indexa_shard::Error> {
    let table = match mode {
        Mode::PerCall => "tickets_per_call",
        Mode::Leased => "tickets_leased",
        Mode::MaxPlusCoordinator => "tickets_max",
    };
    let lease = if matches!(mode, Mode::Leased) { 100 } else { 1 };
    let coordinated = open(&config_text(catalog, shards, true, lease), dir).await?;
    let plain = open(&config_text(catalog, shards, false, 1), dir).await?;
    coordinated
        .exec_all(&format!("CREATE TABLE {table} (id BIGINT PRIMARY KEY)"))
        .await?;
    for (i, name) in coordinated.shard_names().enumerate() {
        let first = i * ROWS_PER_SHARD + 1;
        coordinated
            .run_shard(
                name,
                &format!(
                    "INSERT INTO {table} (id) SELECT {first} + n FROM (WITH RECURSIVE c(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM c WHERE n < {}) SELECT n FROM c) AS s",
                    ROWS_PER_SHARD - 1
                ),
                &[],
            )
            .await?;
    }
    let options = NextIdOptions::default();
    // The first call seeds the sequence; it is not part of the measurement.
    coordinated.next_id(table, &options).await?;
    let start = Instant::now();
    for _ in 0..ids {
        if matches!(mode, Mode::MaxPlusCoordinator) {
            plain.next_id(table, &options).await?;
        }
        coordinated.next_id(table, &options).await?;
    }
    Ok(ids as f64 / start.elapsed().as_secs_f64())
}

async fn pg_database(base: &str, name: &str) -> Result<String, tokio_postgres::Error> {
    let (client, connection) =
        tokio_postgres::connect(&format!("{base}/postgres"), tokio_postgres::NoTls).await?;
    let task = tokio::spawn(connection);
    // CREATE DATABASE cannot share a multi-statement string (an implicit transaction).
    client
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name}"))
        .await?;
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .await?;
    drop(client);
    let _ = task.await;
    Ok(format!("{base}/{name}"))
}

async fn run(ids: usize) -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let mut setups = vec![(
        "SQLite".to_string(),
        "sqlite:catalog.db".to_string(),
        (0..SHARDS)
            .map(|i| format!("sqlite:shard{i}.db"))
            .collect::<Vec<_>>(),
    )];
    match std::env::var("INDEXA_TEST_PG_URL") {
        Ok(base) if !base.is_empty() => {
            let base = base.trim_end_matches('/');
            let catalog = pg_database(base, "indexa_bench_catalog").await?;
            let mut shards = Vec::new();
            for i in 0..SHARDS {
                shards.push(pg_database(base, &format!("indexa_bench_shard{i}")).await?);
            }
            setups.push(("PostgreSQL".to_string(), catalog, shards));
        }
        _ => eprintln!(
            "INDEXA_TEST_PG_URL is not set: PostgreSQL skipped (eval \"$(scripts/pg-test-cluster.sh start)\")"
        ),
    }
    println!("next_id throughput, {ids} ids per mode, {SHARDS} shards of {ROWS_PER_SHARD} rows, one task");
    println!(
        "{:<11} {:<36} {:>12} {:>18}",
        "catalog", "mode", "ids/s", "vs per-call"
    );
    for (label, catalog, shards) in &setups {
        let case_dir = dir.path().join(label);
        std::fs::create_dir_all(&case_dir)?;
        let mut per_call = None;
        for mode in [Mode::PerCall, Mode::Leased, Mode::MaxPlusCoordinator] {
            let rate = measure(mode, catalog, shards, &case_dir, ids).await?;
            let base = *per_call.get_or_insert(rate);
            println!(
                "{:<11} {:<36} {:>12.0} {:>17.2}x",
                label,
                mode.label(),
                rate,
                rate / base
            );
        }
    }
    Ok(())
}

fn main() -> std::process::ExitCode {
    let ids = match std::env::args().nth(1).map(|a| a.parse::<usize>()) {
        None => 5000,
        Some(Ok(n)) if n > 0 => n,
        Some(_) => {
            eprintln!("usage: next_id_bench [IDS_PER_MODE]");
            return std::process::ExitCode::from(2);
        }
    };
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return std::process::ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(ids)) {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("benchmark failed: {e}");
            std::process::ExitCode::FAILURE
        }
    }
}
