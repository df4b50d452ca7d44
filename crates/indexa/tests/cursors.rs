//! Cursors on object stores and indexes: directions, continue, continuePrimaryKey, advance,
//! update and delete, with the spec's error names.

mod support;

use indexa::{
    parse_value, Cursor, CursorDirection, Key, KeyPath, KeyRange, Transaction, TransactionMode,
    Value,
};

fn v(text: &str) -> Value {
    parse_value(text).unwrap()
}

fn k(n: i32) -> Key {
    Key::from(n)
}

/// Store "s" (key path `id`) with index "by_tag" over `tag`:
/// ids 1..=6 with tags a, b, a, c, b, a.
fn setup() -> (support::TestFactory, indexa::Database) {
    let factory = support::factory();
    let db = factory
        .open("db", Some(1), |tx, _, _| {
            let s = tx.create_object_store("s", Some(KeyPath::parse("id")?), false)?;
            s.create_index("by_tag", KeyPath::parse("tag")?, false, false)?;
            for (id, tag) in [(1, "a"), (2, "b"), (3, "a"), (4, "c"), (5, "b"), (6, "a")] {
                s.put(v(&format!(r#"{{"id":{id},"tag":"{tag}"}}"#)), None)?;
            }
            Ok(())
        })
        .unwrap();
    (factory, db)
}

/// Walks a cursor to its end, collecting (key, primary key).
fn walk(tx: &Transaction, mut cursor: Cursor) -> Vec<(Key, Key)> {
    let mut out = Vec::new();
    while let (Some(key), Some(pk)) = (cursor.key(), cursor.primary_key()) {
        out.push((key.clone(), pk.clone()));
        cursor.continue_key(tx, None).unwrap();
    }
    out
}

fn tag(t: &str, id: i32) -> (Key, Key) {
    (Key::from(t), k(id))
}

#[test]
fn store_cursor_directions() {
    let (_f, db) = setup();
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let s = tx.object_store("s").unwrap();
    let ids = |dir, range: Option<KeyRange>| -> Vec<Key> {
        walk(&tx, s.open_cursor(range, dir).unwrap())
            .into_iter()
            .map(|(key, _)| key)
            .collect()
    };
    assert_eq!(
        ids(CursorDirection::Next, None),
        (1..=6).map(k).collect::<Vec<_>>()
    );
    assert_eq!(
        ids(CursorDirection::NextUnique, None),
        (1..=6).map(k).collect::<Vec<_>>()
    );
    assert_eq!(
        ids(CursorDirection::Prev, None),
        (1..=6).rev().map(k).collect::<Vec<_>>()
    );
    assert_eq!(
        ids(
            CursorDirection::PrevUnique,
            Some(KeyRange::bound(k(2), k(4), true, false).unwrap())
        ),
        [k(4), k(3)]
    );
    let cursor = s
        .open_cursor(Some(KeyRange::only(k(3))), CursorDirection::Next)
        .unwrap();
    assert_eq!(cursor.value().unwrap(), Some(&v(r#"{"id":3,"tag":"a"}"#)));
    let empty = s
        .open_cursor(Some(KeyRange::only(k(99))), CursorDirection::Next)
        .unwrap();
    assert!(empty.is_done());
}

#[test]
fn index_cursor_directions() {
    let (_f, db) = setup();
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let ix = tx.object_store("s").unwrap().index("by_tag").unwrap();
    let run = |dir| walk(&tx, ix.open_cursor(None, dir).unwrap());
    assert_eq!(
        run(CursorDirection::Next),
        [
            tag("a", 1),
            tag("a", 3),
            tag("a", 6),
            tag("b", 2),
            tag("b", 5),
            tag("c", 4)
        ]
    );
    assert_eq!(
        run(CursorDirection::NextUnique),
        [tag("a", 1), tag("b", 2), tag("c", 4)]
    );
    assert_eq!(
        run(CursorDirection::Prev),
        [
            tag("c", 4),
            tag("b", 5),
            tag("b", 2),
            tag("a", 6),
            tag("a", 3),
            tag("a", 1)
        ]
    );
    // prevunique lands on the lowest primary key of each index key.
    assert_eq!(
        run(CursorDirection::PrevUnique),
        [tag("c", 4), tag("b", 2), tag("a", 1)]
    );
    let keys_only = ix.open_key_cursor(None, CursorDirection::Next).unwrap();
    assert_eq!(keys_only.value().unwrap(), None);
    assert_eq!(keys_only.primary_key(), Some(&k(1)));
}

#[test]
fn continue_with_a_key_and_its_errors() {
    let (_f, db) = setup();
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let ix = tx.object_store("s").unwrap().index("by_tag").unwrap();
    let mut c = ix.open_cursor(None, CursorDirection::Next).unwrap();
    c.continue_key(&tx, Some(&Key::from("b"))).unwrap();
    assert_eq!(
        (c.key(), c.primary_key()),
        (Some(&Key::from("b")), Some(&k(2)))
    );
    assert_eq!(
        c.continue_key(&tx, Some(&Key::from("b")))
            .unwrap_err()
            .name(),
        "DataError"
    );
    assert_eq!(
        c.continue_key(&tx, Some(&Key::from("a")))
            .unwrap_err()
            .name(),
        "DataError"
    );
    c.continue_key(&tx, Some(&Key::from("zzz"))).unwrap();
    assert!(c.is_done());
    assert_eq!(
        c.continue_key(&tx, None).unwrap_err().name(),
        "InvalidStateError"
    );

    let mut p = ix.open_cursor(None, CursorDirection::Prev).unwrap();
    assert_eq!(
        p.continue_key(&tx, Some(&Key::from("d")))
            .unwrap_err()
            .name(),
        "DataError"
    );
    p.continue_key(&tx, Some(&Key::from("a"))).unwrap();
    assert_eq!(
        (p.key(), p.primary_key()),
        (Some(&Key::from("a")), Some(&k(6)))
    );
}

#[test]
fn continue_primary_key() {
    let (_f, db) = setup();
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let s = tx.object_store("s").unwrap();
    let ix = s.index("by_tag").unwrap();
    let mut c = ix.open_cursor(None, CursorDirection::Next).unwrap();
    c.continue_primary_key(&tx, &Key::from("a"), &k(4)).unwrap();
    assert_eq!(
        (c.key(), c.primary_key()),
        (Some(&Key::from("a")), Some(&k(6)))
    );
    c.continue_primary_key(&tx, &Key::from("b"), &k(3)).unwrap();
    assert_eq!(
        (c.key(), c.primary_key()),
        (Some(&Key::from("b")), Some(&k(5)))
    );
    // Not strictly beyond the position.
    assert_eq!(
        c.continue_primary_key(&tx, &Key::from("b"), &k(5))
            .unwrap_err()
            .name(),
        "DataError"
    );
    assert_eq!(
        c.continue_primary_key(&tx, &Key::from("a"), &k(9))
            .unwrap_err()
            .name(),
        "DataError"
    );
    let mut p = ix.open_cursor(None, CursorDirection::Prev).unwrap();
    p.continue_primary_key(&tx, &Key::from("a"), &k(5)).unwrap();
    assert_eq!(
        (p.key(), p.primary_key()),
        (Some(&Key::from("a")), Some(&k(3)))
    );
    // Unique directions and store cursors refuse it.
    let mut u = ix.open_cursor(None, CursorDirection::NextUnique).unwrap();
    assert_eq!(
        u.continue_primary_key(&tx, &Key::from("b"), &k(1))
            .unwrap_err()
            .name(),
        "InvalidAccessError"
    );
    let mut sc = s.open_cursor(None, CursorDirection::Next).unwrap();
    assert_eq!(
        sc.continue_primary_key(&tx, &k(2), &k(2))
            .unwrap_err()
            .name(),
        "InvalidAccessError"
    );
}

#[test]
fn advance() {
    let (_f, db) = setup();
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let ix = tx.object_store("s").unwrap().index("by_tag").unwrap();
    let mut c = ix.open_cursor(None, CursorDirection::NextUnique).unwrap();
    assert_eq!(c.advance(&tx, 0).unwrap_err().name(), "TypeError");
    c.advance(&tx, 2).unwrap();
    assert_eq!(
        (c.key(), c.primary_key()),
        (Some(&Key::from("c")), Some(&k(4)))
    );
    c.advance(&tx, 5).unwrap();
    assert!(c.is_done());
    assert_eq!(c.advance(&tx, 1).unwrap_err().name(), "InvalidStateError");
}

#[test]
fn update_and_delete_through_cursors() {
    let (_f, db) = setup();
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    let s = tx.object_store("s").unwrap();
    let ix = s.index("by_tag").unwrap();
    let mut c = ix
        .open_cursor(Some(KeyRange::only(Key::from("a"))), CursorDirection::Next)
        .unwrap();
    // Changing the in-line key is a DataError.
    assert_eq!(
        c.update(&tx, v(r#"{"id":100,"tag":"z"}"#))
            .unwrap_err()
            .name(),
        "DataError"
    );
    assert_eq!(c.update(&tx, v(r#"{"id":1,"tag":"z"}"#)).unwrap(), k(1));
    // The cursor's own value stays as it was.
    assert_eq!(c.value().unwrap(), Some(&v(r#"{"id":1,"tag":"a"}"#)));
    c.continue_key(&tx, None).unwrap();
    assert_eq!(c.primary_key(), Some(&k(3)));
    c.delete(&tx).unwrap();
    assert_eq!(c.primary_key(), Some(&k(3)));
    c.continue_key(&tx, None).unwrap();
    assert_eq!(c.primary_key(), Some(&k(6)));
    assert_eq!(s.get(k(1)).unwrap(), Some(v(r#"{"id":1,"tag":"z"}"#)));
    assert_eq!(s.get(k(3)).unwrap(), None);
    assert_eq!(ix.get_all_keys(Key::from("a")).unwrap(), [k(6)]);
    assert_eq!(ix.get_all_keys(Key::from("z")).unwrap(), [k(1)]);

    let key_cursor = s.open_key_cursor(None, CursorDirection::Next).unwrap();
    assert_eq!(
        key_cursor.update(&tx, v("{}")).unwrap_err().name(),
        "InvalidStateError"
    );
    assert_eq!(
        key_cursor.delete(&tx).unwrap_err().name(),
        "InvalidStateError"
    );
    tx.commit().unwrap();
    assert_eq!(
        c.continue_key(&tx, None).unwrap_err().name(),
        "TransactionInactiveError"
    );

    let ro = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let rc = ro
        .object_store("s")
        .unwrap()
        .open_cursor(None, CursorDirection::Next)
        .unwrap();
    assert_eq!(
        rc.update(&ro, v(r#"{"id":1}"#)).unwrap_err().name(),
        "ReadOnlyError"
    );
    assert_eq!(rc.delete(&ro).unwrap_err().name(), "ReadOnlyError");
    // A cursor is bound to its transaction.
    let other = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let mut rc2 = rc.clone();
    assert_eq!(
        rc2.continue_key(&other, None).unwrap_err().name(),
        "InvalidStateError"
    );
}

#[test]
fn out_of_line_store_cursor_update() {
    let factory = support::factory();
    let db = factory
        .open("db", Some(1), |tx, _, _| {
            let s = tx.create_object_store("s", None, true)?;
            s.put(v(r#""a""#), None)?;
            s.put(v(r#""b""#), None)?;
            Ok(())
        })
        .unwrap();
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    let s = tx.object_store("s").unwrap();
    let mut c = s.open_cursor(None, CursorDirection::Prev).unwrap();
    assert_eq!(c.update(&tx, v(r#""B""#)).unwrap(), k(2));
    c.continue_key(&tx, None).unwrap();
    assert_eq!(c.value().unwrap(), Some(&v(r#""a""#)));
    assert_eq!(
        s.get_all(indexa::Query::all()).unwrap(),
        [v(r#""a""#), v(r#""B""#)]
    );
}

/// A cursor whose index or object store an upgrade deleted refuses to move with
/// InvalidStateError, naming which was deleted; a store cursor outlives a deleted index.
#[test]
fn a_cursor_names_the_source_an_upgrade_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let factory = indexa::Factory::open_dir(dir.path()).unwrap();
    factory
        .open("d", Some(1), |tx, _, _| {
            let s = tx.create_object_store("s", None, false)?;
            s.create_index("i", KeyPath::parse("")?, false, false)?;
            s.put(Value::from(1), Some(k(1)))?;
            s.put(Value::from(2), Some(k(2)))?;
            let mut by_index = s.index("i")?.open_cursor(None, CursorDirection::Next)?;
            let mut by_store = s.open_cursor(None, CursorDirection::Next)?;
            let refused = |e: indexa::Error| (e.name(), e.message().to_owned());
            s.delete_index("i")?;
            assert_eq!(
                refused(by_index.continue_key(tx, None).unwrap_err()),
                (
                    "InvalidStateError",
                    "the cursor's index was deleted".to_owned()
                )
            );
            by_store.continue_key(tx, None)?;
            assert_eq!(by_store.key(), Some(&k(2)));
            tx.delete_object_store("s")?;
            for cursor in [&mut by_store, &mut by_index] {
                assert_eq!(
                    refused(cursor.continue_key(tx, None).unwrap_err()),
                    (
                        "InvalidStateError",
                        "the cursor's object store was deleted".to_owned()
                    )
                );
            }
            Ok(())
        })
        .unwrap();
}
