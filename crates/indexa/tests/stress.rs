//! Concurrency stress: 8 threads mix readonly and readwrite transactions over overlapping
//! scopes for a bounded time — transfers between accounts (some aborted after writing),
//! owner swaps under a unique index, index lookups and cursors — while the invariants hold:
//! the total balance is conserved, the unique index is never violated, readers see one
//! consistent snapshot for their whole transaction, and nothing deadlocks. Two of the threads
//! go through a second `Factory` on the same databases, so they reach them through the
//! storage's own locking (SQLite's file locks, PostgreSQL's advisory locks) rather than the
//! shared writer connection.

mod support;

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

use indexa::{
    CursorDirection, Database, Durability, Factory, Key, KeyPath, Object, Query, Transaction,
    TransactionMode, Value,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const ACCOUNTS: u32 = 24;
const INITIAL: u64 = 1000;
const THREADS: u64 = 8;
const RUN_FOR: Duration = Duration::from_secs(3);
const SEED: u64 = 0x5eed_0007;

fn open(factory: &Factory) -> Database {
    factory
        .open("bank", Some(1), |tx, _, _| {
            let accounts =
                tx.create_object_store("accounts", Some(KeyPath::parse("id")?), false)?;
            accounts.create_index("by_owner", KeyPath::parse("owner")?, true, false)?;
            accounts.create_index("by_branch", KeyPath::parse("branch")?, false, false)?;
            tx.create_object_store("audit", None, true)?;
            tx.create_object_store("meta", None, false)?;
            for i in 0..ACCOUNTS {
                accounts.add(account(i, &format!("o{i}"), INITIAL), None)?;
            }
            tx.object_store("meta")?
                .add(Value::Number(0.0), Some(Key::from("transfers")))?;
            Ok(())
        })
        .unwrap()
}

fn account(id: u32, owner: &str, balance: u64) -> Value {
    let mut o = Object::default();
    o.insert("id".into(), Value::Number(f64::from(id)));
    o.insert("owner".into(), Value::from(owner));
    o.insert("branch".into(), Value::Number(f64::from(id % 4)));
    o.insert("balance".into(), Value::Number(balance as f64));
    Value::Object(o)
}

fn num(v: &Value, field: &str) -> u64 {
    match v.get(field) {
        Some(Value::Number(n)) => *n as u64,
        other => panic!("{field} is {other:?}"),
    }
}

fn text(v: &Value, field: &str) -> String {
    match v.get(field) {
        Some(Value::String(s)) => s.to_string_lossy(),
        other => panic!("{field} is {other:?}"),
    }
}

fn set(v: &mut Value, field: &str, to: Value) {
    match v {
        Value::Object(o) => {
            o.insert(field.into(), to);
        }
        other => panic!("not an object: {other:?}"),
    }
}

#[derive(Default)]
struct Counts {
    committed: AtomicU64,
    transfers: AtomicU64,
    aborted: AtomicU64,
    checks: AtomicU64,
    constraint_errors: AtomicU64,
}

/// Moves money between two accounts, logs it in `audit` and counts it in `meta`; aborts
/// after all the writes one time in ten.
fn transfer(db: &Database, rng: &mut StdRng, counts: &Counts) {
    let durability = if rng.random_bool(0.5) {
        Durability::Strict
    } else {
        Durability::Relaxed
    };
    let tx = db
        .transaction_with_durability(
            &["accounts", "audit", "meta"],
            TransactionMode::ReadWrite,
            durability,
        )
        .unwrap();
    let accounts = tx.object_store("accounts").unwrap();
    let from = rng.random_range(0..ACCOUNTS);
    let to = (from + rng.random_range(1..ACCOUNTS)) % ACCOUNTS;
    let mut a = accounts.get(Key::from(from)).unwrap().unwrap();
    let mut b = accounts.get(Key::from(to)).unwrap().unwrap();
    let (balance_a, balance_b) = (num(&a, "balance"), num(&b, "balance"));
    let amount = rng.random_range(0..=balance_a.min(50));
    set(
        &mut a,
        "balance",
        Value::Number((balance_a - amount) as f64),
    );
    accounts.put(a, None).unwrap();
    set(
        &mut b,
        "balance",
        Value::Number((balance_b + amount) as f64),
    );
    accounts.put(b, None).unwrap();
    tx.object_store("audit")
        .unwrap()
        .add(Value::Number(amount as f64), None)
        .unwrap();
    let meta = tx.object_store("meta").unwrap();
    let n = num_value(&meta.get(Key::from("transfers")).unwrap().unwrap());
    meta.put(Value::Number((n + 1) as f64), Some(Key::from("transfers")))
        .unwrap();
    if rng.random_ratio(1, 10) {
        tx.abort();
        counts.aborted.fetch_add(1, Ordering::Relaxed);
    } else {
        tx.commit().unwrap();
        counts.committed.fetch_add(1, Ordering::Relaxed);
        counts.transfers.fetch_add(1, Ordering::Relaxed);
    }
}

fn num_value(v: &Value) -> u64 {
    match v {
        Value::Number(n) => *n as u64,
        other => panic!("not a number: {other:?}"),
    }
}

/// Swaps the owners of two accounts (the unique index forbids a direct swap), after a
/// direct attempt that must fail with ConstraintError and change nothing.
fn swap_owners(db: &Database, rng: &mut StdRng, counts: &Counts) {
    let tx = db
        .transaction(&["accounts"], TransactionMode::ReadWrite)
        .unwrap();
    let accounts = tx.object_store("accounts").unwrap();
    let x = rng.random_range(0..ACCOUNTS);
    let y = (x + rng.random_range(1..ACCOUNTS)) % ACCOUNTS;
    let a = accounts.get(Key::from(x)).unwrap().unwrap();
    let b = accounts.get(Key::from(y)).unwrap().unwrap();
    let (owner_a, owner_b) = (text(&a, "owner"), text(&b, "owner"));
    let mut clash = a.clone();
    set(&mut clash, "owner", Value::from(owner_b.as_str()));
    let err = accounts.put(clash, None).unwrap_err();
    assert_eq!(err.name(), "ConstraintError");
    counts.constraint_errors.fetch_add(1, Ordering::Relaxed);
    assert_eq!(accounts.get(Key::from(x)).unwrap().unwrap(), a);
    let mut a2 = a.clone();
    set(&mut a2, "owner", Value::from("swapping"));
    accounts.put(a2.clone(), None).unwrap();
    let mut b2 = b.clone();
    set(&mut b2, "owner", Value::from(owner_a.as_str()));
    accounts.put(b2, None).unwrap();
    set(&mut a2, "owner", Value::from(owner_b.as_str()));
    accounts.put(a2, None).unwrap();
    tx.commit().unwrap();
    counts.committed.fetch_add(1, Ordering::Relaxed);
}

/// Reads everything twice, with a pause between, and checks the invariants on each read and
/// that both reads saw the same snapshot.
fn check_snapshot(db: &Database, rng: &mut StdRng, counts: &Counts) {
    let tx = db
        .transaction(&["accounts", "audit", "meta"], TransactionMode::ReadOnly)
        .unwrap();
    let first = read_all(&tx);
    std::thread::sleep(Duration::from_micros(rng.random_range(0..2000)));
    let second = read_all(&tx);
    assert_eq!(first, second, "a readonly transaction saw two states");
    counts.checks.fetch_add(1, Ordering::Relaxed);
}

/// The accounts (via a cursor), the audit count and the transfer count, checked against the
/// invariants.
fn read_all(tx: &Transaction) -> (Vec<Value>, u64, u64) {
    let accounts = tx.object_store("accounts").unwrap();
    let mut values = Vec::new();
    let mut cursor = accounts.open_cursor(None, CursorDirection::Next).unwrap();
    while let Some(v) = cursor.value().unwrap() {
        values.push(v.clone());
        cursor.continue_key(tx, None).unwrap();
    }
    assert_eq!(values.len(), ACCOUNTS as usize);
    let total: u64 = values.iter().map(|v| num(v, "balance")).sum();
    assert_eq!(
        total,
        INITIAL * u64::from(ACCOUNTS),
        "the total is conserved"
    );
    let owners: BTreeSet<String> = values.iter().map(|v| text(v, "owner")).collect();
    assert_eq!(owners.len(), values.len(), "owners are unique");
    let audit = tx.object_store("audit").unwrap().count(None).unwrap();
    let transfers = num_value(
        &tx.object_store("meta")
            .unwrap()
            .get(Key::from("transfers"))
            .unwrap()
            .unwrap(),
    );
    assert_eq!(
        audit, transfers,
        "every transfer is audited, and only those"
    );
    (values, audit, transfers)
}

/// Index lookups and an index cursor: the unique index maps each owner to the one account
/// holding it, and the branch index covers every account.
fn check_indexes(db: &Database, rng: &mut StdRng, counts: &Counts) {
    let tx = db
        .transaction(&["accounts"], TransactionMode::ReadOnly)
        .unwrap();
    let accounts = tx.object_store("accounts").unwrap();
    let by_owner = accounts.index("by_owner").unwrap();
    assert_eq!(by_owner.count(None).unwrap(), u64::from(ACCOUNTS));
    let direction = if rng.random_bool(0.5) {
        CursorDirection::Next
    } else {
        CursorDirection::Prev
    };
    let mut cursor = by_owner.open_cursor(None, direction).unwrap();
    let mut seen = Vec::new();
    while let (Some(Key::String(owner)), Some(v)) = (cursor.key(), cursor.value().unwrap()) {
        assert_eq!(text(v, "owner"), owner.to_string_lossy());
        seen.push(owner.to_string_lossy());
        cursor.continue_key(&tx, None).unwrap();
    }
    assert!(cursor.is_done());
    let mut sorted = seen.clone();
    sorted.sort();
    sorted.dedup();
    if direction == CursorDirection::Prev {
        sorted.reverse();
    }
    assert_eq!(seen, sorted, "index order, no duplicate owners");
    assert_eq!(seen.len(), ACCOUNTS as usize);
    let owner = &seen[rng.random_range(0..seen.len())];
    let key = by_owner
        .get_key(Key::from(owner.as_str()))
        .unwrap()
        .unwrap();
    let record = accounts.get(key).unwrap().unwrap();
    assert_eq!(&text(&record, "owner"), owner);
    let by_branch = accounts.index("by_branch").unwrap();
    let per_branch: u64 = (0..4)
        .map(|b| {
            by_branch
                .get_all_keys(Query::from(Key::from(b)))
                .unwrap()
                .len() as u64
        })
        .sum();
    assert_eq!(per_branch, u64::from(ACCOUNTS));
    counts.checks.fetch_add(1, Ordering::Relaxed);
}

#[test]
fn eight_threads_keep_every_invariant() {
    let place = support::factory();
    let factory_a = place.another();
    let db_a = Arc::new(open(&factory_a));
    let factory_b = place.another();
    let db_b = Arc::new(open(&factory_b));
    let counts = Arc::new(Counts::default());
    let deadline = Instant::now() + RUN_FOR;
    let (done_tx, done) = mpsc::channel();
    let mut handles = Vec::new();
    for t in 0..THREADS {
        let db = if t >= 6 { db_b.clone() } else { db_a.clone() };
        let counts = counts.clone();
        let done_tx = done_tx.clone();
        handles.push(std::thread::spawn(move || {
            let mut rng = StdRng::seed_from_u64(SEED + t);
            while Instant::now() < deadline {
                match rng.random_range(0..100) {
                    0..35 => transfer(&db, &mut rng, &counts),
                    35..50 => swap_owners(&db, &mut rng, &counts),
                    50..80 => check_snapshot(&db, &mut rng, &counts),
                    _ => check_indexes(&db, &mut rng, &counts),
                }
            }
            done_tx.send(t).unwrap();
        }));
    }
    drop(done_tx);
    for _ in 0..THREADS {
        done.recv_timeout(RUN_FOR + Duration::from_secs(60))
            .expect("a thread is stuck: deadlock or panic");
    }
    for h in handles {
        h.join().unwrap();
    }
    let committed = counts.committed.load(Ordering::Relaxed);
    let aborted = counts.aborted.load(Ordering::Relaxed);
    let checks = counts.checks.load(Ordering::Relaxed);
    println!(
        "{committed} commits, {aborted} aborts, {checks} checks, {} constraint errors",
        counts.constraint_errors.load(Ordering::Relaxed)
    );
    assert!(committed > 0 && aborted > 0 && checks > 0);
    // The final state through a fresh factory: invariants, and on SQLite its own check.
    drop((db_a, db_b, factory_a, factory_b));
    let factory = place.another();
    let db = open(&factory);
    let tx = db
        .transaction(&["accounts", "audit", "meta"], TransactionMode::ReadOnly)
        .unwrap();
    let (_, audit, transfers) = read_all(&tx);
    let expected = counts.transfers.load(Ordering::Relaxed);
    assert_eq!(
        (audit, transfers),
        (expected, expected),
        "every committed transfer, no other"
    );
    drop(tx);
    if support::on_postgres() {
        return;
    }
    let conn = rusqlite::Connection::open(factory.database_path("bank")).unwrap();
    let integrity: String = conn
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
}
