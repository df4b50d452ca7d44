//! Crash test: a child process commits readwrite transactions and prints the id of each
//! commit once `commit()` returned; this process kills it with SIGKILL at random moments
//! (fixed seed), reopens the database and checks that nothing acknowledged was lost and no
//! half-done transaction is visible, in both durability modes.
//!
//! Each transaction `c` (its commit id) adds `1 + c % 3` records with generated keys, every
//! fifth one also a record with an explicit key that pushes the key generator up, retags the
//! first record of commit `c - 1` (a unique-indexed field), tries a duplicate tag (a failed
//! request that must leave nothing behind) and updates a running total in another object
//! store. The whole database is a function of the last commit id, so after every crash the
//! test compares all of it — records, keys, the unique index, the key generator's current
//! number — with what that function says, and runs SQLite's `integrity_check`.
//!
//! `INDEXA_CRASH_KILLS=N` sets the number of kills per durability mode (default 50), for a
//! longer run by hand: `INDEXA_CRASH_KILLS=1000 cargo test -p indexa --test crash`.
//!
//! The test binary is its own child: `crash --child <dir> <durability>` runs the writer
//! (`--commits <dir> <durability> <n>` stops after n commits).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use indexa::{Durability, Factory, Key, KeyPath, Object, Query, TransactionMode, Value};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const DB: &str = "crash";
const SEED: u64 = 0x1dea_5eed;
const DEFAULT_KILLS: usize = 50;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(String::as_str) {
        Some("--child") => child(Path::new(&args[2]), parse_durability(&args[3]), u64::MAX),
        Some("--commits") => child(
            Path::new(&args[2]),
            parse_durability(&args[3]),
            args[4].parse().unwrap(),
        ),
        _ => {}
    }
    let kills = match std::env::var("INDEXA_CRASH_KILLS") {
        Ok(n) => n
            .parse()
            .expect("INDEXA_CRASH_KILLS must be a number of kills"),
        Err(_) => DEFAULT_KILLS,
    };
    let started = Instant::now();
    for (i, durability) in [Durability::Strict, Durability::Relaxed]
        .into_iter()
        .enumerate()
    {
        let report = crash_repeatedly(durability, kills, SEED + i as u64);
        println!(
            "crash test, durability {}: {} kills, {} commits acknowledged, {} of them killed before any commit, {} with a commit done but not yet acknowledged",
            durability.as_str(),
            report.kills,
            report.acknowledged,
            report.killed_before_first_commit,
            report.unacknowledged_commits_found
        );
    }
    println!(
        "test crash_loses_nothing_acknowledged ... ok ({:.1} s)",
        started.elapsed().as_secs_f64()
    );
    fsync_points();
}

