//! Cost of cursors that read only a few records, and of cursor jumps: on 20,000 records with
//! an index over `g` (record number modulo 1,000), opens 10,000 index cursors on one index
//! key each and reads their first 3 records, then walks a store cursor with
//! `continue(key)` to every second key. Each of these steps runs a statement with new bound
//! values (a new range, a new start, a new `LIMIT`), so it shows what a step costs beyond
//! SQLite's own seek. Prints microseconds per cursor and per jump, the fastest of 5 runs.
//!
//! ```text
//! cargo run --release -p indexa-bench --bin short_cursors
//! ```

use std::time::Instant;

use indexa::{parse_value, CursorDirection, Durability, Factory, Key, KeyPath, KeyRange};
use indexa::{Database, TransactionMode};

/// Records in the store.
const RECORDS: u64 = 20_000;
/// Distinct index keys: index key `g` = record number modulo this.
const GROUPS: u64 = 1_000;
/// Cursors opened per run of the first workload.
const CURSORS: u64 = 10_000;
/// Records each of those cursors reads.
const READ_PER_CURSOR: u64 = 3;
/// Runs per figure; the fastest is shown (the machine is shared, so slower runs are noise).
const RUNS: usize = 5;

fn main() -> indexa::Result<()> {
    let factory = Factory::temporary()?;
    let db = factory.open("short_cursors", Some(1), |tx, _, _| {
        let s = tx.create_object_store("s", None, false)?;
        s.create_index("by_g", KeyPath::parse("g")?, false, false)?;
        Ok(())
    })?;
    let tx =
        db.transaction_with_durability(&["s"], TransactionMode::ReadWrite, Durability::Relaxed)?;
    let s = tx.object_store("s")?;
    for i in 0..RECORDS {
        let record = parse_value(&format!(r#"{{"g":{},"name":"city {i}"}}"#, i % GROUPS))?;
        s.put(record, Some(Key::Number(i as f64)))?;
    }
    tx.commit()?;
    let mut cursors = f64::INFINITY;
    let mut jumps = f64::INFINITY;
    for _ in 0..RUNS {
        cursors = cursors.min(short_index_cursors(&db)?);
        jumps = jumps.min(jumps_forward(&db)?);
    }
    println!("| workload | µs |");
    println!("|---|---:|");
    println!(
        "| index cursor on one key, first {READ_PER_CURSOR} records (per cursor) | {cursors:.2} |"
    );
    println!("| store cursor, `continue(key)` to every second key (per jump) | {jumps:.2} |");
    Ok(())
}

/// Opens [`CURSORS`] index cursors, each on one index key, reads [`READ_PER_CURSOR`] records
/// with each; returns microseconds per cursor.
fn short_index_cursors(db: &Database) -> indexa::Result<f64> {
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly)?;
    let index = tx.object_store("s")?.index("by_g")?;
    let started = Instant::now();
    let mut read = 0u64;
    for i in 0..CURSORS {
        let range = KeyRange::only(Key::Number((i % GROUPS) as f64));
        let mut cursor = index.open_cursor(Some(range), CursorDirection::Next)?;
        for _ in 0..READ_PER_CURSOR {
            if cursor.value()?.is_some() {
                read += 1;
                cursor.continue_key(&tx, None)?;
            }
        }
    }
    let elapsed = started.elapsed();
    assert_eq!(
        read,
        CURSORS * READ_PER_CURSOR,
        "every cursor read its records"
    );
    tx.commit()?;
    Ok(elapsed.as_secs_f64() * 1e6 / CURSORS as f64)
}

/// Walks a store cursor with `continue(key)` to keys 2, 4, 6, …; returns microseconds per
/// jump.
fn jumps_forward(db: &Database) -> indexa::Result<f64> {
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly)?;
    let store = tx.object_store("s")?;
    let started = Instant::now();
    let mut cursor = store.open_cursor(None, CursorDirection::Next)?;
    let mut jumps = 0u64;
    while cursor.value()?.is_some() {
        jumps += 1;
        cursor.continue_key(&tx, Some(&Key::Number((jumps * 2) as f64)))?;
    }
    let elapsed = started.elapsed();
    assert_eq!(jumps, RECORDS / 2, "the cursor met every second key");
    tx.commit()?;
    Ok(elapsed.as_secs_f64() * 1e6 / jumps as f64)
}
