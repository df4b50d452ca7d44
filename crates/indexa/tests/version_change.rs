//! `versionchange` and `blocked` between factories (docs/format.md, "Connections across
//! processes"): a deletion or an upgrade through one factory tells the open connections of
//! another, reports being blocked by the ones that stay open, and goes on once they close.
//! On both backends: on PostgreSQL the factories' connections are told through the server
//! (`backend::postgres_session`), as other processes' and hosts' are.

mod support;

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use indexa::{Database, DatabaseInfo, Factory, Key, TransactionMode, Value, VersionChange};
use support::TestPlace;

/// Held by each test for its whole run: these tests time how fast another factory's
/// watcher answers (within the acknowledgement wait, 1 s), so they run one at a time rather
/// than compete with each other for a loaded machine's cores.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A database "x" at version 1 with object store "s", through a factory of its own.
fn holder(place: &TestPlace) -> (Factory, Arc<Database>) {
    let f = place.factory();
    let db = f
        .open("x", Some(1), |tx, _, _| {
            tx.create_object_store("s", None, false).map(|_| ())
        })
        .unwrap();
    (f, Arc::new(db))
}

fn requester(place: &TestPlace, timeout_ms: u64) -> Factory {
    let mut f = place.factory();
    f.set_lock_timeout(Duration::from_millis(timeout_ms));
    f
}

const TO_V2: VersionChange = VersionChange {
    old_version: 1,
    new_version: Some(2),
};

#[test]
fn a_connection_that_stays_open_gets_versionchange_and_the_upgrade_is_blocked_then_fails() {
    let _serial = one_at_a_time();
    let place = Arc::new(support::place());
    let (_f, db) = holder(&place);
    let (sent, received) = mpsc::channel();
    db.on_version_change(move |change| sent.send(*change).unwrap());
    let other = requester(&place, 500);
    let mut blocked = Vec::new();
    let err = other
        .begin_upgrade_with("x", 2, &mut |change| blocked.push(*change))
        .unwrap_err();
    assert_eq!(
        (err.name(), err.message()),
        (
            "InvalidStateError",
            "database \"x\" is open through another factory of this process; close it there first (waited 500 ms)"
        )
    );
    assert_eq!(received.try_iter().collect::<Vec<_>>(), vec![TO_V2]);
    assert_eq!(blocked, vec![TO_V2]);
    // The connection still works under its schema, at version 1.
    assert_eq!(db.version(), 1);
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    tx.commit().unwrap();
}

#[test]
fn a_connection_closed_by_its_listener_lets_the_upgrade_go_on_unblocked() {
    let _serial = one_at_a_time();
    let place = Arc::new(support::place());
    let (_f, db) = holder(&place);
    let weak = Arc::downgrade(&db);
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen_there = seen.clone();
    db.on_version_change(move |change| {
        seen_there.lock().unwrap().push(*change);
        if let Some(db) = weak.upgrade() {
            db.close();
        }
    });
    let other = requester(&place, 5000);
    let mut blocked = Vec::new();
    let (upgraded, tx) = other
        .begin_upgrade_with("x", 2, &mut |change| blocked.push(*change))
        .unwrap();
    let (tx, old) = tx.expect("an upgrade from version 1");
    assert_eq!(old, 1);
    tx.create_object_store("t", None, false).unwrap();
    tx.commit().unwrap();
    assert_eq!(*seen.lock().unwrap(), vec![TO_V2]);
    assert_eq!(blocked, Vec::<VersionChange>::new());
    assert_eq!(upgraded.version(), 2);
    assert_eq!(upgraded.object_store_names(), vec!["s", "t"]);
    // The closed connection refuses new transactions.
    assert_eq!(
        db.transaction(&["s"], TransactionMode::ReadOnly)
            .unwrap_err()
            .name(),
        "InvalidStateError"
    );
}

