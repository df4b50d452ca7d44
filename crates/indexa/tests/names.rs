//! Every distinct IndexedDB database name — a string of UTF-16 code units, lone surrogates
//! included — is its own database (in its own file on SQLite), and is stored and listed
//! exactly.

mod support;

use indexa::{Factory, Key, Query, TransactionMode, Utf16String, Value};

fn units(u: &[u16]) -> Utf16String {
    Utf16String::from_units(u.to_vec())
}

/// Creates database `name` with one record whose value tells which database it is.
fn create(factory: &Factory, name: &Utf16String, tag: &str) {
    let db = factory
        .open(name.clone(), Some(1), |tx, _, _| {
            tx.create_object_store("s", None, false)?
                .put(Value::from(tag), Some(Key::from(1)))?;
            Ok(())
        })
        .unwrap();
    db.close();
}

fn tag_of(factory: &Factory, name: &Utf16String) -> Vec<Value> {
    let db = factory.open(name.clone(), None, |_, _, _| Ok(())).unwrap();
    assert_eq!(db.name_units(), name);
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let values = tx.object_store("s").unwrap().get_all(Query::all()).unwrap();
    tx.commit().unwrap();
    db.close();
    values
}

#[test]
fn lone_surrogate_names_are_distinct_databases() {
    let factory = support::factory();
    let names = [
        units(&[0xD800]),
        units(&[0xDC00]),
        units(&[0xFFFD]),
        units(&[0xD834, 0xDD1E]),
        units(&[0xDD1E, 0xD834]),
    ];
    for (i, name) in names.iter().enumerate() {
        create(&factory, name, &format!("db{i}"));
    }
    for (i, name) in names.iter().enumerate() {
        assert_eq!(tag_of(&factory, name), [Value::from(format!("db{i}"))]);
        assert_eq!(factory.version(name.clone()).unwrap(), 1);
    }
    if !support::on_postgres() {
        let mut files: Vec<String> = std::fs::read_dir(factory.dir())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".indexa"))
            .collect();
        files.sort();
        assert_eq!(
            files,
            [
                "db-%ED%A0%80.indexa",
                "db-%ED%B0%80.indexa",
                "db-%ED%B4%9E%ED%A0%B4.indexa",
                "db-%EF%BF%BD.indexa",
                "db-%F0%9D%84%9E.indexa",
            ]
        );
    }
    // Listed exactly, in code-unit order.
    let listed: Vec<(Utf16String, u64)> = factory.databases_utf16().unwrap();
    assert_eq!(
        listed,
        [
            (units(&[0xD800]), 1),
            (units(&[0xD834, 0xDD1E]), 1),
            (units(&[0xDC00]), 1),
            (units(&[0xDD1E, 0xD834]), 1),
            (units(&[0xFFFD]), 1),
        ]
    );
    // Deleting one leaves the others, the U+FFFD one above all.
    assert_eq!(factory.delete_database(units(&[0xDC00])).unwrap(), 1);
    assert_eq!(factory.version(units(&[0xDC00])).unwrap(), 0);
    assert_eq!(tag_of(&factory, &units(&[0xFFFD])), [Value::from("db2")]);
    assert_eq!(tag_of(&factory, &units(&[0xD800])), [Value::from("db0")]);
}

/// SQLite-only: how a name is stored in a database file (PostgreSQL's catalog keeps every
/// name as its WTF-8 bytes).
#[test]
fn names_are_stored_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let factory = Factory::open_dir(dir.path()).unwrap();
    create(&factory, &units(&[0x61, 0xD800]), "lone");
    create(&factory, &Utf16String::from("plain é"), "plain");
    drop(factory);
    let stored = |file: &str| -> rusqlite::types::Value {
        rusqlite::Connection::open(dir.path().join(file))
            .unwrap()
            .query_row("SELECT name FROM database", [], |r| r.get(0))
            .unwrap()
    };
    // A name with a lone surrogate is kept as its WTF-8 bytes; every other name as TEXT,
    // as earlier builds wrote it, so their files open as before.
    assert_eq!(
        stored("db-a%ED%A0%80.indexa"),
        rusqlite::types::Value::Blob(vec![0x61, 0xED, 0xA0, 0x80])
    );
    assert_eq!(
        stored("db-plain%20%C3%A9.indexa"),
        rusqlite::types::Value::Text("plain é".into())
    );
}

#[test]
fn object_store_and_index_names_are_kept_exactly() {
    let factory = support::factory();
    let stores = [units(&[0xD800]), units(&[0xDC00]), units(&[0xFFFD])];
    let db = factory
        .open("db", Some(1), |tx, _, _| {
            for (i, name) in stores.iter().enumerate() {
                let s = tx.create_object_store(name, None, false)?;
                s.put(Value::from(i as i32), Some(Key::from(1)))?;
                s.create_index(units(&[0xDBFF]), indexa::KeyPath::parse("x")?, false, false)?;
            }
            // The same name twice is a ConstraintError; U+FFFD is not the same name as a
            // lone surrogate.
            let again = tx.create_object_store(units(&[0xD800]), None, false);
            assert_eq!(again.unwrap_err().name(), "ConstraintError");
            Ok(())
        })
        .unwrap();
    db.close();
    let db = factory.open("db", None, |_, _, _| Ok(())).unwrap();
    assert_eq!(
        db.object_store_names_utf16(),
        [units(&[0xD800]), units(&[0xDC00]), units(&[0xFFFD])]
    );
    assert_eq!(
        db.object_store_names(),
        ["\u{FFFD}", "\u{FFFD}", "\u{FFFD}"]
    );
    let tx = db.transaction(&stores, TransactionMode::ReadOnly).unwrap();
    for (i, name) in stores.iter().enumerate() {
        let s = tx.object_store(name).unwrap();
        assert_eq!(&s.name_utf16().unwrap(), name);
        assert_eq!(s.get(Key::from(1)).unwrap(), Some(Value::from(i as i32)));
        assert_eq!(s.index_names_utf16().unwrap(), [units(&[0xDBFF])]);
        assert_eq!(
            s.index(units(&[0xDBFF])).unwrap().name_utf16().unwrap(),
            units(&[0xDBFF])
        );
        assert_eq!(s.index("\u{FFFD}").unwrap_err().name(), "NotFoundError");
    }
    tx.commit().unwrap();
}
