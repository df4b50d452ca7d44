//! The `indexa shard` command, through `run_cli_output` with arguments parsed as the binary
//! parses them.

mod common;

use clap::Parser;
use common::{cluster, Kind, Setup};
use indexa_shard::{run_cli_output, CliOutput, ShardArgs};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    shard: ShardArgs,
}

fn run(config: &std::path::Path, args: &[&str]) -> CliOutput {
    let mut argv = vec!["indexa-shard", "--config", config.to_str().unwrap()];
    argv.extend_from_slice(args);
    run_cli_output(Cli::try_parse_from(argv).expect("valid usage").shard)
}

fn ok(output: CliOutput) -> String {
    assert_eq!(
        (output.code, output.stderr.as_str()),
        (0, ""),
        "{}",
        output.stdout
    );
    output.stdout
}

fn failed(output: CliOutput) -> String {
    assert_eq!(output.code, 1, "{output:?}");
    output.stdout
}

#[test]
fn seed_example_through_the_cli() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let c = runtime
        .block_on(cluster(
            Kind::Sqlite,
            Setup {
                coordinator: true,
                ..Default::default()
            },
        ))
        .unwrap();
    let config = c.config_file();
    drop(runtime);

    assert_eq!(
        ok(run(
            &config,
            &[
                "exec-all",
                "CREATE TABLE auto_users (id INTEGER PRIMARY KEY, name TEXT, data BLOB)"
            ]
        )),
        r#"{"shards":["db-a","db-b"]}"#
    );
    let insert = "INSERT INTO auto_users (name, data) VALUES (?, ?)";
    assert_eq!(
        ok(run(
            &config,
            &[
                "insert-shard",
                "db-a",
                insert,
                "--param",
                "\"Ada\"",
                "--param",
                r#"{"$binary":"AAH/"}"#
            ]
        )),
        r#"{"generatedId":1,"shard":"db-a"}"#
    );
    assert_eq!(
        failed(run(
            &config,
            &[
                "insert-shard",
                "db-b",
                insert,
                "--param",
                "\"Grace\"",
                "--param",
                "null",
                "--table",
                "auto_users"
            ]
        )),
        r#"{"error":{"code":"GENERATED_KEY_COLLISION","message":"generated key 1 from shard db-b is already mapped to shard db-a; the row was removed from db-b.auto_users","shard":"db-b","table":"auto_users","id":1,"rowRemoved":true}}"#
    );
    let out = failed(run(
        &config,
        &[
            "insert-shard",
            "db-b",
            insert,
            "--param",
            "\"Grace\"",
            "--param",
            "null",
        ],
    ));
    assert!(
        out.starts_with(r#"{"error":{"code":"GENERATED_KEY_COLLISION","message":"#),
        "{out}"
    );
    assert!(out.ends_with(r#""shard":"db-b","id":1}}"#), "{out}");
    assert_eq!(
        ok(run(
            &config,
            &[
                "first",
                "1",
                "SELECT id, name, data FROM auto_users WHERE id = ?",
                "--param",
                "1"
            ]
        )),
        r#"{"id":1,"name":"Ada","data":{"$binary":"AAH/"}}"#
    );
    assert_eq!(ok(run(&config, &["first", "404", "SELECT 1"])), "null");
    assert_eq!(ok(run(&config, &["all", "404", "SELECT 1"])), "[]");
    assert_eq!(
        ok(run(
            &config,
            &["all-shards", "SELECT name FROM auto_users ORDER BY id"]
        )),
        r#"[{"name":"Ada"},{"name":"Grace"}]"#
    );
    assert_eq!(
        ok(run(
            &config,
            &["all-shard", "db-b", "SELECT id, name FROM auto_users"]
        )),
        r#"[{"id":1,"name":"Grace"}]"#
    );
    assert_eq!(
        ok(run(
            &config,
            &[
                "first-shard",
                "db-b",
                "SELECT name FROM auto_users WHERE id = ?",
                "--param",
                "2"
            ]
        )),
        "null"
    );
    assert_eq!(
        ok(run(
            &config,
            &[
                "run-shard",
                "db-b",
                "DELETE FROM auto_users WHERE name = ?",
                "--param",
                "\"Grace\""
            ]
        )),
        r#"{"rowsAffected":1}"#
    );
    // The coordinator continues after the cross-shard maximum; a one-shot call serves one id.
    assert_eq!(ok(run(&config, &["next-id", "auto_users"])), r#"{"id":2}"#);
    assert_eq!(
        ok(run(&config, &["next-id", "auto_users", "--min", "100"])),
        r#"{"id":100}"#
    );
    assert_eq!(
        ok(run(
            &config,
            &[
                "insert-into",
                "101",
                "auto_users",
                r#"{"id":101,"name":"Grace"}"#
            ]
        )),
        // "101": h = (49·31 + 48)·31 + 49 = 48626, even → db-a.
        r#"{"shard":"db-a"}"#
    );
    assert_eq!(
        ok(run(&config, &["next-id", "auto_users"])),
        r#"{"id":102}"#
    );
    assert_eq!(
        ok(run(
            &config,
            &[
                "run",
                "101",
                "UPDATE auto_users SET name = ? WHERE id = ?",
                "--param",
                "\"G.\"",
                "--param",
                "101"
            ]
        )),
        r#"{"rowsAffected":1}"#
    );
    assert_eq!(
        ok(run(
            &config,
            &["all", "101", "SELECT name FROM auto_users WHERE id = 101"]
        )),
        r#"[{"name":"G."}]"#
    );
    let created = ok(run(
        &config,
        &[
            "insert",
            "INSERT INTO auto_users (id, name) VALUES (?, ?) RETURNING id",
            "--param",
            "500",
            "--param",
            "\"Lin\"",
        ],
    ));
    assert!(
        created.starts_with(r#"{"generatedId":500,"shard":"db-"#),
        "{created}"
    );
    assert_eq!(
        failed(run(&config, &["run-shard", "db-z", "SELECT 1"])),
        r#"{"error":{"code":"SHARD_NOT_FOUND","message":"shard not found: \"db-z\"","shard":"db-z"}}"#
    );
    assert_eq!(
        failed(run(
            &config,
            &[
                "insert-shard",
                "db-a",
                "INSERT INTO auto_users (name) VALUES ('x') RETURNING name",
                "--id-column",
                "uuid"
            ]
        )),
        r#"{"error":{"code":"GENERATED_KEY_UNAVAILABLE","message":"generated key unavailable on shard db-a: the RETURNING row has no column uuid","shard":"db-a"}}"#
    );
}

#[test]
fn usage_and_config_errors() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "strategy = \"sideways\"\n").unwrap();
    let out = failed(run(&bad, &["next-id", "t"]));
    assert!(out.starts_with(r#"{"error":{"code":"INVALID_CONFIG","message":"invalid configuration: unknown strategy"#), "{out}");

    let good = dir.path().join("good.toml");
    std::fs::write(&good, "[shards]\na = \"sqlite:a.db\"\n").unwrap();
    let output = run(
        &good,
        &["run-shard", "a", "SELECT ?", "--param", "{not json"],
    );
    assert_eq!(output.code, 2);
    assert_eq!(output.stdout, "");
    assert!(
        output.stderr.contains("--param {not json"),
        "{}",
        output.stderr
    );
    let output = run(&good, &["insert-into", "k", "t", "[1]"]);
    assert_eq!(output.code, 2);
    assert!(
        output.stderr.contains("not a JSON object"),
        "{}",
        output.stderr
    );
    assert_eq!(
        failed(run(&good, &["next-id", "bad name"])),
        r#"{"error":{"code":"INVALID_IDENTIFIER","message":"invalid SQL identifier \"bad name\": only ASCII letters, digits and '_' are allowed"}}"#
    );
    assert!(Cli::try_parse_from(["x", "--config", "c.toml", "next-id"]).is_err());
    assert!(Cli::try_parse_from(["x", "next-id", "t"]).is_err());
}

/// The same commands against PostgreSQL shards and catalog (needs INDEXA_TEST_PG_URL).
#[test]
fn postgres_through_the_cli() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let Some(c) = runtime.block_on(cluster(
        Kind::Postgres,
        Setup {
            coordinator: true,
            lease: 100,
            ..Default::default()
        },
    )) else {
        return;
    };
    let config = c.config_file();
    drop(runtime);
    assert_eq!(
        ok(run(&config, &["exec-all", "CREATE TABLE auto_users (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, name VARCHAR(255) NOT NULL, at TIMESTAMPTZ)"])),
        r#"{"shards":["db-a","db-b"]}"#
    );
    let insert = "INSERT INTO auto_users (name, at) VALUES (?, ?) RETURNING id";
    assert_eq!(
        ok(run(
            &config,
            &[
                "insert-shard",
                "db-a",
                insert,
                "--param",
                "\"Ada\"",
                "--param",
                r#"{"$date":0}"#,
                "--table",
                "auto_users"
            ]
        )),
        r#"{"generatedId":1,"shard":"db-a"}"#
    );
    assert_eq!(
        failed(run(
            &config,
            &[
                "insert-shard",
                "db-b",
                insert,
                "--param",
                "\"Grace\"",
                "--param",
                "null",
                "--table",
                "auto_users"
            ]
        )),
        r#"{"error":{"code":"GENERATED_KEY_COLLISION","message":"generated key 1 from shard db-b is already mapped to shard db-a; the row was removed from db-b.auto_users","shard":"db-b","table":"auto_users","id":1,"rowRemoved":true}}"#
    );
    assert_eq!(
        ok(run(
            &config,
            &[
                "first",
                "1",
                "SELECT id, name, at FROM auto_users WHERE id = ?",
                "--param",
                "1"
            ]
        )),
        r#"{"id":1,"name":"Ada","at":"1970-01-01T00:00:00.000Z"}"#
    );
    // Each one-shot call leases a block of 100 and serves its first id: gaps, no duplicates.
    assert_eq!(ok(run(&config, &["next-id", "auto_users"])), r#"{"id":2}"#);
    assert_eq!(
        ok(run(&config, &["next-id", "auto_users"])),
        r#"{"id":102}"#
    );
    assert_eq!(
        ok(run(
            &config,
            &["all-shards", "SELECT count(*)::int4 AS n FROM auto_users"]
        )),
        r#"[{"n":1},{"n":0}]"#
    );
}

/// Issue 18, items 1 and 2 through the command line, on SQLite and PostgreSQL shards: ids
/// print as exact JSON integers (2^53 + 1 and 2^63 − 1 stay themselves), in `generatedId`,
/// in `generatedIds` of a multi-row insert and in a collision's `id`.
fn exact_ids_through_the_cli(kind: Kind) {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let Some(c) = runtime.block_on(cluster(kind, Setup::default())) else {
        return;
    };
    let config = c.config_file();
    drop(runtime);
    let ddl = match kind {
        Kind::Sqlite => "CREATE TABLE big (id INTEGER PRIMARY KEY, name TEXT)",
        Kind::Postgres => {
            "CREATE TABLE big (id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, name TEXT)"
        }
    };
    ok(run(&config, &["exec-all", ddl]));
    assert_eq!(
        ok(run(
            &config,
            &[
                "insert-shard",
                "db-a",
                "INSERT INTO big (id, name) VALUES (9007199254740993, 'a') RETURNING id",
                "--table",
                "big"
            ]
        )),
        r#"{"generatedId":9007199254740993,"shard":"db-a"}"#
    );
    assert_eq!(
        ok(run(
            &config,
            &[
                "insert-shard",
                "db-b",
                "INSERT INTO big (id, name) VALUES (9223372036854775807, 'm'), (9007199254740992, 'b') RETURNING id",
                "--table",
                "big"
            ]
        )),
        r#"{"generatedId":9223372036854775807,"shard":"db-b","generatedIds":[9223372036854775807,9007199254740992]}"#
    );
    assert_eq!(
        failed(run(
            &config,
            &[
                "insert-shard",
                "db-b",
                "INSERT INTO big (id, name) VALUES (9007199254740993, 'c') RETURNING id",
                "--table",
                "big"
            ]
        )),
        r#"{"error":{"code":"GENERATED_KEY_COLLISION","message":"generated key 9007199254740993 from shard db-b is already mapped to shard db-a; the row was removed from db-b.big","shard":"db-b","table":"big","id":9007199254740993,"rowRemoved":true}}"#
    );
    assert_eq!(
        ok(run(
            &config,
            &[
                "first",
                "9007199254740993",
                "SELECT name FROM big WHERE id = ?",
                "--param",
                r#""9007199254740993""#
            ]
        )),
        r#"{"name":"a"}"#
    );
    // Rows print their integers with all their digits too; a later column of the same name
    // wins at the first one's position.
    assert_eq!(
        ok(run(
            &config,
            &[
                "first",
                "9007199254740993",
                "SELECT id, name FROM big WHERE id = ?",
                "--param",
                r#""9007199254740993""#
            ]
        )),
        r#"{"id":9007199254740993,"name":"a"}"#
    );
    assert_eq!(
        ok(run(
            &config,
            &["all-shard", "db-b", "SELECT id FROM big ORDER BY id"]
        )),
        r#"[{"id":9007199254740992},{"id":9223372036854775807}]"#
    );
    assert_eq!(
        ok(run(
            &config,
            &[
                "all-shards",
                "SELECT 1 AS a, -9223372036854775808 AS b, 9007199254740993 AS a, 'x' AS c"
            ]
        )),
        r#"[{"a":9007199254740993,"b":-9223372036854775808,"c":"x"},{"a":9007199254740993,"b":-9223372036854775808,"c":"x"}]"#
    );
    // A JSON integer a double cannot hold is refused, not rounded to 2^53 + 2.
    for args in [
        &[
            "first",
            "9007199254740995",
            "SELECT name FROM big WHERE id = ?",
            "--param",
            "9007199254740995",
        ][..],
        &[
            "insert-into",
            "9007199254740995",
            "big",
            r#"{"id":9007199254740995,"name":"x"}"#,
        ][..],
    ] {
        let output = run(&config, args);
        assert_eq!(output.code, 2, "{output:?}");
        assert!(
            output
                .stderr
                .contains("the integer 9007199254740995 is not exact"),
            "{}",
            output.stderr
        );
    }
    // As a string it is exact: written, mapped and read back by the exact id.
    let shard = ok(run(
        &config,
        &[
            "insert-into",
            "9007199254740995",
            "big",
            r#"{"id":"9007199254740995","name":"x"}"#,
        ],
    ));
    assert_eq!(
        ok(run(
            &config,
            &[
                "first",
                "9007199254740995",
                "SELECT id = 9007199254740995 AS exact, name FROM big WHERE id = ?",
                "--param",
                r#""9007199254740995""#
            ]
        )),
        match kind {
            Kind::Sqlite => r#"{"exact":1,"name":"x"}"#,
            Kind::Postgres => r#"{"exact":true,"name":"x"}"#,
        },
        "{shard}"
    );
}

#[test]
fn exact_ids_through_the_cli_sqlite() {
    exact_ids_through_the_cli(Kind::Sqlite);
}

#[test]
fn exact_ids_through_the_cli_postgres() {
    exact_ids_through_the_cli(Kind::Postgres);
}

/// Issue 18, item 7: dash-leading values where the docs show them — a negative KEY, a
/// negative `--param`, a SQL text starting with a `--` comment — parse as values, while
/// flags written before the positionals still parse as flags.
#[test]
fn dash_leading_values() {
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let c = runtime
        .block_on(cluster(Kind::Sqlite, Setup::default()))
        .unwrap();
    let config = c.config_file();
    drop(runtime);
    ok(run(
        &config,
        &[
            "exec-all",
            "CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)",
        ],
    ));
    assert_eq!(
        ok(run(
            &config,
            &["insert-into", "-5", "t", r#"{"id":-5,"name":"neg"}"#]
        )),
        // "-5" hashes to 45·31 + 53 = 1448: the first shard.
        r#"{"shard":"db-a"}"#
    );
    assert_eq!(
        ok(run(
            &config,
            &[
                "first",
                "-5",
                "SELECT name FROM t WHERE id = ?",
                "--param",
                "-5"
            ]
        )),
        r#"{"name":"neg"}"#
    );
    assert_eq!(
        ok(run(
            &config,
            &[
                "all",
                "-5",
                "-- a comment first\nSELECT name FROM t WHERE id = ?",
                "--param",
                "-5"
            ]
        )),
        r#"[{"name":"neg"}]"#
    );
    assert_eq!(
        ok(run(
            &config,
            &[
                "run",
                "-5",
                "UPDATE t SET name = ? WHERE id = ?",
                "--param",
                r#""n""#,
                "--param",
                "-5"
            ]
        )),
        r#"{"rowsAffected":1}"#
    );
    assert_eq!(
        ok(run(
            &config,
            &[
                "first",
                "--param",
                "-5",
                "-5",
                "SELECT name FROM t WHERE id = ?"
            ]
        )),
        r#"{"name":"n"}"#
    );
    assert_eq!(
        ok(run(
            &config,
            &["first-shard", "db-a", "-- c\nSELECT -1 AS x"]
        )),
        r#"{"x":-1}"#
    );
}
