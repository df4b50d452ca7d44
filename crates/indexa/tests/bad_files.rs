//! Bad files and bad places: a garbage or truncated database file, a file from a future format
//! version or of another database, a read-only data directory and a full disk (both on a
//! tmpfs, so only as root), and database names that try to leave the data directory. Each
//! gives a clear error, changes no file it could not use, and leaves other databases alone.

use std::path::{Path, PathBuf};
use std::process::Command;

use indexa::sqlite_layout::SqlKey;
use indexa::{Database, Factory, Key, Query, TransactionMode, Value};
use visits::Visits;

mod visits;

fn open(factory: &Factory, name: &str) -> indexa::Result<Database> {
    factory.open(name, Some(1), |tx, _, _| {
        tx.create_object_store("s", None, false)?;
        Ok(())
    })
}

fn put(db: &Database, key: i32, value: Value) -> indexa::Result<()> {
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite)?;
    tx.object_store("s")?.put(value, Some(Key::from(key)))?;
    tx.commit()
}

fn all(db: &Database) -> indexa::Result<Vec<Value>> {
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly)?;
    let values = tx.object_store("s")?.get_all(Query::all())?;
    Ok(values)
}

/// A database `name` in `dir` holding `records` values of `size` bytes; returns its file.
fn make(dir: &Path, name: &str, records: i32, size: usize) -> PathBuf {
    let factory = Factory::open_dir(dir).unwrap();
    let db = open(&factory, name).unwrap();
    for i in 0..records {
        put(&db, i, Value::from(format!("{i}:{}", "v".repeat(size)))).unwrap();
    }
    dir.join(format!("db-{name}.indexa"))
}

fn files_in(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            let bytes = std::fs::read(e.path()).unwrap();
            (name, bytes)
        })
        .collect();
    files.sort();
    files
}

/// A cursor that meets a damaged record fails with UnknownError and stays where it was; the
/// rows it had read ahead are dropped, so the next step meets the same record again instead
/// of silently skipping it.
#[test]
fn a_cursor_step_onto_a_damaged_record_fails_and_stays_put() {
    let dir = tempfile::tempdir().unwrap();
    let file = make(dir.path(), "d", 8, 4);
    let conn = rusqlite::Connection::open(&file).unwrap();
    // Tag 0xFF is no value kind: record 3's value cannot be decoded.
    conn.execute(
        "UPDATE record_1 SET value = x'01FF' WHERE key = ?1",
        [SqlKey(&indexa::encode_key(&Key::from(3)))],
    )
    .unwrap();
    drop(conn);
    let factory = Factory::open_dir(dir.path()).unwrap();
    let db = open(&factory, "d").unwrap();
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let mut cursor = tx
        .object_store("s")
        .unwrap()
        .open_cursor(None, indexa::CursorDirection::Next)
        .unwrap();
    // Steps read ahead in growing batches; the step from 2 reads records 3 and 4 at once.
    cursor.continue_key(&tx, None).unwrap();
    cursor.continue_key(&tx, None).unwrap();
    assert_eq!(cursor.key(), Some(&Key::from(2)));
    for _ in 0..2 {
        let e = cursor.continue_key(&tx, None).unwrap_err();
        assert_eq!(e.name(), "UnknownError");
        assert_eq!(cursor.key(), Some(&Key::from(2)));
    }
    // Jumping past the damaged record works.
    cursor.continue_key(&tx, Some(&Key::from(4))).unwrap();
    assert_eq!(cursor.key(), Some(&Key::from(4)));
}

