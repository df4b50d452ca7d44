//! `indexa check`: a healthy database passes; each injected fault is reported.

mod common;

use common::{script, Env};
use indexa::sqlite_layout::{index_table, record_table, SqlKey};
use indexa::{encode_key, Key};
use rusqlite::types::Value as SqlValue;
use rusqlite::{params, Connection};

/// A database with an auto-increment store (keys 1..=3) and a store with two indexes.
fn setup(env: &Env) {
    let (_, code) = env.batch(
        "db",
        &["--version", "1"],
        &script(&[
            r#"{"op":"createObjectStore","name":"auto","autoIncrement":true}"#,
            r#"{"op":"add","store":"auto","value":"a"}"#,
            r#"{"op":"add","store":"auto","value":"b"}"#,
            r#"{"op":"add","store":"auto","value":"c"}"#,
            r#"{"op":"createObjectStore","name":"people","keyPath":"id"}"#,
            r#"{"op":"createIndex","store":"people","name":"name","keyPath":"name"}"#,
            r#"{"op":"createIndex","store":"people","name":"tags","keyPath":"tags","multiEntry":true}"#,
            r#"{"op":"add","store":"people","value":{"id":1,"name":"Ada","tags":["x","y"]}}"#,
            r#"{"op":"add","store":"people","value":{"id":2,"name":"Bob","tags":[]}}"#,
        ]),
    );
    assert_eq!(code, 0);
}

fn sqlite(env: &Env) -> Connection {
    let conn = Connection::open(env.data_dir().join("db-db.indexa")).unwrap();
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .unwrap();
    conn
}

fn store_id(conn: &Connection, name: &str) -> i64 {
    conn.query_row("SELECT id FROM object_store WHERE name = ?1", [name], |r| {
        r.get(0)
    })
    .unwrap()
}

fn index_id(conn: &Connection, name: &str) -> i64 {
    conn.query_row(
        "SELECT id FROM object_store_index WHERE name = ?1",
        [name],
        |r| r.get(0),
    )
    .unwrap()
}

/// A key as a key column holds it (`docs/format.md`).
fn k(key: impl Into<Key>) -> SqlValue {
    SqlKey(&encode_key(&key.into())).to_sql_value()
}

/// The record table of the store named `name`.
fn records(conn: &Connection, name: &str) -> String {
    record_table(store_id(conn, name))
}

/// The table of the entries of the index named `name`.
fn entries(conn: &Connection, name: &str) -> String {
    index_table(index_id(conn, name))
}

/// Rewrites the record table of the store named `name` as a table of any keys, as the engine
/// does on the first key that is not a whole number (`docs/format.md`, "Record tables"): the
/// only layout where a key column can hold a damaged value.
fn with_any_keys(conn: &Connection, name: &str) -> String {
    let table = records(conn, name);
    conn.execute_batch(&format!(
        "CREATE TABLE {table}_any (key BLOB NOT NULL PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID;
         INSERT INTO {table}_any SELECT key, value FROM {table};
         DROP TABLE {table};
         ALTER TABLE {table}_any RENAME TO {table};"
    ))
    .unwrap();
    table
}

