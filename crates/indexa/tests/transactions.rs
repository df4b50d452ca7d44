//! Transactions, versions and schema changes: spec error names and all-or-nothing behaviour.

mod support;

use indexa::{parse_value, Durability, Factory, Key, KeyPath, TransactionMode, Value};

fn v(text: &str) -> Value {
    parse_value(text).unwrap()
}

fn factory_with_store() -> (support::TestFactory, indexa::Database) {
    let factory = support::factory();
    let db = factory
        .open("db", Some(1), |tx, _, _| {
            let s = tx.create_object_store("s", Some(KeyPath::parse("id")?), false)?;
            s.create_index("by_email", KeyPath::parse("email")?, true, false)?;
            s.create_index("tags", KeyPath::parse("tags")?, false, true)?;
            tx.create_object_store("other", None, true)?;
            Ok(())
        })
        .unwrap();
    (factory, db)
}

#[test]
fn readonly_transactions_refuse_writes() {
    let (_f, db) = factory_with_store();
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let s = tx.object_store("s").unwrap();
    assert_eq!(
        s.put(v(r#"{"id":1}"#), None).unwrap_err().name(),
        "ReadOnlyError"
    );
    assert_eq!(
        s.add(v(r#"{"id":1}"#), None).unwrap_err().name(),
        "ReadOnlyError"
    );
    assert_eq!(s.delete(Key::from(1)).unwrap_err().name(), "ReadOnlyError");
    assert_eq!(s.clear().unwrap_err().name(), "ReadOnlyError");
}

#[test]
fn scope_and_lifecycle_errors() {
    let (_f, db) = factory_with_store();
    assert_eq!(
        db.transaction::<&str>(&[], TransactionMode::ReadOnly)
            .unwrap_err()
            .name(),
        "InvalidAccessError"
    );
    assert_eq!(
        db.transaction(&["nope"], TransactionMode::ReadOnly)
            .unwrap_err()
            .name(),
        "NotFoundError"
    );
    assert_eq!(
        db.transaction(&["s"], TransactionMode::VersionChange)
            .unwrap_err()
            .name(),
        "TypeError"
    );
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    assert_eq!(
        tx.object_store("other").unwrap_err().name(),
        "NotFoundError"
    );
    assert_eq!(tx.object_store_names(), ["s"]);
    let s = tx.object_store("s").unwrap();
    s.put(v(r#"{"id":1}"#), None).unwrap();
    // Schema changes need a versionchange transaction.
    assert_eq!(
        tx.create_object_store("x", None, false).unwrap_err().name(),
        "InvalidStateError"
    );
    assert_eq!(
        s.create_index("i", KeyPath::parse("a").unwrap(), false, false)
            .unwrap_err()
            .name(),
        "InvalidStateError"
    );
    tx.commit().unwrap();
    assert_eq!(
        s.get(Key::from(1)).unwrap_err().name(),
        "TransactionInactiveError"
    );
    assert_eq!(
        s.put(v(r#"{"id":2}"#), None).unwrap_err().name(),
        "TransactionInactiveError"
    );
    assert_eq!(tx.commit().unwrap_err().name(), "InvalidStateError");
    assert_eq!(
        tx.object_store("s").unwrap_err().name(),
        "TransactionInactiveError"
    );
    db.close();
    assert_eq!(
        db.transaction(&["s"], TransactionMode::ReadOnly)
            .unwrap_err()
            .name(),
        "InvalidStateError"
    );
}

#[test]
fn dropping_or_aborting_reverts_everything() {
    let (_f, db) = factory_with_store();
    {
        let tx = db
            .transaction(&["s", "other"], TransactionMode::ReadWrite)
            .unwrap();
        tx.object_store("s")
            .unwrap()
            .put(v(r#"{"id":1}"#), None)
            .unwrap();
        tx.object_store("other").unwrap().put(v("1"), None).unwrap();
        // Dropped without commit.
    }
    let tx = db
        .transaction_with_durability(
            &["s", "other"],
            TransactionMode::ReadWrite,
            Durability::Relaxed,
        )
        .unwrap();
    assert_eq!(tx.object_store("s").unwrap().count(None).unwrap(), 0);
    let other = tx.object_store("other").unwrap();
    assert_eq!(other.current_number().unwrap(), Some(1));
    assert_eq!(other.put(v("1"), None).unwrap(), Key::from(1));
    tx.abort();
    assert!(tx.is_finished() && !tx.was_committed());
    let tx = db
        .transaction(&["other"], TransactionMode::ReadOnly)
        .unwrap();
    assert_eq!(
        tx.object_store("other").unwrap().current_number().unwrap(),
        Some(1)
    );
}

#[test]
fn failed_requests_leave_no_trace() {
    let (_f, db) = factory_with_store();
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    let s = tx.object_store("s").unwrap();
    s.put(v(r#"{"id":1,"email":"a@x","tags":["x","y"]}"#), None)
        .unwrap();
    // add over an existing key.
    assert_eq!(
        s.add(v(r#"{"id":1,"email":"b@x"}"#), None)
            .unwrap_err()
            .name(),
        "ConstraintError"
    );
    // put of another record that collides on the unique index.
    assert_eq!(
        s.put(v(r#"{"id":2,"email":"a@x","tags":["z"]}"#), None)
            .unwrap_err()
            .name(),
        "ConstraintError"
    );
    // put replacing record 1 with an invalid key path value.
    assert_eq!(
        s.put(v(r#"{"id":null}"#), None).unwrap_err().name(),
        "DataError"
    );
    assert_eq!(
        s.put(v(r#"{"nothing":1}"#), None).unwrap_err().name(),
        "DataError"
    );
    assert_eq!(s.count(None).unwrap(), 1);
    assert_eq!(s.index("tags").unwrap().count(None).unwrap(), 2);
    assert_eq!(
        s.index("tags")
            .unwrap()
            .count(Some(Key::from("z").into()))
            .unwrap(),
        0
    );
    assert_eq!(
        s.get(Key::from(1)).unwrap(),
        Some(v(r#"{"id":1,"email":"a@x","tags":["x","y"]}"#))
    );
    // Replacing a record with itself keeps its unique key; index entries follow the value.
    s.put(v(r#"{"id":1,"email":"a@x","tags":["q"]}"#), None)
        .unwrap();
    assert_eq!(
        s.index("tags")
            .unwrap()
            .get_all_keys(Key::from("q"))
            .unwrap(),
        [Key::from(1)]
    );
    assert_eq!(s.index("tags").unwrap().count(None).unwrap(), 1);
    // The transaction is still usable and commits.
    tx.commit().unwrap();
}

#[test]
fn versions_and_failed_upgrades() {
    let factory = support::factory();
    assert_eq!(
        factory
            .open("db", Some(0), |_, _, _| Ok(()))
            .unwrap_err()
            .name(),
        "TypeError"
    );
    // A failed first upgrade leaves no database behind.
    let err = factory
        .open("db", Some(1), |tx, _, _| {
            tx.create_object_store("s", None, false)?;
            Err(indexa::Error::Data("changed my mind".into()))
        })
        .unwrap_err();
    assert_eq!(err.name(), "DataError");
    assert!(factory.databases().unwrap().is_empty());

    let db = factory
        .open("db", None, |tx, old, new| {
            assert_eq!((old, new), (0, 1));
            tx.create_object_store("s", None, true).map(|_| ())
        })
        .unwrap();
    assert_eq!(db.version(), 1);
    assert_eq!(
        factory
            .open("db", Some(0), |_, _, _| Ok(()))
            .unwrap_err()
            .name(),
        "TypeError"
    );
    // An aborted upgrade leaves version and schema as they were.
    let err = factory
        .open("db", Some(5), |tx, old, new| {
            assert_eq!((old, new), (1, 5));
            tx.delete_object_store("s")?;
            tx.create_object_store("t", None, false)?;
            tx.abort();
            Ok(())
        })
        .unwrap_err();
    assert_eq!(err.name(), "AbortError");
    let db = factory.open("db", None, |_, _, _| Ok(())).unwrap();
    assert_eq!(db.version(), 1);
    assert_eq!(db.object_store_names(), ["s"]);
    assert_eq!(
        factory
            .open("db", Some(1), |_, _, _| Ok(()))
            .map(|d| d.version()),
        Ok(1)
    );
    let upgraded = factory
        .open("db", Some(2), |tx, _, _| {
            tx.object_store("s")?.rename("renamed")?;
            Ok(())
        })
        .unwrap();
    assert_eq!(upgraded.object_store_names(), ["renamed"]);
    assert_eq!(
        factory
            .open("db", Some(1), |_, _, _| Ok(()))
            .unwrap_err()
            .name(),
        "VersionError"
    );
    assert_eq!(factory.delete_database("db").unwrap(), 2);
    assert_eq!(
        upgraded
            .transaction(&["renamed"], TransactionMode::ReadOnly)
            .unwrap_err()
            .name(),
        "InvalidStateError"
    );
    assert_eq!(factory.delete_database("db").unwrap(), 0);
}

#[test]
fn schema_errors_use_spec_names() {
    let factory = support::factory();
    factory
        .open("db", Some(1), |tx, _, _| {
            let s = tx.create_object_store("s", None, false)?;
            assert_eq!(
                tx.create_object_store("s", None, false).unwrap_err().name(),
                "ConstraintError"
            );
            assert_eq!(
                tx.create_object_store("a", Some(KeyPath::parse("")?), true)
                    .unwrap_err()
                    .name(),
                "InvalidAccessError"
            );
            assert_eq!(
                tx.create_object_store("b", Some(KeyPath::compound(&["x", "y"])?), true)
                    .unwrap_err()
                    .name(),
                "InvalidAccessError"
            );
            assert_eq!(KeyPath::parse("a b").unwrap_err().name(), "SyntaxError");
            s.create_index("i", KeyPath::parse("x")?, false, false)?;
            assert_eq!(
                s.create_index("i", KeyPath::parse("y")?, false, false)
                    .unwrap_err()
                    .name(),
                "ConstraintError"
            );
            assert_eq!(
                s.create_index("m", KeyPath::compound(&["x", "y"])?, false, true)
                    .unwrap_err()
                    .name(),
                "InvalidAccessError"
            );
            // Index names are unique per store only.
            let t = tx.create_object_store("t", None, false)?;
            t.create_index("i", KeyPath::parse("x")?, false, false)?;
            assert_eq!(s.delete_index("nope").unwrap_err().name(), "NotFoundError");
            assert_eq!(
                tx.delete_object_store("nope").unwrap_err().name(),
                "NotFoundError"
            );
            let i = s.index("i")?;
            i.rename("j")?;
            assert_eq!(s.index_names()?, ["j"]);
            s.create_index("k", KeyPath::parse("x")?, false, false)?;
            assert_eq!(i.rename("k").unwrap_err().name(), "ConstraintError");
            s.delete_index("j")?;
            assert_eq!(i.name().unwrap_err().name(), "InvalidStateError");
            tx.delete_object_store("t")?;
            assert_eq!(
                t.put(v("1"), Some(Key::from(1))).unwrap_err().name(),
                "InvalidStateError"
            );
            assert_eq!(tx.object_store_names(), ["s"]);
            Ok(())
        })
        .unwrap();
}

#[test]
fn creating_an_index_populates_it_and_skips_records_without_keys() {
    let factory = support::factory();
    factory
        .open("db", Some(1), |tx, _, _| {
            let s = tx.create_object_store("movies", None, true)?;
            s.put(v(r#"{"genre":"Drama"}"#), None)?;
            s.put(v(r#"{"genre":null}"#), None)?;
            s.put(v(r#"{"title":"x"}"#), None)?;
            s.put(v(r#"{"genre":"Comedy"}"#), None)?;
            let ix = s.create_index("genre", KeyPath::parse("genre")?, true, false)?;
            assert_eq!(ix.count(None)?, 2);
            assert_eq!(
                ix.get_all_keys(indexa::Query::all())?,
                [Key::from(4), Key::from(1)]
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn readers_run_beside_a_writer_and_see_a_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let factory = Factory::open_dir(dir.path()).unwrap();
    let db = factory
        .open("db", Some(1), |tx, _, _| {
            let s = tx.create_object_store("s", None, false)?;
            s.put(v("0"), Some(Key::from("n")))?;
            Ok(())
        })
        .unwrap();
    let writer = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    writer
        .object_store("s")
        .unwrap()
        .put(v("1"), Some(Key::from("n")))
        .unwrap();
    let db = std::sync::Arc::new(db);
    let readers: Vec<_> = (0..4)
        .map(|_| {
            let db = db.clone();
            std::thread::spawn(move || {
                let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
                tx.object_store("s").unwrap().get(Key::from("n")).unwrap()
            })
        })
        .collect();
    for r in readers {
        assert_eq!(r.join().unwrap(), Some(v("0")));
    }
    writer.commit().unwrap();
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    assert_eq!(
        tx.object_store("s").unwrap().get(Key::from("n")).unwrap(),
        Some(v("1"))
    );
}

#[test]
fn database_names_never_escape_the_directory() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let factory = Factory::open_dir(&data).unwrap();
    let long = "x".repeat(10_000);
    for name in ["../../etc/x", "CON", "", "a/b\\c", "ñ 🚀", long.as_str()] {
        let db = factory
            .open(name, Some(1), |tx, _, _| {
                tx.create_object_store("s", None, false).map(|_| ())
            })
            .unwrap();
        assert_eq!(db.name(), name);
    }
    let mut listed: Vec<String> = factory
        .databases()
        .unwrap()
        .into_iter()
        .map(|d| d.name)
        .collect();
    listed.sort();
    let mut expected = vec!["", "../../etc/x", "CON", "a/b\\c", "ñ 🚀", long.as_str()];
    expected.sort();
    assert_eq!(listed, expected);
    // Nothing was written outside the data directory.
    let outside: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(outside, [std::ffi::OsString::from("data")]);
}

#[test]
fn a_second_writer_on_the_same_thread_is_refused_not_deadlocked() {
    let (_f, db) = factory_with_store();
    let first = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    assert_eq!(
        db.transaction(&["other"], TransactionMode::ReadWrite)
            .unwrap_err()
            .name(),
        "InvalidStateError"
    );
    // Readers are fine beside it.
    let reader = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    assert_eq!(reader.object_store("s").unwrap().count(None).unwrap(), 0);
    first.commit().unwrap();
    db.transaction(&["other"], TransactionMode::ReadWrite)
        .unwrap()
        .commit()
        .unwrap();
}

/// Readwrite transactions of other threads wait for the running one and each runs once it
/// commits: four threads, each waiting behind the first, add their records in turn (a waiter
/// never woken fails the test after a minute).
#[test]
fn writers_on_other_threads_wait_their_turn() {
    let dir = tempfile::tempdir().unwrap();
    let factory = Factory::open_dir(dir.path()).unwrap();
    let db = factory
        .open("db", Some(1), |tx, _, _| {
            tx.create_object_store("s", None, true)?;
            Ok(())
        })
        .unwrap();
    let db = std::sync::Arc::new(db);
    let first = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    let waiting: Vec<_> = (0..4)
        .map(|i| {
            let db = db.clone();
            std::thread::spawn(move || {
                for _ in 0..25 {
                    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
                    tx.object_store("s")
                        .unwrap()
                        .add(Value::Number(f64::from(i)), None)
                        .unwrap();
                    tx.commit().unwrap();
                }
            })
        })
        .collect();
    std::thread::sleep(std::time::Duration::from_millis(100));
    first
        .object_store("s")
        .unwrap()
        .add(v("\"first\""), None)
        .unwrap();
    first.commit().unwrap();
    // A writer never woken would leave its thread waiting: fail instead of hanging.
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for w in waiting {
            w.join().unwrap();
        }
        done.send(()).unwrap();
    });
    finished
        .recv_timeout(std::time::Duration::from_secs(60))
        .expect("the waiting writers finished");
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let s = tx.object_store("s").unwrap();
    assert_eq!(s.count(None).unwrap(), 101);
    assert_eq!(s.get(Key::Number(1.0)).unwrap(), Some(v("\"first\"")));
    // After it, each thread's 25 records.
    let mut per_thread = [0; 4];
    for value in s
        .get_all(indexa::KeyRange::lower_bound(Key::Number(2.0), false))
        .unwrap()
    {
        match value {
            Value::Number(i) => per_thread[i as usize] += 1,
            other => panic!("unexpected record {other:?}"),
        }
    }
    assert_eq!(per_thread, [25; 4]);
}

fn nested(depth: usize) -> Value {
    let mut value = Value::Null;
    for _ in 0..depth {
        value = Value::Array(vec![value]);
    }
    value
}

#[test]
fn values_too_deep_to_read_back_are_refused() {
    let (_f, db) = factory_with_store();
    let tx = db
        .transaction(&["other"], TransactionMode::ReadWrite)
        .unwrap();
    let other = tx.object_store("other").unwrap();
    let deepest = nested(indexa::MAX_VALUE_DEPTH - 1);
    let key = other.put(deepest.clone(), None).unwrap();
    assert_eq!(other.get(key).unwrap(), Some(deepest));
    assert_eq!(
        other
            .put(nested(indexa::MAX_VALUE_DEPTH), None)
            .unwrap_err()
            .name(),
        "DataError"
    );
    assert_eq!(other.count(None).unwrap(), 1);
}

#[test]
fn atomically_undoes_a_group_of_requests_that_fails() {
    let (_f, db) = factory_with_store();
    let tx = db
        .transaction(&["s", "other"], TransactionMode::ReadWrite)
        .unwrap();
    let other = tx.object_store("other").unwrap();
    assert_eq!(other.put(v("1"), None).unwrap(), Key::from(1));
    let err = tx
        .atomically(|tx| {
            let other = tx.object_store("other")?;
            assert_eq!(other.put(v("2"), None)?, Key::from(2));
            tx.object_store("s")?
                .put(v(r#"{"id":1,"email":"a@x","tags":["t"]}"#), None)?;
            other.put(v("3"), Some(Key::from("x")))?;
            Err::<(), _>(indexa::Error::Data("stop".into()))
        })
        .unwrap_err();
    assert_eq!(err.name(), "DataError");
    // Records, index entries and the key generator are as before the group.
    assert_eq!(other.count(None).unwrap(), 1);
    assert_eq!(tx.object_store("s").unwrap().count(None).unwrap(), 0);
    assert_eq!(
        tx.object_store("s")
            .unwrap()
            .index("tags")
            .unwrap()
            .count(None)
            .unwrap(),
        0
    );
    assert_eq!(other.put(v("2"), None).unwrap(), Key::from(2));
    // A group that succeeds keeps its changes.
    let key = tx
        .atomically(|tx| tx.object_store("other")?.put(v("3"), None))
        .unwrap();
    assert_eq!(key, Key::from(3));
    tx.commit().unwrap();
    let tx = db
        .transaction(&["other"], TransactionMode::ReadOnly)
        .unwrap();
    assert_eq!(tx.object_store("other").unwrap().count(None).unwrap(), 3);
    assert_eq!(
        tx.object_store("other").unwrap().current_number().unwrap(),
        Some(4)
    );
}

#[test]
fn atomically_restores_the_schema_in_an_upgrade() {
    let factory = support::factory();
    factory
        .open("db", Some(1), |tx, _, _| {
            tx.create_object_store("keep", None, false)?;
            let err = tx
                .atomically(|tx| {
                    tx.create_object_store("gone", None, false)?;
                    tx.delete_object_store("keep")?;
                    Err::<(), _>(indexa::Error::Constraint("no".into()))
                })
                .unwrap_err();
            assert_eq!(err.name(), "ConstraintError");
            assert_eq!(tx.object_store_names(), ["keep"]);
            Ok(())
        })
        .unwrap();
    let db = factory.open("db", None, |_, _, _| Ok(())).unwrap();
    assert_eq!(db.object_store_names(), ["keep"]);
}

#[test]
fn files_that_are_not_indexa_databases_are_left_alone() {
    let dir = tempfile::tempdir().unwrap();
    let factory = Factory::open_dir(dir.path()).unwrap();
    // Someone else's SQLite file, and garbage, under database names.
    let foreign = dir.path().join("db-other.indexa");
    {
        let c = rusqlite::Connection::open(&foreign).unwrap();
        c.execute_batch("CREATE TABLE t(x); INSERT INTO t VALUES (42);")
            .unwrap();
    }
    let garbage = dir.path().join("db-bad.indexa");
    std::fs::write(&garbage, b"garbage").unwrap();
    let before = std::fs::read(&foreign).unwrap();
    for name in ["other", "bad"] {
        let err = factory
            .open(name, Some(1), |tx, _, _| {
                tx.create_object_store("s", None, false).map(|_| ())
            })
            .unwrap_err();
        assert_eq!(err.name(), "UnknownError", "{name}");
        assert_eq!(
            factory.delete_database(name).unwrap_err().name(),
            "UnknownError",
            "{name}"
        );
    }
    assert_eq!(std::fs::read(&foreign).unwrap(), before);
    assert_eq!(std::fs::read(&garbage).unwrap(), b"garbage");
    assert!(factory.databases().unwrap().is_empty());
}

#[test]
fn versions_above_2_pow_53_minus_1_are_type_errors() {
    let factory = support::factory();
    assert_eq!(
        factory
            .open("db", Some(indexa::MAX_VERSION + 1), |_, _, _| Ok(()))
            .unwrap_err()
            .name(),
        "TypeError"
    );
    let db = factory
        .open("db", Some(indexa::MAX_VERSION), |_, _, _| Ok(()))
        .unwrap();
    assert_eq!(db.version(), indexa::MAX_VERSION);
}

#[test]
fn deleting_a_database_from_its_own_writer_thread_is_refused() {
    let (factory, db) = factory_with_store();
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    assert_eq!(
        factory.delete_database("db").unwrap_err().name(),
        "InvalidStateError"
    );
    // Nothing was deleted: the transaction goes on and commits.
    tx.object_store("s")
        .unwrap()
        .put(v(r#"{"id":1}"#), None)
        .unwrap();
    tx.commit().unwrap();
    assert_eq!(factory.delete_database("db").unwrap(), 1);
}

#[test]
fn injection_cannot_make_a_value_too_deep_to_read_back() {
    let factory = support::factory();
    let deep_path = vec!["a"; indexa::MAX_VALUE_DEPTH].join(".");
    let db = factory
        .open("db", Some(1), |tx, _, _| {
            tx.create_object_store("s", Some(KeyPath::parse(&deep_path)?), true)
                .map(|_| ())
        })
        .unwrap();
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    let s = tx.object_store("s").unwrap();
    assert_eq!(s.add(v("{}"), None).unwrap_err().name(), "DataError");
    assert_eq!(s.count(None).unwrap(), 0);
    assert_eq!(s.current_number().unwrap(), Some(1));
}

#[test]
fn begin_upgrade_returns_the_open_versionchange_transaction() {
    let factory = support::factory();
    assert_eq!(factory.version("lib").unwrap(), 0);
    let (db, upgrade) = factory.begin_upgrade("lib", 2).unwrap();
    let (tx, old) = upgrade.expect("a missing database is upgraded");
    assert_eq!(old, 0);
    assert_eq!(tx.mode(), TransactionMode::VersionChange);
    tx.create_object_store("books", None, true).unwrap();
    assert_eq!(
        tx.object_store("books")
            .unwrap()
            .put(Value::from("a"), None)
            .unwrap(),
        Key::from(1)
    );
    // Nothing is published before the commit.
    assert_eq!(db.version(), 0);
    tx.commit().unwrap();
    assert_eq!(db.version(), 2);
    assert_eq!(factory.version("lib").unwrap(), 2);
    assert_eq!(db.object_store_names(), vec!["books".to_string()]);

    // Already at the version: no transaction.
    let (_db2, none) = factory.begin_upgrade("lib", 2).unwrap();
    assert!(none.is_none());
    // Below it: VersionError; version 0: TypeError.
    assert_eq!(
        factory.begin_upgrade("lib", 1).unwrap_err().name(),
        "VersionError"
    );
    assert_eq!(
        factory.begin_upgrade("lib", 0).unwrap_err().name(),
        "TypeError"
    );
}

#[test]
fn an_aborted_begin_upgrade_leaves_the_database_as_before() {
    let factory = support::factory();
    let (_db, upgrade) = factory.begin_upgrade("fresh", 1).unwrap();
    let (tx, _) = upgrade.unwrap();
    tx.create_object_store("s", None, false).unwrap();
    tx.abort();
    assert_eq!(factory.version("fresh").unwrap(), 0);
    assert!(factory.databases().unwrap().is_empty());
    // The next open upgrades from 0 again, without the aborted store.
    let (db, upgrade) = factory.begin_upgrade("fresh", 3).unwrap();
    let (tx, old) = upgrade.unwrap();
    assert_eq!(old, 0);
    assert!(tx.object_store_names().is_empty());
    tx.commit().unwrap();
    assert_eq!(db.version(), 3);
}

#[test]
fn set_current_number_restores_a_generator_in_an_upgrade_only() {
    let factory = support::factory();
    let db = factory
        .open("g", Some(1), |tx, _, _| {
            let s = tx.create_object_store("auto", None, true)?;
            s.set_current_number(42)?;
            assert_eq!(s.current_number()?, Some(42));
            let plain = tx.create_object_store("plain", None, false)?;
            assert_eq!(
                plain.set_current_number(5).unwrap_err().name(),
                "InvalidStateError"
            );
            assert_eq!(s.set_current_number(0).unwrap_err().name(), "DataError");
            assert_eq!(
                s.set_current_number(indexa::MAX_GENERATED_KEY + 2)
                    .unwrap_err()
                    .name(),
                "DataError"
            );
            Ok(())
        })
        .unwrap();
    let tx = db
        .transaction(&["auto"], TransactionMode::ReadWrite)
        .unwrap();
    let s = tx.object_store("auto").unwrap();
    assert_eq!(
        s.set_current_number(7).unwrap_err().name(),
        "InvalidStateError"
    );
    // The number committed with the upgrade: the next generated key is 42.
    assert_eq!(s.add(Value::Null, None).unwrap(), Key::Number(42.0));
    tx.commit().unwrap();
    // Database files exist on SQLite only.
    if !support::on_postgres() {
        let path = factory.database_path("g");
        assert_eq!(path, factory.dir().join("db-g.indexa"));
        assert!(path.is_file());
        assert_eq!(
            factory.database_path("a/b"),
            factory.dir().join("db-a%2Fb.indexa")
        );
    }
}

/// A start that must not wait returns `None` while another readwrite transaction runs, of
/// this factory (another connection, or this thread's own) or of another process, and
/// starts once it has ended; readonly ones start meanwhile.
#[test]
fn a_start_without_waiting_leaves_a_held_writer_alone() {
    let (f, db) = factory_with_store();
    let other = db_of(&f.another());
    let second = db_of(&f);
    let running = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    running
        .object_store("s")
        .unwrap()
        .put(v(r#"{"id":1,"email":"a"}"#), None)
        .unwrap();
    let try_start = |db: &indexa::Database, mode| {
        db.try_transaction_with_durability(&["s"], mode, Durability::Relaxed)
            .unwrap()
    };
    assert!(try_start(&second, TransactionMode::ReadWrite).is_none());
    assert!(try_start(&db, TransactionMode::ReadWrite).is_none());
    assert!(try_start(&other, TransactionMode::ReadWrite).is_none());
    let reader = try_start(&other, TransactionMode::ReadOnly).unwrap();
    assert_eq!(reader.object_store("s").unwrap().count(None).unwrap(), 0);
    reader.commit().unwrap();
    // A start that waits still waits there once the tries are over (SQLite's busy timeout is
    // back): it begins when the running transaction commits.
    std::thread::scope(|scope| {
        let waiting = scope.spawn(|| {
            let tx = other
                .transaction(&["s"], TransactionMode::ReadWrite)
                .unwrap();
            tx.object_store("s").unwrap().count(None).unwrap()
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        running.commit().unwrap();
        assert_eq!(waiting.join().unwrap(), 1);
    });
    for db in [&other, &second] {
        let tx = try_start(db, TransactionMode::ReadWrite).unwrap();
        assert_eq!(tx.durability(), Durability::Relaxed);
        let s = tx.object_store("s").unwrap();
        let n = s.count(None).unwrap();
        s.put(v(&format!(r#"{{"id":{},"email":"e{n}"}}"#, n + 1)), None)
            .unwrap();
        tx.commit().unwrap();
    }
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    assert_eq!(tx.object_store("s").unwrap().count(None).unwrap(), 3);
    assert_eq!(
        db.try_transaction_with_durability(
            &["nope"],
            TransactionMode::ReadWrite,
            Durability::Default
        )
        .unwrap_err()
        .name(),
        "NotFoundError"
    );
}

fn db_of(factory: &Factory) -> indexa::Database {
    factory.open("db", Some(1), |_, _, _| Ok(())).unwrap()
}
