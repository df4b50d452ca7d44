//! Spec conformance checks against W3C "Indexed Database API 3.0"
//! (<https://www.w3.org/TR/IndexedDB-3/>): deleted object store and index handles, reverting
//! handles when an upgrade transaction aborts, `commit()` on a finished transaction, and
//! key path identifiers.

mod support;

use indexa::{parse_value, Key, KeyPath, TransactionMode, Value};

fn v(text: &str) -> Value {
    parse_value(text).unwrap()
}

fn k(n: i32) -> Key {
    Key::from(n)
}

/// IDBObjectStore.put() step 3: "If store has been deleted, throw an InvalidStateError".
/// A handle to a store deleted in this upgrade must not write into a store created after it
/// (store and index ids must never be reused within a database file).
#[test]
fn put_through_a_deleted_store_handle_is_invalid_state() {
    let factory = support::factory();
    let result = factory.open("db", Some(1), |tx, _, _| {
        let a = tx.create_object_store("a", None, false)?;
        tx.delete_object_store("a")?;
        let b = tx.create_object_store("b", None, false)?;
        assert_eq!(
            a.put(v(r#""stray""#), Some(k(1))).map_err(|e| e.name()),
            Err("InvalidStateError")
        );
        assert_eq!(b.count(None)?, 0);
        Ok(())
    });
    result.unwrap();
}

/// IDBIndex.get()/count()/openCursor() step: "If index or index's object store has been
/// deleted, throw an InvalidStateError". A handle to a deleted index must not read an index
/// created after it (index ids must never be reused either).
#[test]
fn reading_through_a_deleted_index_handle_is_invalid_state() {
    let factory = support::factory();
    factory
        .open("db", Some(1), |tx, _, _| {
            let s = tx.create_object_store("s", Some(KeyPath::parse("id")?), false)?;
            s.put(v(r#"{"id":1,"x":"a","y":"b"}"#), None)?;
            let x = s.create_index("x", KeyPath::parse("x")?, false, false)?;
            s.delete_index("x")?;
            s.create_index("y", KeyPath::parse("y")?, false, false)?;
            assert_eq!(
                x.count(None).map_err(|e| e.name()),
                Err("InvalidStateError")
            );
            assert_eq!(x.name().map_err(|e| e.name()), Err("InvalidStateError"));
            assert_eq!(
                x.get(k(1)).unwrap_err().message(),
                "the index has been deleted"
            );
            Ok(())
        })
        .unwrap();
}

/// IDBObjectStore.get(), getAll(), count(), openCursor() step 3: "If store has been
/// deleted, throw an InvalidStateError". Today these read the (now empty) id and succeed.
#[test]
fn reads_through_a_deleted_store_handle_are_invalid_state() {
    let factory = support::factory();
    factory
        .open("db", Some(1), |tx, _, _| {
            let a = tx.create_object_store("a", None, false)?;
            a.put(v("1"), Some(k(1)))?;
            tx.delete_object_store("a")?;
            assert_eq!(
                a.count(None).map_err(|e| e.name()),
                Err("InvalidStateError")
            );
            assert_eq!(a.get(k(1)).map_err(|e| e.name()), Err("InvalidStateError"));
            assert_eq!(
                a.get(k(1)).unwrap_err().message(),
                "the object store has been deleted"
            );
            assert_eq!(
                a.get_all(None).map_err(|e| e.name()),
                Err("InvalidStateError")
            );
            assert_eq!(
                a.open_cursor(None, Default::default())
                    .map(|_| ())
                    .map_err(|e| e.name()),
                Err("InvalidStateError")
            );
            Ok(())
        })
        .unwrap();
}

/// "Abort an upgrade transaction" (5.8): the connection's object store set goes back to the
/// stores that existed before, and every object store handle not newly created gets its
/// store's (old) name back, and its index handles their old names.
#[test]
fn aborting_an_upgrade_reverts_store_and_index_handle_names() {
    let factory = support::factory();
    factory
        .open("db", Some(1), |tx, _, _| {
            let a = tx.create_object_store("a", None, false)?;
            a.create_index("i", KeyPath::parse("i")?, false, false)?;
            Ok(())
        })
        .unwrap()
        .close();
    let result = factory.open("db", Some(2), |tx, _, _| {
        let a = tx.object_store("a")?;
        let i = a.index("i")?;
        a.rename("b")?;
        i.rename("j")?;
        tx.abort();
        assert_eq!(a.name().ok().as_deref(), Some("a"));
        assert_eq!(i.name().ok().as_deref(), Some("i"));
        assert_eq!(a.index_names().ok(), Some(vec!["i".to_owned()]));
        assert_eq!(tx.object_store_names(), vec!["a".to_owned()]);
        Ok(())
    });
    assert_eq!(result.unwrap_err().name(), "AbortError");
}

/// IDBTransaction.commit() step 1: "If this's state is not active, then throw an
/// InvalidStateError" (not TransactionInactiveError, which is for requests).
#[test]
fn commit_after_commit_is_invalid_state() {
    let factory = support::factory();
    let db = factory
        .open("db", Some(1), |tx, _, _| {
            tx.create_object_store("s", None, false)?;
            Ok(())
        })
        .unwrap();
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    tx.commit().unwrap();
    assert_eq!(tx.commit().unwrap_err().name(), "InvalidStateError");
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    tx.abort();
    assert_eq!(tx.commit().unwrap_err().name(), "InvalidStateError");
}

/// "Valid key path" (2.5): an ECMAScript IdentifierName, whose start is ID_Start (plus
/// Other_ID_Start), not XID_Start. U+037A and U+309B are identifier characters in
/// JavaScript (`var \u037a = 1` parses) but are not XID_Start.
#[test]
fn key_path_identifiers_follow_ecmascript_id_start() {
    for text in ["\u{37A}", "a.\u{309B}", "\u{FF9E}"] {
        assert!(KeyPath::parse(text).is_ok(), "{text:?}");
    }
}

/// "Store a record into an object store", step for multiEntry indexes: one index record per
/// distinct valid member of the array. Entries are written several per statement, so arrays
/// of 7, 8, 9 and 17 distinct members (around the statement's size), plus repeats and an
/// invalid member, must each give exactly their distinct members — on `add`, on `put`
/// replacing them, and on `createIndex` over existing records.
#[test]
fn multi_entry_arrays_of_every_length_index_each_distinct_member_once() {
    let factory = support::factory();
    let db = factory
        .open("db", Some(1), |tx, _, _| {
            let s = tx.create_object_store("s", None, false)?;
            s.create_index("tags", KeyPath::parse("tags")?, false, true)?;
            Ok(())
        })
        .unwrap();
    let record = |n: i32, offset: i32| {
        let mut tags: Vec<String> = (0..n).map(|i| (i + offset).to_string()).collect();
        tags.push((offset).to_string());
        tags.push("null".into());
        v(&format!(r#"{{"tags": [{}]}}"#, tags.join(", ")))
    };
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    let s = tx.object_store("s").unwrap();
    for n in [7, 8, 9, 17] {
        s.add(record(n, 0), Some(k(n))).unwrap();
    }
    let tags = s.index("tags").unwrap();
    // Member i is held by every record with more than i members.
    for i in 0..17 {
        let expected: Vec<Key> = [7, 8, 9, 17]
            .into_iter()
            .filter(|n| *n > i)
            .map(k)
            .collect();
        assert_eq!(tags.get_all_keys(k(i)).unwrap(), expected, "member {i}");
    }
    assert_eq!(tags.count(None).unwrap(), 7 + 8 + 9 + 17);
    // put replaces the 17 entries of record 17 by 9 others.
    s.put(record(9, 100), Some(k(17))).unwrap();
    assert_eq!(tags.count(None).unwrap(), 7 + 8 + 9 + 9);
    assert_eq!(tags.get_all_keys(k(16)).unwrap(), Vec::<Key>::new());
    assert_eq!(tags.get_all_keys(k(108)).unwrap(), vec![k(17)]);
    tx.commit().unwrap();
    drop(db);
    let db = factory
        .open("db", Some(2), |tx, _, _| {
            let s = tx.object_store("s")?;
            s.create_index("again", KeyPath::parse("tags")?, true, true)?;
            Ok(())
        })
        .map(|db| db.name().to_owned());
    // The records share members, so a unique multiEntry index cannot be built over them.
    assert_eq!(db.map_err(|e| e.name()), Err("ConstraintError"));
}

/// "Store a record into an object store" step 2 (a put over a record deletes it and its index
/// entries) and step 5 (index entries of the new value): a put that keeps one index's keys and
/// changes another's leaves each index with exactly the new value's keys.
#[test]
fn a_put_over_a_record_keeps_and_replaces_its_index_entries() {
    let factory = support::factory();
    let db = factory
        .open("db", Some(1), |tx, _, _| {
            let s = tx.create_object_store("s", Some(KeyPath::parse("id")?), false)?;
            s.create_index("a", KeyPath::parse("a")?, false, false)?;
            s.create_index("b", KeyPath::parse("b")?, true, false)?;
            s.create_index("tags", KeyPath::parse("tags")?, false, true)?;
            Ok(())
        })
        .unwrap();
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    let s = tx.object_store("s").unwrap();
    s.put(v(r#"{"id":1,"a":1,"b":"x","tags":["p","q"]}"#), None)
        .unwrap();
    s.put(v(r#"{"id":1,"a":1,"b":"y","tags":["p","q"]}"#), None)
        .unwrap();
    // Every (index key, primary key) entry of the index, in order.
    let keys = |index: &str| {
        let mut cursor = s
            .index(index)
            .unwrap()
            .open_key_cursor(None, indexa::CursorDirection::Next)
            .unwrap();
        let mut entries = Vec::new();
        while let (Some(key), Some(pk)) = (cursor.key(), cursor.primary_key()) {
            entries.push((key.clone(), pk.clone()));
            cursor.continue_key(&tx, None).unwrap();
        }
        entries
    };
    assert_eq!(keys("a"), [(k(1), k(1))]);
    assert_eq!(keys("b"), [(Key::from("y"), k(1))]);
    assert_eq!(
        keys("tags"),
        [(Key::from("p"), k(1)), (Key::from("q"), k(1))]
    );
    // "x" is free again; "y" is taken.
    s.put(v(r#"{"id":2,"b":"x"}"#), None).unwrap();
    assert_eq!(
        s.put(v(r#"{"id":3,"b":"y"}"#), None).map_err(|e| e.name()),
        Err("ConstraintError")
    );
    s.put(v(r#"{"id":1,"a":2,"b":"y","tags":["q"]}"#), None)
        .unwrap();
    assert_eq!(keys("a"), [(k(2), k(1))]);
    assert_eq!(keys("tags"), [(Key::from("q"), k(1))]);
    tx.commit().unwrap();
}
