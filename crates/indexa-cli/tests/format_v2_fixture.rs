//! A database file written by format version 2 (`crates/indexa/tests/fixtures/format-v2`, made
//! by `make-format-v2.sh` there from the version 1 fixture with the last version 2 build) still
//! opens, and dumps to exactly the records recorded when it was made (`format-v2.dump`),
//! upgraded to the current SQLite layout on its first open; an upgrade that fails leaves the
//! file as it was.

mod common;

use std::path::Path;

use common::{fixtures, Env};

/// A copy of the fixture in a new data directory.
fn copy_of_fixture() -> Env {
    Env::with_fixture("format-v2/db-v1.indexa")
}

fn open(dir: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(dir.join("db-v1.indexa")).unwrap()
}

/// The file's format version, and each object store's name with the SQLite types of its
/// record table's keys and whether that table is a row id table, by store name.
fn layout(dir: &Path) -> (i64, Vec<(String, String, bool)>) {
    let conn = open(dir);
    let format = conn
        .query_row("SELECT format_version FROM database", [], |r| r.get(0))
        .unwrap();
    let stores: Vec<(i64, String)> = conn
        .prepare("SELECT id, name FROM object_store ORDER BY name")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let tables = stores
        .into_iter()
        .map(|(id, name)| {
            let table = indexa::sqlite_layout::record_table(id);
            let types: String = conn
                .query_row(
                    &format!("SELECT group_concat(t) FROM (SELECT DISTINCT typeof(key) AS t FROM {table} ORDER BY t)"),
                    [],
                    |r| r.get(0),
                )
                .unwrap();
            let sql: String = conn
                .query_row(
                    "SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?1",
                    [&table],
                    |r| r.get(0),
                )
                .unwrap();
            (name, types, !sql.contains("WITHOUT ROWID"))
        })
        .collect();
    (format, tables)
}

#[test]
fn a_version_2_file_dumps_to_its_recorded_records() {
    let env = copy_of_fixture();
    let dir = env.data_dir();
    let recorded = std::fs::read_to_string(fixtures().join("format-v2.dump")).unwrap();
    assert_eq!(recorded.lines().count(), 71);
    let before = layout(&dir);
    assert_eq!(before.0, 2);
    assert!(before.1.iter().all(|(_, _, row_id)| !row_id));
    assert_eq!(env.ok(&["dump", "v1"]), recorded);
    // Upgraded: number keys as SQLite numbers; the tables of stores whose keys are all
    // whole numbers are row id tables.
    let table = |name: &str, types: &str, row_id: bool| (name.to_owned(), types.to_owned(), row_id);
    assert_eq!(
        layout(&dir),
        (
            4,
            vec![
                table("cli", "blob,integer,real", false),
                table("counter", "integer", true),
                table("log", "integer", true),
                table("measures", "integer,real", false),
                table("people", "integer", true),
                table("values", "blob,integer,real", false),
            ]
        )
    );
    assert_eq!(
        common::index_key_types(&open(&dir)),
        "blob/blob,blob/integer,integer/blob,integer/integer,real/integer,real/real"
    );
    // Opened again (and checked), it still holds the same records.
    common::assert_checks_clean_and_dumps(&env, "v1", &recorded);
}

/// A version 2 file that the upgrade cannot read to the end (a key stored as text, which no
/// build writes) fails to open with UnknownError and is left exactly as it was: still
/// version 2, every table and row in place.
#[test]
fn a_failed_upgrade_leaves_the_version_2_file_whole() {
    let env = copy_of_fixture();
    let dir = env.data_dir();
    let conn = open(&dir);
    conn.execute(
        "INSERT INTO record_6 (key, value) VALUES ('text', X'0101')",
        [],
    )
    .unwrap();
    let contents = |conn: &rusqlite::Connection| -> Vec<String> {
        conn.prepare("SELECT name || ': ' || coalesce(sql, '') FROM sqlite_master ORDER BY name")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<Vec<String>>>()
            .unwrap()
            .into_iter()
            .chain((1..=6).map(|id| {
                conn.query_row(
                    &format!("SELECT group_concat(quote(key) || '=' || quote(value)) FROM record_{id}"),
                    [],
                    |r| r.get(0),
                )
                .unwrap()
            }))
            .chain(std::iter::once(
                conn.query_row(
                    "SELECT group_concat(index_id || ':' || quote(key) || ':' || quote(primary_key)) FROM index_entry",
                    [],
                    |r| r.get(0),
                )
                .unwrap(),
            ))
            .collect()
    };
    let before = (layout(&dir).0, contents(&conn));
    drop(conn);
    let out = env.run(&["dump", "v1"]);
    assert_eq!(out.code, 1);
    assert_eq!(
        out.stderr,
        "indexa: UnknownError: upgrading the database file from format version 2 failed (it was left as it was): the records of object store id 6: a key or value is stored as SQLite Text, not as a blob\n"
    );
    let conn = open(&dir);
    assert_eq!((layout(&dir).0, contents(&conn)), before);
    assert_eq!(before.0, 2);
}

/// `indexa check` on a version 2 file that was never opened by this build upgrades it (as any
/// open does) and checks the upgraded file: version 2's integers are not read as numbers.
#[test]
fn check_upgrades_a_version_2_file_first() {
    common::assert_check_upgrades_first(&copy_of_fixture());
}
