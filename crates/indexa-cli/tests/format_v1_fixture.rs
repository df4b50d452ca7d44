//! A database file written by format version 1 (`crates/indexa/tests/fixtures/format-v1`, made
//! by `make-format-v1.sh` there with the Node.js package and the CLI) still opens, and dumps to
//! exactly the records recorded when it was made (`format-v1.dump`), upgraded to the current
//! SQLite layout on its first open; an upgrade that fails leaves the file as it was.

mod common;

use common::{fixtures, Env};

/// A copy of the fixture in a new data directory.
fn copy_of_fixture() -> Env {
    Env::with_fixture("format-v1/db-v1.indexa")
}

#[test]
fn a_version_1_file_dumps_to_its_recorded_records() {
    let env = copy_of_fixture();
    let dir = env.data_dir();
    let recorded = std::fs::read_to_string(fixtures().join("format-v1.dump")).unwrap();
    assert_eq!(recorded.lines().count(), 62);
    assert_eq!(common::format_and_tables(&dir).0, 1);
    assert_eq!(env.ok(&["dump", "v1"]), recorded);
    // Upgraded: a record table per object store and an entry table per index, keys as key
    // columns.
    assert_eq!(
        common::format_and_tables(&dir),
        (
            4,
            [
                "database",
                "index_1",
                "index_2",
                "index_3",
                "index_4",
                "index_5",
                "object_store",
                "object_store_index",
                "record_1",
                "record_2",
                "record_3",
                "record_4",
                "record_5",
                "sqlite_sequence"
            ]
            .map(String::from)
            .to_vec()
        )
    );
    // The stores whose keys are all whole numbers have row id tables.
    let row_id_tables: Vec<String> = rusqlite::Connection::open(dir.join("db-v1.indexa"))
        .unwrap()
        .prepare("SELECT o.name FROM object_store o JOIN sqlite_master m ON m.name = 'record_' || o.id WHERE m.sql NOT LIKE '%WITHOUT ROWID%' ORDER BY o.name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(row_id_tables, ["counter", "log", "people"]);
    // Opened again (and checked), it still holds the same records.
    common::assert_checks_clean_and_dumps(&env, "v1", &recorded);
}

/// A version 1 file that the upgrade cannot read to the end (a key stored as text, which no
/// build writes) fails to open with UnknownError and is left exactly as it was: still
/// version 1, no table added, every row in place.
#[test]
fn a_failed_upgrade_leaves_the_version_1_file_whole() {
    let env = copy_of_fixture();
    let dir = env.data_dir();
    let conn = rusqlite::Connection::open(dir.join("db-v1.indexa")).unwrap();
    let last_store: i64 = conn
        .query_row("SELECT max(id) FROM object_store", [], |r| r.get(0))
        .unwrap();
    conn.execute(
        "INSERT INTO record (object_store_id, key, value) VALUES (?1, 'text', X'0101')",
        [last_store],
    )
    .unwrap();
    let rows = |conn: &rusqlite::Connection| -> (i64, i64) {
        conn.query_row(
            "SELECT (SELECT count(*) FROM record), (SELECT count(*) FROM index_entry)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap()
    };
    let before = (common::format_and_tables(&dir), rows(&conn));
    drop(conn);
    let out = env.run(&["dump", "v1"]);
    assert_eq!(out.code, 1);
    let stderr = out.stderr;
    assert_eq!(
        stderr,
        format!("indexa: UnknownError: upgrading the database file from format version 1 failed (it was left as it was): the records of object store id {last_store}: a key or value is stored as SQLite Text, not as a blob\n")
    );
    let conn = rusqlite::Connection::open(dir.join("db-v1.indexa")).unwrap();
    assert_eq!((common::format_and_tables(&dir), rows(&conn)), before);
    assert_eq!(before.0 .0, 1);
}

/// `indexa check` on a version 1 file that was never opened by this build upgrades it (as any
/// open does) and checks the upgraded file.
#[test]
fn check_upgrades_a_version_1_file_first() {
    common::assert_check_upgrades_first(&copy_of_fixture());
}

/// A version 1 file under another database's name is refused for its name, as a file of the
/// current format is, and left at version 1.
#[test]
fn a_version_1_file_of_another_database_is_refused_for_its_name() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixtures().join("format-v1/db-v1.indexa"),
        dir.path().join("db-other.indexa"),
    )
    .unwrap();
    let factory = indexa::Factory::open_dir(dir.path()).unwrap();
    let err = factory.open("other", None, |_, _, _| Ok(())).unwrap_err();
    assert_eq!(
        (err.name(), err.message()),
        (
            "UnknownError",
            "database file belongs to database \"v1\", not \"other\""
        )
    );
    drop(factory);
    let conn = rusqlite::Connection::open(dir.path().join("db-other.indexa")).unwrap();
    let format: i64 = conn
        .query_row("SELECT format_version FROM database", [], |r| r.get(0))
        .unwrap();
    assert_eq!(format, 1);
}
