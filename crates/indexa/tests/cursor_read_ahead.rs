//! Cursors read rows ahead in batches; writes made in the same transaction while a cursor is
//! open must still be seen by its next step, exactly as a cursor that reads one row per step.

mod support;

use indexa::{parse_value, CursorDirection, Key, KeyPath, TransactionMode, Value};

fn v(text: &str) -> Value {
    parse_value(text).unwrap()
}

/// Store "s" (key path `id`) with index "by_n" over `n`: ids 10, 20, …, 400 with n = id.
fn setup() -> (support::TestFactory, indexa::Database) {
    let factory = support::factory();
    let db = factory
        .open("db", Some(1), |tx, _, _| {
            let s = tx.create_object_store("s", Some(KeyPath::parse("id")?), false)?;
            s.create_index("by_n", KeyPath::parse("n")?, false, false)?;
            for id in (10..=400).step_by(10) {
                s.put(v(&format!(r#"{{"id":{id},"n":{id}}}"#)), None)?;
            }
            Ok(())
        })
        .unwrap();
    (factory, db)
}

fn number(key: Option<&Key>) -> f64 {
    match key {
        Some(Key::Number(n)) => *n,
        other => panic!("expected a number key, got {other:?}"),
    }
}

#[test]
fn store_cursor_sees_records_added_and_deleted_ahead_of_it() {
    let (_f, db) = setup();
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    let store = tx.object_store("s").unwrap();
    let mut cursor = store.open_cursor(None, CursorDirection::Next).unwrap();
    let mut seen = Vec::new();
    while !cursor.is_done() {
        let id = number(cursor.key());
        seen.push(id);
        if id == 50.0 {
            // Rows up to here were read ahead; change what lies beyond the position.
            store.put(v(r#"{"id":55,"n":55}"#), None).unwrap();
            store.delete(Key::from(60)).unwrap();
            store.delete(Key::from(400)).unwrap();
        }
        cursor.continue_key(&tx, None).unwrap();
    }
    let mut expected: Vec<f64> = (1..=39).map(|i| f64::from(i * 10)).collect();
    expected.retain(|&n| n != 60.0);
    expected.insert(5, 55.0);
    assert_eq!(seen, expected);
}

#[test]
fn reverse_index_cursor_sees_a_value_changed_ahead_of_it() {
    let (_f, db) = setup();
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    let store = tx.object_store("s").unwrap();
    let index = store.index("by_n").unwrap();
    let mut cursor = index.open_cursor(None, CursorDirection::Prev).unwrap();
    let mut seen = Vec::new();
    while !cursor.is_done() {
        seen.push((number(cursor.key()), number(cursor.primary_key())));
        if seen.len() == 4 {
            // Record 350, just ahead, moves from index key 350 to index key 5: the cursor
            // still meets it, once, at its new place.
            store.put(v(r#"{"id":350,"n":5}"#), None).unwrap();
        }
        cursor.continue_key(&tx, None).unwrap();
    }
    let mut expected: Vec<(f64, f64)> = (1..=40)
        .rev()
        .filter(|&i| i != 35)
        .map(|i| (f64::from(i * 10), f64::from(i * 10)))
        .collect();
    expected.push((5.0, 350.0));
    assert_eq!(seen, expected);
}

#[test]
fn cursor_update_is_seen_when_the_scan_reaches_the_record_again() {
    let (_f, db) = setup();
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    let store = tx.object_store("s").unwrap();
    let mut cursor = store.open_cursor(None, CursorDirection::Next).unwrap();
    // Read a few batches ahead, then change a record ahead through the store.
    cursor.advance(&tx, 3).unwrap();
    assert_eq!(number(cursor.key()), 40.0);
    store.put(v(r#"{"id":50,"n":-1}"#), None).unwrap();
    cursor.continue_key(&tx, None).unwrap();
    assert_eq!(
        cursor.value().unwrap().and_then(|v| v.get("n")),
        Some(&Value::Number(-1.0))
    );
    // advance past the end leaves the cursor done.
    cursor.advance(&tx, 100).unwrap();
    assert!(cursor.is_done());
}
