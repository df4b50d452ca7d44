//! A lost PostgreSQL connection (a server restart, an administrator ending the session): the
//! transaction in flight fails with `UnknownError`, no message shows the URL's password,
//! nothing of that transaction is kept, and the next transaction connects again. Runs on the
//! server at `INDEXA_TEST_PG_URL` (`scripts/pg-test-cluster.sh`) and says so when it is not
//! set.

use indexa::{DatabaseInfo, Factory, Key, Query, TransactionMode, Value};

const PASSWORD: &str = "s3cret-pw";

/// A fresh database on the test server, dropped at the end.
struct TestDatabase {
    admin: postgres::Client,
    name: String,
}

impl Drop for TestDatabase {
    fn drop(&mut self) {
        let _ = self.admin.batch_execute(&format!(
            "DROP DATABASE IF EXISTS {} WITH (FORCE)",
            self.name
        ));
    }
}

/// `url` with a password in it (the test cluster trusts every login, so any password works).
fn with_password(url: &str) -> String {
    let (scheme, rest) = url.split_once("://").expect("a URL");
    let (user, host) = rest.split_once('@').expect("a user in INDEXA_TEST_PG_URL");
    format!("{scheme}://{user}:{PASSWORD}@{host}")
}

/// Ends every session on database `name` but the caller's, waiting (up to 10 s) until each
/// has exited; returns how many it ended.
fn terminate_sessions(admin: &mut postgres::Client, name: &str) -> usize {
    admin
        .query(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity \
             WHERE datname = $1 AND pid <> pg_backend_pid()",
            &[&name],
        )
        .unwrap()
        .iter()
        .filter(|row| row.get::<_, bool>(0))
        .count()
}

#[test]
fn a_lost_connection_fails_the_transaction_in_flight_and_the_next_one_reconnects() {
    let Ok(server) = std::env::var("INDEXA_TEST_PG_URL") else {
        eprintln!("INDEXA_TEST_PG_URL is not set: PostgreSQL skipped (eval \"$(scripts/pg-test-cluster.sh start)\")");
        return;
    };
    let name = format!("indexa_lost_connection_{}", std::process::id());
    let mut admin =
        postgres::Client::connect(&format!("{server}/postgres"), postgres::NoTls).unwrap();
    admin
        .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
        .unwrap();
    admin
        .batch_execute(&format!("CREATE DATABASE {name}"))
        .unwrap();
    let mut test_db = TestDatabase { admin, name };

    let factory =
        Factory::open_url(&format!("{}/{}", with_password(&server), test_db.name)).unwrap();
    let db = factory
        .open("db", Some(1), |tx, _, _| {
            tx.create_object_store("s", None, false)?
                .add(Value::from("kept"), Some(Key::from(1)))?;
            Ok(())
        })
        .unwrap();

    // A readwrite transaction has written; then the server ends every session.
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    let store = tx.object_store("s").unwrap();
    store.put(Value::from("lost"), Some(Key::from(2))).unwrap();
    assert!(terminate_sessions(&mut test_db.admin, &test_db.name) >= 1);
    let err = store
        .put(Value::from("lost too"), Some(Key::from(3)))
        .unwrap_err();
    assert_eq!(err.name(), "UnknownError", "{err}");
    // The server's farewell, or the closed socket when the client reads or writes that
    // first.
    assert!(
        [
            "PostgreSQL failure: FATAL 57P01: terminating connection due to administrator command",
            "PostgreSQL failure: connection closed",
            "PostgreSQL failure: error communicating with the server",
        ]
        .contains(&err.message()),
        "{}",
        err.message()
    );
    assert!(!err.to_string().contains(PASSWORD), "{err}");
    // The failure aborted the transaction: there is nothing left to commit.
    assert_eq!(
        tx.commit().unwrap_err().to_string(),
        "InvalidStateError: the transaction has already finished"
    );

    // The next transactions connect again and see nothing of the lost one.
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    assert_eq!(
        tx.object_store("s")
            .unwrap()
            .get_all_keys(Query::all())
            .unwrap(),
        [Key::from(1)]
    );
    tx.commit().unwrap();
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    tx.object_store("s")
        .unwrap()
        .put(Value::from("after"), Some(Key::from(4)))
        .unwrap();
    tx.commit().unwrap();
    let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
    assert_eq!(
        tx.object_store("s").unwrap().get_all(Query::all()).unwrap(),
        [Value::from("kept"), Value::from("after")]
    );
    tx.commit().unwrap();
    db.close();

    // The factory's catalog connection connects again too (the closed database keeps no
    // connection; the catalog's is made again by a first listing, then ended).
    assert_eq!(factory.databases().unwrap().len(), 1);
    assert!(terminate_sessions(&mut test_db.admin, &test_db.name) >= 1);
    assert_eq!(
        factory.databases().unwrap(),
        [DatabaseInfo {
            name: "db".into(),
            version: 1
        }]
    );
}
