//! Files in the data directory that are not what they seem: a symbolic link, a FIFO, a
//! directory, a socket, garbage or a damaged header under a database's file name, and a data
//! directory whose name looks like a SQLite URI. Each is refused with `UnknownError` naming
//! what is wrong (never `NotFoundError`, never a hang), nothing outside the data directory is
//! touched, and the other databases stay usable.

#![cfg(unix)]

use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::Duration;

use indexa::{Database, Factory, Key, Query, TransactionMode, Value};

fn open(factory: &Factory, name: &str) -> indexa::Result<Database> {
    factory.open(name, Some(1), |tx, _, _| {
        tx.create_object_store("s", None, false)?;
        Ok(())
    })
}

fn put(db: &Database, key: i32, value: &str) -> indexa::Result<()> {
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite)?;
    tx.object_store("s")?
        .put(Value::from(value), Some(Key::from(key)))?;
    tx.commit()
}

fn all(db: &Database) -> Vec<Value> {
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    tx.object_store("s").unwrap().get_all(Query::all()).unwrap()
}

/// Runs `f` on another thread and fails the test if it has not returned within 20 seconds
/// (a blocked open never returns).
fn within_deadline<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    rx.recv_timeout(Duration::from_secs(20))
        .unwrap_or_else(|_| panic!("{what} blocked"))
}

fn mkfifo(path: &Path) {
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}

fn file(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("db-{name}.indexa"))
}

#[test]
fn a_symlinked_database_file_is_refused_and_its_target_untouched() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("f");
    std::fs::write(&target, b"").unwrap();
    let data = dir.path().join("data");
    let factory = Factory::open_dir(&data).unwrap();
    let link = file(&data, "x");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let expected = format!(
        "UnknownError: {} is a symbolic link; database files must be regular files inside the data directory, so it was left as it is",
        link.display()
    );
    assert_eq!(open(&factory, "x").unwrap_err().to_string(), expected);
    assert_eq!(factory.version("x").unwrap_err().to_string(), expected);
    // Deleting does not "succeed" by removing the link alone.
    assert_eq!(
        factory.delete_database("x").unwrap_err().to_string(),
        expected
    );
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert!(factory.databases().unwrap().is_empty());
    // Nothing was written at the target: no content, no -wal or -shm beside it.
    assert_eq!(std::fs::read(&target).unwrap(), b"");
    let mut beside: Vec<_> = std::fs::read_dir(elsewhere.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    beside.sort();
    assert_eq!(beside, ["f"]);
}

#[test]
fn a_symlinked_write_ahead_log_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let factory = Factory::open_dir(dir.path()).unwrap();
    let db = open(&factory, "w").unwrap();
    put(&db, 1, "one").unwrap();
    drop(db);
    drop(factory);
    let wal = dir.path().join("db-w.indexa-wal");
    let _ = std::fs::remove_file(&wal);
    std::os::unix::fs::symlink(elsewhere.path().join("wal"), &wal).unwrap();
    let factory = Factory::open_dir(dir.path()).unwrap();
    let err = open(&factory, "w").unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "UnknownError: {} is a symbolic link; database files must be regular files inside the data directory, so it was left as it is",
            wal.display()
        )
    );
    assert!(!elsewhere.path().join("wal").exists());
}

#[test]
fn a_fifo_blocks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().to_path_buf();
    {
        let factory = Factory::open_dir(&data).unwrap();
        put(&open(&factory, "good").unwrap(), 1, "one").unwrap();
    }
    let fifo = file(&data, "f");
    mkfifo(&fifo);
    let expected = format!(
        "UnknownError: {} is a FIFO, not a regular file, so it is not an Indexa database; it was left as it is",
        fifo.display()
    );
    let results = within_deadline("the factory", move || {
        let factory = Factory::open_dir(&data).unwrap();
        let listed: Vec<String> = factory
            .databases()
            .unwrap()
            .into_iter()
            .map(|d| d.name)
            .collect();
        let good = all(&open(&factory, "good").unwrap());
        (
            listed,
            good,
            open(&factory, "f").unwrap_err().to_string(),
            factory.version("f").unwrap_err().to_string(),
            factory.delete_database("f").unwrap_err().to_string(),
        )
    });
    assert_eq!(results.0, ["good"]);
    assert_eq!(results.1, [Value::from("one")]);
    assert_eq!(results.2, expected);
    assert_eq!(results.3, expected);
    assert_eq!(results.4, expected);
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
}

#[test]
fn a_directory_or_socket_in_place_of_a_database_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let factory = Factory::open_dir(dir.path()).unwrap();
    let sub = file(dir.path(), "d");
    std::fs::create_dir(&sub).unwrap();
    let expected = format!(
        "UnknownError: {} is a directory, not a regular file, so it is not an Indexa database; it was left as it is",
        sub.display()
    );
    assert_eq!(factory.version("d").unwrap_err().to_string(), expected);
    assert_eq!(open(&factory, "d").unwrap_err().to_string(), expected);
    assert_eq!(
        factory.delete_database("d").unwrap_err().to_string(),
        expected
    );
    assert!(sub.is_dir());
    let sock = file(dir.path(), "s");
    let _listener = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    assert_eq!(
        factory.version("s").unwrap_err().to_string(),
        format!(
            "UnknownError: {} is a socket, not a regular file, so it is not an Indexa database; it was left as it is",
            sock.display()
        )
    );
}

