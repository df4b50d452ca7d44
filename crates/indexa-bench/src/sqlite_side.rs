//! The same logical work on raw SQLite through the same rusqlite build: hand-written tables
//! with one column per field, the secondary indexes as SQLite indexes, and the pragmas Indexa
//! uses (WAL; `synchronous=FULL` for strict durability, `NORMAL` for relaxed).

use std::path::Path;
use std::time::Instant;

use rusqlite::{params, Connection};

use crate::data::{self, City};
use crate::report::{check, metric, wanted};

type Res<T> = rusqlite::Result<T>;

fn connect(dir: &Path) -> Res<Connection> {
    let conn = Connection::open(dir.join("bench.sqlite"))?;
    conn.query_row("PRAGMA journal_mode=WAL", [], |_| Ok(()))?;
    conn.execute_batch("PRAGMA cache_size=-65536; PRAGMA synchronous=FULL;")?;
    Ok(conn)
}

fn city_row(r: &rusqlite::Row<'_>) -> Res<City> {
    Ok(City {
        name: r.get(0)?,
        lat: r.get(1)?,
        lng: r.get(2)?,
        country: r.get(3)?,
        admin1: r.get(4)?,
        admin2: r.get(5)?,
    })
}

const CITY_TABLE: &str = "
CREATE TABLE cities (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL, lat TEXT NOT NULL, lng TEXT NOT NULL,
    country TEXT NOT NULL, admin1 TEXT NOT NULL, admin2 TEXT NOT NULL
);
CREATE INDEX cities_country ON cities (country);
CREATE INDEX cities_country_name ON cities (country, name);
";