#[test]
fn a_connection_closed_after_blocked_lets_the_deletion_go_on() {
    let _serial = one_at_a_time();
    let place = Arc::new(support::place());
    let (_f, db) = holder(&place);
    let (sent, received) = mpsc::channel();
    db.on_version_change(move |change| sent.send(*change).unwrap());
    let other = requester(&place, 10_000);
    let mut blocked = Vec::new();
    let closer = db.clone();
    let version = other
        .delete_database_with("x", &mut |change| {
            blocked.push(*change);
            // Closed only once the deletion reported being blocked.
            closer.close();
        })
        .unwrap();
    let deletion = VersionChange {
        old_version: 1,
        new_version: None,
    };
    assert_eq!(version, 1);
    assert_eq!(received.try_iter().collect::<Vec<_>>(), vec![deletion]);
    assert_eq!(blocked, vec![deletion]);
    assert_eq!(other.databases().unwrap(), vec![]);
}

#[test]
fn the_requesting_factorys_own_connections_get_no_call() {
    let _serial = one_at_a_time();
    let place = Arc::new(support::place());
    let (f, db) = holder(&place);
    let (sent, received) = mpsc::channel();
    db.on_version_change(move |change| sent.send(*change).unwrap());
    let (other, other_db) = {
        let other = requester(&place, 5000);
        let db = other.open("x", None, |_, _, _| Ok(())).unwrap();
        (other, db)
    };
    let weak = Arc::downgrade(&db);
    // Only the other factory's connection hears of f's upgrade; it closes.
    let (other_sent, other_received) = mpsc::channel();
    other_db.on_version_change(move |change| {
        other_sent.send(*change).unwrap();
    });
    let closing = Arc::new(other_db);
    let closing_there = Arc::downgrade(&closing);
    closing.on_version_change(move |change| {
        let _ = change;
        if let Some(c) = closing_there.upgrade() {
            c.close();
        }
    });
    let mut blocked = Vec::new();
    let (_, tx) = f
        .begin_upgrade_with("x", 2, &mut |change| blocked.push(*change))
        .unwrap();
    tx.expect("an upgrade from version 1").0.commit().unwrap();
    assert!(weak.upgrade().is_some());
    assert_eq!(received.try_iter().count(), 0);
    // The replaced listener was never called.
    assert_eq!(other_received.try_iter().count(), 0);
    assert_eq!(blocked, Vec::<VersionChange>::new());
    drop(other);
}

