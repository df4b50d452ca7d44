//! Cost per step of index cursors as the index grows: walks every entry of an index of
//! 10 k, 100 k and 1 M entries (ascending, descending, and ascending inside a key range) and
//! prints the time per step at each size, with its ratio to the 10 k figure. A step costs one
//! B-tree seek, so the figures stay flat.
//!
//! ```text
//! cargo run --release -p indexa-bench --bin index_cursor_scaling [-- SIZE…]
//! ```

use std::time::Instant;

use indexa::{
    parse_value, CursorDirection, Durability, Factory, Key, KeyPath, KeyRange, TransactionMode,
};

/// Index entries per record group: index key `g` = record number modulo this, so every index
/// key has many entries and the walk meets both new keys and new primary keys.
const GROUPS: u64 = 1_000;

/// Walks per figure; the fastest is shown (the machine is shared, so slower runs are noise).
const RUNS: usize = 3;

fn main() -> indexa::Result<()> {
    let sizes: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("sizes are whole numbers"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![10_000, 100_000, 1_000_000]
    } else {
        sizes
    };
    let factory = Factory::temporary()?;
    let db = factory.open("scaling", Some(1), |tx, _, _| {
        let s = tx.create_object_store("s", None, false)?;
        s.create_index("by_g", KeyPath::parse("g")?, false, false)?;
        Ok(())
    })?;
    println!("| entries | next (µs/step) | prev (µs/step) | next in a range (µs/step) | next vs 10 k | prev vs 10 k | range vs 10 k |");
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    let mut filled = 0u64;
    let mut first: Option<[f64; 3]> = None;
    for &size in &sizes {
        let tx = db.transaction_with_durability(
            &["s"],
            TransactionMode::ReadWrite,
            Durability::Relaxed,
        )?;
        let s = tx.object_store("s")?;
        for i in filled..size {
            let record = parse_value(&format!(r#"{{"g":{}}}"#, i % GROUPS))?;
            s.put(record, Some(Key::Number(i as f64)))?;
        }
        tx.commit()?;
        filled = size;
        let all = best_of(RUNS, || walk(&db, None, CursorDirection::Next, size))?;
        let back = best_of(RUNS, || walk(&db, None, CursorDirection::Prev, size))?;
        // Index keys 100 to 899: 80 % of the entries, after a range start the walk must pass.
        let inside = best_of(RUNS, || {
            let range = KeyRange::bound(Key::Number(100.0), Key::Number(899.0), false, false)?;
            walk(&db, Some(range), CursorDirection::Next, size / 10 * 8)
        })?;
        let now = [all, back, inside];
        let base = *first.get_or_insert(now);
        println!(
            "| {size} | {:.2} | {:.2} | {:.2} | {:.2}× | {:.2}× | {:.2}× |",
            now[0],
            now[1],
            now[2],
            now[0] / base[0],
            now[1] / base[1],
            now[2] / base[2]
        );
    }
    Ok(())
}

/// The smallest of `runs` results of `f`.
fn best_of(runs: usize, mut f: impl FnMut() -> indexa::Result<f64>) -> indexa::Result<f64> {
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        best = best.min(f()?);
    }
    Ok(best)
}

/// Walks an index cursor to its end and returns the microseconds per step; checks that it
/// met `expected` entries.
fn walk(
    db: &indexa::Database,
    range: Option<KeyRange>,
    direction: CursorDirection,
    expected: u64,
) -> indexa::Result<f64> {
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly)?;
    let index = tx.object_store("s")?.index("by_g")?;
    let started = Instant::now();
    let mut cursor = index.open_cursor(range, direction)?;
    let mut steps = 0u64;
    while !cursor.is_done() {
        steps += 1;
        cursor.continue_key(&tx, None)?;
    }
    let elapsed = started.elapsed();
    assert_eq!(steps, expected, "the cursor met every entry once");
    tx.commit()?;
    Ok(elapsed.as_secs_f64() * 1e6 / steps as f64)
}
