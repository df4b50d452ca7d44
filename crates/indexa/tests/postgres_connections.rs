//! Connections across hosts on PostgreSQL (`backend::postgres_session`): what only a server
//! can show. Runs with `INDEXA_TEST_BACKEND=postgres`; on SQLite each test returns at once
//! (`version_change` covers both backends).

mod support;

use std::time::{Duration, Instant};

use indexa::{Factory, Key, TransactionMode, Value, VersionChange};

fn admin(place: &support::TestPlace) -> postgres::Client {
    postgres::Client::connect(&place.location(), postgres::NoTls).unwrap()
}

/// The server processes holding Indexa's session lock "open" (lock byte 0, key 0x1DBB) on
/// database id 1 of the place's PostgreSQL database.
fn holders(client: &mut postgres::Client) -> Vec<i32> {
    client
        .query(
            "SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND classid = 7611 \
             AND objid = 1 AND objsubid = 2 AND granted \
             AND database = (SELECT oid FROM pg_database WHERE datname = current_database()) \
             ORDER BY pid",
            &[],
        )
        .unwrap()
        .iter()
        .map(|r| r.get(0))
        .collect()
}

/// Each process with the database open holds the shared session lock; an upgrade waits for
/// another host's process holding it only until that process's server process ends (as when
/// the process is killed or its host dies), not for the lock timeout.
#[test]
fn a_killed_holder_lets_the_upgrade_go_on_at_once() {
    if !support::on_postgres() {
        return;
    }
    let place = support::place();
    let f = place.factory();
    let db = f
        .open("x", Some(1), |tx, _, _| {
            tx.create_object_store("s", None, false).map(|_| ())
        })
        .unwrap();
    let mut client = admin(&place);
    assert_eq!(holders(&mut client).len(), 1);
    drop(db);
    assert_eq!(holders(&mut client), Vec::<i32>::new());

    let mut other_host = admin(&place);
    other_host
        .execute("SELECT pg_advisory_lock_shared(7611, 1)", &[])
        .unwrap();
    let other_pid: i32 = other_host
        .query_one("SELECT pg_backend_pid()", &[])
        .unwrap()
        .get(0);
    assert_eq!(holders(&mut client), vec![other_pid]);

    let mut upgrader = place.factory();
    upgrader.set_lock_timeout(Duration::from_secs(60));
    let killer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(500));
        client
            .execute("SELECT pg_terminate_backend($1)", &[&other_pid])
            .unwrap();
    });
    let started = Instant::now();
    let mut blocked = Vec::new();
    let (upgraded, tx) = upgrader
        .begin_upgrade_with("x", 2, &mut |c| blocked.push(*c))
        .unwrap();
    let waited = started.elapsed();
    killer.join().unwrap();
    tx.expect("an upgrade from version 1").0.commit().unwrap();
    assert_eq!(upgraded.version(), 2);
    assert_eq!(
        blocked,
        vec![VersionChange {
            old_version: 1,
            new_version: Some(2)
        }]
    );
    assert!(waited >= Duration::from_millis(500), "{waited:?}");
    assert!(waited < Duration::from_secs(30), "{waited:?}");
}

/// A factory of another PostgreSQL client library's making sees the lock too: a raw session
/// holding the shared lock (as another host's process would) blocks the deletion, which
/// fails after the lock timeout with the message naming why, and leaves the database.
#[test]
fn a_deletion_waits_for_another_hosts_session_then_fails_after_the_lock_timeout() {
    if !support::on_postgres() {
        return;
    }
    let place = support::place();
    let f = place.factory();
    drop(
        f.open("x", Some(3), |tx, _, _| {
            tx.create_object_store("s", None, false).map(|_| ())
        })
        .unwrap(),
    );
    let mut other_host = admin(&place);
    other_host
        .execute("SELECT pg_advisory_lock_shared(7611, 1)", &[])
        .unwrap();
    let mut deleter = Factory::open_url(&place.location()).unwrap();
    deleter.set_lock_timeout(Duration::from_millis(300));
    let mut blocked = Vec::new();
    let err = deleter
        .delete_database_with("x", &mut |c| blocked.push(*c))
        .unwrap_err();
    assert_eq!(
        (err.name(), err.message()),
        (
            "InvalidStateError",
            "database \"x\" is open in another process; close it there first (waited 300 ms)"
        )
    );
    assert_eq!(
        blocked,
        vec![VersionChange {
            old_version: 3,
            new_version: None
        }]
    );
    assert_eq!(f.version("x").unwrap(), 3);
    // The notice row says what was asked.
    let row = other_host
        .query_one(
            "SELECT serial, old_version, new_version FROM indexa.versionchange WHERE database_id = 1",
            &[],
        )
        .unwrap();
    assert_eq!(
        (
            row.get::<_, i64>(0),
            row.get::<_, i64>(1),
            row.get::<_, Option<i64>>(2)
        ),
        (1, 3, None)
    );
    other_host
        .execute("SELECT pg_advisory_unlock_shared(7611, 1)", &[])
        .unwrap();
    assert_eq!(deleter.delete_database("x").unwrap(), 3);
    assert_eq!(f.version("x").unwrap(), 0);
}