/// Injects one fault, runs check and returns its stdout (asserting exit status 1).
fn fault(inject: impl FnOnce(&Connection)) -> String {
    let env = Env::sqlite();
    setup(&env);
    inject(&sqlite(&env));
    let run = env.run(&["check", "db"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stderr.starts_with("checked db: 2 object stores, "),
        "{}",
        run.stderr
    );
    run.stdout
}

#[test]
fn a_healthy_database_passes() {
    let env = Env::sqlite();
    setup(&env);
    let run = env.run(&["check", "db"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
    assert_eq!(
        run.stderr,
        "checked db: 2 object stores, 5 records, 0 problems\n"
    );
}

#[test]
fn a_missing_index_entry_is_reported() {
    let out = fault(|c| {
        c.execute(
            &format!("DELETE FROM {} WHERE key = ?1", entries(c, "tags")),
            params![k("y")],
        )
        .unwrap();
    });
    assert_eq!(out, "{\"problem\":\"missingIndexEntry\",\"store\":\"people\",\"index\":\"tags\",\"key\":\"y\",\"primaryKey\":1}\n");
}

#[test]
fn an_extra_index_entry_is_reported() {
    let out = fault(|c| {
        c.execute(
            &format!("INSERT INTO {} VALUES (?1, ?2)", entries(c, "name")),
            params![k("Zed"), k(2)],
        )
        .unwrap();
    });
    assert_eq!(out, "{\"problem\":\"extraIndexEntry\",\"store\":\"people\",\"index\":\"name\",\"key\":\"Zed\",\"primaryKey\":2}\n");
}

#[test]
fn a_dangling_index_entry_is_reported() {
    let out = fault(|c| {
        c.execute(
            &format!("INSERT INTO {} VALUES (?1, ?2)", entries(c, "name")),
            params![k("Eve"), k(9)],
        )
        .unwrap();
    });
    assert_eq!(out, "{\"problem\":\"danglingIndexEntry\",\"store\":\"people\",\"index\":\"name\",\"key\":\"Eve\",\"primaryKey\":9}\n");
}

#[test]
fn an_undecodable_key_is_reported() {
    let out = fault(|c| {
        c.execute(
            &format!(
                "UPDATE {} SET key = X'FF01' WHERE key = ?1",
                with_any_keys(c, "auto")
            ),
            params![k(2)],
        )
        .unwrap();
    });
    assert!(out.starts_with("{\"problem\":\"undecodableKey\",\"store\":\"auto\",\"bytes\":{\"$binary\":\"/wE=\"},\"message\":\""), "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
}

#[test]
fn a_key_stored_as_text_is_reported() {
    let out = fault(|c| {
        c.execute(
            &format!(
                "UPDATE {} SET key = 'two' WHERE key = ?1",
                with_any_keys(c, "auto")
            ),
            params![k(2)],
        )
        .unwrap();
    });
    assert_eq!(out, "{\"problem\":\"undecodableKey\",\"store\":\"auto\",\"message\":\"the key column holds SQLite Text, neither a number key nor a blob\"}\n");
}

#[test]
fn an_undecodable_value_is_reported() {
    let out = fault(|c| {
        c.execute(
            &format!(
                "UPDATE {} SET value = X'0199' WHERE key = ?1",
                records(c, "auto")
            ),
            params![k(3)],
        )
        .unwrap();
    });
    assert!(out.starts_with("{\"problem\":\"undecodableValue\",\"store\":\"auto\",\"key\":3,\"message\":\"corrupt value: "), "{out}");
    assert_eq!(out.lines().count(), 1, "{out}");
}

#[test]
fn a_non_canonical_value_is_reported() {
    // 1 written in the 8-byte number form decodes, but encodes as a small int.
    let out = fault(|c| {
        c.execute(
            &format!(
                "UPDATE {} SET value = X'0104000000000000F03F' WHERE key = ?1",
                records(c, "auto")
            ),
            params![k(1)],
        )
        .unwrap();
    });
    assert_eq!(
        out,
        "{\"problem\":\"nonCanonicalValue\",\"store\":\"auto\",\"key\":1}\n"
    );
}

#[test]
fn a_generator_below_the_largest_key_is_reported() {
    let out = fault(|c| {
        c.execute(
            "UPDATE object_store SET current_number = 3 WHERE name = 'auto'",
            [],
        )
        .unwrap();
    });
    assert_eq!(
        out,
        "{\"problem\":\"keyGeneratorBelowKey\",\"store\":\"auto\",\"currentNumber\":3,\"key\":3}\n"
    );
}

#[test]
fn a_record_whose_in_line_key_differs_is_reported() {
    let out = fault(|c| {
        let value = indexa::encode_value(
            &indexa::parse_value(r#"{"id":7,"name":"Bob","tags":[]}"#).unwrap(),
        );
        c.execute(
            &format!(
                "UPDATE {} SET value = ?1 WHERE key = ?2",
                records(c, "people")
            ),
            params![value, k(2)],
        )
        .unwrap();
    });
    assert_eq!(
        out,
        "{\"problem\":\"inLineKeyMismatch\",\"store\":\"people\",\"key\":2}\n"
    );
}

#[test]
fn a_missing_database_is_not_found() {
    let env = Env::sqlite();
    let run = env.run(&["check", "nope"]);
    assert_eq!((run.code, run.stdout.as_str()), (1, ""));
    assert!(
        run.stderr
            .starts_with("indexa: NotFoundError: database \"nope\" does not exist"),
        "{}",
        run.stderr
    );
}

#[test]
fn an_exhausted_generator_above_the_largest_key_is_healthy() {
    let env = Env::sqlite();
    let (_, code) = env.batch(
        "db",
        &["--version", "1"],
        &script(&[
            r#"{"op":"createObjectStore","name":"x","autoIncrement":true}"#,
            r#"{"op":"put","store":"x","value":1,"key":9007199254740992}"#,
        ]),
    );
    assert_eq!(code, 0);
    let run = env.run(&["check", "db"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
}

/// A database `db` with one store of 2000 records, several hundred kilobytes: many B-tree
/// pages, so a page in the middle can be damaged.
fn big(env: &Env) {
    let mut lines = vec![r#"{"op":"createObjectStore","name":"s"}"#.to_owned()];
    for i in 1..=2000 {
        lines.push(format!(
            r#"{{"op":"put","store":"s","key":{i},"value":"{}"}}"#,
            "x".repeat(100)
        ));
    }
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let (_, code) = env.batch("db", &["--version", "1"], &script(&lines));
    assert_eq!(code, 0);
}

/// Overwrites `len` bytes at `offset` of the database file with `byte`.
fn damage(env: &Env, offset: u64, len: usize, byte: u8) {
    use std::io::{Seek, SeekFrom, Write};
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(env.data_dir().join("db-db.indexa"))
        .unwrap();
    file.seek(SeekFrom::Start(offset)).unwrap();
    file.write_all(&vec![byte; len]).unwrap();
}

#[test]
fn a_page_damaged_in_the_middle_is_reported_line_by_line() {
    let env = Env::sqlite();
    big(&env);
    let size = std::fs::metadata(env.data_dir().join("db-db.indexa"))
        .unwrap()
        .len();
    let page = size / 4096 / 2;
    let conn = sqlite(&env);
    let tree: i64 = conn
        .query_row(
            "SELECT rootpage FROM sqlite_master WHERE name = ?1",
            [records(&conn, "s")],
            |r| r.get(0),
        )
        .unwrap();
    drop(conn);
    damage(&env, page * 4096, 4096, 0xFF);
    let run = env.run(&["check", "db"]);
    assert_eq!(run.code, 1, "{run:?}");
    let lines = run.lines();
    // SQLite's lines before the read that failed are kept, then the failure itself.
    assert!(lines.len() >= 2, "{run:?}");
    assert!(
        lines[0].starts_with(&format!(
            "{{\"problem\":\"sqliteIntegrity\",\"message\":\"*** in database main ***\\nTree {tree} page {}: ",
            page + 1
        )),
        "{run:?}"
    );
    for line in &lines {
        assert!(
            line.starts_with("{\"problem\":\"sqliteIntegrity\",\"message\":\""),
            "{line}"
        );
    }
    assert_eq!(
        *lines.last().unwrap(),
        "{\"problem\":\"sqliteIntegrity\",\"message\":\"database disk image is malformed\"}"
    );
    // The invariant checks, which cannot run on such a file, were skipped.
    assert_eq!(
        run.stderr,
        format!(
            "checked db: 0 object stores, 0 records, {} problems\n",
            lines.len()
        )
    );
}

#[test]
fn a_damaged_header_is_a_problem_not_an_error() {
    let env = Env::sqlite();
    setup(&env);
    damage(&env, 0, 100, 0x07);
    let run = env.run(&["check", "db"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            1,
            "{\"problem\":\"sqliteIntegrity\",\"message\":\"file is not a database\"}\n",
            "checked db: 0 object stores, 0 records, 1 problems\n"
        )
    );
}

#[test]
fn a_healthy_sqlite_file_of_another_kind_is_not_an_indexa_database() {
    let env = Env::sqlite();
    std::fs::create_dir_all(env.data_dir()).unwrap();
    let path = env.data_dir().join("db-db.indexa");
    Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE x (a)")
        .unwrap();
    let run = env.run(&["check", "db"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr),
        (
            1,
            "",
            format!(
                "indexa: UnknownError: {} is not an Indexa database (it holds no Indexa tables); it was left as it is\n",
                path.display()
            )
        )
    );
}

#[test]
fn a_unique_index_holding_duplicate_keys_is_reported() {
    // Bob is renamed Ada in the record and the index, then the index is made unique.
    let out = fault(|c| {
        let value = indexa::encode_value(
            &indexa::parse_value(r#"{"id":2,"name":"Ada","tags":[]}"#).unwrap(),
        );
        c.execute(
            &format!(
                "UPDATE {} SET value = ?1 WHERE key = ?2",
                records(c, "people")
            ),
            params![value, k(2)],
        )
        .unwrap();
        c.execute(
            &format!(
                "UPDATE {} SET key = ?1 WHERE primary_key = ?2",
                entries(c, "name")
            ),
            params![k("Ada"), k(2)],
        )
        .unwrap();
        c.execute(
            "UPDATE object_store_index SET is_unique = 1 WHERE name = 'name'",
            [],
        )
        .unwrap();
    });
    assert_eq!(out, "{\"problem\":\"duplicateUniqueKey\",\"store\":\"people\",\"index\":\"name\",\"key\":\"Ada\",\"primaryKey\":2}\n");
}

#[test]
fn a_missing_index_table_is_reported_and_the_other_indexes_checked() {
    let out = fault(|c| {
        c.execute_batch(&format!("DROP TABLE {}", entries(c, "name")))
            .unwrap();
        c.execute(
            &format!("DELETE FROM {} WHERE key = ?1", entries(c, "tags")),
            params![k("y")],
        )
        .unwrap();
    });
    assert_eq!(
        out,
        "{\"problem\":\"missingIndexTable\",\"store\":\"people\",\"index\":\"name\"}\n\
         {\"problem\":\"missingIndexEntry\",\"store\":\"people\",\"index\":\"tags\",\"key\":\"y\",\"primaryKey\":1}\n"
    );
}

#[test]
fn records_whose_store_does_not_exist_are_reported() {
    let out = fault(|c| {
        c.execute_batch(&format!(
            "CREATE TABLE {} (key BLOB NOT NULL PRIMARY KEY, value BLOB NOT NULL) WITHOUT ROWID",
            record_table(99)
        ))
        .unwrap();
        for key in [1, 2] {
            c.execute(
                &format!("INSERT INTO {} VALUES (?1, X'0101')", record_table(99)),
                params![k(key)],
            )
            .unwrap();
        }
    });
    assert_eq!(
        out,
        "{\"problem\":\"orphanRecords\",\"storeId\":99,\"records\":2}\n"
    );
}

#[test]
fn index_entries_whose_index_does_not_exist_are_reported() {
    let out = fault(|c| {
        c.execute_batch(&format!(
            "CREATE TABLE {} (key BLOB NOT NULL, primary_key BLOB NOT NULL, PRIMARY KEY (key, primary_key)) WITHOUT ROWID",
            index_table(77)
        ))
        .unwrap();
        c.execute(
            &format!("INSERT INTO {} VALUES (?1, ?2)", index_table(77)),
            params![k("a"), k(1)],
        )
        .unwrap();
    });
    assert_eq!(
        out,
        "{\"problem\":\"orphanIndexEntries\",\"indexId\":77,\"entries\":1}\n"
    );
}

#[test]
fn an_index_whose_store_does_not_exist_is_reported() {
    let out = fault(|c| {
        c.execute(
            "INSERT INTO object_store_index (id, object_store_id, name, key_path, key_path_is_array, is_unique, multi_entry) VALUES (50, 55, 'lost', 'x', 0, 0, 0)",
            [],
        )
        .unwrap();
    });
    assert_eq!(
        out,
        "{\"problem\":\"orphanIndex\",\"storeId\":55,\"indexId\":50,\"index\":\"lost\"}\n"
    );
}

/// Database `odd` with object store "\uD800" (a lone surrogate, as the Node.js package can
/// name it), its index "\uDFFF" on `a`, and one record `{"a":1}` at key 1; made through the
/// engine, as no command line can carry such names.
fn lone_surrogate_names(env: &Env) {
    use indexa::{KeyPath, Utf16String};
    let unit = |u: u16| Utf16String::from_units(vec![u]);
    let factory = env.factory();
    let db = factory
        .open("odd", Some(1), |tx, _, _| {
            let store = tx.create_object_store(unit(0xD800), None, false)?;
            store.create_index(unit(0xDFFF), KeyPath::parse("a")?, true, false)?;
            store.add(indexa::parse_value(r#"{"a":1}"#)?, Some(Key::Number(1.0)))?;
            Ok(())
        })
        .unwrap();
    db.close();
}

#[test]
fn lone_surrogate_names_are_checked_and_reported_exactly() {
    let env = Env::sqlite();
    lone_surrogate_names(&env);
    let run = env.run(&["check", "odd"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (
            0,
            "",
            "checked odd: 1 object stores, 1 records, 0 problems\n"
        )
    );
    let conn = Connection::open(env.data_dir().join("db-odd.indexa")).unwrap();
    // The one index, whose name (a lone surrogate) is stored as WTF-8 bytes.
    let id: i64 = conn
        .query_row("SELECT id FROM object_store_index", [], |r| r.get(0))
        .unwrap();
    conn.execute(&format!("DELETE FROM {}", index_table(id)), [])
        .unwrap();
    drop(conn);
    let run = env.run(&["check", "odd"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (
            1,
            "{\"problem\":\"missingIndexEntry\",\"store\":\"\\uD800\",\"index\":\"\\uDFFF\",\"key\":1,\"primaryKey\":1}\n"
        ),
        "{run:?}"
    );
}

#[test]
fn a_number_key_stored_as_a_blob_is_reported() {
    let out = fault(|c| {
        c.execute(
            &format!(
                "UPDATE {} SET key = X'10BFF0000000000000' WHERE key = ?1",
                with_any_keys(c, "auto")
            ),
            params![k(1)],
        )
        .unwrap();
    });
    assert_eq!(out, "{\"problem\":\"undecodableKey\",\"store\":\"auto\",\"bytes\":{\"$binary\":\"EL/wAAAAAAAA\"},\"message\":\"a number key stored as a blob, not as a number\"}\n");
}

#[test]
fn a_whole_number_key_stored_as_a_real_is_reported() {
    let out = fault(|c| {
        c.execute(
            &format!(
                "UPDATE {} SET key = 2.0 WHERE key = ?1",
                with_any_keys(c, "auto")
            ),
            params![k(2)],
        )
        .unwrap();
    });
    assert_eq!(out, "{\"problem\":\"undecodableKey\",\"store\":\"auto\",\"message\":\"the whole number 2 stored as a real, not as an integer\"}\n");
}

#[test]
fn index_entries_whose_keys_are_not_stored_canonically_are_reported() {
    let out = fault(|c| {
        c.execute(
            &format!(
                "UPDATE {} SET primary_key = X'10BFF0000000000000' WHERE primary_key = ?1",
                entries(c, "name")
            ),
            params![k(1)],
        )
        .unwrap();
        c.execute(
            &format!(
                "UPDATE {} SET key = 'text' WHERE primary_key = ?1",
                entries(c, "name")
            ),
            params![k(2)],
        )
        .unwrap();
    });
    // Entries in the index's order: the text key (SQLite sorts text before blobs) first.
    assert_eq!(
        out,
        "{\"problem\":\"missingIndexEntry\",\"store\":\"people\",\"index\":\"name\",\"key\":\"Ada\",\"primaryKey\":1}\n\
         {\"problem\":\"missingIndexEntry\",\"store\":\"people\",\"index\":\"name\",\"key\":\"Bob\",\"primaryKey\":2}\n\
         {\"problem\":\"undecodableIndexKey\",\"store\":\"people\",\"index\":\"name\",\"message\":\"the key column holds SQLite Text, neither a number key nor a blob\"}\n\
         {\"problem\":\"undecodableIndexKey\",\"store\":\"people\",\"index\":\"name\",\"bytes\":{\"$binary\":\"EL/wAAAAAAAA\"},\"message\":\"a number key stored as a blob, not as a number\"}\n"
    );
}

#[test]
fn a_store_without_its_record_table_is_reported() {
    let out = fault(|c| {
        c.execute_batch(&format!("DROP TABLE {}", records(c, "auto")))
            .unwrap();
    });
    assert_eq!(
        out,
        "{\"problem\":\"missingRecordTable\",\"store\":\"auto\"}\n"
    );
}
