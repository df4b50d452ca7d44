//! Each index's entries live in a table of their own (`docs/format.md`, "Index tables"):
//! made with the index, emptied by `clear`, dropped with the index or its object store, and
//! taken back with everything else by an aborted upgrade. A record writes its entries one
//! index at a time, a multiEntry index's keys in statements of up to eight.

mod visits;

use indexa::{Database, Factory, Key, KeyPath, TransactionMode};
use visits::ChangeInside;

/// The file's index tables (`index_<id>`) with their row counts, by name.
fn index_tables(dir: &std::path::Path) -> Vec<(String, i64)> {
    let conn = rusqlite::Connection::open(dir.join("db-t.indexa")).unwrap();
    let names: Vec<String> = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'index_*' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    names
        .into_iter()
        .map(|name| {
            let n = conn
                .query_row(&format!("SELECT count(*) FROM {name}"), [], |r| r.get(0))
                .unwrap();
            (name, n)
        })
        .collect()
}

fn table(name: &str, rows: i64) -> (String, i64) {
    (name.to_owned(), rows)
}

/// Version 1: store `s` with index `a` (key path `a`, unique) and multiEntry index `tags`.
fn open(factory: &Factory) -> Database {
    factory
        .open("t", Some(1), |tx, _, _| {
            let s = tx.create_object_store("s", None, false)?;
            s.create_index("a", KeyPath::parse("a")?, true, false)?;
            s.create_index("tags", KeyPath::parse("tags")?, false, true)?;
            Ok(())
        })
        .unwrap()
}

fn put(db: &Database, key: f64, json: &str) -> indexa::Result<()> {
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite)?;
    tx.object_store("s")?
        .put(indexa::parse_value(json)?, Some(Key::Number(key)))?;
    tx.commit()
}

/// The primary keys of the index's entries, in index order.
fn primary_keys(db: &Database, index: &str) -> Vec<Key> {
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let store = tx.object_store("s").unwrap();
    let keys = store.index(index).unwrap().get_all_keys(None).unwrap();
    tx.commit().unwrap();
    keys
}