/// The server connections on the place's PostgreSQL database other than `client`'s own.
fn server_connections(client: &mut postgres::Client) -> i64 {
    client
        .query_one(
            "SELECT count(*) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .unwrap()
        .get(0)
}

/// `server_connections` once it is `expected` (a closed client's server process ends a
/// moment after the client), or after 10 s.
fn settled_connections(client: &mut postgres::Client, expected: i64) -> i64 {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let n = server_connections(client);
        if n == expected || Instant::now() >= deadline {
            return n;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The server connections `docs/format.md` counts ("Server connections"): a factory has its
/// catalog connection and the process one listener; an open database its session and its
/// writer, plus the idle readers of its readonly transactions (at most 2); a database whose
/// connections are all closed keeps none. Opening and closing databases again and again
/// leaves the same count.
#[test]
fn a_closed_database_keeps_no_server_connection() {
    if !support::on_postgres() {
        return;
    }
    let place = support::place();
    let mut client = admin(&place);
    let f = place.factory();
    assert_eq!(
        settled_connections(&mut client, 1),
        1,
        "the catalog connection"
    );
    for round in 0..3 {
        let mut open = Vec::new();
        for i in 0..5 {
            let db = f
                .open(format!("d{i}"), Some(1), |tx, _, _| {
                    tx.create_object_store("s", None, false).map(|_| ())
                })
                .unwrap();
            let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
            tx.object_store("s")
                .unwrap()
                .put(Value::from(round), Some(Key::from(i)))
                .unwrap();
            tx.commit().unwrap();
            let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
            assert_eq!(
                tx.object_store("s").unwrap().get(Key::from(i)).unwrap(),
                Some(Value::from(round))
            );
            tx.commit().unwrap();
            open.push(db);
        }
        // Catalog and listener, then per database a session and one connection: the readonly
        // transaction took the writer's, idle after the commit.
        assert_eq!(settled_connections(&mut client, 2 + 5 * 2), 2 + 5 * 2);
        for db in &open {
            db.close();
        }
        assert_eq!(settled_connections(&mut client, 2), 2, "round {round}");
        drop(open);
    }

    // Four readonly transactions at once use four readers; two are kept after them. The
    // writer is connected again only for a readwrite transaction.
    let db = f.open("d0", None, |_, _, _| Ok(())).unwrap();
    let readers: Vec<_> = (0..4)
        .map(|_| db.transaction(&["s"], TransactionMode::ReadOnly).unwrap())
        .collect();
    for tx in &readers {
        assert_eq!(
            tx.object_store("s").unwrap().get(Key::from(0)).unwrap(),
            Some(Value::from(2))
        );
    }
    assert_eq!(settled_connections(&mut client, 2 + 1 + 4), 2 + 1 + 4);
    for tx in &readers {
        tx.commit().unwrap();
    }
    assert_eq!(settled_connections(&mut client, 2 + 1 + 2), 2 + 1 + 2);
    drop(readers);
    drop(db);
    assert_eq!(settled_connections(&mut client, 2), 2);
    drop(f);
    assert_eq!(settled_connections(&mut client, 1), 1, "the listener");
}

/// `holders` once it is one server process other than `before`'s, or after 10 s.
fn next_holder(client: &mut postgres::Client, before: &[i32]) -> Vec<i32> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let pids = holders(client);
        if pids.len() == 1 && pids != before || Instant::now() >= deadline {
            return pids;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A session connection ended under an open connection (as a server restart ends it) takes
/// the process's lock with it; the process takes it again on a new session by itself, so a
/// deletion elsewhere waits for the connection again and the connection is told.
#[test]
fn a_lost_session_lock_is_taken_again_and_a_deletion_waits_for_it() {
    if !support::on_postgres() {
        return;
    }
    let place = support::place();
    let f = place.factory();
    let db = f
        .open("x", Some(1), |tx, _, _| {
            tx.create_object_store("s", None, false).map(|_| ())
        })
        .unwrap();
    let told = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let t = told.clone();
    db.on_version_change(move |c| t.lock().unwrap().push(*c));
    let mut client = admin(&place);
    let before = holders(&mut client);
    assert_eq!(before.len(), 1);
    client
        .execute("SELECT pg_terminate_backend($1)", &[&before[0]])
        .unwrap();
    // Taken again without any call of the process's own.
    let after = next_holder(&mut client, &before);
    assert_eq!(after.len(), 1);
    assert_ne!(after, before);
    // Another host's deletion cannot take the lock exclusively…
    assert!(!client
        .query_one("SELECT pg_try_advisory_lock(7611, 1)", &[])
        .unwrap()
        .get::<_, bool>(0));

    let mut deleter = Factory::open_url(&place.location()).unwrap();
    deleter.set_lock_timeout(Duration::from_millis(500));
    let mut blocked = Vec::new();
    let err = deleter
        .delete_database_with("x", &mut |c| blocked.push(*c))
        .unwrap_err();
    assert_eq!(
        (err.name(), err.message()),
        (
            "InvalidStateError",
            "database \"x\" is open through another factory of this process; close it there first (waited 500 ms)"
        )
    );
    // … and the connection is told through the new session's notice.
    let deletion = VersionChange {
        old_version: 1,
        new_version: None,
    };
    assert_eq!(blocked, vec![deletion]);
    assert_eq!(*told.lock().unwrap(), vec![deletion]);

    // A transaction started right after the session was ended takes the lock again first.
    let pid = holders(&mut client)[0];
    client
        .execute("SELECT pg_terminate_backend($1)", &[&pid])
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while client
        .query_one(
            "SELECT count(*) FROM pg_stat_activity WHERE pid = $1",
            &[&pid],
        )
        .unwrap()
        .get::<_, i64>(0)
        > 0
    {
        assert!(Instant::now() < deadline, "the session never ended");
        std::thread::sleep(Duration::from_millis(1));
    }
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    let now = holders(&mut client);
    assert_eq!(now.len(), 1);
    assert_ne!(now, vec![pid]);
    tx.object_store("s")
        .unwrap()
        .put(Value::from("after"), Some(Key::from(1)))
        .unwrap();
    tx.commit().unwrap();
    drop(db);
    assert_eq!(deleter.delete_database("x").unwrap(), 1);
}

/// When another process upgraded the database while the lock was away, the connection acts
/// as closed: its transactions fail with `InvalidStateError`; a new open sees the upgrade.
#[test]
fn a_database_upgraded_while_the_session_lock_was_lost_closes_the_connection() {
    if !support::on_postgres() {
        return;
    }
    let place = support::place();
    let f = place.factory();
    let db = f
        .open("x", Some(1), |tx, _, _| {
            tx.create_object_store("s", None, false).map(|_| ())
        })
        .unwrap();
    let mut client = admin(&place);
    let before = holders(&mut client);
    assert_eq!(before.len(), 1);
    client
        .execute("SELECT pg_terminate_backend($1)", &[&before[0]])
        .unwrap();
    // Another process takes the database as soon as the lock is gone, and upgrades it.
    let deadline = Instant::now() + Duration::from_secs(10);
    while !client
        .query_one("SELECT pg_try_advisory_lock(7611, 1)", &[])
        .unwrap()
        .get::<_, bool>(0)
    {
        assert!(Instant::now() < deadline, "the lost lock was never let go");
        std::thread::sleep(Duration::from_millis(1));
    }
    client
        .execute("UPDATE indexa.catalog SET version = 2 WHERE id = 1", &[])
        .unwrap();
    client
        .execute("SELECT pg_advisory_unlock(7611, 1)", &[])
        .unwrap();

    let message = "the connection to database \"x\" is closed: its lock on the PostgreSQL server \
                   was lost (a server restart?) and the database was deleted or upgraded meanwhile";
    for _ in 0..2 {
        let err = db
            .transaction(&["s"], TransactionMode::ReadOnly)
            .unwrap_err();
        assert_eq!((err.name(), err.message()), ("InvalidStateError", message));
    }
    let again = f.open("x", None, |_, _, _| Ok(())).unwrap();
    assert_eq!(again.version(), 2);
    let tx = again
        .transaction(&["s"], TransactionMode::ReadOnly)
        .unwrap();
    assert_eq!(tx.object_store("s").unwrap().count(None).unwrap(), 0);
}

/// An open that waits behind a deletion (itself waiting for an open connection) goes on
/// once the deletion is done, as a new open: the database is created again, empty, as on a
/// data directory and in the spec's connection queue.
#[test]
fn an_open_queued_behind_a_deletion_opens_the_database_anew() {
    if !support::on_postgres() {
        return;
    }
    let place = support::place();
    let f = place.factory();
    let db = f
        .open("dw", Some(3), |tx, _, _| {
            tx.create_object_store("s", None, false).map(|_| ())
        })
        .unwrap();
    let mut deleter = place.factory();
    deleter.set_lock_timeout(Duration::from_secs(20));
    let deletion = std::thread::spawn(move || deleter.delete_database("dw"));
    std::thread::sleep(Duration::from_millis(300));
    let mut opener = place.factory();
    opener.set_lock_timeout(Duration::from_secs(20));
    let open = std::thread::spawn(move || {
        let db = opener.open("dw", None, |_, _, _| Ok(()))?;
        let names = db.object_store_names();
        let err = db
            .transaction(&["s"], TransactionMode::ReadOnly)
            .unwrap_err();
        Ok::<_, indexa::Error>((db.version(), names, err.name(), err.message().to_owned()))
    });
    std::thread::sleep(Duration::from_millis(300));
    assert!(!deletion.is_finished());
    assert!(!open.is_finished());
    db.close();
    assert_eq!(deletion.join().unwrap().unwrap(), 3);
    assert_eq!(
        open.join().unwrap().unwrap(),
        (
            1,
            Vec::<String>::new(),
            "NotFoundError",
            "no object store named \"s\"".to_owned()
        )
    );
    assert_eq!(f.version("dw").unwrap(), 1);
}
