//! The seed's examples and issue 5's acceptance points, run on SQLite and PostgreSQL alike.

use std::collections::HashSet;
use std::sync::Arc;

use indexa::Value;
use indexa_shard::{Error, InsertOptions, NextIdOptions};

use super::{cluster, field, num, obj, s, Kind, Setup};

fn with_table(table: &str) -> InsertOptions {
    InsertOptions {
        table: Some(table.into()),
        ..Default::default()
    }
}

/// Both shards hand out id 1; the second insert is refused; with `table` the refused row is
/// deleted and the first mapping is unchanged.
pub async fn collision_with_table_removes_the_row(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.create_auto_users().await;
    let sql = c.insert_user_sql();
    let ada = c
        .router
        .insert_shard("db-a", sql, &[s("Ada")], &InsertOptions::default())
        .await
        .unwrap();
    assert_eq!(ada.generated_id, num(1.0));
    assert_eq!(ada.shard, "db-a");

    let err = c
        .router
        .insert_shard("db-b", sql, &[s("Grace")], &with_table("auto_users"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_COLLISION");
    assert_eq!(err.shard(), Some("db-b"));
    assert_eq!(err.table(), Some("auto_users"));
    assert_eq!(err.id(), Some(&num(1.0)));
    assert_eq!(err.row_removed(), Some(true));
    assert!(err.cause().is_none());
    assert!(err.to_string().contains("row was removed"), "{err}");
    match &err {
        Error::GeneratedKeyCollision { mapped_to, .. } => assert_eq!(mapped_to, "db-a"),
        other => panic!("{other:?}"),
    }

    assert_eq!(c.user_names("db-b").await, Vec::<Value>::new());
    assert_eq!(
        c.router.shard_of("1").await.unwrap().as_deref(),
        Some("db-a")
    );
    let row = c
        .router
        .first("1", "SELECT name FROM auto_users WHERE id = ?", &[num(1.0)])
        .await
        .unwrap()
        .expect("row 1 routes to db-a");
    assert_eq!(field(&row, "name"), s("Ada"));
}

/// Without `table` the refused row stays on its shard, and the error names shard and id.
pub async fn collision_without_table_keeps_the_row(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.create_auto_users().await;
    let sql = c.insert_user_sql();
    let none = InsertOptions::default();
    c.router
        .insert_shard("db-a", sql, &[s("Ada")], &none)
        .await
        .unwrap();
    let err = c
        .router
        .insert_shard("db-b", sql, &[s("Grace")], &none)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_COLLISION");
    assert_eq!(err.shard(), Some("db-b"));
    assert_eq!(err.id(), Some(&num(1.0)));
    assert_eq!(err.row_removed(), None);
    assert!(err.to_string().contains("stays on shard db-b"), "{err}");
    assert_eq!(c.user_names("db-b").await, vec![s("Grace")]);
    assert_eq!(
        c.router.shard_of("1").await.unwrap().as_deref(),
        Some("db-a")
    );
}

/// With `table`, a delete that matches no row keeps the collision code, names the leftover row
/// and carries the failure as the cause.
pub async fn collision_whose_delete_matches_nothing(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.create_auto_users().await;
    let sql = c.insert_user_sql();
    c.router
        .insert_shard("db-a", sql, &[s("Ada")], &InsertOptions::default())
        .await
        .unwrap();
    // The id column named for the delete is `created_at`, which holds NULL: no row matches.
    let options = InsertOptions {
        table: Some("auto_users".into()),
        id_column: Some("created_at".into()),
    };
    let returning = match kind {
        Kind::Sqlite => "INSERT INTO auto_users (name) VALUES (?) RETURNING id AS created_at",
        Kind::Postgres => "INSERT INTO auto_users (name) VALUES (?) RETURNING id AS created_at",
    };
    let err = c
        .router
        .insert_shard("db-b", returning, &[s("Grace")], &options)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_COLLISION");
    assert_eq!(err.row_removed(), Some(false));
    let cause = err.cause().expect("the failed delete is the cause");
    assert_eq!(cause.code(), "QUERY_FAILED");
    assert!(cause.to_string().contains("matched no row"), "{cause}");
    let message = err.to_string();
    assert!(
        message.contains("left on shard db-b in table auto_users with id 1"),
        "{message}"
    );
    assert_eq!(c.user_names("db-b").await, vec![s("Grace")]);
}

/// With a table that does not exist on the shard, the delete fails and is the cause.
pub async fn collision_whose_delete_fails(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.create_auto_users().await;
    let sql = c.insert_user_sql();
    c.router
        .insert_shard("db-a", sql, &[s("Ada")], &InsertOptions::default())
        .await
        .unwrap();
    let err = c
        .router
        .insert_shard("db-b", sql, &[s("Grace")], &with_table("no_such_table"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_COLLISION");
    assert_eq!(err.row_removed(), Some(false));
    assert_eq!(err.cause().map(Error::code), Some("QUERY_FAILED"));
    assert_eq!(c.user_names("db-b").await, vec![s("Grace")]);
}

/// An id mapped to the same shard is not a collision.
pub async fn same_shard_is_not_a_collision(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.router
        .exec_all("CREATE TABLE things (uuid TEXT, label TEXT)")
        .await
        .unwrap();
    let sql = "INSERT INTO things (uuid, label) VALUES (?, ?) RETURNING uuid, label";
    let options = InsertOptions {
        id_column: Some("uuid".into()),
        ..Default::default()
    };
    for label in ["first", "second"] {
        let created = c
            .router
            .insert_shard("db-a", sql, &[s("abc"), s(label)], &options)
            .await
            .unwrap();
        assert_eq!(created.generated_id, s("abc"));
    }
    let err = c
        .router
        .insert_shard("db-b", sql, &[s("abc"), s("third")], &options)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_COLLISION");
}

/// With one shard configured the check does not run, even against a mapping to another shard.
pub async fn one_shard_has_no_check(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.router
        .exec_all("CREATE TABLE things (uuid TEXT, label TEXT)")
        .await
        .unwrap();
    let sql = "INSERT INTO things (uuid, label) VALUES (?, ?) RETURNING uuid";
    let options = InsertOptions {
        id_column: Some("uuid".into()),
        ..Default::default()
    };
    c.router
        .insert_shard("db-b", sql, &[s("abc"), s("on b")], &options)
        .await
        .unwrap();
    // The same catalog with only db-a configured.
    let single = c
        .reopen(|text| {
            text.lines()
                .filter(|line| !line.starts_with("db-b"))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .await;
    let created = single
        .insert(sql, &[s("abc"), s("on a")], &options)
        .await
        .unwrap();
    assert_eq!(created.shard, "db-a");
    assert_eq!(created.generated_id, s("abc"));
}

/// RETURNING uuid with `id_column = "uuid"` gives "abc" (seed example), and the row routes.
pub async fn returning_uuid_with_id_column(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.router
        .exec_all("CREATE TABLE things (id INTEGER, uuid TEXT PRIMARY KEY, label TEXT)")
        .await
        .unwrap();
    let options = InsertOptions {
        id_column: Some("uuid".into()),
        ..Default::default()
    };
    let created = c
        .router
        .insert(
            "INSERT INTO things (id, uuid, label) VALUES (7, ?, ?) RETURNING id, uuid, label",
            &[s("abc"), s("Widget")],
            &options,
        )
        .await
        .unwrap();
    // Only the named column is read, not `id`.
    assert_eq!(created.generated_id, s("abc"));
    assert_eq!(created.rows.len(), 1);
    assert_eq!(field(&created.rows[0], "label"), s("Widget"));
    assert_eq!(
        c.router.shard_of("abc").await.unwrap().as_deref(),
        Some(created.shard.as_str())
    );
    let row = c
        .router
        .first(
            "abc",
            "SELECT label FROM things WHERE uuid = ?",
            &[s("abc")],
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(field(&row, "label"), s("Widget"));
    assert_eq!(c.router.shard_of("7").await.unwrap(), None);
}

/// `id_column` set but absent from the RETURNING row, or no id-like column without it:
/// GENERATED_KEY_UNAVAILABLE, with no fallback to the first column.
pub async fn missing_id_column_is_unavailable(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.router
        .exec_all("CREATE TABLE things (uuid TEXT PRIMARY KEY, label TEXT)")
        .await
        .unwrap();
    let options = InsertOptions {
        id_column: Some("uuid".into()),
        ..Default::default()
    };
    let err = c
        .router
        .insert_shard(
            "db-a",
            "INSERT INTO things (uuid, label) VALUES (?, ?) RETURNING label",
            &[s("abc"), s("Widget")],
            &options,
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_UNAVAILABLE");
    assert_eq!(err.shard(), Some("db-a"));
    let err = c
        .router
        .insert_shard(
            "db-a",
            "INSERT INTO things (uuid, label) VALUES (?, ?) RETURNING uuid, label",
            &[s("def"), s("Gadget")],
            &InsertOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_UNAVAILABLE");
    assert_eq!(c.router.shard_of("def").await.unwrap(), None);
    assert_eq!(c.router.shard_of("Gadget").await.unwrap(), None);
}

/// A RETURNING column named `ID` or an alias such as `lastInsertId` is read.
pub async fn id_aliases_are_read(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.router
        .exec_all("CREATE TABLE things (n INTEGER, label TEXT)")
        .await
        .unwrap();
    for (sql, expected) in [
        (
            "INSERT INTO things (n, label) VALUES (41, 'x') RETURNING label, n AS \"ID\"",
            41.0,
        ),
        (
            "INSERT INTO things (n, label) VALUES (42, 'y') RETURNING label, n AS \"lastInsertId\"",
            42.0,
        ),
    ] {
        let created = c
            .router
            .insert_shard("db-a", sql, &[], &InsertOptions::default())
            .await
            .unwrap();
        assert_eq!(created.generated_id, num(expected), "{sql}");
    }
}

/// next_id without a coordinator: MAX across every shard + 1; 1 when empty; `min` as floor.
pub async fn next_id_without_coordinator(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.router
        .exec_all("CREATE TABLE tickets (id BIGINT PRIMARY KEY, title TEXT)")
        .await
        .unwrap();
    let default = NextIdOptions::default();
    assert_eq!(c.router.next_id("tickets", &default).await.unwrap(), 1);
    let min = NextIdOptions {
        min: Some(100),
        ..Default::default()
    };
    assert_eq!(c.router.next_id("tickets", &min).await.unwrap(), 100);
    c.router
        .run_shard(
            "db-a",
            "INSERT INTO tickets (id, title) VALUES (?, 'a')",
            &[num(5.0)],
        )
        .await
        .unwrap();
    c.router
        .run_shard(
            "db-b",
            "INSERT INTO tickets (id, title) VALUES (?, 'b')",
            &[num(9.0)],
        )
        .await
        .unwrap();
    assert_eq!(c.router.next_id("tickets", &default).await.unwrap(), 10);
    // Without a coordinator nothing is reserved: the same id again.
    assert_eq!(c.router.next_id("tickets", &default).await.unwrap(), 10);
    assert_eq!(c.router.next_id("tickets", &min).await.unwrap(), 100);
    let column = NextIdOptions {
        column: Some("ticket_number".into()),
        ..Default::default()
    };
    let err = c.router.next_id("tickets", &column).await.unwrap_err();
    assert_eq!(err.code(), "QUERY_FAILED");
}

/// With the coordinator: seeded from the cross-shard maximum, then one catalog call per id (no
/// shard queries: the table can even be gone), `min` never undercut.
pub async fn next_id_with_coordinator(kind: Kind) {
    let setup = Setup {
        coordinator: true,
        ..Default::default()
    };
    let Some(c) = cluster(kind, setup).await else {
        return;
    };
    c.router
        .exec_all("CREATE TABLE tickets (id BIGINT PRIMARY KEY, title TEXT); CREATE TABLE empty_t (id BIGINT PRIMARY KEY)")
        .await
        .unwrap();
    let default = NextIdOptions::default();
    assert_eq!(c.router.next_id("empty_t", &default).await.unwrap(), 1);
    assert_eq!(c.router.next_id("empty_t", &default).await.unwrap(), 2);
    c.router
        .run_shard(
            "db-a",
            "INSERT INTO tickets (id, title) VALUES (5, 'a')",
            &[],
        )
        .await
        .unwrap();
    c.router
        .run_shard(
            "db-b",
            "INSERT INTO tickets (id, title) VALUES (9, 'b')",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(c.router.next_id("tickets", &default).await.unwrap(), 10);
    c.router.exec_all("DROP TABLE tickets").await.unwrap();
    assert_eq!(c.router.next_id("tickets", &default).await.unwrap(), 11);
    let min = NextIdOptions {
        min: Some(100),
        ..Default::default()
    };
    assert_eq!(c.router.next_id("tickets", &min).await.unwrap(), 100);
    assert_eq!(c.router.next_id("tickets", &default).await.unwrap(), 101);
    assert_eq!(c.router.next_id("tickets", &min).await.unwrap(), 102);
    // A second router on the same catalog continues the same sequence.
    let other = c.reopen(str::to_string).await;
    assert_eq!(other.next_id("tickets", &default).await.unwrap(), 103);
}

/// `min` 100 on a fresh sequence gives 100.
pub async fn next_id_min_on_fresh_sequence(kind: Kind) {
    let setup = Setup {
        coordinator: true,
        ..Default::default()
    };
    let Some(c) = cluster(kind, setup).await else {
        return;
    };
    c.router
        .exec_all("CREATE TABLE tickets (id BIGINT PRIMARY KEY)")
        .await
        .unwrap();
    let min = NextIdOptions {
        min: Some(100),
        ..Default::default()
    };
    assert_eq!(c.router.next_id("tickets", &min).await.unwrap(), 100);
    assert_eq!(
        c.router
            .next_id("tickets", &Default::default())
            .await
            .unwrap(),
        101
    );
}

/// A shard that fails while the sequence is seeded makes next_id fail, and seeds nothing: once
/// the shard answers, the id continues after its rows.
pub async fn seeding_fails_with_a_failing_shard(kind: Kind) {
    let setup = Setup {
        coordinator: true,
        ..Default::default()
    };
    let Some(c) = cluster(kind, setup).await else {
        return;
    };
    c.router
        .run_shard("db-a", "CREATE TABLE tickets (id BIGINT PRIMARY KEY)", &[])
        .await
        .unwrap();
    let default = NextIdOptions::default();
    let err = c.router.next_id("tickets", &default).await.unwrap_err();
    assert_eq!(err.code(), "QUERY_FAILED");
    assert_eq!(err.shard(), Some("db-b"));
    c.router
        .run_shard("db-b", "CREATE TABLE tickets (id BIGINT PRIMARY KEY)", &[])
        .await
        .unwrap();
    c.router
        .run_shard("db-b", "INSERT INTO tickets (id) VALUES (20)", &[])
        .await
        .unwrap();
    assert_eq!(c.router.next_id("tickets", &default).await.unwrap(), 21);
}

/// Ids the router sees push the sequence: insert_into's numeric fields and a generated id read
/// by an insert with `table`.
pub async fn seen_ids_push_the_sequence(kind: Kind, lease: u64) {
    let setup = Setup {
        coordinator: true,
        lease,
        ..Default::default()
    };
    let Some(c) = cluster(kind, setup).await else {
        return;
    };
    c.create_auto_users().await;
    c.router
        .exec_all("CREATE TABLE tickets (id BIGINT PRIMARY KEY, title TEXT)")
        .await
        .unwrap();
    let default = NextIdOptions::default();
    assert_eq!(c.router.next_id("tickets", &default).await.unwrap(), 1);
    let shard = c
        .router
        .insert_into(
            "50",
            "tickets",
            &obj(&[("id", num(50.0)), ("title", s("fire"))]),
        )
        .await
        .unwrap();
    assert_eq!(c.router.shard_of("50").await.unwrap(), Some(shard));
    assert_eq!(c.router.next_id("tickets", &default).await.unwrap(), 51);

    assert_eq!(c.router.next_id("auto_users", &default).await.unwrap(), 1);
    let sql = c.insert_user_sql();
    let options = with_table("auto_users");
    let mut last = 0.0;
    for name in ["Ada", "Grace"] {
        let created = c
            .router
            .insert_shard("db-a", sql, &[s(name)], &options)
            .await
            .unwrap();
        let Value::Number(id) = created.generated_id else {
            panic!("numeric id")
        };
        last = id;
    }
    assert_eq!(last, 2.0);
    assert_eq!(c.router.next_id("auto_users", &default).await.unwrap(), 3);
}

/// 8 concurrent tasks × 1,000 next_id calls give 8,000 distinct ids.
pub async fn concurrent_next_id_is_unique(kind: Kind, lease: u64) {
    let setup = Setup {
        coordinator: true,
        lease,
        ..Default::default()
    };
    let Some(c) = cluster(kind, setup).await else {
        return;
    };
    c.router
        .exec_all("CREATE TABLE tickets (id BIGINT PRIMARY KEY)")
        .await
        .unwrap();
    let router = Arc::new(c.router);
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let router = Arc::clone(&router);
        tasks.push(tokio::spawn(async move {
            let mut ids = Vec::with_capacity(1000);
            for _ in 0..1000 {
                ids.push(
                    router
                        .next_id("tickets", &NextIdOptions::default())
                        .await
                        .unwrap(),
                );
            }
            ids
        }));
    }
    let mut seen = HashSet::new();
    for task in tasks {
        for id in task.await.unwrap() {
            assert!(seen.insert(id), "duplicate id {id}");
        }
    }
    assert_eq!(seen.len(), 8000);
    assert_eq!(seen.iter().min(), Some(&1));
    assert_eq!(seen.iter().max(), Some(&8000));
}

/// Routed reads of an unmapped key return nothing and write no mapping; writes place it.
pub async fn routed_reads_and_writes(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.router
        .exec_all("CREATE TABLE notes (k TEXT, body TEXT)")
        .await
        .unwrap();
    assert_eq!(
        c.router
            .first("k1", "SELECT * FROM notes", &[])
            .await
            .unwrap(),
        None
    );
    assert!(c
        .router
        .all("k1", "SELECT * FROM notes", &[])
        .await
        .unwrap()
        .is_empty());
    assert_eq!(c.router.shard_of("k1").await.unwrap(), None);
    let written = c
        .router
        .run(
            "k1",
            "INSERT INTO notes (k, body) VALUES (?, ?)",
            &[s("k1"), s("hello")],
        )
        .await
        .unwrap();
    assert_eq!(written, 1);
    let shard = c.router.shard_of("k1").await.unwrap().expect("mapped");
    // "k1": h = 107·31 + 49 = 3366; 3366 mod 2 = 0 → db-a.
    assert_eq!(shard, "db-a");
    let rows = c
        .router
        .all("k1", "SELECT k, body FROM notes WHERE k = ?", &[s("k1")])
        .await
        .unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(field(&rows[0], "body"), s("hello"));
    let keys: Vec<&str> = rows[0]
        .keys()
        .map(|k| if k.eq_str("k") { "k" } else { "body" })
        .collect();
    assert_eq!(keys, ["k", "body"]);
    // The placed row is on db-a only.
    assert_eq!(
        c.router
            .all_shard("db-b", "SELECT * FROM notes", &[])
            .await
            .unwrap()
            .len(),
        0
    );
    let all = c
        .router
        .all_shards("SELECT body FROM notes", &[])
        .await
        .unwrap();
    assert_eq!(all.len(), 1);
}

/// Pinned calls to an unknown shard: SHARD_NOT_FOUND.
pub async fn unknown_shard(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    let err = c
        .router
        .run_shard("db-z", "SELECT 1", &[])
        .await
        .unwrap_err();
    assert_eq!(err.code(), "SHARD_NOT_FOUND");
    assert_eq!(err.shard(), Some("db-z"));
    let err = c
        .router
        .insert_shard(
            "db-z",
            "INSERT INTO t DEFAULT VALUES",
            &[],
            &InsertOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "SHARD_NOT_FOUND");
}

/// Identifiers are validated before the INSERT runs.
pub async fn invalid_identifier_before_insert(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.create_auto_users().await;
    let err = c
        .router
        .insert_shard(
            "db-a",
            c.insert_user_sql(),
            &[s("Ada")],
            &with_table("auto_users; DROP TABLE x"),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "INVALID_IDENTIFIER");
    let options = InsertOptions {
        table: Some("auto_users".into()),
        id_column: Some("id\"".into()),
    };
    let err = c
        .router
        .insert_shard("db-a", c.insert_user_sql(), &[s("Ada")], &options)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "INVALID_IDENTIFIER");
    assert!(c.user_names("db-a").await.is_empty());
    let err = c
        .router
        .insert_into("1", "auto_users", &obj(&[("na me", s("x"))]))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "INVALID_IDENTIFIER");
    assert_eq!(c.router.shard_of("1").await.unwrap(), None);
}

/// Values of every kind travel through parameters and come back as the column types map them.
pub async fn values_round_trip(kind: Kind) {
    let Some(c) = cluster(
        kind,
        Setup {
            shards: 1,
            ..Default::default()
        },
    )
    .await
    else {
        return;
    };
    let ddl = match kind {
        Kind::Sqlite => {
            "CREATE TABLE v (i INTEGER, i8 INTEGER, n NUMERIC, r REAL, t TEXT, b BLOB, f BOOLEAN)"
        }
        Kind::Postgres => {
            "CREATE TABLE v (i INT4, i8 INT8, n NUMERIC, r FLOAT8, t TEXT, b BYTEA, f BOOL)"
        }
    };
    c.router.exec_all(ddl).await.unwrap();
    let inserted = c
        .router
        .run_shard(
            "db-a",
            "INSERT INTO v (i, i8, n, r, t, b, f) VALUES (?, ?, ?, ?, ?, ?, ?)",
            &[
                num(5.0),
                num(5.0),
                num(5.0),
                num(0.5),
                num(5.0),
                Value::Binary(vec![0, 1, 255]),
                Value::Bool(true),
            ],
        )
        .await
        .unwrap();
    assert_eq!(inserted, 1);
    let row = c
        .router
        .first_shard("db-a", "SELECT i, i8, n, r, t, b, f, NULL AS z FROM v", &[])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(field(&row, "i"), num(5.0));
    assert_eq!(field(&row, "i8"), num(5.0));
    assert_eq!(field(&row, "n"), num(5.0));
    assert_eq!(field(&row, "r"), num(0.5));
    assert_eq!(field(&row, "t"), s("5"));
    assert_eq!(field(&row, "b"), Value::Binary(vec![0, 1, 255]));
    let expected_bool = match kind {
        Kind::Sqlite => num(1.0),
        Kind::Postgres => Value::Bool(true),
    };
    assert_eq!(field(&row, "f"), expected_bool);
    assert_eq!(field(&row, "z"), Value::Null);
    let names: Vec<String> = row.keys().map(|k| k.to_string_lossy()).collect();
    assert_eq!(names, ["i", "i8", "n", "r", "t", "b", "f", "z"]);
    // Placeholders inside literals, quoted identifiers and comments are not placeholders.
    let row = c
        .router
        .first_shard(
            "db-a",
            "SELECT '?' AS \"?\", i /* ? */ -- ?\n FROM v WHERE i = ?",
            &[num(5.0)],
        )
        .await
        .unwrap()
        .unwrap();
    assert_eq!(field(&row, "?"), s("?"));
    assert_eq!(field(&row, "i"), num(5.0));
}

/// Round-robin placement rotates through the shards in configuration order, across routers.
pub async fn round_robin_rotates(kind: Kind) {
    let setup = Setup {
        shards: 3,
        strategy: "round-robin",
        ..Default::default()
    };
    let Some(c) = cluster(kind, setup).await else {
        return;
    };
    c.router
        .exec_all("CREATE TABLE things (uuid TEXT, label TEXT)")
        .await
        .unwrap();
    let options = InsertOptions {
        id_column: Some("uuid".into()),
        ..Default::default()
    };
    let sql = "INSERT INTO things (uuid, label) VALUES (?, 'x') RETURNING uuid";
    let other = c.reopen(str::to_string).await;
    let mut shards = Vec::new();
    for (i, router) in [&c.router, &other, &c.router, &other]
        .into_iter()
        .enumerate()
    {
        let created = router
            .insert(sql, &[s(&format!("u{i}"))], &options)
            .await
            .unwrap();
        shards.push(created.shard);
    }
    assert_eq!(shards, ["db-a", "db-b", "db-c", "db-a"]);
}