fn insert_city(conn: &Connection, c: &City) -> Res<()> {
    conn.prepare_cached(
        "INSERT INTO cities (name, lat, lng, country, admin1, admin2) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![c.name, c.lat, c.lng, c.country, c.admin1, c.admin2])?;
    Ok(())
}

/// See [`crate::indexa_side::cities`].
pub fn cities(data: &Path, n: usize, scale_only: bool, rounds: usize, reads: usize) -> Res<()> {
    let cities = data::cities(data, n);
    let countries = data::countries(&cities);
    let dir = tempfile::tempdir().expect("temp dir");
    let conn = connect(dir.path())?;
    conn.execute_batch(CITY_TABLE)?;

    let t = Instant::now();
    conn.execute_batch("BEGIN IMMEDIATE")?;
    for c in cities {
        insert_city(&conn, &c)?;
    }
    conn.execute_batch("COMMIT")?;
    metric("import", t.elapsed());

    let keys = data::read_keys(n, reads);
    // The typed workload fills the same struct; SQLite runs the same reads again for it.
    for name in ["get", "get_typed"] {
        if !wanted(name) {
            continue;
        }
        let t = Instant::now();
        conn.execute_batch("BEGIN")?;
        let mut found = 0u64;
        {
            let mut stmt = conn.prepare_cached(
                "SELECT name, lat, lng, country, admin1, admin2 FROM cities WHERE id = ?1",
            )?;
            for k in &keys {
                std::hint::black_box(stmt.query_row([k], city_row)?);
                found += 1;
            }
        }
        conn.execute_batch("COMMIT")?;
        metric(name, t.elapsed());
        check(name, found);
    }
    if scale_only {
        return Ok(());
    }

    for name in ["range", "range_typed"] {
        if !wanted(name) {
            continue;
        }
        let t = Instant::now();
        conn.execute_batch("BEGIN")?;
        let mut got = 0u64;
        {
            let mut stmt = conn.prepare_cached(
                "SELECT name, lat, lng, country, admin1, admin2 FROM cities WHERE country = ?1 ORDER BY country, name, id LIMIT 100",
            )?;
            for _ in 0..rounds {
                for c in &countries {
                    let rows = stmt.query_map([c], city_row)?;
                    got += rows.collect::<Res<Vec<City>>>()?.len() as u64;
                }
            }
        }
        conn.execute_batch("COMMIT")?;
        metric(name, t.elapsed());
        check(name, got);
    }

    for (name, order) in [
        ("scan_fwd", "ASC"),
        ("scan_rev", "DESC"),
        ("scan_typed", "ASC"),
    ] {
        if !wanted(name) {
            continue;
        }
        let t = Instant::now();
        conn.execute_batch("BEGIN")?;
        let mut seen = 0u64;
        {
            let mut stmt = conn.prepare(&format!(
                "SELECT name, lat, lng, country, admin1, admin2 FROM cities ORDER BY id {order}"
            ))?;
            let mut rows = stmt.query([])?;
            while let Some(r) = rows.next()? {
                std::hint::black_box(city_row(r)?);
                seen += 1;
            }
        }
        conn.execute_batch("COMMIT")?;
        metric(name, t.elapsed());
        check(name, seen);
    }
    Ok(())
}

/// See [`crate::indexa_side::flights`].
pub fn flights(data: &Path, n: usize, counts: usize) -> Res<()> {
    let flights = data::flights(data, n);
    let dir = tempfile::tempdir().expect("temp dir");
    let conn = connect(dir.path())?;
    conn.execute_batch(
        "CREATE TABLE flights (id INTEGER PRIMARY KEY AUTOINCREMENT, delay REAL NOT NULL, distance REAL NOT NULL, time REAL NOT NULL);
         CREATE INDEX flights_delay ON flights (delay);",
    )?;

    let t = Instant::now();
    conn.execute_batch("BEGIN IMMEDIATE")?;
    {
        let mut stmt =
            conn.prepare_cached("INSERT INTO flights (delay, distance, time) VALUES (?1, ?2, ?3)")?;
        for f in &flights {
            stmt.execute(params![f.delay, f.distance, f.time])?;
        }
    }
    conn.execute_batch("COMMIT")?;
    metric("import", t.elapsed());

    let t = Instant::now();
    conn.execute_batch("BEGIN")?;
    let mut total = 0u64;
    {
        let mut stmt =
            conn.prepare_cached("SELECT COUNT(*) FROM flights WHERE delay BETWEEN ?1 AND ?2")?;
        for (lo, hi) in data::delay_ranges(counts) {
            total += stmt.query_row(params![lo, hi], |r| r.get::<_, i64>(0))? as u64;
        }
    }
    conn.execute_batch("COMMIT")?;
    metric("count", t.elapsed());
    check("count", total);
    Ok(())
}

/// See [`crate::indexa_side::transactions`].
pub fn transactions(data: &Path, n: usize, strict: bool) -> Res<()> {
    let cities = data::cities(data, n);
    let dir = tempfile::tempdir().expect("temp dir");
    let conn = connect(dir.path())?;
    conn.execute_batch(
        "CREATE TABLE notes (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT NOT NULL, lat TEXT NOT NULL, lng TEXT NOT NULL, country TEXT NOT NULL, admin1 TEXT NOT NULL, admin2 TEXT NOT NULL);",
    )?;
    conn.execute_batch(if strict {
        "PRAGMA synchronous=FULL"
    } else {
        "PRAGMA synchronous=NORMAL"
    })?;
    let t = Instant::now();
    for c in &cities {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        conn.prepare_cached(
            "INSERT INTO notes (name, lat, lng, country, admin1, admin2) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![c.name, c.lat, c.lng, c.country, c.admin1, c.admin2])?;
        conn.execute_batch("COMMIT")?;
    }
    metric("txn", t.elapsed());
    let n: i64 = conn.query_row("SELECT COUNT(*) FROM notes", [], |r| r.get(0))?;
    check("txn", n as u64);
    Ok(())
}

/// See [`crate::indexa_side::mixed`]: each thread its own connection; writes are
/// `INSERT OR REPLACE` with `synchronous=NORMAL` (as Indexa's relaxed durability).
pub fn mixed(data: &Path, n: usize, threads: usize, ops: usize) -> Res<()> {
    let cities = data::cities(data, n);
    let dir = tempfile::tempdir().expect("temp dir");
    let conn = connect(dir.path())?;
    conn.execute_batch(CITY_TABLE)?;
    conn.execute_batch("BEGIN IMMEDIATE")?;
    for c in &cities {
        insert_city(&conn, c)?;
    }
    conn.execute_batch("COMMIT")?;
    drop(conn);

    let t = Instant::now();
    let found = std::thread::scope(|s| {
        let workers: Vec<_> = (0..threads)
            .map(|thread| {
                let (dir, cities) = (dir.path(), &cities);
                s.spawn(move || -> Res<u64> {
                    let conn = connect(dir)?;
                    conn.execute_batch("PRAGMA synchronous=NORMAL")?;
                    let mut found = 0u64;
                    for (k, write) in data::mixed_ops(n, thread, ops) {
                        if write {
                            let c = &cities[k as usize - 1];
                            conn.execute_batch("BEGIN IMMEDIATE")?;
                            conn.prepare_cached(
                                "INSERT OR REPLACE INTO cities (id, name, lat, lng, country, admin1, admin2) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                            )?
                            .execute(params![k, c.name, c.lat, c.lng, c.country, c.admin1, c.admin2])?;
                            conn.execute_batch("COMMIT")?;
                        } else {
                            conn.execute_batch("BEGIN")?;
                            let city = conn
                                .prepare_cached(
                                    "SELECT name, lat, lng, country, admin1, admin2 FROM cities WHERE id = ?1",
                                )?
                                .query_row([k], city_row)?;
                            std::hint::black_box(city);
                            found += 1;
                            conn.execute_batch("COMMIT")?;
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
