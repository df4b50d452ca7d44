//! The same logical work as `indexa_side` in hand-written SQL on the PostgreSQL server Indexa
//! runs on (the URL in `INDEXA_BENCH_PG_URL`): tables with one column per field in a schema
//! `bench_sql` (made afresh by each workload), the secondary indexes as B-tree indexes, the
//! same `postgres` client. Durability `relaxed` is `synchronous_commit = off`, as Indexa's.

use std::path::Path;
use std::time::Instant;

use postgres::{Client, NoTls};

use crate::data::{self, City};
use crate::report::{check, metric};

type Res<T> = Result<T, postgres::Error>;

/// The server's URL, from `INDEXA_BENCH_PG_URL`.
pub fn url() -> String {
    std::env::var("INDEXA_BENCH_PG_URL").expect("INDEXA_BENCH_PG_URL names the PostgreSQL server")
}

/// A client with an empty schema `bench_sql` first on its search path.
fn connect() -> Res<Client> {
    let mut client = Client::connect(&url(), NoTls)?;
    client.batch_execute(
        "DROP SCHEMA IF EXISTS bench_sql CASCADE; CREATE SCHEMA bench_sql; SET search_path TO bench_sql",
    )?;
    Ok(client)
}

const CITY_COLUMNS: &str = "name TEXT NOT NULL, lat TEXT NOT NULL, lng TEXT NOT NULL, \
     country TEXT NOT NULL, admin1 TEXT NOT NULL, admin2 TEXT NOT NULL";

fn city_row(r: &postgres::Row) -> City {
    City {
        name: r.get(0),
        lat: r.get(1),
        lng: r.get(2),
        country: r.get(3),
        admin1: r.get(4),
        admin2: r.get(5),
    }
}

const INSERT_CITY: &str =
    "INSERT INTO cities (name, lat, lng, country, admin1, admin2) VALUES ($1, $2, $3, $4, $5, $6)";

/// See [`crate::indexa_side::cities`].
pub fn cities(data: &Path, n: usize, scale_only: bool, rounds: usize, reads: usize) -> Res<()> {
    let cities = data::cities(data, n);
    let countries = data::countries(&cities);
    let mut client = connect()?;
    client.batch_execute(&format!(
        "CREATE TABLE cities (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, {CITY_COLUMNS});
         CREATE INDEX cities_country ON cities (country);
         CREATE INDEX cities_country_name ON cities (country, name, id);"
    ))?;

    let t = Instant::now();
    let mut tx = client.transaction()?;
    let insert = tx.prepare(INSERT_CITY)?;
    for c in &cities {
        tx.execute(
            &insert,
            &[&c.name, &c.lat, &c.lng, &c.country, &c.admin1, &c.admin2],
        )?;
    }
    tx.commit()?;
    metric("import", t.elapsed());

    let keys = data::read_keys(n, reads);
    let t = Instant::now();
    let mut tx = client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    let select =
        tx.prepare("SELECT name, lat, lng, country, admin1, admin2 FROM cities WHERE id = $1")?;
    let mut found = 0u64;
    for k in &keys {
        std::hint::black_box(city_row(&tx.query_one(&select, &[&i64::from(*k)])?));
        found += 1;
    }
    tx.commit()?;
    metric("get", t.elapsed());
    check("get", found);
    if scale_only {
        return Ok(());
    }

    let t = Instant::now();
    let mut tx = client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    let select = tx.prepare(
        "SELECT name, lat, lng, country, admin1, admin2 FROM cities WHERE country = $1 \
         ORDER BY country, name, id LIMIT 100",
    )?;
    let mut got = 0u64;
    for _ in 0..rounds {
        for c in &countries {
            for r in tx.query(&select, &[c])? {
                std::hint::black_box(city_row(&r));
                got += 1;
            }
        }
    }
    tx.commit()?;
    metric("range", t.elapsed());
    check("range", got);

    for (name, order) in [("scan_fwd", "ASC"), ("scan_rev", "DESC")] {
        let t = Instant::now();
        let mut tx = client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()?;
        let rows = tx.query(
            &format!(
                "SELECT name, lat, lng, country, admin1, admin2 FROM cities ORDER BY id {order}"
            ),
            &[],
        )?;
        let mut seen = 0u64;
        for r in &rows {
            std::hint::black_box(city_row(r));
            seen += 1;
        }
        tx.commit()?;
        metric(name, t.elapsed());
        check(name, seen);
    }
    Ok(())
}

