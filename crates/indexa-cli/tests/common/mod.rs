//! Helpers shared by the integration tests: run the built `indexa` binary against a
//! temporary data directory, or with `INDEXA_TEST_BACKEND=postgres` a fresh PostgreSQL database
//! on the server at `INDEXA_TEST_PG_URL` (`scripts/pg-test-cluster.sh` starts one), dropped
//! afterwards.
//!
//! Tests that make their [`Env`] with [`Env::sqlite`] are SQLite-only, each saying why (the
//! files of a data directory are what they test); `README.md` lists them.
#![allow(dead_code)] // Each test file uses a different subset.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use tempfile::TempDir;

/// True when the tests run on PostgreSQL (`INDEXA_TEST_BACKEND=postgres`).
pub fn on_postgres() -> bool {
    std::env::var("INDEXA_TEST_BACKEND").is_ok_and(|b| b == "postgres")
}

/// A fresh PostgreSQL database on the test server, dropped with this value.
pub struct TestDatabase {
    /// The server's maintenance database, where test databases are created and dropped.
    admin: String,
    name: String,
    /// The URL of the test database.
    pub url: String,
}

impl TestDatabase {
    /// A new database named from `tag`, this process and a counter, on the server at
    /// `INDEXA_TEST_PG_URL`; `None` when that variable is not set.
    pub fn new(tag: &str) -> Option<TestDatabase> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let server = std::env::var("INDEXA_TEST_PG_URL").ok()?;
        let admin = format!("{server}/postgres");
        let name = format!(
            "indexa_cli_{tag}_{}_{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let mut client = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
        client
            .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
            .unwrap();
        client
            .batch_execute(&format!("CREATE DATABASE {name}"))
            .unwrap();
        Some(TestDatabase {
            url: format!("{server}/{name}"),
            admin,
            name,
        })
    }
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        if let Ok(mut client) = postgres::Client::connect(&self.admin, postgres::NoTls) {
            let _ = client.batch_execute(&format!(
                "DROP DATABASE IF EXISTS {} WITH (FORCE)",
                self.name
            ));
        }
    }
}

/// What one run of the binary printed, and its exit status.
#[derive(Debug)]
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl Run {
    /// The stdout lines.
    pub fn lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }
}

/// Where the binary keeps its databases (a temporary data directory, or a test database on
/// PostgreSQL), and a temporary directory for the test's other files.
pub struct Env {
    pub dir: TempDir,
    postgres: Option<TestDatabase>,
}

impl Env {
    /// An environment on the backend under test.
    pub fn new() -> Env {
        let postgres = on_postgres().then(|| {
            TestDatabase::new("env").expect(
                "INDEXA_TEST_BACKEND=postgres needs INDEXA_TEST_PG_URL (scripts/pg-test-cluster.sh)",
            )
        });
        Env {
            dir: tempfile::tempdir().expect("temporary directory"),
            postgres,
        }
    }

    /// An environment on a SQLite data directory whatever the backend under test, for tests
    /// of the directory's files.
    pub fn sqlite() -> Env {
        Env {
            dir: tempfile::tempdir().expect("temporary directory"),
            postgres: None,
        }
    }

    /// A SQLite environment whose data directory holds a copy of the committed fixture
    /// `file` (a path under [`fixtures`], a file of database "v1") as that database's file.
    pub fn with_fixture(file: &str) -> Env {
        let env = Env::sqlite();
        std::fs::create_dir_all(env.data_dir()).expect("data directory");
        std::fs::copy(fixtures().join(file), env.data_dir().join("db-v1.indexa"))
            .expect("copy the fixture");
        env
    }

    /// The SQLite data directory (not created until a command writes).
    ///
    /// # Panics
    /// On PostgreSQL: a test that looks at files makes its environment with [`Env::sqlite`].
    pub fn data_dir(&self) -> PathBuf {
        assert!(
            self.postgres.is_none(),
            "this test reads the data directory's files: make it with Env::sqlite()"
        );
        self.dir.path().join("data")
    }

    /// The `--data-dir` argument: the data directory, or the test database's URL.
    pub fn data_arg(&self) -> OsString {
        match &self.postgres {
            Some(db) => db.url.clone().into(),
            None => self.data_dir().into(),
        }
    }

    /// How the binary's messages name the place of the databases.
    pub fn place(&self) -> String {
        match &self.postgres {
            Some(_) => "the PostgreSQL database".to_string(),
            None => self.data_dir().display().to_string(),
        }
    }

    /// A factory over the same databases, for tests that set up what the CLI cannot write.
    pub fn factory(&self) -> indexa::Factory {
        match &self.postgres {
            Some(db) => indexa::Factory::open_url(&db.url).unwrap(),
            None => indexa::Factory::open_dir(self.data_dir()).unwrap(),
        }
    }

    /// Runs `indexa --data-dir DIR ARGS…` with `stdin` as its input.
    pub fn run_with_input(&self, args: &[&str], stdin: &str) -> Run {
        let mut child = Command::new(env!("CARGO_BIN_EXE_indexa"))
            .arg("--data-dir")
            .arg(self.data_arg())
            .args(args)
            .env_remove("INDEXA_DATA_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run indexa");
        let mut input = child.stdin.take().expect("stdin");
        // The command may stop reading early (e.g. after an aborting op).
        let _ = input.write_all(stdin.as_bytes());
        drop(input);
        let out = child.wait_with_output().expect("wait for indexa");
        Run {
            stdout: String::from_utf8(out.stdout).expect("UTF-8 stdout"),
            stderr: String::from_utf8(out.stderr).expect("UTF-8 stderr"),
            code: out.status.code().expect("exit code"),
        }
    }

