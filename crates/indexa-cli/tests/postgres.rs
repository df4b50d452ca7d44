//! `--data-dir postgres://…`: the databases of a PostgreSQL database. The tests that need a
//! server use the one at `INDEXA_TEST_PG_URL` (`scripts/pg-test-cluster.sh`) and say so when
//! it is not set.

mod common;

use std::collections::HashSet;
use std::path::Path;
use std::process::{Command, Output};

use common::TestDatabase;

fn indexa(cwd: &Path, data_dir: &str, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_indexa"))
        .current_dir(cwd)
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .env_remove("INDEXA_DATA_DIR")
        .output()
        .expect("run indexa")
}

/// A URL was once taken for a relative directory: `postgres:` appeared in the current
/// directory. Now it is a server to connect to, and a failure never shows the password.
#[test]
fn a_postgres_url_is_a_server_not_a_folder_and_its_password_stays_secret() {
    let cwd = tempfile::tempdir().unwrap();
    // Port 1 on loopback: nothing listens there.
    let url = "postgres://alice:hunter2@127.0.0.1:1/app";
    let out = indexa(cwd.path(), url, &["list"]);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(
            "indexa: UnknownError: cannot connect to postgres://alice:***@127.0.0.1:1/app"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("hunter2"), "{stderr}");
    let out = indexa(cwd.path(), url, &["put", "db", "s", "1", "--key", "1"]);
    assert!(!String::from_utf8(out.stderr).unwrap().contains("hunter2"));
    assert_eq!(
        std::fs::read_dir(cwd.path()).unwrap().count(),
        0,
        "nothing is created locally"
    );
}

/// A fresh database on the test server, or `None` (saying so) when no server is set.
fn test_database(tag: &str) -> Option<TestDatabase> {
    let db = TestDatabase::new(tag);
    if db.is_none() {
        eprintln!("INDEXA_TEST_PG_URL is not set: PostgreSQL skipped (eval \"$(scripts/pg-test-cluster.sh start)\")");
    }
    db
}

/// Two processes adding to one auto-increment store at once: every add is kept (no lost
/// update) and no generated key repeats, because readwrite transactions of a database run
/// one at a time across processes and the current number commits with the records.
#[test]
fn two_processes_adding_at_once_lose_nothing_and_never_repeat_a_key() {
    let Some(db) = test_database("two_writers") else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    let out = indexa(
        cwd.path(),
        &db.url,
        &["create-store", "db", "s", "--auto-increment"],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    const EACH: usize = 25;
    let writers: Vec<_> = (0..2)
        .map(|w| {
            let url = db.url.clone();
            let cwd = cwd.path().to_path_buf();
            std::thread::spawn(move || {
                (0..EACH)
                    .map(|i| {
                        let value = format!("{{\"writer\":{w},\"i\":{i}}}");
                        let out = indexa(&cwd, &url, &["add", "db", "s", &value]);
                        assert_eq!(
                            out.status.code(),
                            Some(0),
                            "{}",
                            String::from_utf8_lossy(&out.stderr)
                        );
                        String::from_utf8(out.stdout).unwrap().trim().to_string()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let keys: Vec<String> = writers
        .into_iter()
        .flat_map(|w| w.join().unwrap())
        .collect();
    let distinct: HashSet<&String> = keys.iter().collect();
    assert_eq!(
        distinct.len(),
        2 * EACH,
        "a generated key repeated: {keys:?}"
    );
    let expected: HashSet<String> = (1..=2 * EACH).map(|k| k.to_string()).collect();
    assert_eq!(
        distinct,
        expected.iter().collect(),
        "keys are 1..={}",
        2 * EACH
    );
    let out = indexa(cwd.path(), &db.url, &["query", "db", "s", "--count"]);
    assert_eq!(
        String::from_utf8(out.stdout).unwrap().trim(),
        (2 * EACH).to_string()
    );
}