/// See [`crate::indexa_side::flights`].
pub fn flights(data: &Path, n: usize, counts: usize) -> Res<()> {
    let flights = data::flights(data, n);
    let mut client = connect()?;
    client.batch_execute(
        "CREATE TABLE flights (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, \
         delay DOUBLE PRECISION NOT NULL, distance DOUBLE PRECISION NOT NULL, time DOUBLE PRECISION NOT NULL);
         CREATE INDEX flights_delay ON flights (delay);",
    )?;
    let t = Instant::now();
    let mut tx = client.transaction()?;
    let insert = tx.prepare("INSERT INTO flights (delay, distance, time) VALUES ($1, $2, $3)")?;
    for f in &flights {
        tx.execute(&insert, &[&f.delay, &f.distance, &f.time])?;
    }
    tx.commit()?;
    metric("import", t.elapsed());

    let t = Instant::now();
    let mut tx = client
        .build_transaction()
        .isolation_level(postgres::IsolationLevel::RepeatableRead)
        .read_only(true)
        .start()?;
    let count = tx.prepare("SELECT COUNT(*) FROM flights WHERE delay BETWEEN $1 AND $2")?;
    let mut total = 0u64;
    for (lo, hi) in data::delay_ranges(counts) {
        total += tx.query_one(&count, &[&lo, &hi])?.get::<_, i64>(0) as u64;
    }
    tx.commit()?;
    metric("count", t.elapsed());
    check("count", total);
    Ok(())
}

fn notes_table(client: &mut Client) -> Res<()> {
    client.batch_execute(&format!(
        "CREATE TABLE notes (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, {CITY_COLUMNS})"
    ))
}

/// `cities` as `n` transactions of one INSERT each on `client`.
fn insert_notes(client: &mut Client, cities: &[City], strict: bool) -> Res<()> {
    let insert = client.prepare(&INSERT_CITY.replace("cities", "notes"))?;
    for c in cities {
        let mut tx = client.transaction()?;
        if !strict {
            tx.batch_execute("SET LOCAL synchronous_commit TO off")?;
        }
        tx.execute(
            &insert,
            &[&c.name, &c.lat, &c.lng, &c.country, &c.admin1, &c.admin2],
        )?;
        tx.commit()?;
    }
    Ok(())
}

/// See [`crate::indexa_side::transactions`].
pub fn transactions(data: &Path, n: usize, strict: bool) -> Res<()> {
    let cities = data::cities(data, n);
    let mut client = connect()?;
    notes_table(&mut client)?;
    let t = Instant::now();
    insert_notes(&mut client, &cities, strict)?;
    metric("txn", t.elapsed());
    let n: i64 = client.query_one("SELECT COUNT(*) FROM notes", &[])?.get(0);
    check("txn", n as u64);
    Ok(())
}

/// Makes the empty table the writer processes of [`write_notes`] fill.
pub fn prepare_concurrent() -> Res<()> {
    notes_table(&mut connect()?)
}

/// One of several writer processes: `n` transactions of one INSERT each (strict).
pub fn write_notes(data: &Path, n: usize, writer: usize) -> Res<()> {
    let cities = data::cities(data, n * (writer + 1));
    let mut client = Client::connect(&url(), NoTls)?;
    client.batch_execute("SET search_path TO bench_sql")?;
    insert_notes(&mut client, &cities[n * writer..], true)
}

/// After the writers: (rows, distinct ids).
pub fn concurrent_result() -> Res<(u64, u64)> {
    let mut client = Client::connect(&url(), NoTls)?;
    let row = client.query_one(
        "SELECT COUNT(*), COUNT(DISTINCT id) FROM bench_sql.notes",
        &[],
    )?;
    Ok((row.get::<_, i64>(0) as u64, row.get::<_, i64>(1) as u64))
}