#[test]
fn a_damaged_database_never_looks_absent() {
    let dir = tempfile::tempdir().unwrap();
    let factory = Factory::open_dir(dir.path()).unwrap();
    let garbage = file(dir.path(), "g");
    std::fs::write(&garbage, vec![0x5Au8; 8192]).unwrap();
    assert_eq!(
        factory.version("g").unwrap_err().to_string(),
        format!(
            "UnknownError: {} is not an Indexa database (storage failure: file is not a database); it was left as it is",
            garbage.display()
        )
    );
    // A real database whose header is damaged.
    put(&open(&factory, "h").unwrap(), 1, "one").unwrap();
    drop(factory);
    let header = file(dir.path(), "h");
    let mut bytes = std::fs::read(&header).unwrap();
    bytes[..16].copy_from_slice(b"not a sqlite fil");
    std::fs::write(&header, &bytes).unwrap();
    let factory = Factory::open_dir(dir.path()).unwrap();
    let err = factory.version("h").unwrap_err();
    assert_eq!(err.name(), "UnknownError");
    assert!(
        err.message()
            .starts_with(&format!("{} is not an Indexa database (", header.display())),
        "{err}"
    );
    // A SQLite file of someone else's.
    let foreign = file(dir.path(), "sq");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    assert_eq!(
        factory.version("sq").unwrap_err().to_string(),
        format!(
            "UnknownError: {} is not an Indexa database (it holds no Indexa tables); it was left as it is",
            foreign.display()
        )
    );
    // An empty file is still a new database, and a missing one is at version 0.
    std::fs::write(file(dir.path(), "e"), b"").unwrap();
    assert_eq!(factory.version("e").unwrap(), 0);
    // So is a SQLite file with no table at all: another connection creating the database
    // has switched it to WAL and not yet committed its tables.
    let creating = file(dir.path(), "c");
    let mode: String = rusqlite::Connection::open(&creating)
        .unwrap()
        .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    assert!(std::fs::metadata(&creating).unwrap().len() > 0);
    assert_eq!(factory.version("c").unwrap(), 0);
    assert_eq!(factory.version("missing").unwrap(), 0);
}

#[test]
fn a_data_directory_named_like_a_sqlite_uri_is_a_path() {
    let dir = tempfile::tempdir().unwrap();
    let cwd = dir.path().join("cwd");
    std::fs::create_dir(&cwd).unwrap();
    // Relative, as `--data-dir 'file:d2#'` gives it; the test changes no process-wide state,
    // so the directory is resolved against the temporary directory by hand.
    let data = cwd.join("file:d2#");
    let factory = Factory::open_dir(&data).unwrap();
    put(&open(&factory, "a").unwrap(), 1, "one").unwrap();
    put(&open(&factory, "b").unwrap(), 2, "two").unwrap();
    assert_eq!(all(&open(&factory, "a").unwrap()), [Value::from("one")]);
    assert_eq!(all(&open(&factory, "b").unwrap()), [Value::from("two")]);
    assert!(data.join("db-a.indexa").is_file());
    assert!(data.join("db-b.indexa").is_file());
    let mut outside: Vec<_> = std::fs::read_dir(&cwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    outside.sort();
    assert_eq!(outside, ["file:d2#"]);
    assert!(factory.dir().is_absolute());
}

#[test]
fn a_data_directory_reached_through_a_link_works() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real");
    let link = dir.path().join("rl");
    {
        let factory = Factory::open_dir(&real).unwrap();
        put(&open(&factory, "a").unwrap(), 1, "one").unwrap();
    }
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let factory = Factory::open_dir(&link).unwrap();
    assert_eq!(all(&open(&factory, "a").unwrap()), [Value::from("one")]);
    put(&open(&factory, "b").unwrap(), 2, "two").unwrap();
    let listed: Vec<String> = factory
        .databases()
        .unwrap()
        .into_iter()
        .map(|d| d.name)
        .collect();
    assert_eq!(listed, ["a", "b"]);
    // The new database is a regular file in the real directory.
    assert!(std::fs::symlink_metadata(file(&real, "b"))
        .unwrap()
        .is_file());
}

#[test]
fn a_scan_names_the_files_it_cannot_read() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let factory = Factory::open_dir(&data).unwrap();
    put(&open(&factory, "good").unwrap(), 1, "one").unwrap();
    let fifo = file(&data, "f");
    mkfifo(&fifo);
    let garbage = file(&data, "g");
    std::fs::write(&garbage, vec![0x5Au8; 8192]).unwrap();
    let link = file(&data, "x");
    std::os::unix::fs::symlink(dir.path().join("elsewhere"), &link).unwrap();
    // Neither a file being created (still empty) nor another program's SQLite file is
    // named: neither holds Indexa tables.
    std::fs::write(file(&data, "e"), b"").unwrap();
    rusqlite::Connection::open(file(&data, "sq"))
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let scan = within_deadline("the scan", move || factory.scan_databases().unwrap());
    assert_eq!(scan.databases, [(indexa::Utf16String::from("good"), 1)]);
    let unreadable: Vec<String> = scan.unreadable.iter().map(|e| e.to_string()).collect();
    assert_eq!(
        unreadable,
        [
            format!("UnknownError: {} is a FIFO, not a regular file, so it is not an Indexa database; it was left as it is", fifo.display()),
            format!("UnknownError: {} is not a readable Indexa database (storage failure: file is not a database); it was left as it is", garbage.display()),
            format!("UnknownError: {} is a symbolic link; database files must be regular files inside the data directory, so it was left as it is", link.display()),
        ]
    );
}
