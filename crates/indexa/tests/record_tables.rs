//! An object store's records start in a row id table keyed by whole numbers and move to a
//! table of any keys when the first other key is written (`docs/format.md`, "Record tables").
//! Either way, keys, ranges and order are the spec's; an aborted transaction or a failed
//! request takes the move back with everything else.

mod visits;

use indexa::{Database, Factory, Key, KeyRange, Query, TransactionMode, Value};
use visits::ChangeInside;

fn open(dir: &std::path::Path) -> Database {
    Factory::open_dir(dir)
        .unwrap()
        .open("t", Some(1), |tx, _, _| {
            let s = tx.create_object_store("s", None, false)?;
            s.create_index("v", indexa::KeyPath::parse("")?, true, false)?;
            Ok(())
        })
        .unwrap()
}

/// Whether the store's record table is a row id table (read from the file).
fn row_id_table(dir: &std::path::Path) -> bool {
    let conn = rusqlite::Connection::open(dir.join("db-t.indexa")).unwrap();
    let sql: String = conn
        .query_row(
            "SELECT sql FROM sqlite_master WHERE name = 'record_1'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    !sql.contains("WITHOUT ROWID")
}

fn put(db: &Database, key: Key, value: i32) -> indexa::Result<()> {
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite)?;
    tx.object_store("s")?.put(Value::from(value), Some(key))?;
    tx.commit()
}

fn keys(db: &Database, query: impl Into<Query>) -> Vec<Key> {
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let keys = tx.object_store("s").unwrap().get_all_keys(query).unwrap();
    tx.commit().unwrap();
    keys
}

#[test]
fn a_store_moves_to_any_keys_on_its_first_other_key() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    for (k, v) in [(3.0, 1), (-2.0, 2), (9_007_199_254_740_992.0, 3)] {
        put(&db, Key::Number(k), v).unwrap();
    }
    assert!(row_id_table(dir.path()));
    // Bounds of any type on a table of whole numbers.
    let n = |k: f64| Key::Number(k);
    assert_eq!(
        keys(&db, KeyRange::lower_bound(Key::from("a"), false)),
        Vec::<Key>::new()
    );
    assert_eq!(
        keys(&db, KeyRange::upper_bound(Key::from("a"), false)),
        [n(-2.0), n(3.0), n(9_007_199_254_740_992.0)]
    );
    assert_eq!(
        keys(&db, KeyRange::bound(n(-2.5), n(3.0), false, true).unwrap()),
        [n(-2.0)]
    );
    assert_eq!(
        keys(
            &db,
            KeyRange::bound(n(2.5), n(f64::INFINITY), false, false).unwrap()
        ),
        [n(3.0), n(9_007_199_254_740_992.0)]
    );
    assert_eq!(keys(&db, Key::Number(2.9)), Vec::<Key>::new());

    // A fraction in an aborted transaction: the move is taken back.
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    tx.object_store("s")
        .unwrap()
        .put(Value::from(4), Some(n(0.5)))
        .unwrap();
    tx.abort();
    assert!(row_id_table(dir.path()));
    // A string key in a request that fails (the unique index already holds 1): no trace.
    let err = put(&db, Key::from("x"), 1).unwrap_err();
    assert_eq!(err.name(), "ConstraintError");
    assert!(row_id_table(dir.path()));
    assert_eq!(keys(&db, Query::all()).len(), 3);

    put(&db, n(0.5), 4).unwrap();
    put(&db, Key::from("x"), 5).unwrap();
    put(&db, n(f64::NEG_INFINITY), 6).unwrap();
    assert!(!row_id_table(dir.path()));
    assert_eq!(
        keys(&db, Query::all()),
        [
            n(f64::NEG_INFINITY),
            n(-2.0),
            n(0.5),
            n(3.0),
            n(9_007_199_254_740_992.0),
            Key::from("x")
        ]
    );
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let index = tx.object_store("s").unwrap().index("v").unwrap();
    assert_eq!(
        index.get_all_keys(Query::all()).unwrap(),
        [
            n(3.0),
            n(-2.0),
            n(9_007_199_254_740_992.0),
            n(0.5),
            Key::from("x"),
            n(f64::NEG_INFINITY)
        ]
    );
}

/// A cursor open on the store while a write moves it to any keys goes on from where it was,
/// and sees the new record in its place.
#[test]
fn a_cursor_goes_on_across_the_move() {
    let dir = tempfile::tempdir().unwrap();
    let db = open(dir.path());
    for k in 1..=300 {
        put(&db, Key::from(k), k).unwrap();
    }
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    let store = tx.object_store("s").unwrap();
    let mut cursor = store
        .open_cursor(None, indexa::CursorDirection::Next)
        .unwrap();
    cursor.continue_key(&tx, None).unwrap();
    assert_eq!(cursor.key(), Some(&Key::from(2)));
    store.put(Value::from(1000), Some(Key::from("z"))).unwrap();
    store
        .put(Value::from(1001), Some(Key::Number(2.5)))
        .unwrap();
    let mut seen = vec![cursor.key().cloned().unwrap()];
    loop {
        cursor.continue_key(&tx, None).unwrap();
        match cursor.key() {
            Some(k) => seen.push(k.clone()),
            None => break,
        }
    }
    tx.commit().unwrap();
    assert!(!row_id_table(dir.path()));
    let mut expected = vec![Key::from(2), Key::Number(2.5)];
    expected.extend((3..=300).map(Key::from));
    expected.push(Key::from("z"));
    assert_eq!(seen, expected);
}

/// A write that moves a store's records to any keys from inside a visitor of `get_with`
/// (the read still running) succeeds, on the same store or another, and commits.
#[test]
fn a_visitor_may_write_the_first_other_key() {
    for same_store in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        let db = Factory::open_dir(dir.path())
            .unwrap()
            .open("t", Some(1), |tx, _, _| {
                tx.create_object_store("s", None, false)?
                    .put(Value::from(1), Some(Key::from(1)))?;
                tx.create_object_store("o", None, false)?;
                Ok(())
            })
            .unwrap();
        let tx = db
            .transaction(&["s", "o"], TransactionMode::ReadWrite)
            .unwrap();
        let (s, o) = (tx.object_store("s").unwrap(), tx.object_store("o").unwrap());
        let store = if same_store { &s } else { &o };
        let mut visitor = ChangeInside::new(|| store.put(Value::from(9), Some(Key::from("x"))));
        assert!(s.get_with(Key::from(1), &mut visitor).unwrap());
        assert_eq!(visitor.result.unwrap().unwrap(), Key::from("x"));
        tx.commit().unwrap();
        let tx = db
            .transaction(&["s", "o"], TransactionMode::ReadOnly)
            .unwrap();
        let written = if same_store { "s" } else { "o" };
        let store = tx.object_store(written).unwrap();
        assert_eq!(store.get(Key::from("x")).unwrap(), Some(Value::from(9)));
        // No table is left behind.
        let conn = rusqlite::Connection::open(dir.path().join("db-t.indexa")).unwrap();
        let tables: i64 = conn
            .query_row(
                "SELECT count(*) FROM sqlite_master WHERE name LIKE 'record%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(tables, 2, "same store: {same_store}");
    }
}
