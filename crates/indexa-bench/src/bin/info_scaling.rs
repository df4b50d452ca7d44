//! Cost per index of describing a database with many indexes, as `indexa info` does: one
//! store with 1 k, 5 k and 10 k indexes (creating them grows with the square of their number,
//! each index being a SQLite table: `docs/format.md`, "Index tables"); the description reads each index's name, key
//! path, unique and multiEntry flags through the public API. Prints the time per index at
//! each size and its ratio to the smallest size; linear work keeps the ratio near 1.
//!
//! ```text
//! cargo run --release -p indexa-bench --bin info_scaling [-- SIZE…]
//! ```

use std::time::Instant;

use indexa::{Durability, Factory, KeyPath, TransactionMode};

fn main() -> indexa::Result<()> {
    let sizes: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("sizes are whole numbers"))
        .collect();
    let sizes = if sizes.is_empty() {
        vec![1_000, 5_000, 10_000]
    } else {
        sizes
    };
    let factory = Factory::temporary()?;
    println!("| indexes | describe (µs/index) | vs smallest |");
    println!("|---:|---:|---:|");
    let mut first = None;
    for (version, &size) in (1u64..).zip(&sizes) {
        let db = factory.open("info", Some(version), |tx, _, _| {
            let store = match tx.object_store("s") {
                Ok(s) => s,
                Err(_) => tx.create_object_store("s", None, false)?,
            };
            for i in store.index_names()?.len()..size {
                store.create_index(format!("ix{i:06}"), KeyPath::parse("a")?, false, false)?;
            }
            Ok(())
        })?;
        let mut best = f64::INFINITY;
        for _ in 0..3 {
            let started = Instant::now();
            let described = describe(&db)?;
            assert_eq!(described, size, "every index described once");
            best = best.min(started.elapsed().as_secs_f64() * 1e6 / size as f64);
        }
        let base = *first.get_or_insert(best);
        println!("| {size} | {best:.2} | {:.2}× |", best / base);
        db.close();
    }
    Ok(())
}

/// Reads what `indexa info` shows of every index; returns how many there were.
fn describe(db: &indexa::Database) -> indexa::Result<usize> {
    let tx = db.transaction_over_all_stores(TransactionMode::ReadOnly, Durability::Default)?;
    let mut described = 0;
    for name in tx.object_store_names() {
        let store = tx.object_store(&name)?;
        for ix_name in store.index_names()? {
            let ix = store.index(&ix_name)?;
            let shown = (ix.key_path()?, ix.unique()?, ix.multi_entry()?);
            std::hint::black_box(shown);
            described += 1;
        }
    }
    tx.commit()?;
    Ok(described)
}