#[test]
fn an_index_table_lives_and_dies_with_its_index() {
    let dir = tempfile::tempdir().unwrap();
    let factory = Factory::open_dir(dir.path()).unwrap();
    let db = open(&factory);
    assert_eq!(
        index_tables(dir.path()),
        [table("index_1", 0), table("index_2", 0)]
    );

    // Ten tags: one statement of eight entries and one of two; one tag: a single entry.
    let tags: Vec<String> = (0..10).map(|i| format!("\"t{i}\"")).collect();
    put(
        &db,
        1.0,
        &format!(r#"{{"a":"x","tags":[{}]}}"#, tags.join(",")),
    )
    .unwrap();
    put(&db, 2.0, r#"{"a":"y","tags":["t3"]}"#).unwrap();
    assert_eq!(
        index_tables(dir.path()),
        [table("index_1", 2), table("index_2", 11)]
    );
    assert_eq!(primary_keys(&db, "a"), [Key::Number(1.0), Key::Number(2.0)]);
    assert_eq!(primary_keys(&db, "tags").len(), 11);
    // A unique index's constraint is read from its own table; the failed put leaves nothing.
    assert_eq!(
        put(&db, 3.0, r#"{"a":"x","tags":["new"]}"#)
            .unwrap_err()
            .name(),
        "ConstraintError"
    );
    assert_eq!(
        index_tables(dir.path()),
        [table("index_1", 2), table("index_2", 11)]
    );

    // An upgrade that deletes an index and makes another, then aborts: both taken back.
    let aborted = factory.open("t", Some(2), |tx, _, _| {
        let s = tx.object_store("s")?;
        s.delete_index("tags")?;
        s.create_index("b", KeyPath::parse("a")?, false, false)?;
        tx.abort();
        Ok(())
    });
    assert_eq!(aborted.unwrap_err().name(), "AbortError");
    assert_eq!(
        index_tables(dir.path()),
        [table("index_1", 2), table("index_2", 11)]
    );
    assert_eq!(primary_keys(&db, "tags").len(), 11);

    // The same upgrade committed: the deleted index's table is dropped, the new one filled.
    db.close();
    let db = factory
        .open("t", Some(2), |tx, _, _| {
            let s = tx.object_store("s")?;
            s.delete_index("tags")?;
            s.create_index("b", KeyPath::parse("a")?, false, false)?;
            Ok(())
        })
        .unwrap();
    assert_eq!(
        index_tables(dir.path()),
        [table("index_1", 2), table("index_3", 2)]
    );

    // clear empties every index table of the store.
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    tx.object_store("s").unwrap().clear().unwrap();
    tx.commit().unwrap();
    assert_eq!(
        index_tables(dir.path()),
        [table("index_1", 0), table("index_3", 0)]
    );
    put(&db, 4.0, r#"{"a":"z"}"#).unwrap();
    assert_eq!(primary_keys(&db, "b"), [Key::Number(4.0)]);

    // Deleting the store drops its index tables.
    db.close();
    factory
        .open("t", Some(3), |tx, _, _| tx.delete_object_store("s"))
        .unwrap()
        .close();
    assert_eq!(index_tables(dir.path()), Vec::<(String, i64)>::new());
}

/// Deleting an index, or a store with its indexes, from inside a visitor of `get_with` (the
/// read still running, so SQLite cannot drop a table yet) succeeds; the tables are gone once
/// the upgrade commits, and an aborted upgrade keeps them with their entries.
#[test]
fn an_index_or_store_may_be_deleted_inside_a_visitor() {
    for (delete_store, abort) in [(false, false), (true, false), (false, true), (true, true)] {
        let dir = tempfile::tempdir().unwrap();
        let factory = Factory::open_dir(dir.path()).unwrap();
        let db = open(&factory);
        put(&db, 1.0, r#"{"a":"x","tags":["t"]}"#).unwrap();
        db.close();
        let result = factory.open("t", Some(2), |tx, _, _| {
            let n = tx.create_object_store("n", None, false)?;
            n.put(indexa::Value::from(1), Some(Key::Number(1.0)))?;
            let mut visitor = ChangeInside::new(|| match delete_store {
                true => tx.delete_object_store("s"),
                false => tx.object_store("s")?.delete_index("tags"),
            });
            assert!(n.get_with(Key::Number(1.0), &mut visitor)?);
            visitor.result.expect("the visitor ran")?;
            if abort {
                tx.abort();
            }
            Ok(())
        });
        let case = format!("delete store: {delete_store}, abort: {abort}");
        match abort {
            true => {
                assert_eq!(result.unwrap_err().name(), "AbortError", "{case}");
                assert_eq!(
                    index_tables(dir.path()),
                    [table("index_1", 1), table("index_2", 1)],
                    "{case}"
                );
            }
            false => {
                result.unwrap().close();
                let left = match delete_store {
                    true => vec![],
                    false => vec![table("index_1", 1)],
                };
                assert_eq!(index_tables(dir.path()), left, "{case}");
                let conn = rusqlite::Connection::open(dir.path().join("db-t.indexa")).unwrap();
                let dropped: i64 = conn
                    .query_row(
                        "SELECT count(*) FROM sqlite_master WHERE name GLOB '*_dropped'",
                        [],
                        |r| r.get(0),
                    )
                    .unwrap();
                assert_eq!(dropped, 0, "{case}");
            }
        }
    }
}

/// An index deleted inside a visitor, in a group of requests that then fails
/// ([`indexa::Transaction::atomically`]), comes back with its table and entries: the table
/// left to drop at commit was renamed, so the savepoint's rollback restores it under its own
/// name and the commit drops nothing of it.
#[test]
fn an_index_deleted_inside_a_visitor_by_a_failed_request_keeps_its_table() {
    let dir = tempfile::tempdir().unwrap();
    let factory = Factory::open_dir(dir.path()).unwrap();
    let db = open(&factory);
    put(&db, 1.0, r#"{"a":"x","tags":["t","u"]}"#).unwrap();
    db.close();
    let db = factory
        .open("t", Some(2), |tx, _, _| {
            let n = tx.create_object_store("n", None, false)?;
            n.put(indexa::Value::from(1), Some(Key::Number(1.0)))?;
            let failed = tx.atomically(|tx| {
                let mut visitor = ChangeInside::new(|| tx.object_store("s")?.delete_index("tags"));
                n.get_with(Key::Number(1.0), &mut visitor)?;
                visitor.result.expect("the visitor ran")?;
                Err::<(), _>(indexa::Error::Constraint("the request fails".into()))
            });
            assert_eq!(failed.unwrap_err().name(), "ConstraintError");
            Ok(())
        })
        .unwrap();
    assert_eq!(
        index_tables(dir.path()),
        [table("index_1", 1), table("index_2", 2)]
    );
    assert_eq!(
        primary_keys(&db, "tags"),
        [Key::Number(1.0), Key::Number(1.0)]
    );
}
