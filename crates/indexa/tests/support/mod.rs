//! The backend the engine's tests run on: SQLite (a temporary directory) by default, or with
//! `INDEXA_TEST_BACKEND=postgres` a fresh PostgreSQL database on the server at
//! `INDEXA_TEST_PG_URL` (`scripts/pg-test-cluster.sh` starts one), dropped afterwards.
//!
//! Tests that call [`Factory::temporary`] or [`Factory::open_dir`] directly are SQLite-only,
//! each saying why (a file, its damage, its locks or its fsyncs is what they test); README.md
//! lists them.

use std::ops::Deref;
use std::sync::atomic::{AtomicUsize, Ordering};

use indexa::Factory;

/// A factory on the backend under test; its PostgreSQL database (or SQLite directory) is
/// dropped with it.
pub struct TestFactory {
    factory: Option<Factory>,
    /// The PostgreSQL server's URL and the test database's name.
    postgres: Option<(String, String)>,
    /// The test database's URL, or the SQLite data directory.
    place: Place,
}

/// Where a test factory's databases are.
enum Place {
    Url(String),
    Dir(tempfile::TempDir),
}

impl Deref for TestFactory {
    type Target = Factory;
    fn deref(&self) -> &Factory {
        self.factory.as_ref().expect("set until dropped")
    }
}

impl Drop for TestFactory {
    fn drop(&mut self) {
        self.factory.take();
        if let Some((url, name)) = self.postgres.take() {
            if let Ok(mut client) = postgres::Client::connect(&url, postgres::NoTls) {
                let _ =
                    client.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
            }
        }
    }
}

/// True when the tests run on PostgreSQL.
#[allow(dead_code)]
pub fn on_postgres() -> bool {
    std::env::var("INDEXA_TEST_BACKEND").is_ok_and(|b| b == "postgres")
}

impl TestFactory {
    /// Another factory over the same databases, as a second process would open them.
    #[allow(dead_code)]
    pub fn another(&self) -> Factory {
        match &self.place {
            Place::Url(url) => Factory::open_url(url).unwrap(),
            Place::Dir(dir) => Factory::open_dir(dir.path()).unwrap(),
        }
    }
}

/// A factory with no database in it, on the backend under test.
pub fn factory() -> TestFactory {
    if !on_postgres() {
        let dir = tempfile::tempdir().unwrap();
        return TestFactory {
            factory: Some(Factory::open_dir(dir.path()).unwrap()),
            postgres: None,
            place: Place::Dir(dir),
        };
    }
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let url = std::env::var("INDEXA_TEST_PG_URL").expect(
        "INDEXA_TEST_BACKEND=postgres needs INDEXA_TEST_PG_URL (scripts/pg-test-cluster.sh)",
    );
    let name = format!(
        "indexa_test_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let mut client =
        postgres::Client::connect(&format!("{url}/postgres"), postgres::NoTls).unwrap();
    client
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .unwrap();
    client
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    let database = format!("{url}/{name}");
    TestFactory {
        factory: Some(Factory::open_url(&database).unwrap()),
        postgres: Some((format!("{url}/postgres"), name)),
        place: Place::Url(database),
    }
}

/// Where several factories find the same databases, on the backend under test: a temporary
/// directory, or a fresh PostgreSQL database (dropped with the place).
#[allow(dead_code)]
pub struct TestPlace {
    dir: Option<tempfile::TempDir>,
    /// The test database's URL, the maintenance database's URL and the test database's name.
    postgres: Option<(String, String, String)>,
}

#[allow(dead_code)]
impl TestPlace {
    /// A new factory on the place.
    pub fn factory(&self) -> Factory {
        match (&self.dir, &self.postgres) {
            (Some(dir), _) => Factory::open_dir(dir.path()).unwrap(),
            (None, Some((url, _, _))) => Factory::open_url(url).unwrap(),
            (None, None) => unreachable!("a place is a directory or a PostgreSQL database"),
        }
    }

    /// The directory or URL, as the CLI's `--data-dir` and the Node.js package take it.
    pub fn location(&self) -> String {
        match (&self.dir, &self.postgres) {
            (Some(dir), _) => dir.path().display().to_string(),
            (None, Some((url, _, _))) => url.clone(),
            (None, None) => unreachable!("a place is a directory or a PostgreSQL database"),
        }
    }
}

impl Drop for TestPlace {
    fn drop(&mut self) {
        if let Some((_, admin, name)) = self.postgres.take() {
            if let Ok(mut client) = postgres::Client::connect(&admin, postgres::NoTls) {
                let _ =
                    client.batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"));
            }
        }
    }
}

/// An empty place on the backend under test.
#[allow(dead_code)]
pub fn place() -> TestPlace {
    if !on_postgres() {
        return TestPlace {
            dir: Some(tempfile::tempdir().unwrap()),
            postgres: None,
        };
    }
    let mut f = factory();
    let (admin, name) = f.postgres.take().expect("a PostgreSQL test factory");
    let url = f.url().expect("a PostgreSQL factory").to_owned();
    drop(f);
    TestPlace {
        dir: None,
        postgres: Some((url, admin, name)),
    }
}