/// Factories creating one database at once: one creates it, the others wait for it and
/// open it at its version without announcing anything (no connection gets a call).
#[test]
fn factories_creating_one_database_at_once_all_open_it_without_versionchange() {
    let _serial = one_at_a_time();
    let place = Arc::new(support::place());
    let calls = Arc::new(Mutex::new(Vec::new()));
    let threads = 4;
    let all_open = Arc::new(std::sync::Barrier::new(threads));
    let handles: Vec<_> = (0..threads)
        .map(|_| {
            let place = place.clone();
            let calls = calls.clone();
            let all_open = all_open.clone();
            std::thread::spawn(move || {
                let f = place.factory();
                let db = f
                    .open("x", Some(1), |tx, _, _| {
                        tx.create_object_store("s", None, false).map(|_| ())
                    })
                    .unwrap();
                db.on_version_change(move |change| calls.lock().unwrap().push(*change));
                all_open.wait();
                std::thread::sleep(Duration::from_millis(100));
                (db.version(), db.object_store_names())
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), (1, vec!["s".to_string()]));
    }
    assert_eq!(*calls.lock().unwrap(), Vec::<VersionChange>::new());
}

/// While an upgrade waits for a connection, a new connection of a third factory waits for
/// the upgrade to end (as opens queue behind an upgrade in the spec), then sees version 2.
#[test]
fn a_new_connection_waits_for_an_announced_upgrade() {
    let _serial = one_at_a_time();
    let place = Arc::new(support::place());
    let (_f, db) = holder(&place);
    let (told, heard) = mpsc::channel();
    db.on_version_change(move |_| told.send(()).unwrap());
    let upgrader = {
        let place = place.clone();
        std::thread::spawn(move || {
            let f = requester(&place, 10_000);
            let (db, tx) = f.begin_upgrade("x", 2).unwrap();
            tx.expect("an upgrade from version 1").0.commit().unwrap();
            db.version()
        })
    };
    heard.recv_timeout(Duration::from_secs(10)).unwrap();
    let opener = {
        let place = place.clone();
        std::thread::spawn(move || {
            let f = requester(&place, 10_000);
            f.open("x", None, |_, _, _| Ok(())).unwrap().version()
        })
    };
    std::thread::sleep(Duration::from_millis(200));
    assert!(!opener.is_finished());
    db.close();
    assert_eq!(upgrader.join().unwrap(), 2);
    assert_eq!(opener.join().unwrap(), 2);
}

/// An open queued behind another factory's creating upgrade that aborts finds no database,
/// creates it, and keeps what it commits (<https://www.w3.org/TR/IndexedDB-3/#abort-an-upgrade-transaction>:
/// the aborted creation leaves no database). The upgrade is aborted inside its callback, as
/// the CLI's batch does: the queued open still waits until the callback has returned and the
/// aborted creation was removed, so that removal never meets the database the queued open
/// created and wrote to.
#[test]
fn an_open_queued_behind_an_aborted_creation_creates_the_database_and_keeps_its_commit() {
    let _serial = one_at_a_time();
    let place = Arc::new(support::place());
    let first = place.factory();
    let (go, upgrading) = mpsc::channel();
    let (upgraded, in_second_upgrade) = mpsc::channel();
    let second = {
        let place = place.clone();
        std::thread::spawn(move || {
            let f = place.factory();
            upgrading.recv().unwrap();
            let mut versions = None;
            let db = f
                .open("x", Some(1), |tx, old, new| {
                    versions = Some((old, new));
                    upgraded.send(()).unwrap();
                    std::thread::sleep(Duration::from_millis(200));
                    tx.create_object_store("s", None, true).map(|_| ())
                })
                .unwrap();
            let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
            let key = tx
                .object_store("s")
                .unwrap()
                .add(Value::from("kept"), None)
                .unwrap();
            tx.commit().unwrap();
            // Open a while longer, as a process that goes on working.
            std::thread::sleep(Duration::from_millis(300));
            db.close();
            (versions, key)
        })
    };
    let mut while_aborted = None;
    let err = first
        .open("x", Some(1), |tx, _, _| {
            tx.create_object_store("t", None, false)?;
            tx.abort();
            go.send(()).unwrap();
            while_aborted = Some(in_second_upgrade.recv_timeout(Duration::from_millis(500)));
            Ok(())
        })
        .unwrap_err();
    assert_eq!(
        (err.name(), err.message()),
        ("AbortError", "the upgrade transaction was aborted")
    );
    assert_eq!(second.join().unwrap(), (Some((0, 1)), Key::Number(1.0)));
    for f in [&first, &place.factory()] {
        assert_eq!(
            f.databases().unwrap(),
            vec![DatabaseInfo {
                name: "x".into(),
                version: 1
            }]
        );
        let db = f.open("x", None, |_, _, _| Ok(())).unwrap();
        assert_eq!(db.object_store_names(), vec!["s"]);
        let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
        let records: Vec<(Key, Value)> = tx
            .object_store("s")
            .unwrap()
            .get_all_records(None::<indexa::KeyRange>)
            .unwrap()
            .into_iter()
            .map(|r| (r.key, r.value))
            .collect();
        assert_eq!(records, vec![(Key::Number(1.0), Value::from("kept"))]);
        tx.commit().unwrap();
        db.close();
    }
    // The other factory's upgrade did not start while the aborted creation was still there.
    assert_eq!(while_aborted, Some(Err(mpsc::RecvTimeoutError::Timeout)));
}