    /// Runs `indexa --data-dir DIR ARGS…` with empty input.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with_input(args, "")
    }

    /// As [`Env::run`], asserting exit status 0; returns stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let run = self.run(args);
        assert_eq!(run.code, 0, "{args:?}: {run:?}");
        run.stdout
    }

    /// Runs a batch script (lines of JSON) against `db`; returns the output lines and the
    /// exit code.
    pub fn batch(&self, db: &str, extra: &[&str], script: &str) -> (Vec<String>, i32) {
        let mut args = vec!["batch", db];
        args.extend_from_slice(extra);
        let run = self.run_with_input(&args, script);
        assert_eq!(run.stderr, "", "batch wrote to stderr");
        (run.stdout.lines().map(str::to_owned).collect(), run.code)
    }

    /// Runs a batch and asserts its exact output lines and exit code.
    pub fn expect_batch(
        &self,
        db: &str,
        extra: &[&str],
        script: &str,
        expected: &[&str],
        code: i32,
    ) {
        let (lines, got) = self.batch(db, extra, script);
        assert_eq!(lines, expected, "output of batch:\n{script}");
        assert_eq!(got, code, "exit code of batch:\n{script}");
    }

    /// Writes a file in the temporary directory and returns its path.
    pub fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, contents).expect("write test file");
        path
    }
}

/// A writer in the background: commits `batch` (batch-protocol lines, one transaction) to
/// database `db` through a new `indexa batch` process, again and again, at least three times
/// and until [`Writer::stop`].
pub struct Writer {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<usize>,
}

impl Writer {
    /// Starts writing to `db` in the data directory of `env`.
    pub fn start(env: &Env, db: &str, batch: String) -> Writer {
        let stop = Arc::new(AtomicBool::new(false));
        let (flag, dir, db) = (stop.clone(), env.data_arg(), db.to_owned());
        let thread = std::thread::spawn(move || {
            let mut rounds = 0;
            while !flag.load(Ordering::Relaxed) || rounds < 3 {
                let mut child = Command::new(env!("CARGO_BIN_EXE_indexa"))
                    .arg("--data-dir")
                    .arg(&dir)
                    .args(["batch", &db])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::null())
                    .spawn()
                    .unwrap();
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(batch.as_bytes())
                    .unwrap();
                assert!(child.wait().unwrap().success());
                rounds += 1;
            }
            rounds
        });
        Writer { stop, thread }
    }

    /// Stops the writer after its current transaction; returns how many it committed.
    pub fn stop(self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// A real data set, read in place: `data/NAME` when the repository ships it, else
/// `data/external/NAME`, where `scripts/fetch-data.sh` fetches the large ones (`scripts/test.sh`
/// runs that script first). A missing file fails the test with a message naming the script.
pub fn data_file(name: &str) -> String {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let path = [data.join(name), data.join("external").join(name)]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("test data {name} is missing from data/ and data/external/: run scripts/fetch-data.sh")
        });
    path.to_str().expect("UTF-8 path").to_owned()
}

/// Joins script lines with newlines.
pub fn script(lines: &[&str]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

/// The committed database files of older storage formats (`crates/indexa/tests/fixtures`).
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../indexa/tests/fixtures")
}

/// Asserts that `indexa check` finds no problem in database `db` and that its dump is
/// `recorded`.
pub fn assert_checks_clean_and_dumps(env: &Env, db: &str, recorded: &str) {
    assert_eq!(env.ok(&["check", db]), "", "check reports no problem");
    assert_eq!(env.ok(&["dump", db]), recorded);
}

/// The SQLite types of the index entries' keys and primary keys in an upgraded fixture file, as
/// distinct `key type/primary key type` pairs over every index's table, sorted and joined by
/// commas.
pub fn index_key_types(conn: &rusqlite::Connection) -> String {
    let tables: Vec<String> = conn
        .prepare("SELECT id FROM object_store_index ORDER BY id")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|id| {
            let table = indexa::sqlite_layout::index_table(id.unwrap());
            format!("SELECT typeof(key) || '/' || typeof(primary_key) AS t FROM {table}")
        })
        .collect();
    conn.query_row(
        &format!(
            "SELECT group_concat(t) FROM (SELECT DISTINCT t FROM ({}) ORDER BY t)",
            tables.join(" UNION ALL ")
        ),
        [],
        |r| r.get(0),
    )
    .unwrap()
}

/// The format version of the database file `db-v1.indexa` in `dir` (an upgraded fixture) and
/// the names of its tables, sorted.
pub fn format_and_tables(dir: &Path) -> (i64, Vec<String>) {
    let conn = rusqlite::Connection::open(dir.join("db-v1.indexa")).unwrap();
    let format = conn
        .query_row("SELECT format_version FROM database", [], |r| r.get(0))
        .unwrap();
    let tables = conn
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    (format, tables)
}

/// Asserts that `indexa check` on the fixture database `v1` in `env`, never opened by this
/// build, upgrades it (as any open does) to format version 4 and finds no problem.
pub fn assert_check_upgrades_first(env: &Env) {
    assert_eq!(env.ok(&["check", "v1"]), "");
    assert_eq!(format_and_tables(&env.data_dir()).0, 4);
}