/// A cursor read with `value_as` leaves values unchecked at its steps: it moves onto a damaged
/// record, and reading the value there (typed or generic) fails with UnknownError, also when
/// the type would refuse the value before its decoding reached the damage.
#[test]
fn a_typed_cursor_reports_a_damaged_record_when_its_value_is_read() {
    let dir = tempfile::tempdir().unwrap();
    let file = make(dir.path(), "d", 8, 4);
    let conn = rusqlite::Connection::open(&file).unwrap();
    // Record 3: tag 0xFF is no value kind. Record 4: an array of two elements, null and then
    // the same bad tag, at byte 4.
    for (key, value) in [
        (3, vec![0x01u8, 0xFF]),
        (4, vec![0x01, 0x09, 0x02, 0x01, 0xFF]),
    ] {
        conn.execute(
            "UPDATE record_1 SET value = ?2 WHERE key = ?1",
            rusqlite::params![SqlKey(&indexa::encode_key(&Key::from(key))), value],
        )
        .unwrap();
    }
    drop(conn);
    let factory = Factory::open_dir(dir.path()).unwrap();
    let db = open(&factory, "d").unwrap();
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let mut cursor = tx
        .object_store("s")
        .unwrap()
        .open_cursor(None, indexa::CursorDirection::Next)
        .unwrap();
    let mut read = Vec::new();
    while cursor.key() != Some(&Key::from(3)) {
        read.push(cursor.value_as::<String>().unwrap().unwrap());
        cursor.continue_key(&tx, None).unwrap();
    }
    assert_eq!(read, vec!["0:vvvv", "1:vvvv", "2:vvvv"]);
    let message = |e: indexa::Error| (e.name(), e.message().to_owned());
    let bad_tag = (
        "UnknownError",
        "corrupt value: unknown tag 0xFF at byte 1".to_owned(),
    );
    assert_eq!(message(cursor.value_as::<String>().unwrap_err()), bad_tag);
    assert_eq!(message(cursor.value().unwrap_err()), bad_tag);
    cursor.continue_key(&tx, None).unwrap();
    assert_eq!(cursor.key(), Some(&Key::from(4)));
    let bad_element = (
        "UnknownError",
        "corrupt value: unknown tag 0xFF at byte 4".to_owned(),
    );
    assert_eq!(
        message(cursor.value_as::<String>().unwrap_err()),
        bad_element
    );
    assert_eq!(message(cursor.value().unwrap_err()), bad_element);
    cursor.continue_key(&tx, None).unwrap();
    assert_eq!(
        cursor.value_as::<String>().unwrap(),
        Some("5:vvvv".to_owned())
    );
    assert_eq!(cursor.value().unwrap(), Some(&Value::from("5:vvvv")));
}

