//! The seed's examples and issue 5's acceptance points, run on SQLite and PostgreSQL alike.

use std::collections::HashSet;
use std::sync::Arc;

use indexa::Value;
use indexa_shard::{Error, GeneratedId, InsertOptions, NextIdOptions};

use super::{cluster, field, int, num, obj, s, text, Kind, Setup};

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
    assert_eq!(ada.generated_id, int(1));
    assert_eq!(ada.shard, "db-a");

    let err = c
        .router
        .insert_shard("db-b", sql, &[s("Grace")], &with_table("auto_users"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_COLLISION");
    assert_eq!(err.shard(), Some("db-b"));
    assert_eq!(err.table(), Some("auto_users"));
    assert_eq!(err.id(), Some(&int(1)));
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
    assert_eq!(err.id(), Some(&int(1)));
    assert_eq!(err.row_removed(), None);
    assert!(err.to_string().contains("stays on shard db-b"), "{err}");
    assert_eq!(c.user_names("db-b").await, vec![s("Grace")]);
    assert_eq!(
        c.router.shard_of("1").await.unwrap().as_deref(),
        Some("db-a")
    );
}

/// Issue 18, item 3 and its kind: the cleanup of a refused row removes exactly the rows the
/// refused statement wrote and no other, even when the id column holds the same value in
/// other rows (an aliased RETURNING column, a column that is not unique).
pub async fn collision_cleanup_removes_only_its_own_row(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.create_auto_users().await;
    let sql = c.insert_user_sql();
    c.router
        .insert_shard("db-a", sql, &[s("Ada")], &InsertOptions::default())
        .await
        .unwrap();
    // Rows on db-b whose created_at is 1, the id the next insert reads, written without a
    // generated id of their own.
    for name in ["Other", "Another"] {
        c.router
            .run_shard(
                "db-b",
                "INSERT INTO auto_users (id, name, created_at) VALUES (?, ?, 1)",
                &[num(if name == "Other" { 100.0 } else { 101.0 }), s(name)],
            )
            .await
            .unwrap();
    }
    let options = InsertOptions {
        table: Some("auto_users".into()),
        id_column: Some("created_at".into()),
    };
    // The id comes from `id` under the alias `created_at`: 1, already mapped to db-a; the
    // other rows on db-b also hold 1 in created_at and must stay.
    let returning = "INSERT INTO auto_users (id, name) VALUES (?, ?) RETURNING id AS created_at";
    let err = c
        .router
        .insert_shard("db-b", returning, &[num(1.0), s("Grace")], &options)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_COLLISION");
    assert_eq!(err.id(), Some(&int(1)));
    assert_eq!(err.row_removed(), Some(true));
    assert!(err.cause().is_none());
    assert!(err.to_string().contains("row was removed"), "{err}");
    assert_eq!(c.user_names("db-b").await, vec![s("Other"), s("Another")]);
    assert_eq!(
        c.router.shard_of("1").await.unwrap().as_deref(),
        Some("db-a")
    );
    assert_eq!(c.user_names("db-a").await, vec![s("Ada")]);
}

/// With `table`, the table and id column are checked on the shard before the INSERT runs: a
/// missing table or column is INVALID_IDENTIFIER and nothing is written (issue 18, item 3: no
/// cleanup ever runs against a column that does not exist).
pub async fn cleanup_column_is_verified_before_insert(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.create_auto_users().await;
    c.router
        .exec_all("CREATE TABLE items (item_id INTEGER PRIMARY KEY, label TEXT)")
        .await
        .unwrap();
    let users = c.insert_user_sql();
    // The issue's case: `items` has no column `id`, so the cleanup's DELETE would have
    // compared with the text 'id' and matched every row.
    let items = "INSERT INTO items (label) VALUES (?) RETURNING item_id AS id";
    for (sql, table, column) in [
        (users, "no_such_table", None),
        (users, "auto_users", Some("no_such_column")),
        (items, "items", None),
    ] {
        let options = InsertOptions {
            table: Some(table.into()),
            id_column: column.map(str::to_string),
        };
        let err = c
            .router
            .insert_shard("db-b", sql, &[s("Grace")], &options)
            .await
            .unwrap_err();
        assert_eq!(err.code(), "INVALID_IDENTIFIER", "{table} {column:?}");
        assert!(err.to_string().contains("has no column"), "{err}");
    }
    assert_eq!(c.user_names("db-b").await, Vec::<Value>::new());
    let items = c
        .router
        .all_shard("db-b", "SELECT * FROM items", &[])
        .await
        .unwrap();
    assert!(items.is_empty());
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
        assert_eq!(created.generated_id, text("abc"));
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
    assert_eq!(created.generated_id, text("abc"));
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
    assert_eq!(created.generated_id, text("abc"));
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
    assert_eq!(
        err.to_string(),
        "generated key unavailable on shard db-a: the RETURNING row has no id, rowid, lastInsertId, last_row_id or insertId column; name the key column with --id-column (id_column in the Rust API)"
    );
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
            41,
        ),
        (
            "INSERT INTO things (n, label) VALUES (42, 'y') RETURNING label, n AS \"lastInsertId\"",
            42,
        ),
    ] {
        let created = c
            .router
            .insert_shard("db-a", sql, &[], &InsertOptions::default())
            .await
            .unwrap();
        assert_eq!(created.generated_id, int(expected), "{sql}");
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
    let mut last = 0;
    for name in ["Ada", "Grace"] {
        let created = c
            .router
            .insert_shard("db-a", sql, &[s(name)], &options)
            .await
            .unwrap();
        let GeneratedId::Integer(id) = created.generated_id else {
            panic!("integer id")
        };
        last = id;
    }
    assert_eq!(last, 2);
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

/// The `big` table: an integer key the database generates (SQLite rowid, PostgreSQL bigint
/// identity), with its sequence set so the next generated id is 2^53 + 1.
async fn big_table_past_two_pow_53(c: &super::Cluster, shard: &str) {
    c.router
        .run_shard(shard, &big_ddl(c.kind), &[])
        .await
        .unwrap();
    match c.kind {
        Kind::Sqlite => {
            c.router
                .run_shard(
                    shard,
                    "INSERT INTO big (id, name) VALUES (9007199254740992, 'seed')",
                    &[],
                )
                .await
                .unwrap();
        }
        Kind::Postgres => {
            c.router
                .run_shard(
                    shard,
                    "ALTER TABLE big ALTER COLUMN id RESTART WITH 9007199254740993",
                    &[],
                )
                .await
                .unwrap();
        }
    }
}

fn big_ddl(kind: Kind) -> String {
    match kind {
        Kind::Sqlite => "CREATE TABLE big (id INTEGER PRIMARY KEY, name TEXT)".into(),
        Kind::Postgres => {
            "CREATE TABLE big (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, name TEXT)"
                .into()
        }
    }
}

/// Issue 18, item 1: generated ids above 2^53 are read, mapped and refused exactly — never
/// rounded to a double — up to 2^63 − 1; the cleanup of a refused row removes that row and
/// not the row whose id is the rounded value.
pub async fn ids_above_two_pow_53_are_exact(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    big_table_past_two_pow_53(&c, "db-b").await;
    c.router
        .run_shard("db-a", &big_ddl(kind), &[])
        .await
        .unwrap();
    let returning = "INSERT INTO big (name) VALUES (?) RETURNING id";
    let with_big = with_table("big");
    // db-a writes 2^53 explicitly: mapped as "9007199254740992".
    let a = c
        .router
        .insert_shard(
            "db-a",
            "INSERT INTO big (id, name) VALUES (9007199254740992, ?) RETURNING id",
            &[s("a")],
            &with_big,
        )
        .await
        .unwrap();
    assert_eq!(a.generated_id, int(9_007_199_254_740_992));
    // db-b's sequence generates 2^53 + 1: a different id, mapped on its own.
    let b = c
        .router
        .insert_shard("db-b", returning, &[s("b")], &with_big)
        .await
        .unwrap();
    assert_eq!(b.generated_id, int(9_007_199_254_740_993));
    assert_eq!(b.generated_ids, vec![int(9_007_199_254_740_993)]);
    assert_eq!(
        c.router
            .shard_of("9007199254740993")
            .await
            .unwrap()
            .as_deref(),
        Some("db-b")
    );
    assert_eq!(
        c.router
            .shard_of("9007199254740992")
            .await
            .unwrap()
            .as_deref(),
        Some("db-a")
    );
    // db-a now writes 2^53 + 1 too: refused as exactly that id; its own row is removed and
    // the row with id 2^53 stays.
    let err = c
        .router
        .insert_shard(
            "db-a",
            "INSERT INTO big (id, name) VALUES (9007199254740993, ?) RETURNING id",
            &[s("a2")],
            &with_big,
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_COLLISION");
    assert_eq!(err.id(), Some(&int(9_007_199_254_740_993)));
    assert_eq!(err.row_removed(), Some(true));
    let names: Vec<Value> = c
        .router
        .all_shard("db-a", "SELECT name FROM big ORDER BY id", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| field(row, "name"))
        .collect();
    assert_eq!(names, vec![s("a")]);
    // The largest id, 2^63 - 1, with and without RETURNING.
    let max = c
        .router
        .insert_shard(
            "db-b",
            "INSERT INTO big (id, name) VALUES (9223372036854775807, ?) RETURNING id",
            &[s("max")],
            &with_big,
        )
        .await
        .unwrap();
    assert_eq!(max.generated_id, int(i64::MAX));
    assert_eq!(
        c.router
            .shard_of("9223372036854775807")
            .await
            .unwrap()
            .as_deref(),
        Some("db-b")
    );
    // A read routed by the exact id, the id bound as an integer string.
    let row = c
        .router
        .first(
            "9007199254740993",
            "SELECT name FROM big WHERE id = ?",
            &[s("9007199254740993")],
        )
        .await
        .unwrap()
        .expect("routed to db-b");
    assert_eq!(field(&row, "name"), s("b"));
    // Negative generated ids are exact too.
    let negative = c
        .router
        .insert_shard(
            "db-b",
            "INSERT INTO big (id, name) VALUES (-9223372036854775808, ?) RETURNING id",
            &[s("min")],
            &with_big,
        )
        .await
        .unwrap();
    assert_eq!(negative.generated_id, int(i64::MIN));
    assert_eq!(
        c.router
            .shard_of("-9223372036854775808")
            .await
            .unwrap()
            .as_deref(),
        Some("db-b")
    );
}

/// Issue 18, item 2: every id of a multi-row insert is read and mapped; one id mapped to
/// another shard refuses the whole statement, maps none of its ids and (with `table`) removes
/// all of its rows.
pub async fn multi_row_insert_checks_every_id(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.create_auto_users().await;
    // Id 2 is mapped to db-a.
    c.router
        .insert_shard(
            "db-a",
            "INSERT INTO auto_users (id, name) VALUES (2, 'Ada') RETURNING id",
            &[],
            &with_table("auto_users"),
        )
        .await
        .unwrap();
    let two_rows = "INSERT INTO auto_users (name) VALUES ('p'), ('q') RETURNING id";
    let err = c
        .router
        .insert_shard("db-b", two_rows, &[], &with_table("auto_users"))
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_COLLISION");
    assert_eq!(err.id(), Some(&int(2)));
    assert_eq!(err.row_removed(), Some(true));
    assert_eq!(
        err.to_string(),
        "generated key 2 from shard db-b is already mapped to shard db-a; the statement's 2 rows were removed from db-b.auto_users"
    );
    assert_eq!(c.user_names("db-b").await, Vec::<Value>::new());
    assert_eq!(c.router.shard_of("1").await.unwrap(), None);
    assert_eq!(
        c.router.shard_of("2").await.unwrap().as_deref(),
        Some("db-a")
    );

    // Without table the rows stay (the seed's rule), but none of their ids is mapped. (Explicit
    // ids: a PostgreSQL sequence does not roll back, so the refused statement above used 1, 2.)
    let err = c
        .router
        .insert_shard(
            "db-b",
            "INSERT INTO auto_users (id, name) VALUES (1, 'p'), (2, 'q') RETURNING id",
            &[],
            &InsertOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_COLLISION");
    assert_eq!(err.row_removed(), None);
    assert_eq!(
        err.to_string(),
        "generated key 2 from shard db-b is already mapped to shard db-a; the statement's 2 rows stay on shard db-b, id 2 among them"
    );
    assert_eq!(c.user_names("db-b").await, vec![s("p"), s("q")]);
    assert_eq!(c.router.shard_of("1").await.unwrap(), None);
    assert_eq!(
        c.router.shard_of("2").await.unwrap().as_deref(),
        Some("db-a")
    );

    // Every id of an accepted multi-row insert is mapped.
    let created = c
        .router
        .insert_shard(
            "db-a",
            "INSERT INTO auto_users (id, name) VALUES (10, 'x'), (11, 'y'), (12, 'z') RETURNING id",
            &[],
            &with_table("auto_users"),
        )
        .await
        .unwrap();
    assert_eq!(created.generated_id, int(10));
    assert_eq!(created.generated_ids, vec![int(10), int(11), int(12)]);
    for key in ["10", "11", "12"] {
        assert_eq!(
            c.router.shard_of(key).await.unwrap().as_deref(),
            Some("db-a"),
            "{key}"
        );
    }

    // Several rows without RETURNING: only the last rowid would be known (SQLite), or no id
    // at all (PostgreSQL): refused, and nothing of the statement stays.
    let before = c.user_names("db-a").await;
    let err = c
        .router
        .insert_shard(
            "db-a",
            "INSERT INTO auto_users (id, name) VALUES (20, 'r'), (21, 's')",
            &[],
            &InsertOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_UNAVAILABLE", "{err}");
    assert_eq!(c.user_names("db-a").await, before);
}

/// Issue 18, item 6 and its kind: when the router reports a failure after the INSERT ran
/// (an id it cannot read, a value it cannot convert), the shard keeps nothing of the
/// statement, so a retry is safe. Text keys are string ids.
pub async fn failure_after_insert_keeps_nothing(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.create_auto_users().await;
    let none = InsertOptions::default();
    for (sql, code) in [
        (
            "INSERT INTO auto_users (name) VALUES ('x') RETURNING name AS other",
            "GENERATED_KEY_UNAVAILABLE",
        ),
        (
            "INSERT INTO auto_users (name) VALUES ('x') RETURNING 1.5 AS id",
            "GENERATED_KEY_UNAVAILABLE",
        ),
        (
            "INSERT INTO auto_users (name) VALUES ('x') RETURNING NULL AS id",
            "GENERATED_KEY_UNAVAILABLE",
        ),
    ] {
        let err = c
            .router
            .insert_shard("db-a", sql, &[], &none)
            .await
            .unwrap_err();
        assert_eq!(err.code(), code, "{sql}");
        assert_eq!(c.user_names("db-a").await, Vec::<Value>::new(), "{sql}");
    }
    // A value the router cannot convert (a PostgreSQL type it does not read; a SQLite blob
    // id) fails the same way.
    let unreadable = match kind {
        Kind::Sqlite => "INSERT INTO auto_users (name) VALUES ('x') RETURNING x'00' AS id",
        Kind::Postgres => {
            "INSERT INTO auto_users (name) VALUES ('x') RETURNING id, '127.0.0.1'::inet AS addr"
        }
    };
    let err = c
        .router
        .insert_shard("db-a", unreadable, &[], &none)
        .await
        .unwrap_err();
    assert!(
        matches!(err.code(), "QUERY_FAILED" | "GENERATED_KEY_UNAVAILABLE"),
        "{err}"
    );
    assert_eq!(c.user_names("db-a").await, Vec::<Value>::new());
    // The shard is usable afterwards, and the retry writes the row once.
    let created = c
        .router
        .insert_shard(
            "db-a",
            "INSERT INTO auto_users (name) VALUES ('x') RETURNING id",
            &[],
            &none,
        )
        .await
        .unwrap();
    assert_eq!(c.user_names("db-a").await, vec![s("x")]);
    assert_eq!(
        c.router
            .shard_of(&created.generated_id.key())
            .await
            .unwrap()
            .as_deref(),
        Some("db-a")
    );

    // A generated text key (a uuid on PostgreSQL) is a string id, mapped and routed.
    let (ddl, uuid_like) = match kind {
        Kind::Sqlite => (
            "CREATE TABLE tokens (id TEXT PRIMARY KEY DEFAULT (lower(hex(randomblob(16)))), label TEXT)",
            32,
        ),
        Kind::Postgres => (
            "CREATE TABLE tokens (id UUID PRIMARY KEY DEFAULT gen_random_uuid(), label TEXT)",
            36,
        ),
    };
    c.router.exec_all(ddl).await.unwrap();
    let created = c
        .router
        .insert_shard(
            "db-b",
            "INSERT INTO tokens (label) VALUES (?) RETURNING id",
            &[s("t")],
            &with_table("tokens"),
        )
        .await
        .unwrap();
    let GeneratedId::Text(key) = &created.generated_id else {
        panic!("a text id: {:?}", created.generated_id)
    };
    assert_eq!(key.len(), uuid_like, "{key}");
    let row = c
        .router
        .first(key, "SELECT label FROM tokens WHERE id = ?", &[s(key)])
        .await
        .unwrap()
        .expect("routed to db-b");
    assert_eq!(field(&row, "label"), s("t"));
}

/// Issue 18, item 4: a table has one identity. Every spelling of it — letter case, the
/// backend's default schema, the column's letter case — shares one sequence, both for
/// `next_id` and for the ids the router sees.
pub async fn every_spelling_shares_one_sequence(kind: Kind) {
    let Some(c) = cluster(
        kind,
        Setup {
            coordinator: true,
            ..Default::default()
        },
    )
    .await
    else {
        return;
    };
    c.router
        .exec_all("CREATE TABLE tickets (id BIGINT PRIMARY KEY, title TEXT)")
        .await
        .unwrap();
    let schema = match kind {
        Kind::Sqlite => "main.tickets",
        Kind::Postgres => "public.tickets",
    };
    let mut ids = Vec::new();
    for table in ["tickets", "TICKETS", schema, "Tickets", "MAIN.Tickets"] {
        if table == "MAIN.Tickets" && kind == Kind::Postgres {
            continue;
        }
        ids.push(
            c.router
                .next_id(table, &NextIdOptions::default())
                .await
                .unwrap(),
        );
    }
    let expected: Vec<u64> = (1..=ids.len() as u64).collect();
    assert_eq!(ids, expected);
    let upper = NextIdOptions {
        column: Some("ID".into()),
        min: None,
    };
    let next = c.router.next_id("tickets", &upper).await.unwrap();
    assert_eq!(next, ids.len() as u64 + 1);
    // An id seen through another spelling raises the same sequence.
    c.router
        .insert_into(
            "50",
            "TICKETS",
            &obj(&[("ID", num(50.0)), ("title", s("x"))]),
        )
        .await
        .unwrap();
    assert_eq!(
        c.router
            .next_id(schema, &NextIdOptions::default())
            .await
            .unwrap(),
        51
    );
}

/// Issue 18, item 5: the maximum of a text column is compared numerically when every value
/// is an integer (`'500'` beats `'99'`), and is an error naming the column otherwise; never a
/// text comparison. Without and with the coordinator.
pub async fn text_column_maximum_is_numeric(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.router
        .exec_all("CREATE TABLE tickets (id BIGINT PRIMARY KEY, ticket_number VARCHAR(30))")
        .await
        .unwrap();
    for (shard, id, number) in [
        ("db-a", 1.0, "500"),
        ("db-b", 2.0, "99"),
        ("db-b", 3.0, "-7"),
    ] {
        c.router
            .run_shard(
                shard,
                "INSERT INTO tickets (id, ticket_number) VALUES (?, ?)",
                &[num(id), s(number)],
            )
            .await
            .unwrap();
    }
    let by_number = NextIdOptions {
        column: Some("ticket_number".into()),
        min: None,
    };
    assert_eq!(c.router.next_id("tickets", &by_number).await.unwrap(), 501);
    let coordinated = c
        .reopen(|text| text.replace("coordinator = false", "coordinator = true"))
        .await;
    assert_eq!(
        coordinated.next_id("tickets", &by_number).await.unwrap(),
        501
    );
    assert_eq!(
        coordinated.next_id("tickets", &by_number).await.unwrap(),
        502
    );

    // A value that is not an integer: no numeric maximum, an error naming the column.
    for bad in ["12a", "1.5", "abc"] {
        c.router
            .run_shard(
                "db-a",
                "INSERT INTO tickets (id, ticket_number) VALUES (10, ?)",
                &[s(bad)],
            )
            .await
            .unwrap();
        let err = c.router.next_id("tickets", &by_number).await.unwrap_err();
        assert_eq!(err.code(), "QUERY_FAILED", "{bad}");
        assert_eq!(err.shard(), Some("db-a"));
        assert!(err.to_string().contains("ticket_number"), "{err}");
        c.router
            .run_shard("db-a", "DELETE FROM tickets WHERE id = 10", &[])
            .await
            .unwrap();
    }

    // Integer maxima stay exact near the limit: 2^53 - 1 gives 2^53, 2^53 + 1 is past it.
    c.router
        .run_shard(
            "db-a",
            "INSERT INTO tickets (id, ticket_number) VALUES (9007199254740991, '9007199254740993')",
            &[],
        )
        .await
        .unwrap();
    assert_eq!(
        c.router
            .next_id("tickets", &NextIdOptions::default())
            .await
            .unwrap(),
        9_007_199_254_740_992
    );
    let err = c.router.next_id("tickets", &by_number).await.unwrap_err();
    assert_eq!(err.code(), "ID_LIMIT_EXCEEDED");
}

/// Issue 18's units under concurrency: for each id two tasks insert it at once, one on each
/// shard. Exactly one wins and is mapped; the other is refused and its row removed, so every
/// id lives on exactly the shard it is mapped to.
pub async fn concurrent_inserts_of_one_id_keep_one_row(kind: Kind) {
    let Some(c) = cluster(kind, Setup::default()).await else {
        return;
    };
    c.create_auto_users().await;
    let router = Arc::new(c.router);
    let mut tasks = Vec::new();
    for id in 1..=20u32 {
        for shard in ["db-a", "db-b"] {
            let router = Arc::clone(&router);
            tasks.push(tokio::spawn(async move {
                let result = router
                    .insert_shard(
                        shard,
                        "INSERT INTO auto_users (id, name) VALUES (?, ?) RETURNING id",
                        &[num(f64::from(id)), s(shard)],
                        &with_table("auto_users"),
                    )
                    .await;
                (id, shard, result)
            }));
        }
    }
    let mut winners = std::collections::HashMap::new();
    for task in tasks {
        let (id, shard, result) = task.await.unwrap();
        match result {
            Ok(created) => {
                assert_eq!(created.generated_id, int(i64::from(id)));
                assert!(winners.insert(id, shard).is_none(), "id {id} won twice");
            }
            Err(err) => {
                assert_eq!(err.code(), "GENERATED_KEY_COLLISION", "{err}");
                assert_eq!(err.row_removed(), Some(true));
            }
        }
    }
    assert_eq!(winners.len(), 20);
    for shard in ["db-a", "db-b"] {
        let mut ids: Vec<u32> = router
            .all_shard(shard, "SELECT id FROM auto_users", &[])
            .await
            .unwrap()
            .iter()
            .map(|row| match field(row, "id") {
                Value::Number(n) => n as u32,
                other => panic!("{other:?}"),
            })
            .collect();
        ids.sort_unstable();
        let mut expected: Vec<u32> = winners
            .iter()
            .filter(|(_, s)| **s == shard)
            .map(|(id, _)| *id)
            .collect();
        expected.sort_unstable();
        assert_eq!(ids, expected, "{shard}");
        for id in &ids {
            assert_eq!(
                router.shard_of(&id.to_string()).await.unwrap().as_deref(),
                Some(shard)
            );
        }
    }
}