/// Where the durability modes call fsync: the child commits 40 transactions under strace,
/// which lists every fsync/fdatasync with the file it was for. `strict` syncs the
/// write-ahead log at every commit; `relaxed` does not (only a checkpoint would). Skipped, with
/// a message, when strace is not installed.
fn fsync_points() {
    const COMMITS: u64 = 40;
    if Command::new("strace").arg("-V").output().is_err() {
        println!("test fsync_points ... skipped: strace is not installed");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    for durability in ["strict", "relaxed"] {
        let dir = tempfile::tempdir().unwrap();
        // Create the database first, so that only the commits are traced.
        let created = Command::new(&exe)
            .args(["--commits"])
            .arg(dir.path())
            .args([durability, "0"])
            .output()
            .unwrap();
        assert!(created.status.success(), "{created:?}");
        let trace = dir.path().join("trace");
        let traced = Command::new("strace")
            .args(["-f", "-y", "-qq", "-e", "trace=fsync,fdatasync", "-o"])
            .arg(&trace)
            .arg(&exe)
            .arg("--commits")
            .arg(dir.path())
            .args([durability, &COMMITS.to_string()])
            .output()
            .unwrap();
        assert!(traced.status.success(), "{traced:?}");
        let trace = std::fs::read_to_string(&trace).unwrap();
        let wal_syncs = trace
            .lines()
            .filter(|l| l.contains("db-crash.indexa-wal>"))
            .count() as u64;
        let acknowledged = String::from_utf8(traced.stdout)
            .unwrap()
            .lines()
            .filter(|l| *l != "open")
            .count() as u64;
        assert_eq!(acknowledged, COMMITS);
        match durability {
            "strict" => assert!(
                wal_syncs >= COMMITS,
                "strict: {wal_syncs} WAL syncs for {COMMITS} commits:\n{trace}"
            ),
            _ => assert_eq!(wal_syncs, 0, "relaxed: WAL synced at commit:\n{trace}"),
        }
        println!(
            "fsync points, durability {durability}: {wal_syncs} WAL syncs for {COMMITS} commits"
        );
    }
    println!("test fsync_points ... ok");
}

fn parse_durability(s: &str) -> Durability {
    match s {
        "strict" => Durability::Strict,
        "relaxed" => Durability::Relaxed,
        other => panic!("unknown durability {other:?}"),
    }
}

// ---- the workload and its expected state ----

/// Records commit `c` adds with generated keys.
fn generated_records(c: u64) -> u64 {
    1 + c % 3
}

/// Whether commit `c` also adds a record with an explicit key (current number + 2).
fn has_explicit_key(c: u64) -> bool {
    c % 5 == 0
}

fn amount(c: u64, j: u64) -> u64 {
    c * 10 + j
}

/// A payload of a few kilobytes on some records, so that commits span several pages.
fn payload(c: u64, j: u64) -> String {
    "p".repeat(((c + j) % 7 * 700) as usize)
}

fn record(c: u64, tag: &str, amount: u64, payload: String) -> Value {
    let mut o = Object::default();
    o.insert("commit".into(), Value::Number(c as f64));
    o.insert("tag".into(), Value::from(tag));
    o.insert("amount".into(), Value::Number(amount as f64));
    o.insert("payload".into(), Value::from(payload));
    Value::Object(o)
}

fn total(commit: u64, records: u64, sum: u64) -> Value {
    let mut o = Object::default();
    o.insert("commit".into(), Value::Number(commit as f64));
    o.insert("records".into(), Value::Number(records as f64));
    o.insert("sum".into(), Value::Number(sum as f64));
    Value::Object(o)
}

fn number(v: &Value, field: &str) -> u64 {
    match v.get(field) {
        Some(Value::Number(n)) => *n as u64,
        other => panic!("field {field} is {other:?} in {v:?}"),
    }
}

/// The records (key → value) and the key generator's current number after commits `1..=last`.
fn expected_state(last: u64) -> (BTreeMap<u64, Value>, u64) {
    let mut records = BTreeMap::new();
    let mut current = 1;
    for c in 1..=last {
        for j in 0..generated_records(c) {
            let tag = if j == 0 && c < last {
                format!("r{c}")
            } else {
                format!("c{c}-{j}")
            };
            records.insert(current, record(c, &tag, amount(c, j), payload(c, j)));
            current += 1;
        }
        if has_explicit_key(c) {
            let key = current + 2;
            records.insert(
                key,
                record(c, &format!("x{c}"), amount(c, 9), String::new()),
            );
            current = key + 1;
        }
    }
    (records, current)
}

fn open(factory: &Factory) -> indexa::Database {
    factory
        .open(DB, Some(1), |tx, _, _| {
            let items = tx.create_object_store("items", None, true)?;
            items.create_index("by_tag", KeyPath::parse("tag")?, true, false)?;
            tx.create_object_store("meta", None, false)?;
            Ok(())
        })
        .expect("open the crash database")
}

/// The child: commits `limit` transactions or until killed, printing each commit id after
/// `commit()` returned; then exits at once, without closing the database.
fn child(dir: &Path, durability: Durability, limit: u64) -> ! {
    let factory = Factory::open_dir(dir).unwrap();
    let db = open(&factory);
    let mut out = std::io::stdout().lock();
    writeln!(out, "open").unwrap();
    out.flush().unwrap();
    for _ in 0..limit {
        let tx = db
            .transaction_with_durability(&["items", "meta"], TransactionMode::ReadWrite, durability)
            .unwrap();
        let items = tx.object_store("items").unwrap();
        let meta = tx.object_store("meta").unwrap();
        let before = meta
            .get(Key::from("total"))
            .unwrap()
            .unwrap_or_else(|| total(0, 0, 0));
        let c = number(&before, "commit") + 1;
        let mut added = 0;
        let mut sum = 0;
        for j in 0..generated_records(c) {
            items
                .add(
                    record(c, &format!("c{c}-{j}"), amount(c, j), payload(c, j)),
                    None,
                )
                .unwrap();
            added += 1;
            sum += amount(c, j);
        }
        if has_explicit_key(c) {
            let next = items.current_number().unwrap().unwrap();
            let key = Key::number((next + 2) as f64).unwrap();
            items
                .add(
                    record(c, &format!("x{c}"), amount(c, 9), String::new()),
                    Some(key),
                )
                .unwrap();
            added += 1;
            sum += amount(c, 9);
        }
        // A duplicate tag: the request fails and must leave nothing behind.
        let duplicate = items.add(record(c, &format!("c{c}-0"), 1, String::new()), None);
        assert_eq!(duplicate.unwrap_err().name(), "ConstraintError");
        if c > 1 {
            let by_tag = items.index("by_tag").unwrap();
            let key = by_tag
                .get_key(Key::from(format!("c{}-0", c - 1)))
                .unwrap()
                .expect("the first record of the previous commit");
            let mut value = items.get(key.clone()).unwrap().unwrap();
            if let Value::Object(o) = &mut value {
                o.insert("tag".into(), Value::from(format!("r{}", c - 1)));
            }
            items.put(value, Some(key)).unwrap();
        }
        meta.put(
            total(
                c,
                number(&before, "records") + added,
                number(&before, "sum") + sum,
            ),
            Some(Key::from("total")),
        )
        .unwrap();
        tx.commit().unwrap();
        writeln!(out, "{c}").unwrap();
        out.flush().unwrap();
    }
    std::process::exit(0)
}

// ---- the parent ----

struct Report {
    kills: usize,
    acknowledged: u64,
    killed_before_first_commit: usize,
    unacknowledged_commits_found: usize,
}

fn crash_repeatedly(durability: Durability, kills: usize, seed: u64) -> Report {
    let dir = tempfile::tempdir().unwrap();
    let exe = std::env::current_exe().unwrap();
    let mut rng = StdRng::seed_from_u64(seed);
    let mut acknowledged = 0;
    let mut last_seen = 0;
    let mut report = Report {
        kills: 0,
        acknowledged: 0,
        killed_before_first_commit: 0,
        unacknowledged_commits_found: 0,
    };
    for round in 0..kills {
        let mut child = Command::new(&exe)
            .arg("--child")
            .arg(dir.path())
            .arg(durability.as_str())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (lines_tx, lines) = mpsc::channel();
        let reader = std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if lines_tx.send(line).is_err() {
                    break;
                }
            }
        });
        // One kill in five lands anywhere, opening (and the first upgrade) included; the
        // others while transactions commit.
        let anywhere = rng.random_ratio(1, 5);
        let delay = Duration::from_micros(rng.random_range(0..40_000));
        let mut received = Vec::new();
        if !anywhere {
            let line = lines
                .recv_timeout(Duration::from_secs(30))
                .expect("the child opens the database");
            received.push(line);
        }
        std::thread::sleep(delay);
        child.kill().unwrap();
        let status = child.wait().unwrap();
        if status.signal() != Some(9) {
            let mut err = String::new();
            std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut err).unwrap();
            panic!("round {round}: the child ended with {status} before the kill: {err}");
        }
        reader.join().unwrap();
        received.extend(lines.try_iter());
        // The child continues after the last commit in the file, acknowledged or not.
        for (line, next) in received
            .iter()
            .filter(|l| *l != "open")
            .zip(last_seen + 1..)
        {
            let c: u64 = line.parse().unwrap();
            assert_eq!(c, next, "round {round}: commit ids go up by one");
            acknowledged = c;
        }
        if !received.iter().any(|l| l != "open") {
            report.killed_before_first_commit += 1;
        }
        // What must be there: every acknowledged commit, and every commit an earlier check
        // saw (acknowledged or not, it was visible, so it must stay).
        let must_hold = acknowledged.max(last_seen);
        let last = check(dir.path(), round, must_hold);
        if last > must_hold {
            report.unacknowledged_commits_found += 1;
        }
        last_seen = last;
        report.kills += 1;
    }
    report.acknowledged = acknowledged;
    report
}

