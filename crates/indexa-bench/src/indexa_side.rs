//! The workloads run through Indexa's public API.

use std::path::Path;
use std::time::Instant;

use indexa::{
    CursorDirection, Database, Durability, Factory, Key, KeyPath, KeyRange, Query, TransactionMode,
};

use crate::data::{self, City};
use crate::report::{check, metric, wanted};

type Res<T> = indexa::Result<T>;

/// The factory the workloads run on: over `dir`, or with `INDEXA_BENCH_PG_URL` set on that
/// PostgreSQL database, with the database "bench" deleted first.
fn factory(dir: &Path) -> Res<Factory> {
    match std::env::var("INDEXA_BENCH_PG_URL") {
        Ok(url) => {
            let factory = Factory::open_url(&url)?;
            factory.delete_database("bench")?;
            Ok(factory)
        }
        Err(_) => Factory::open_dir(dir),
    }
}

/// Another factory over the databases [`factory`] made, as a second thread or process opens
/// them.
fn reopen(dir: &Path) -> Res<Factory> {
    match std::env::var("INDEXA_BENCH_PG_URL") {
        Ok(url) => Factory::open_url(&url),
        Err(_) => Factory::open_dir(dir),
    }
}

fn open_cities(dir: &Path) -> Res<Database> {
    let factory = factory(dir)?;
    factory.open("bench", Some(1), |tx, _, _| {
        let s = tx.create_object_store("cities", None, true)?;
        s.create_index("country", KeyPath::parse("country")?, false, false)?;
        s.create_index(
            "country_name",
            KeyPath::compound(&["country", "name"])?,
            false,
            false,
        )?;
        Ok(())
    })
}

/// Import, point reads, `[country, name]` range reads and cursor scans on `n` cities.
/// `scale_only`: import and point reads only.
pub fn cities(data: &Path, n: usize, scale_only: bool, rounds: usize, reads: usize) -> Res<()> {
    let cities = data::cities(data, n);
    let countries = data::countries(&cities);
    let dir = tempfile::tempdir().expect("temp dir");
    let db = open_cities(dir.path())?;

    let t = Instant::now();
    let tx = db.transaction(&["cities"], TransactionMode::ReadWrite)?;
    let store = tx.object_store("cities")?;
    for c in &cities {
        store.add_as(c, None)?;
    }
    tx.commit()?;
    metric("import", t.elapsed());
    drop(cities);

    let keys = data::read_keys(n, reads);
    for (name, typed) in [("get", false), ("get_typed", true)] {
        if !wanted(name) {
            continue;
        }
        let t = Instant::now();
        let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
        let store = tx.object_store("cities")?;
        let mut found = 0u64;
        for k in &keys {
            let key = Key::Number(f64::from(*k));
            found += if typed {
                store
                    .get_as::<City>(key)?
                    .map(std::hint::black_box)
                    .is_some()
            } else {
                store.get(key)?.is_some_and(|v| v.get("name").is_some())
            } as u64;
        }
        tx.commit()?;
        metric(name, t.elapsed());
        check(name, found);
    }
    if scale_only {
        return Ok(());
    }

    for (name, typed) in [("range", false), ("range_typed", true)] {
        if !wanted(name) {
            continue;
        }
        let t = Instant::now();
        let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
        let index = tx.object_store("cities")?.index("country_name")?;
        let mut got = 0u64;
        for _ in 0..rounds {
            for c in &countries {
                let range = KeyRange::bound(
                    Key::Array(vec![Key::from(c.as_str())]),
                    Key::Array(vec![Key::from(c.as_str()), Key::Array(vec![])]),
                    false,
                    false,
                )?;
                let query = Query::from(range).count(100);
                got += if typed {
                    index.get_all_as::<City>(query)?.len()
                } else {
                    index.get_all(query)?.len()
                } as u64;
            }
        }
        tx.commit()?;
        metric(name, t.elapsed());
        check(name, got);
    }

    for (name, direction) in [
        ("scan_fwd", CursorDirection::Next),
        ("scan_rev", CursorDirection::Prev),
    ] {
        if !wanted(name) {
            continue;
        }
        let t = Instant::now();
        let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
        let mut cursor = tx.object_store("cities")?.open_cursor(None, direction)?;
        let mut seen = 0u64;
        while let Some(v) = cursor.value()? {
            seen += v.get("country").is_some() as u64;
            cursor.continue_key(&tx, None)?;
        }
        tx.commit()?;
        metric(name, t.elapsed());
        check(name, seen);
    }

    if !wanted("scan_typed") {
        return Ok(());
    }
    let t = Instant::now();
    let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
    let mut cursor = tx
        .object_store("cities")?
        .open_cursor(None, CursorDirection::Next)?;
    let mut seen = 0u64;
    while let Some(c) = cursor.value_as::<City>()? {
        std::hint::black_box(c);
        seen += 1;
        cursor.continue_key(&tx, None)?;
    }
    tx.commit()?;
    metric("scan_typed", t.elapsed());
    check("scan_typed", seen);
    Ok(())
}