#[test]
fn a_cursor_read_by_visits_reports_a_damaged_record_when_its_value_is_visited() {
    let dir = tempfile::tempdir().unwrap();
    let file = make(dir.path(), "d", 8, 4);
    let conn = rusqlite::Connection::open(&file).unwrap();
    // Record 3: an array of two elements, null and then tag 0xFF (no value kind), at byte 4.
    conn.execute(
        "UPDATE record_1 SET value = ?2 WHERE key = ?1",
        rusqlite::params![
            SqlKey(&indexa::encode_key(&Key::from(3))),
            vec![0x01u8, 0x09, 0x02, 0x01, 0xFF]
        ],
    )
    .unwrap();
    drop(conn);
    let factory = Factory::open_dir(dir.path()).unwrap();
    let db = open(&factory, "d").unwrap();
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    let store = tx.object_store("s").unwrap();
    let mut cursor = store
        .open_cursor(None, indexa::CursorDirection::Next)
        .unwrap();
    let mut seen = Visits::default();
    // The steps over records 0 to 3 do not read their values; each visit checks its own.
    while cursor.key() != Some(&Key::from(3)) {
        assert!(cursor.visit_value(&mut seen).unwrap());
        cursor.continue_key(&tx, None).unwrap();
    }
    assert_eq!(
        seen.0,
        [
            r#"Utf8("0:vvvv")"#,
            r#"Utf8("1:vvvv")"#,
            r#"Utf8("2:vvvv")"#
        ]
    );
    let mut damaged = Visits::default();
    let err = cursor.visit_value(&mut damaged).unwrap_err();
    assert_eq!(
        (err.name(), err.message()),
        ("UnknownError", "corrupt value: unknown tag 0xFF at byte 4")
    );
    assert_eq!(damaged.0, ["array 2", "null"]);
    cursor.continue_key(&tx, None).unwrap();
    let mut next = Visits::default();
    assert!(cursor.visit_value(&mut next).unwrap());
    assert_eq!(next.0, [r#"Utf8("4:vvvv")"#]);
    cursor.advance(&tx, 4).unwrap();
    assert_eq!(cursor.key(), None);
    assert!(!cursor.visit_value(&mut next).unwrap());
    let keys = store
        .open_key_cursor(None, indexa::CursorDirection::Next)
        .unwrap();
    assert!(!keys.visit_value(&mut next).unwrap());
    assert_eq!(next.0, [r#"Utf8("4:vvvv")"#]);
}

#[test]
fn garbage_file_is_an_unknown_error_and_stays_untouched() {
    let dir = tempfile::tempdir().unwrap();
    make(dir.path(), "good", 3, 10);
    let garbage: Vec<u8> = (0..8192u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    let bad = dir.path().join("db-bad.indexa");
    std::fs::write(&bad, &garbage).unwrap();
    let before = files_in(dir.path());
    let factory = Factory::open_dir(dir.path()).unwrap();
    let err = open(&factory, "bad").unwrap_err();
    assert_eq!(err.name(), "UnknownError");
    assert!(err.message().contains("file is not a database"), "{err}");
    // Listing skips it; the other database is fine; no file changed.
    let names: Vec<String> = factory
        .databases()
        .unwrap()
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(names, vec!["good".to_string()]);
    let good = open(&factory, "good").unwrap();
    assert_eq!(all(&good).unwrap().len(), 3);
    drop((good, factory));
    assert_eq!(files_in(dir.path()), before);
}

#[test]
fn truncated_file_gives_errors_never_wrong_data() {
    let dir = tempfile::tempdir().unwrap();
    make(dir.path(), "other", 2, 10);
    let path = make(dir.path(), "t", 200, 2000);
    let full = std::fs::read(&path).unwrap();
    let other_before = std::fs::read(dir.path().join("db-other.indexa")).unwrap();
    for cut in [50, 100, 4096, full.len() / 2, full.len() - 4096] {
        std::fs::write(&path, &full[..cut]).unwrap();
        let factory = Factory::open_dir(dir.path()).unwrap();
        // Opening or reading fails with UnknownError; whatever is read is right.
        let outcome = open(&factory, "t").and_then(|db| all(&db));
        match outcome {
            Err(e) => {
                assert_eq!(e.name(), "UnknownError", "cut at {cut}: {e}");
                assert!(
                    e.message().contains("malformed")
                        || e.message().contains("not a database")
                        || e.message().contains("corrupt"),
                    "cut at {cut}: {e}"
                );
            }
            Ok(values) => panic!(
                "cut at {cut}: read {} records from half a file",
                values.len()
            ),
        }
        let other = open(&factory, "other").unwrap();
        assert_eq!(all(&other).unwrap().len(), 2);
    }
    assert_eq!(
        std::fs::read(dir.path().join("db-other.indexa")).unwrap(),
        other_before
    );
}

#[test]
fn empty_file_is_a_new_database() {
    // SQLite treats a zero-length file as an empty database: there was nothing to lose.
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("db-e.indexa"), b"").unwrap();
    let factory = Factory::open_dir(dir.path()).unwrap();
    let db = open(&factory, "e").unwrap();
    assert_eq!(db.version(), 1);
    assert_eq!(all(&db).unwrap(), Vec::<Value>::new());
}

#[test]
fn future_format_versions_are_refused_and_left_untouched() {
    for (column, message) in [
        (
            "format_version",
            "database file has format version 5 (keys 1, values 1); this build reads 4 (keys 1, values 1)",
        ),
        (
            "key_encoding_version",
            "database file has format version 4 (keys 2, values 1); this build reads 4 (keys 1, values 1)",
        ),
        (
            "value_format_version",
            "database file has format version 4 (keys 1, values 2); this build reads 4 (keys 1, values 1)",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let path = make(dir.path(), "future", 3, 10);
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute(&format!("UPDATE database SET {column} = {column} + 1"), [])
            .unwrap();
        drop(conn);
        let before = files_in(dir.path());
        let factory = Factory::open_dir(dir.path()).unwrap();
        let err = open(&factory, "future").unwrap_err();
        assert_eq!(err.name(), "UnknownError");
        assert_eq!(err.message(), message);
        // Also without a version, and through the factory's delete check afterwards.
        let err = factory.open("future", None, |_, _, _| Ok(())).unwrap_err();
        assert_eq!(err.message(), message);
        drop(factory);
        assert_eq!(files_in(dir.path()), before, "{column}");
    }
}

#[test]
fn a_file_of_another_database_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = make(dir.path(), "first", 1, 10);
    std::fs::rename(&path, dir.path().join("db-second.indexa")).unwrap();
    let factory = Factory::open_dir(dir.path()).unwrap();
    let err = open(&factory, "second").unwrap_err();
    assert_eq!(err.name(), "UnknownError");
    assert_eq!(
        err.message(),
        r#"database file belongs to database "first", not "second""#
    );
}

#[test]
fn odd_names_stay_inside_the_data_directory() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("data");
    let long = "x".repeat(10_000);
    let names = [
        "../../etc/x",
        "CON",
        "con",
        "NUL.txt",
        "",
        ".",
        "..",
        "a/b\\c",
        "nul\0byte",
        " ",
        "ñ",
        long.as_str(),
        &long[1..],
        &"/".repeat(5_000),
    ];
    let factory = Factory::open_dir(&dir).unwrap();
    for (i, name) in names.iter().enumerate() {
        let db = open(&factory, name).unwrap();
        put(&db, 1, Value::from(*name)).unwrap();
        assert_eq!(db.name(), *name, "#{i}");
    }
    drop(factory);
    // Only the data directory is in the root, and it holds one file per name.
    let in_root: Vec<_> = std::fs::read_dir(root.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(in_root, vec!["data"]);
    let files = files_in(&dir);
    assert_eq!(
        files.len(),
        names.len(),
        "{:?}",
        files.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    for (file, _) in &files {
        assert!(
            file.len() <= 120 && file.starts_with("db-") && !file.contains('/'),
            "{file}"
        );
    }
    // Each name reopens its own database; listing gives every name back.
    let factory = Factory::open_dir(&dir).unwrap();
    let mut listed: Vec<String> = factory
        .databases()
        .unwrap()
        .into_iter()
        .map(|d| d.name)
        .collect();
    let mut expected: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    listed.sort();
    expected.sort();
    assert_eq!(listed, expected);
    for name in names {
        let db = factory.open(name, None, |_, _, _| Ok(())).unwrap();
        assert_eq!(all(&db).unwrap(), vec![Value::from(name)]);
    }
    for name in names {
        assert_eq!(factory.delete_database(name).unwrap(), 1);
    }
    assert_eq!(files_in(&dir), Vec::new());
}

// ---- read-only directory and full disk: real file systems, so root only ----

/// A tmpfs of `size` mounted on a new directory, unmounted on drop; `None` (with a message
/// saying why the test is skipped) when not root or when mounting is not allowed.
struct Tmpfs {
    _dir: tempfile::TempDir,
    path: PathBuf,
}

impl Tmpfs {
    fn mount(size: &str, test: &str) -> Option<Tmpfs> {
        let uid = Command::new("id").arg("-u").output().ok()?;
        if String::from_utf8_lossy(&uid.stdout).trim() != "0" {
            eprintln!("skipped {test}: needs root to mount a tmpfs");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("mnt");
        std::fs::create_dir(&path).unwrap();
        let status = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(&path)
            .status()
            .unwrap();
        if !status.success() {
            eprintln!("skipped {test}: mounting a tmpfs failed ({status}), e.g. no CAP_SYS_ADMIN");
            return None;
        }
        Some(Tmpfs { _dir: dir, path })
    }

    fn remount(&self, option: &str) {
        let status = Command::new("mount")
            .args(["-o", &format!("remount,{option}")])
            .arg(&self.path)
            .status()
            .unwrap();
        assert!(status.success(), "remount {option}");
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.path).status();
    }
}

#[test]
fn read_only_data_directory() {
    let Some(fs) = Tmpfs::mount("16m", "read_only_data_directory") else {
        return;
    };
    make(&fs.path, "a", 5, 100);
    let before = files_in(&fs.path);
    fs.remount("ro");
    let factory = Factory::open_dir(&fs.path).unwrap();
    let err = open(&factory, "a").unwrap_err();
    assert_eq!(err.name(), "UnknownError");
    assert!(
        err.message().contains("unable to open database file"),
        "{err}"
    );
    let err = open(&factory, "new").unwrap_err();
    assert_eq!(err.name(), "UnknownError");
    assert!(
        err.message().contains("unable to open database file"),
        "{err}"
    );
    drop(factory);
    assert_eq!(files_in(&fs.path), before);
    fs.remount("rw");
    let factory = Factory::open_dir(&fs.path).unwrap();
    let db = open(&factory, "a").unwrap();
    assert_eq!(all(&db).unwrap().len(), 5);
}

#[test]
fn full_disk_is_quota_exceeded_and_loses_nothing() {
    let Some(fs) = Tmpfs::mount("2m", "full_disk_is_quota_exceeded_and_loses_nothing") else {
        return;
    };
    make(&fs.path, "other", 3, 100);
    // Room to give back once the disk is full.
    let filler = fs.path.join("filler");
    std::fs::write(&filler, vec![1u8; 256 * 1024]).unwrap();
    let other_before = std::fs::read(fs.path.join("db-other.indexa")).unwrap();
    let factory = Factory::open_dir(&fs.path).unwrap();
    let db = open(&factory, "full").unwrap();
    let mut committed = 0;
    let err = loop {
        match put(&db, committed, Value::from("f".repeat(50_000))) {
            Ok(()) => committed += 1,
            Err(e) => break e,
        }
        assert!(committed < 100, "2 MB never filled up");
    };
    assert_eq!(err.name(), "QuotaExceededError", "{err}");
    assert!(committed > 5, "{committed}");
    // Everything committed is there, the failed transaction left nothing.
    let values = all(&db).unwrap();
    assert_eq!(values.len(), committed as usize);
    assert!(values.iter().all(|v| *v == Value::from("f".repeat(50_000))));
    drop((db, factory));
    assert_eq!(
        std::fs::read(fs.path.join("db-other.indexa")).unwrap(),
        other_before
    );
    let check = rusqlite::Connection::open(fs.path.join("db-full.indexa")).unwrap();
    let integrity: String = check
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    drop(check);
    // With room again, writing works.
    std::fs::remove_file(&filler).unwrap();
    let factory = Factory::open_dir(&fs.path).unwrap();
    let db = open(&factory, "full").unwrap();
    put(&db, committed, Value::from("small")).unwrap();
    let values = all(&db).unwrap();
    assert_eq!(values.len(), committed as usize + 1);
    assert_eq!(values.last(), Some(&Value::from("small")));
}
