//! Acceptance tests on PostgreSQL shards with a PostgreSQL catalog. They need a server:
//! `eval "$(scripts/pg-test-cluster.sh start)"` sets INDEXA_TEST_PG_URL; INDEXA_SKIP_PG=1
//! skips them explicitly.

#[macro_use]
mod common;

use common::{cluster, num, pg_base, s, Kind, Setup};
use indexa_shard::{Config, InsertOptions, Router};

scenarios_on!(Postgres);

/// PostgreSQL has no last-insert id: without RETURNING there is no id, and the statement is
/// rolled back.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_returning_has_no_id() {
    let Some(c) = cluster(Kind::Postgres, Setup::default()).await else {
        return;
    };
    c.create_auto_users().await;
    let err = c
        .router
        .insert_shard(
            "db-a",
            "INSERT INTO auto_users (name) VALUES (?)",
            &[s("Ada")],
            &InsertOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_UNAVAILABLE");
    assert_eq!(c.user_names("db-a").await, Vec::<indexa::Value>::new());
}

/// Parameters take the type the server reports: `5` binds to INT2/INT4/INT8/NUMERIC/TEXT/FLOAT;
/// timestamps come back as ISO-8601 strings; a value that does not fit is QUERY_FAILED.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn parameter_and_column_types() {
    let Some(c) = cluster(
        Kind::Postgres,
        Setup {
            shards: 1,
            ..Default::default()
        },
    )
    .await
    else {
        return;
    };
    c.router
        .exec_all("CREATE TABLE p (a INT2, b INT4, c INT8, d NUMERIC(10,2), e TEXT, f FLOAT4, g VARCHAR(10), ts TIMESTAMPTZ, tl TIMESTAMP, dt DATE)")
        .await
        .unwrap();
    let five = num(5.0);
    c.router
        .run_shard(
            "db-a",
            "INSERT INTO p VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            &[
                five.clone(),
                five.clone(),
                five.clone(),
                five.clone(),
                five.clone(),
                five.clone(),
                five,
                indexa::Value::Date(1_700_000_000_123.0),
                s("2024-01-02 03:04:05"),
                s("2024-02-29"),
            ],
        )
        .await
        .unwrap();
    let row = c
        .router
        .first_shard("db-a", "SELECT * FROM p", &[])
        .await
        .unwrap()
        .unwrap();
    for name in ["a", "b", "c", "d", "f"] {
        assert_eq!(common::field(&row, name), num(5.0), "{name}");
    }
    assert_eq!(common::field(&row, "e"), s("5"));
    assert_eq!(common::field(&row, "g"), s("5"));
    assert_eq!(common::field(&row, "ts"), s("2023-11-14T22:13:20.123Z"));
    assert_eq!(common::field(&row, "tl"), s("2024-01-02T03:04:05.000"));
    assert_eq!(common::field(&row, "dt"), s("2024-02-29"));
    let err = c
        .router
        .run_shard("db-a", "INSERT INTO p (a) VALUES (?)", &[num(70000.0)])
        .await
        .unwrap_err();
    assert_eq!(err.code(), "QUERY_FAILED");
    assert!(err.to_string().contains("parameter 1"), "{err}");
    let err = c
        .router
        .run_shard("db-a", "INSERT INTO p (b) VALUES (?)", &[num(1.5)])
        .await
        .unwrap_err();
    assert_eq!(err.code(), "QUERY_FAILED");
    let err = c
        .router
        .run_shard(
            "db-a",
            "INSERT INTO p (b) VALUES (?)",
            &[num(1.0), num(2.0)],
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "QUERY_FAILED");
    // Dollar-quoted text and E'' strings keep their question marks.
    let row = c
        .router
        .first_shard(
            "db-a",
            "SELECT $$?$$ AS x, E'\\'?' AS y, ?::int4 + 1 AS z",
            &[num(41.0)],
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(common::field(&row, "x"), s("?"));
    assert_eq!(common::field(&row, "y"), s("'?"));
    assert_eq!(common::field(&row, "z"), num(42.0));
}

/// A catalog that cannot be reached: COORDINATOR_UNAVAILABLE.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_catalog() {
    let Some(_base) = pg_base() else { return };
    let dir = tempfile::tempdir().unwrap();
    // Port 1 on the loopback interface: nothing listens there.
    let config = Config::from_toml(
        "[catalog]\nurl = \"postgres://postgres@127.0.0.1:1/catalog\"\n[shards]\na = \"sqlite:a.db\"\n",
        dir.path(),
    )
    .unwrap();
    let err = Router::open(&config).await.err().unwrap();
    assert_eq!(err.code(), "COORDINATOR_UNAVAILABLE");
}

/// A PostgreSQL shard that is down fails the seeding: next_id fails rather than return a low id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_shard_fails_seeding() {
    let Some(base) = pg_base() else { return };
    let dir = tempfile::tempdir().unwrap();
    let up = common::pg_database(&base, "up").await;
    let _dropped = common::Databases(vec![up.clone()]);
    let text = format!(
        "[catalog]\nurl = \"sqlite:catalog.db\"\ncoordinator = true\n[shards]\nup = \"{up}\"\ndown = \"postgres://postgres@127.0.0.1:1/down\"\n"
    );
    let router = common::open(&text, &dir).await;
    router
        .run_shard("up", "CREATE TABLE t (id BIGINT)", &[])
        .await
        .unwrap();
    let err = router.next_id("t", &Default::default()).await.unwrap_err();
    assert_eq!(err.code(), "QUERY_FAILED");
    assert_eq!(err.shard(), Some("down"));
}

/// Issue 18, item 6's kind: a failure after the INSERT ran — here the catalog's sequence
/// table is gone when the seen id would raise it — is reported and leaves nothing on the
/// shard and no mapping, for `insert_shard` with a table and for `insert_into`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalog_failure_after_insert_keeps_nothing() {
    let Some(c) = cluster(
        Kind::Postgres,
        Setup {
            coordinator: true,
            ..Default::default()
        },
    )
    .await
    else {
        return;
    };
    c.create_auto_users().await;
    // Seed the sequence, then take its table away.
    assert_eq!(
        c.router
            .next_id("auto_users", &Default::default())
            .await
            .unwrap(),
        1
    );
    let (client, connection) = tokio_postgres::connect(&c.catalog_url, tokio_postgres::NoTls)
        .await
        .unwrap();
    let task = tokio::spawn(connection);
    client
        .batch_execute("ALTER TABLE indexa_shard_sequence RENAME TO gone")
        .await
        .unwrap();
    let options = InsertOptions {
        table: Some("auto_users".into()),
        ..Default::default()
    };
    let err = c
        .router
        .insert_shard(
            "db-a",
            "INSERT INTO auto_users (id, name) VALUES (5, 'Ada') RETURNING id",
            &[],
            &options,
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "COORDINATOR_UNAVAILABLE");
    assert_eq!(c.user_names("db-a").await, Vec::<indexa::Value>::new());
    assert_eq!(c.router.shard_of("5").await.unwrap(), None);

    let row = common::obj(&[("id", num(6.0)), ("name", s("Grace"))]);
    let err = c
        .router
        .insert_into("6", "auto_users", &row)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "COORDINATOR_UNAVAILABLE");
    let everywhere = c
        .router
        .all_shards("SELECT name FROM auto_users", &[])
        .await
        .unwrap();
    assert!(everywhere.is_empty(), "{everywhere:?}");
    drop(client);
    let _ = task.await;
}