/// Import of `n` flights with out-of-line generated keys and an index on `delay`, then
/// `counts` counts over `delay` ranges.
pub fn flights(data: &Path, n: usize, counts: usize) -> Res<()> {
    let flights = data::flights(data, n);
    let dir = tempfile::tempdir().expect("temp dir");
    let factory = factory(dir.path())?;
    let db = factory.open("bench", Some(1), |tx, _, _| {
        let s = tx.create_object_store("flights", None, true)?;
        s.create_index("delay", KeyPath::parse("delay")?, false, false)?;
        Ok(())
    })?;

    let t = Instant::now();
    let tx = db.transaction(&["flights"], TransactionMode::ReadWrite)?;
    let store = tx.object_store("flights")?;
    for f in &flights {
        store.add_as(f, None)?;
    }
    tx.commit()?;
    metric("import", t.elapsed());

    let t = Instant::now();
    let tx = db.transaction(&["flights"], TransactionMode::ReadOnly)?;
    let index = tx.object_store("flights")?.index("delay")?;
    let mut total = 0u64;
    for (lo, hi) in data::delay_ranges(counts) {
        let range = KeyRange::bound(Key::Number(lo), Key::Number(hi), false, false)?;
        total += index.count(Some(range))?;
    }
    tx.commit()?;
    metric("count", t.elapsed());
    check("count", total);
    Ok(())
}

/// `n` readwrite transactions of one `add` each, with the given durability.
pub fn transactions(data: &Path, n: usize, strict: bool) -> Res<()> {
    let cities = data::cities(data, n);
    let dir = tempfile::tempdir().expect("temp dir");
    let factory = factory(dir.path())?;
    let db = factory.open("bench", Some(1), |tx, _, _| {
        tx.create_object_store("notes", None, true)?;
        Ok(())
    })?;
    let durability = if strict {
        Durability::Strict
    } else {
        Durability::Relaxed
    };
    let t = Instant::now();
    for c in &cities {
        let tx =
            db.transaction_with_durability(&["notes"], TransactionMode::ReadWrite, durability)?;
        tx.object_store("notes")?.add_as(c, None)?;
        tx.commit()?;
    }
    metric("txn", t.elapsed());
    let tx = db.transaction(&["notes"], TransactionMode::ReadOnly)?;
    check("txn", tx.object_store("notes")?.count(None)?);
    Ok(())
}

/// `threads` threads, each with its own connection, each running `ops` transactions on a
/// store of `n` cities: every tenth a relaxed readwrite `put` over an existing record, the
/// others a readonly `get` (see [`data::mixed_ops`]).
pub fn mixed(data: &Path, n: usize, threads: usize, ops: usize) -> Res<()> {
    let cities = data::cities(data, n);
    let dir = tempfile::tempdir().expect("temp dir");
    let db = open_cities(dir.path())?;
    let tx = db.transaction(&["cities"], TransactionMode::ReadWrite)?;
    let store = tx.object_store("cities")?;
    for c in &cities {
        store.add_as(c, None)?;
    }
    tx.commit()?;
    drop(db);

    let t = Instant::now();
    let found = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|thread| {
                let (dir, cities) = (dir.path(), &cities);
                s.spawn(move || -> Res<u64> {
                    let db = reopen(dir)?.open("bench", None, |_, _, _| Ok(()))?;
                    let mut found = 0u64;
                    for (k, write) in data::mixed_ops(n, thread, ops) {
                        let key = Key::Number(f64::from(k));
                        if write {
                            let tx = db.transaction_with_durability(
                                &["cities"],
                                TransactionMode::ReadWrite,
                                Durability::Relaxed,
                            )?;
                            let c = &cities[k as usize - 1];
                            tx.object_store("cities")?.put_as(c, Some(key))?;
                            tx.commit()?;
                        } else {
                            let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
                            found +=
                                tx.object_store("cities")?.get_as::<City>(key)?.is_some() as u64;
                            tx.commit()?;
                        }
                    }
                    Ok(found)
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| w.join().expect("worker thread"))
            .sum::<Res<u64>>()
    })?;
    metric("mixed", t.elapsed());
    check("mixed", found);
    Ok(())
}

fn open_notes(factory: &Factory) -> Res<Database> {
    factory.open("bench", Some(1), |tx, _, _| {
        tx.create_object_store("notes", None, true)?;
        Ok(())
    })
}

/// Makes the database the writer processes of [`write_notes`] fill (on PostgreSQL: the
/// factory of `INDEXA_BENCH_PG_URL`).
pub fn prepare_concurrent() -> Res<()> {
    let dir = tempfile::tempdir().expect("temp dir");
    open_notes(&factory(dir.path())?).map(drop)
}

/// One of several writer processes: `n` readwrite transactions of one `add` each (strict),
/// with generated keys.
pub fn write_notes(data: &Path, n: usize, writer: usize) -> Res<()> {
    let url =
        std::env::var("INDEXA_BENCH_PG_URL").expect("the writers share a PostgreSQL database");
    let cities = data::cities(data, n * (writer + 1));
    let db = open_notes(&Factory::open_url(&url)?)?;
    for c in &cities[n * writer..] {
        let tx = db.transaction(&["notes"], TransactionMode::ReadWrite)?;
        tx.object_store("notes")?.add_as(c, None)?;
        tx.commit()?;
    }
    Ok(())
}

/// After the writers: (records, distinct keys).
pub fn concurrent_result() -> Res<(u64, u64)> {
    let url =
        std::env::var("INDEXA_BENCH_PG_URL").expect("the writers share a PostgreSQL database");
    let db = open_notes(&Factory::open_url(&url)?)?;
    let tx = db.transaction(&["notes"], TransactionMode::ReadOnly)?;
    let store = tx.object_store("notes")?;
    // In key order, so a repeated key would be next to itself.
    let mut keys = store.get_all_keys(Query::all())?;
    keys.dedup();
    Ok((store.count(None)?, keys.len() as u64))
}
