//! A database file written by format version 3 (`crates/indexa/tests/fixtures/format-v3`, made
//! by `make-format-v3.sh` there from the version 2 fixture with the last version 3 build) still
//! opens, and dumps to exactly the records recorded when it was made (`format-v3.dump`),
//! upgraded to the current SQLite layout on its first open: each index's entries in a table of
//! their own. An upgrade that fails leaves the file as it was.

mod common;

use std::path::Path;

use common::{fixtures, Env};

/// A copy of the fixture in a new data directory.
fn copy_of_fixture() -> Env {
    Env::with_fixture("format-v3/db-v1.indexa")
}

fn open(dir: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(dir.join("db-v1.indexa")).unwrap()
}

/// Every index entry as `index id:key:primary key` (SQLite's quoted values), in index id and
/// then index order: read from `index_entry` in a version 3 file, from the index tables after.
fn entries(conn: &rusqlite::Connection, version: i64) -> Vec<String> {
    let ids: Vec<i64> = conn
        .prepare("SELECT id FROM object_store_index ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let mut all = Vec::new();
    for id in ids {
        let sql = match version {
            3 => format!("SELECT {id} || ':' || quote(key) || ':' || quote(primary_key) FROM index_entry WHERE index_id = {id} ORDER BY key, primary_key"),
            _ => format!("SELECT {id} || ':' || quote(key) || ':' || quote(primary_key) FROM {} ORDER BY key, primary_key", indexa::sqlite_layout::index_table(id)),
        };
        let mut stmt = conn.prepare(&sql).unwrap();
        let rows = stmt.query_map([], |r| r.get::<_, String>(0)).unwrap();
        all.extend(rows.map(Result::unwrap));
    }
    all
}

#[test]
fn a_version_3_file_dumps_to_its_recorded_records() {
    let env = copy_of_fixture();
    let dir = env.data_dir();
    let recorded = std::fs::read_to_string(fixtures().join("format-v3.dump")).unwrap();
    assert_eq!(recorded.lines().count(), 72);
    let (version, tables) = common::format_and_tables(&dir);
    assert_eq!(version, 3);
    assert!(tables.contains(&"index_entry".to_owned()));
    let before = entries(&open(&dir), 3);
    assert_eq!(before.len(), 22);
    assert_eq!(env.ok(&["dump", "v1"]), recorded);
    // Upgraded: one table per index (index 4 was deleted before the fixture was made), the
    // entries moved as they were.
    assert_eq!(
        common::format_and_tables(&dir),
        (
            4,
            [
                "database",
                "index_1",
                "index_2",
                "index_3",
                "index_5",
                "index_6",
                "object_store",
                "object_store_index",
                "record_1",
                "record_2",
                "record_3",
                "record_4",
                "record_5",
                "record_6",
                "sqlite_sequence"
            ]
            .map(String::from)
            .to_vec()
        )
    );
    assert_eq!(entries(&open(&dir), 4), before);
    assert_eq!(
        common::index_key_types(&open(&dir)),
        "blob/blob,blob/integer,integer/blob,integer/integer,integer/real,real/integer,real/real"
    );
    // Opened again (and checked), it still holds the same records.
    common::assert_checks_clean_and_dumps(&env, "v1", &recorded);
}

/// A version 3 file whose upgrade cannot finish (a table already holds the name the first
/// index's table would get) fails to open with UnknownError and is left exactly as it was:
/// still version 3, every entry in `index_entry`.
#[test]
fn a_failed_upgrade_leaves_the_version_3_file_whole() {
    let env = copy_of_fixture();
    let dir = env.data_dir();
    let conn = open(&dir);
    conn.execute_batch("CREATE TABLE index_1 (x)").unwrap();
    let before = (common::format_and_tables(&dir), entries(&conn, 3));
    drop(conn);
    let out = env.run(&["dump", "v1"]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "indexa: UnknownError: upgrading the database file from format version 3 failed (it was left as it was): storage failure: table index_1 already exists in CREATE TABLE index_1 (key BLOB NOT NULL, primary_key BLOB NOT NULL, PRIMARY KEY (key, primary_key)) WITHOUT ROWID at offset 13\n"
    );
    assert_eq!(
        (common::format_and_tables(&dir), entries(&open(&dir), 3)),
        before
    );
    assert_eq!(before.0 .0, 3);
}

/// `indexa check` on a version 3 file that was never opened by this build upgrades it (as any
/// open does) and checks the upgraded file.
#[test]
fn check_upgrades_a_version_3_file_first() {
    common::assert_check_upgrades_first(&copy_of_fixture());
}

/// Entries of an index that does not exist (a damaged version 3 file) move to a table of their
/// own, where `indexa check` still reports them after the upgrade.
#[test]
fn entries_of_a_missing_index_are_kept_for_check() {
    let env = copy_of_fixture();
    let dir = env.data_dir();
    open(&dir)
        .execute(
            "INSERT INTO index_entry (index_id, key, primary_key) VALUES (77, X'306200', 1), (77, X'306300', 2)",
            [],
        )
        .unwrap();
    let out = env.run(&["check", "v1"]);
    assert_eq!(
        (out.code, out.stdout.as_str()),
        (
            1,
            "{\"problem\":\"orphanIndexEntries\",\"indexId\":77,\"entries\":2}\n"
        )
    );
    assert_eq!(common::format_and_tables(&dir).0, 4);
}
