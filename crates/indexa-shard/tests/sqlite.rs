//! Acceptance tests on SQLite shards with a SQLite catalog.

#[macro_use]
mod common;

use common::{cluster, num, s, Kind, Setup};
use indexa_shard::{Config, InsertOptions, Router};

scenarios_on!(Sqlite);

/// Without RETURNING the rowid of the inserted row is the id (the seed's AUTOINCREMENT example).
#[tokio::test]
async fn rowid_of_a_plain_insert() {
    let c = cluster(
        Kind::Sqlite,
        Setup {
            shards: 1,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    c.create_auto_users().await;
    let sql = "INSERT INTO auto_users (name, email, created_at) VALUES (?, ?, ?)";
    let params = [s("Ada"), s("ada@example.com"), num(1_700_000_000_000.0)];
    let created = c
        .router
        .insert(sql, &params, &InsertOptions::default())
        .await
        .unwrap();
    assert_eq!(created.generated_id, common::int(1));
    assert_eq!(created.rows_affected, 1);
    // id_column has no effect without RETURNING.
    let options = InsertOptions {
        id_column: Some("uuid".into()),
        ..Default::default()
    };
    let params = [s("Grace"), s("grace@example.com"), num(1.0)];
    let created = c.router.insert(sql, &params, &options).await.unwrap();
    assert_eq!(created.generated_id, common::int(2));
    let row = c
        .router
        .first("2", "SELECT name FROM auto_users WHERE id = ?", &[num(2.0)])
        .await
        .unwrap()
        .unwrap();
    assert_eq!(common::field(&row, "name"), s("Grace"));
}

/// An ignored insert leaves SQLite's last-insert rowid stale: no id.
#[tokio::test]
async fn ignored_insert_has_no_id() {
    let c = cluster(Kind::Sqlite, Setup::default()).await.unwrap();
    c.create_auto_users().await;
    let sql = "INSERT OR IGNORE INTO auto_users (name, email) VALUES (?, ?)";
    let none = InsertOptions::default();
    let created = c
        .router
        .insert_shard("db-a", sql, &[s("Ada"), s("a@x")], &none)
        .await
        .unwrap();
    assert_eq!(created.generated_id, common::int(1));
    let err = c
        .router
        .insert_shard("db-a", sql, &[s("Ada again"), s("a@x")], &none)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_UNAVAILABLE");
    assert_eq!(err.shard(), Some("db-a"));
    // With RETURNING the ignored insert returns no row, and there is still no id.
    let err = c
        .router
        .insert_shard(
            "db-a",
            &format!("{sql} RETURNING id"),
            &[s("Ada 3"), s("a@x")],
            &none,
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_UNAVAILABLE");
}

/// A WITHOUT ROWID table gets no rowid: no id without RETURNING (and no row kept), the key
/// with it.
#[tokio::test]
async fn without_rowid_table_has_no_rowid() {
    let c = cluster(Kind::Sqlite, Setup::default()).await.unwrap();
    c.router
        .exec_all("CREATE TABLE auto_users (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT); CREATE TABLE kv (k TEXT PRIMARY KEY, v TEXT) WITHOUT ROWID")
        .await
        .unwrap();
    let none = InsertOptions::default();
    // A previous insert on the same connection leaves a rowid behind.
    c.router
        .insert_shard(
            "db-a",
            "INSERT INTO auto_users (name) VALUES ('Ada')",
            &[],
            &none,
        )
        .await
        .unwrap();
    let err = c
        .router
        .insert_shard(
            "db-a",
            "INSERT INTO kv (k, v) VALUES ('a', 'b')",
            &[],
            &none,
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_UNAVAILABLE");
    // The refused statement is rolled back: nothing of it stays.
    let rows = c
        .router
        .all_shard("db-a", "SELECT k FROM kv", &[])
        .await
        .unwrap();
    assert_eq!(rows.len(), 0);
    let options = InsertOptions {
        id_column: Some("k".into()),
        ..Default::default()
    };
    let created = c
        .router
        .insert_shard(
            "db-a",
            "INSERT INTO kv (k, v) VALUES ('c', 'd') RETURNING k",
            &[],
            &options,
        )
        .await
        .unwrap();
    assert_eq!(created.generated_id, common::text("c"));
}

/// An UPDATE run through insert inserts no row: no id.
#[tokio::test]
async fn update_through_insert_has_no_id() {
    let c = cluster(Kind::Sqlite, Setup::default()).await.unwrap();
    c.create_auto_users().await;
    let none = InsertOptions::default();
    c.router
        .insert_shard("db-a", c.insert_user_sql(), &[s("Ada")], &none)
        .await
        .unwrap();
    let err = c
        .router
        .insert_shard("db-a", "UPDATE auto_users SET name = 'Ada L.'", &[], &none)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_UNAVAILABLE");
}

/// CollegeDB's hash: h = h·31 + code unit, wrapped to i32; shard |h| mod n, in config order.
#[test]
fn hash_placement_matches_collegedb() {
    use indexa_shard::hash_shard_index;
    // "1": 49.
    assert_eq!(hash_shard_index("1", 2), Some(1));
    assert_eq!(hash_shard_index("1", 5), Some(4));
    // "abc": (97·31 + 98)·31 + 99 = 96354.
    assert_eq!(hash_shard_index("abc", 3), Some(0));
    assert_eq!(hash_shard_index("abc", 4), Some(2));
    // "é" is one code unit, 233.
    assert_eq!(hash_shard_index("é", 3), Some(2));
    // "日本": 0x65E5·31 + 0x672C = 835047.
    assert_eq!(hash_shard_index("日本", 4), Some(3));
    // "😀" is two code units, D83D DE00: 55357·31 + 56832 = 1772899.
    assert_eq!(hash_shard_index("😀", 5), Some(4));
    // "polygenelubricants" wraps to exactly i32::MIN; |h| = 2^31.
    assert_eq!(hash_shard_index("polygenelubricants", 3), Some(2));
    assert_eq!(hash_shard_index("polygenelubricants", 5), Some(3));
    // "hello world!" wraps to -217287203.
    assert_eq!(hash_shard_index("hello world!", 4), Some(3));
    assert_eq!(hash_shard_index("", 3), Some(0));
    assert_eq!(hash_shard_index("abc", 0), None);
}

/// A write to an unmapped key lands on the hashed shard, counted in config order.
#[tokio::test]
async fn hash_placement_routes_writes() {
    let c = cluster(
        Kind::Sqlite,
        Setup {
            shards: 3,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    c.router.exec_all("CREATE TABLE t (id TEXT)").await.unwrap();
    for (key, shard) in [
        ("1", "db-b"),
        ("abc", "db-a"),
        ("é", "db-c"),
        ("polygenelubricants", "db-c"),
    ] {
        let placed = c
            .router
            .insert_into(key, "t", &common::obj(&[("id", s(key))]))
            .await
            .unwrap();
        assert_eq!(placed, shard, "{key}");
    }
}

/// A bad configuration file: INVALID_CONFIG.
#[tokio::test]
async fn bad_config_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.toml");
    std::fs::write(&path, "[catalog]\nlease = 0\n").unwrap();
    let err = Router::from_file(&path).await.err().unwrap();
    assert_eq!(err.code(), "INVALID_CONFIG");
    let err = Router::from_file(&dir.path().join("missing.toml"))
        .await
        .err()
        .unwrap();
    assert_eq!(err.code(), "INVALID_CONFIG");
}

/// No shards configured: NO_SHARDS.
#[tokio::test]
async fn no_shards() {
    let dir = tempfile::tempdir().unwrap();
    let router = Router::open(&Config::from_toml("", dir.path()).unwrap())
        .await
        .unwrap();
    let err = router
        .insert(
            "INSERT INTO t DEFAULT VALUES",
            &[],
            &InsertOptions::default(),
        )
        .await
        .unwrap_err();
    assert_eq!(err.code(), "NO_SHARDS");
    let err = router.next_id("t", &Default::default()).await.unwrap_err();
    assert_eq!(err.code(), "NO_SHARDS");
    let err = router.exec_all("SELECT 1").await.unwrap_err();
    assert_eq!(err.code(), "NO_SHARDS");
}

/// Ids stay at or below 2^53.
#[tokio::test]
async fn id_limit() {
    let c = cluster(
        Kind::Sqlite,
        Setup {
            coordinator: true,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    c.router
        .exec_all("CREATE TABLE t (id INTEGER PRIMARY KEY)")
        .await
        .unwrap();
    let max = indexa_shard::MAX_ID;
    c.router
        .run_shard(
            "db-a",
            "INSERT INTO t (id) VALUES (?)",
            &[num((max - 1) as f64)],
        )
        .await
        .unwrap();
    assert_eq!(
        c.router.next_id("t", &Default::default()).await.unwrap(),
        max
    );
    let err = c
        .router
        .next_id("t", &Default::default())
        .await
        .unwrap_err();
    assert_eq!(err.code(), "ID_LIMIT_EXCEEDED");
    let over = indexa_shard::NextIdOptions {
        min: Some(max + 1),
        ..Default::default()
    };
    assert_eq!(
        c.router.next_id("t", &over).await.unwrap_err().code(),
        "ID_LIMIT_EXCEEDED"
    );
    // Without the coordinator the cross-shard maximum is checked the same way.
    let plain = c
        .reopen(|text| text.replace("coordinator = true", "coordinator = false"))
        .await;
    c.router
        .run_shard("db-b", "INSERT INTO t (id) VALUES (?)", &[num(max as f64)])
        .await
        .unwrap();
    assert_eq!(
        plain
            .next_id("t", &Default::default())
            .await
            .unwrap_err()
            .code(),
        "ID_LIMIT_EXCEEDED"
    );
}

/// Random placement: every insert lands on a configured shard, its id maps there, and with 40
/// inserts over 2 shards both are used.
#[tokio::test]
async fn random_placement() {
    let setup = Setup {
        strategy: "random",
        ..Default::default()
    };
    let c = cluster(Kind::Sqlite, setup).await.unwrap();
    c.router
        .exec_all("CREATE TABLE things (uuid TEXT)")
        .await
        .unwrap();
    let options = InsertOptions {
        id_column: Some("uuid".into()),
        ..Default::default()
    };
    let mut used = std::collections::HashSet::new();
    for i in 0..40 {
        let key = format!("k{i}");
        let created = c
            .router
            .insert(
                "INSERT INTO things (uuid) VALUES (?) RETURNING uuid",
                &[s(&key)],
                &options,
            )
            .await
            .unwrap();
        assert_eq!(
            c.router.shard_of(&key).await.unwrap(),
            Some(created.shard.clone())
        );
        used.insert(created.shard);
    }
    let mut used: Vec<String> = used.into_iter().collect();
    used.sort();
    // Both shards are chosen with probability 1 - 2^-39.
    assert_eq!(used, ["db-a", "db-b"]);
}

/// Issue 18, item 3: SQLite's double-quoted-string fallback is off on the router's
/// connections, so `"name"` naming no column is an error, never the text `'name'` (which made
/// `DELETE FROM "items" WHERE "id" = ?` match every row of a table without `id`).
#[tokio::test]
async fn double_quoted_strings_are_identifiers_only() {
    let c = cluster(Kind::Sqlite, Setup::default()).await.unwrap();
    c.router
        .exec_all("CREATE TABLE items (item_id INTEGER PRIMARY KEY, label TEXT); INSERT INTO items (label) VALUES ('a'), ('b')")
        .await
        .unwrap();
    let err = c
        .router
        .run_shard("db-a", "DELETE FROM \"items\" WHERE \"id\" = 'id'", &[])
        .await
        .unwrap_err();
    assert_eq!(err.code(), "QUERY_FAILED");
    assert!(err.to_string().contains("no such column"), "{err}");
    let err = c
        .router
        .exec_all("CREATE INDEX items_x ON items (\"nope\")")
        .await
        .unwrap_err();
    assert_eq!(err.code(), "QUERY_FAILED");
    assert_eq!(
        c.router
            .all_shard("db-a", "SELECT label FROM items", &[])
            .await
            .unwrap()
            .len(),
        2
    );
}

/// Issue 18, item 5 on SQLite's mixed storage classes: in a column without a type, text
/// sorts after every number, so `MAX` picks `'99'` over 1000; the router compares them as
/// numbers.
#[tokio::test]
async fn mixed_storage_classes_compare_as_numbers() {
    let c = cluster(Kind::Sqlite, Setup::default()).await.unwrap();
    c.router.exec_all("CREATE TABLE t (n)").await.unwrap();
    c.router
        .run_shard(
            "db-a",
            "INSERT INTO t (n) VALUES (1000), ('99'), (2.5), (NULL)",
            &[],
        )
        .await
        .unwrap();
    let options = indexa_shard::NextIdOptions {
        column: Some("n".into()),
        min: None,
    };
    assert_eq!(c.router.next_id("t", &options).await.unwrap(), 1001);
    c.router
        .run_shard("db-b", "INSERT INTO t (n) VALUES (x'01')", &[])
        .await
        .unwrap();
    let err = c.router.next_id("t", &options).await.unwrap_err();
    assert_eq!(err.code(), "QUERY_FAILED");
    assert_eq!(err.shard(), Some("db-b"));
}

/// Issue 18, item 1 on SQLite's last-insert rowid: a rowid above 2^53 (no RETURNING) is
/// read, mapped and refused exactly.
#[tokio::test]
async fn rowid_above_two_pow_53_is_exact() {
    let c = cluster(Kind::Sqlite, Setup::default()).await.unwrap();
    c.router
        .exec_all("CREATE TABLE big (id INTEGER PRIMARY KEY, name TEXT); INSERT INTO big (id, name) VALUES (9007199254740992, 'seed')")
        .await
        .unwrap();
    let plain = "INSERT INTO big (name) VALUES (?)";
    let options = InsertOptions {
        table: Some("big".into()),
        ..Default::default()
    };
    let a = c
        .router
        .insert_shard("db-a", plain, &[s("a")], &options)
        .await
        .unwrap();
    assert_eq!(a.generated_id, common::int(9_007_199_254_740_993));
    assert_eq!(
        c.router
            .shard_of("9007199254740993")
            .await
            .unwrap()
            .as_deref(),
        Some("db-a")
    );
    assert_eq!(c.router.shard_of("9007199254740992").await.unwrap(), None);
    let err = c
        .router
        .insert_shard("db-b", plain, &[s("b")], &options)
        .await
        .unwrap_err();
    assert_eq!(err.code(), "GENERATED_KEY_COLLISION");
    assert_eq!(err.id(), Some(&common::int(9_007_199_254_740_993)));
    assert_eq!(err.row_removed(), Some(true));
    let names: Vec<_> = c
        .router
        .all_shard("db-b", "SELECT name FROM big ORDER BY id", &[])
        .await
        .unwrap()
        .iter()
        .map(|row| common::field(row, "name"))
        .collect();
    assert_eq!(names, vec![s("seed")]);
}