/// Reopens the database after a crash, checks every invariant and returns the last commit id
/// it holds: `must_hold` or, if the kill came after a commit and before its acknowledgement,
/// one more.
fn check(dir: &Path, round: usize, must_hold: u64) -> u64 {
    let factory = Factory::open_dir(dir).unwrap();
    let db = open(&factory);
    let tx = db
        .transaction(&["items", "meta"], TransactionMode::ReadOnly)
        .unwrap();
    let items = tx.object_store("items").unwrap();
    let last = tx
        .object_store("meta")
        .unwrap()
        .get(Key::from("total"))
        .unwrap()
        .map_or(0, |t| number(&t, "commit"));
    // Every acknowledged commit is there; at most the one in flight at the kill is there too.
    assert!(
        last == must_hold || last == must_hold + 1,
        "round {round}: commits up to {must_hold} must be there, the database holds {last}"
    );
    // The whole store is exactly what commits 1..=last make: no partial transaction.
    let (expected, current_number) = expected_state(last);
    let records = items.get_all_records(Query::all()).unwrap();
    let actual: BTreeMap<u64, Value> = records
        .iter()
        .map(|r| match r.primary_key {
            Key::Number(n) => (n as u64, r.value.clone()),
            ref k => panic!("round {round}: unexpected key {k:?}"),
        })
        .collect();
    assert_eq!(actual.len(), records.len());
    if actual != expected {
        let differing: Vec<_> = expected
            .keys()
            .chain(actual.keys())
            .filter(|k| expected.get(k) != actual.get(k))
            .take(5)
            .collect();
        panic!("round {round}: after commit {last} the records differ at keys {differing:?}");
    }
    // The running total matches the records.
    let t = tx
        .object_store("meta")
        .unwrap()
        .get(Key::from("total"))
        .unwrap()
        .unwrap_or_else(|| total(0, 0, 0));
    assert_eq!(number(&t, "records"), actual.len() as u64, "round {round}");
    assert_eq!(
        number(&t, "sum"),
        actual.values().map(|v| number(v, "amount")).sum::<u64>(),
        "round {round}"
    );
    // The unique index holds exactly one entry per record, pointing at it.
    let mut index_expected: Vec<(String, u64)> = expected
        .iter()
        .map(|(k, v)| match v.get("tag") {
            Some(Value::String(s)) => (s.to_string_lossy(), *k),
            other => panic!("tag {other:?}"),
        })
        .collect();
    index_expected.sort();
    let index_actual: Vec<(String, u64)> = items
        .index("by_tag")
        .unwrap()
        .get_all_records(Query::all())
        .unwrap()
        .into_iter()
        .map(|r| match (r.key, r.primary_key) {
            (Key::String(s), Key::Number(n)) => (s.to_string_lossy(), n as u64),
            other => panic!("round {round}: unexpected index entry {other:?}"),
        })
        .collect();
    assert_eq!(
        index_actual, index_expected,
        "round {round}: the unique index"
    );
    // The key generator is beyond every key.
    let generator = items.current_number().unwrap().unwrap();
    assert_eq!(generator, current_number, "round {round}: current number");
    if let Some(max) = actual.keys().max() {
        assert!(
            generator > *max,
            "round {round}: current number {generator} ≤ key {max}"
        );
    }
    drop(tx);
    drop(db);
    drop(factory);
    // SQLite's own check of the file, and the stored current number.
    let conn = rusqlite::Connection::open_with_flags(
        dir.join("db-crash.indexa"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok", "round {round}: integrity_check");
    let stored: i64 = conn
        .query_row(
            "SELECT current_number FROM object_store WHERE name = 'items'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        stored as u64, current_number,
        "round {round}: stored current number"
    );
    last
}
