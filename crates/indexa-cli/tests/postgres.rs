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

/// A URL's scheme is case-insensitive (RFC 3986, section 3.1): `POSTGRES://` is a server
/// too. A URL of another scheme is refused with SyntaxError, naming only the scheme, and was
/// once taken for a relative directory (`mysql:` appeared in the current directory).
#[test]
fn a_scheme_in_capitals_is_a_server_and_another_scheme_is_refused_without_a_folder() {
    let cwd = tempfile::tempdir().unwrap();
    let out = indexa(
        cwd.path(),
        "POSTGRES://alice:hunter2@127.0.0.1:1/app",
        &["list"],
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(
            "indexa: UnknownError: cannot connect to POSTGRES://alice:***@127.0.0.1:1/app"
        ),
        "{stderr}"
    );
    let refused = "indexa: SyntaxError: a database URL starts with postgres:// or postgresql://\n";
    for args in [
        &["list"][..],
        &["get", "db", "s", "1"],
        &["put", "db", "s", "1", "--key", "1"],
        &["create-store", "db", "s"],
    ] {
        let out = indexa(cwd.path(), "mysql://alice:hunter2@127.0.0.1/app", args);
        let stderr = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(stderr, refused, "{args:?}");
    }
    assert_eq!(
        std::fs::read_dir(cwd.path()).unwrap().count(),
        0,
        "nothing is created locally"
    );
}

/// A password given as a query parameter is masked too, in every message that shows the URL,
/// and a password with an unencoded `@` shows the host the client really parsed from it.
#[test]
fn a_password_in_a_query_parameter_or_with_an_at_sign_stays_secret() {
    let cwd = tempfile::tempdir().unwrap();
    let out = indexa(
        cwd.path(),
        "postgres://pwuser@127.0.0.1:1/mine?password=wrongsecret",
        &["list"],
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(
            "indexa: UnknownError: cannot connect to postgres://pwuser@127.0.0.1:1/mine?password=***: "
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("wrongsecret"), "{stderr}");

    let out = indexa(
        cwd.path(),
        "postgres://pwuser@127.0.0.1:1/mine?sslmode=bogus&password=wrongsecret",
        &["list"],
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(
            "indexa: SyntaxError: postgres://pwuser@127.0.0.1:1/mine?sslmode=bogus&password=*** is not a valid PostgreSQL URL"
        ),
        "{stderr}"
    );
    assert!(!stderr.contains("wrongsecret"), "{stderr}");

    // The client reads the user part up to the first `@`: it connects to host "ss@127.0.0.1"
    // with password "p", and the message names that host.
    let out = indexa(
        cwd.path(),
        "postgres://alice:p@ss@127.0.0.1:1/app",
        &["list"],
    );
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.starts_with(
            "indexa: UnknownError: cannot connect to postgres://alice:***@ss@127.0.0.1:1/app: "
        ),
        "{stderr}"
    );
    assert!(!stderr.contains(":p@"), "{stderr}");
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

/// Batch scripts run through `indexa batch` on database `c` (each an upgrade to the given
/// version when it has one), in order: keys of every type and their order (numbers, dates,
/// strings across the UTF-16 surrogate range, binary, nested arrays), key ranges, cursors in
/// every direction with their steps, multiEntry and unique indexes, key generators up to
/// 2^53, schema changes, errors, preventDefault and aborts.
const CONFORMANCE: &[(Option<u64>, &[&str])] = &[
    (
        Some(1),
        &[
            r#"{"op":"createObjectStore","name":"k"}"#,
            r#"{"op":"createObjectStore","name":"p","keyPath":"id"}"#,
            r#"{"op":"createIndex","store":"p","name":"tags","keyPath":"tags","multiEntry":true}"#,
            r#"{"op":"createIndex","store":"p","name":"name","keyPath":"name","unique":true}"#,
            r#"{"op":"createIndex","store":"p","name":"pair","keyPath":["a","b"]}"#,
            r#"{"op":"createObjectStore","name":"g","autoIncrement":true}"#,
            r#"{"op":"createObjectStore","name":"h","keyPath":"n.id","autoIncrement":true}"#,
        ],
    ),
    (
        None,
        &[
            r#"{"op":"put","store":"k","value":1,"key":-1e300}"#,
            r#"{"op":"put","store":"k","value":2,"key":{"$number":"-Infinity"}}"#,
            r#"{"op":"put","store":"k","value":3,"key":{"$number":"Infinity"}}"#,
            r#"{"op":"put","store":"k","value":4,"key":-0.5}"#,
            r#"{"op":"put","store":"k","value":5,"key":0}"#,
            r#"{"op":"put","store":"k","value":6,"key":{"$number":"-0"}}"#,
            r#"{"op":"put","store":"k","value":7,"key":2.5e-308}"#,
            r#"{"op":"put","store":"k","value":8,"key":{"$date":-1}}"#,
            r#"{"op":"put","store":"k","value":9,"key":{"$date":1700000000000}}"#,
            r#"{"op":"put","store":"k","value":10,"key":""}"#,
            r#"{"op":"put","store":"k","value":11,"key":"a"}"#,
            r#"{"op":"put","store":"k","value":12,"key":"a\u0000"}"#,
            r#"{"op":"put","store":"k","value":13,"key":"\uffff"}"#,
            r#"{"op":"put","store":"k","value":14,"key":"\ud800\udc00"}"#,
            r#"{"op":"put","store":"k","value":15,"key":"\ue000"}"#,
            r#"{"op":"put","store":"k","value":16,"key":"é"}"#,
            r#"{"op":"put","store":"k","value":17,"key":{"$binary":""}}"#,
            r#"{"op":"put","store":"k","value":18,"key":{"$binary":"AA=="}}"#,
            r#"{"op":"put","store":"k","value":19,"key":{"$binary":"/w=="}}"#,
            r#"{"op":"put","store":"k","value":20,"key":[]}"#,
            r#"{"op":"put","store":"k","value":21,"key":[[]]}"#,
            r#"{"op":"put","store":"k","value":22,"key":[1,"a",[{"$date":0}]]}"#,
            r#"{"op":"put","store":"k","value":23,"key":["a"]}"#,
            r#"{"op":"getAllKeys","store":"k"}"#,
            r#"{"op":"getAllKeys","store":"k","direction":"prev","count":5}"#,
            r#"{"op":"getAll","store":"k","query":{"lower":0,"upper":"a","upperOpen":true}}"#,
            r#"{"op":"count","store":"k","query":{"lower":"a","lowerOpen":true}}"#,
            r#"{"op":"getKey","store":"k","query":{"lower":{"$binary":"AA=="},"lowerOpen":true}}"#,
            r#"{"op":"delete","store":"k","query":{"lower":{"$date":-1},"upper":""}}"#,
            r#"{"op":"getAllKeys","store":"k","query":{"lower":1,"upper":[[]]}}"#,
            r#"{"op":"put","store":"k","value":{"x":null},"key":{"$number":"NaN"},"preventDefault":true}"#,
        ],
    ),
    (
        None,
        &[
            r#"{"op":"put","store":"p","value":{"id":3,"name":"Cy","tags":["b","a","b"],"a":1,"b":"x"}}"#,
            r#"{"op":"put","store":"p","value":{"id":1,"name":"Al","tags":["a"],"a":1,"b":"w"}}"#,
            r#"{"op":"put","store":"p","value":{"id":2,"name":"Bo","tags":[],"a":0}}"#,
            r#"{"op":"put","store":"p","value":{"id":"s","name":"Di","tags":"b","a":1,"b":"w"}}"#,
            r#"{"op":"add","store":"p","value":{"id":4,"name":"Al"},"preventDefault":true}"#,
            r#"{"op":"add","store":"p","value":{"id":5,"name":"Al"},"preventDefault":true}"#,
            r#"{"op":"getAllKeys","store":"p","index":"tags"}"#,
            r#"{"op":"getAll","store":"p","index":"pair","query":{"lower":[1],"upper":[1,[]]}}"#,
            r#"{"op":"openCursor","store":"p","index":"tags","direction":"next"}"#,
            r#"{"op":"openCursor","store":"p","index":"tags","direction":"nextunique"}"#,
            r#"{"op":"openCursor","store":"p","index":"tags","direction":"prev"}"#,
            r#"{"op":"openCursor","store":"p","index":"tags","direction":"prevunique"}"#,
            r#"{"op":"openKeyCursor","store":"p","index":"tags","steps":[{"continuePrimaryKey":["b",3]},{"continue":"c"}]}"#,
            r#"{"op":"openCursor","store":"p","steps":[{"advance":2},{"update":{"id":3,"name":"Cy2","tags":["z"]}},{"continue":"s"},{"delete":true}]}"#,
            r#"{"op":"openCursor","store":"p","direction":"prev","steps":[{"advance":1},{"continue":null}]}"#,
            r#"{"op":"get","store":"p","index":"name","query":{"lower":"B"}}"#,
            r#"{"op":"count","store":"p","index":"tags"}"#,
            r#"{"op":"getAll","store":"p","index":"tags","query":"z"}"#,
        ],
    ),
    (
        None,
        &[
            r#"{"op":"add","store":"g","value":"a"}"#,
            r#"{"op":"add","store":"g","value":"b","key":10.5}"#,
            r#"{"op":"add","store":"g","value":"c"}"#,
            r#"{"op":"add","store":"g","value":"d","key":-5}"#,
            r#"{"op":"add","store":"g","value":"e"}"#,
            r#"{"op":"add","store":"h","value":{"v":1}}"#,
            r#"{"op":"add","store":"h","value":{"n":{"id":7},"v":2}}"#,
            r#"{"op":"add","store":"h","value":{"v":3}}"#,
            r#"{"op":"add","store":"h","value":{"n":1}}"#,
            r#"{"op":"getAll","store":"h"}"#,
            r#"{"op":"abort"}"#,
        ],
    ),
    (
        None,
        &[
            r#"{"op":"add","store":"g","value":"a"}"#,
            r#"{"op":"put","store":"g","value":"big","key":9007199254740991}"#,
            r#"{"op":"add","store":"g","value":"none"}"#,
            r#"{"op":"get","store":"g","query":9007199254740991}"#,
        ],
    ),
    (
        Some(2),
        &[
            r#"{"op":"add","store":"g","value":"still none","preventDefault":true}"#,
            r#"{"op":"deleteIndex","store":"p","name":"tags"}"#,
            r#"{"op":"createIndex","store":"p","name":"name2","keyPath":"name","unique":true}"#,
            r#"{"op":"deleteObjectStore","name":"k"}"#,
            r#"{"op":"createObjectStore","name":"k","keyPath":""}"#,
            r#"{"op":"add","store":"k","value":"self"}"#,
            r#"{"op":"getAll","store":"p","index":"name2"}"#,
            r#"{"op":"count","store":"k"}"#,
        ],
    ),
    (
        Some(3),
        &[
            r#"{"op":"createIndex","store":"p","name":"a","keyPath":"a","unique":true}"#,
            r#"{"op":"get","store":"p","query":1}"#,
        ],
    ),
    (
        Some(4),
        &[
            r#"{"op":"deleteObjectStore","name":"h"}"#,
            r#"{"op":"clear","store":"g"}"#,
            r#"{"op":"commit"}"#,
        ],
    ),
    (
        None,
        &[
            r#"{"op":"getAllKeys","store":"g"}"#,
            r#"{"op":"get","store":"h","query":1}"#,
        ],
    ),
];

/// Runs `indexa --data-dir DATA ARGS…` with `input`; returns its exit code, stdout and stderr.
fn run_on(data_dir: &std::ffi::OsStr, args: &[&str], input: &str) -> (Option<i32>, String, String) {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_indexa"))
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .env_remove("INDEXA_DATA_DIR")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("run indexa");
    let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
    let out = child.wait_with_output().unwrap();
    (
        out.status.code(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// The conformance scripts and the CLI's reading commands give the same output and exit
/// code through `--data-dir postgres://…` as on a SQLite data directory (each output is also
/// checked against its expected value by the other tests, on both backends).
#[test]
fn conformance_scripts_give_the_same_results_as_on_sqlite() {
    let Some(db) = test_database("conformance") else {
        return;
    };
    let sqlite = tempfile::tempdir().unwrap();
    let sqlite_dir = sqlite.path().join("data");
    let places = [sqlite_dir.as_os_str(), std::ffi::OsStr::new(&db.url)];
    let same = |args: &[&str], input: &str| {
        let [mut on_sqlite, on_postgres] = places.map(|place| run_on(place, args, input));
        // Messages name the place: the data directory, or "the PostgreSQL database".
        on_sqlite.2 = on_sqlite
            .2
            .replace(&sqlite_dir.display().to_string(), "the PostgreSQL database");
        assert_eq!(
            on_postgres, on_sqlite,
            "indexa {args:?} with input:\n{input}"
        );
        on_sqlite
    };
    for (version, lines) in CONFORMANCE {
        let mut input = lines.join("\n");
        input.push('\n');
        let version = version.map(|v| v.to_string());
        let mut args = vec!["batch", "c"];
        if let Some(v) = &version {
            args.extend(["--version", v]);
        }
        same(&args, &input);
    }
    let countries = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data/countries.json");
    // The import says how long it took: only that differs.
    for place in places {
        let (code, out, stderr) = run_on(
            place,
            &[
                "import",
                "world",
                "countries",
                countries.to_str().unwrap(),
                "--key-path",
                "cca3",
                "--index",
                "borders=borders:multi",
                "--index",
                "region",
                "--index",
                "name=name.common:unique",
            ],
            "",
        );
        assert_eq!((code, out.as_str()), (Some(0), ""));
        assert!(
            stderr.starts_with("imported 250 records into world/countries in "),
            "{stderr}"
        );
    }
    for args in [
        &["list"][..],
        &["info", "c", "--json"],
        &["info", "world"],
        &["schema", "c"],
        &["dump", "c"],
        &["dump", "world"],
        &["export", "c", "p"],
        &[
            "query",
            "world",
            "countries",
            "--index",
            "borders",
            "--only",
            "\"DEU\"",
            "--keys-only",
        ],
        &[
            "query",
            "world",
            "countries",
            "--index",
            "name",
            "--prefix",
            "S",
            "--direction",
            "prev",
            "--limit",
            "7",
            "--format",
            "table",
        ],
        &[
            "query",
            "world",
            "countries",
            "--index",
            "region",
            "--lower",
            "\"Asia\"",
            "--upper",
            "\"Europe\"",
            "--count",
        ],
        &[
            "query",
            "world",
            "countries",
            "--limit",
            "3",
            "--format",
            "csv",
        ],
        &["get", "world", "countries", "\"ESP\""],
        &["get", "c", "nope", "1"],
        &["get", "nope", "s", "1"],
    ] {
        same(args, "");
    }
    let (code, out, _) = same(&["query", "world", "countries", "--count"], "");
    assert_eq!((code, out.as_str()), (Some(0), "250\n"));
}

/// `sslmode=require`: the connection is encrypted (rustls, no system OpenSSL) and the
/// server's certificate verified against the trusted certificates (here the test cluster's
/// own authority, through `SSL_CERT_FILE`); a certificate from an unknown authority is refused
/// with a clear message. Needs the test cluster's TLS (`INDEXA_TEST_PG_CA`).
#[test]
fn sslmode_require_encrypts_and_verifies_the_server() {
    let (Some(db), Ok(ca)) = (test_database("tls"), std::env::var("INDEXA_TEST_PG_CA")) else {
        eprintln!("INDEXA_TEST_PG_CA is not set: TLS skipped (scripts/pg-test-cluster.sh sets it when openssl is at hand)");
        return;
    };
    let url = format!("{}?sslmode=require", db.url);
    let indexa = |trusted: &str| {
        Command::new(env!("CARGO_BIN_EXE_indexa"))
            .arg("--data-dir")
            .arg(&url)
            .args(["batch", "db"])
            .env_remove("INDEXA_DATA_DIR")
            .env("SSL_CERT_FILE", trusted)
            .env_remove("SSL_CERT_DIR")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap()
    };
    // A batch holds its connection open while it waits for lines: the server shows it
    // encrypted.
    let mut batch = indexa(&ca);
    let mut input = batch.stdin.take().unwrap();
    let mut output = std::io::BufReader::new(batch.stdout.take().unwrap());
    use std::io::{BufRead, Write};
    writeln!(input, r#"{{"op":"createObjectStore","name":"s"}}"#).unwrap();
    let mut line = String::new();
    output.read_line(&mut line).unwrap();
    assert_eq!(line, "{\"result\":null}\n");
    let mut admin = postgres::Client::connect(
        &std::env::var("INDEXA_TEST_PG_URL").unwrap(),
        postgres::NoTls,
    )
    .unwrap();
    let (encrypted, plain): (i64, i64) = {
        let row = admin
            .query_one(
                "SELECT count(*) FILTER (WHERE s.ssl), count(*) FILTER (WHERE NOT s.ssl) \
                 FROM pg_stat_ssl s JOIN pg_stat_activity a USING (pid) WHERE a.datname = $1",
                &[&url_database(&db.url)],
            )
            .unwrap();
        (row.get(0), row.get(1))
    };
    assert!(encrypted >= 1, "{encrypted} encrypted connections");
    assert_eq!(plain, 0);
    drop(input);
    let out = batch.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));

    // Trusting a certificate that is not the server's authority (the server's own, which
    // the authority signed): refused.
    let other = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(
        other.path(),
        std::fs::read_to_string(Path::new(&ca).with_file_name("server.crt")).unwrap(),
    )
    .unwrap();
    let refused = indexa(other.path().to_str().unwrap())
        .wait_with_output()
        .unwrap();
    let stdout = String::from_utf8(refused.stdout).unwrap();
    assert_eq!(refused.status.code(), Some(1), "{stdout}");
    assert!(
        stdout.contains("error performing TLS handshake: invalid peer certificate"),
        "{stdout}"
    );
}

/// The database name at the end of a `postgres://…/name` URL.
fn url_database(url: &str) -> &str {
    url.rsplit('/').next().unwrap()
}

/// A long-lived `shell` whose server connections were all ended while it was idle (as a
/// server restart ends them): its next command connects again, session included, and
/// succeeds.
#[test]
fn an_idle_shell_connects_again_after_losing_its_connections() {
    use std::io::{BufRead, BufReader, Write};
    let Some(db) = test_database("shell_lost") else {
        return;
    };
    let cwd = tempfile::tempdir().unwrap();
    let out = indexa(cwd.path(), &db.url, &["create-store", "db", "s"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let mut shell = Command::new(env!("CARGO_BIN_EXE_indexa"))
        .current_dir(cwd.path())
        .arg("--data-dir")
        .arg(&db.url)
        .args(["shell", "db"])
        .env_remove("INDEXA_DATA_DIR")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = shell.stdin.take().unwrap();
    let mut output = BufReader::new(shell.stdout.take().unwrap()).lines();
    let mut ask = |input: &mut std::process::ChildStdin, line: &str| {
        writeln!(input, "{line}").unwrap();
        input.flush().unwrap();
        output.next().unwrap().unwrap()
    };
    assert_eq!(
        ask(
            &mut input,
            r#"{"op":"put","store":"s","value":"a","key":1}"#
        ),
        r#"{"result":1}"#
    );
    let mut admin = postgres::Client::connect(&db.url, postgres::NoTls).unwrap();
    let ended = admin
        .query(
            "SELECT pg_terminate_backend(pid, 10000) FROM pg_stat_activity \
             WHERE datname = current_database() AND pid <> pg_backend_pid()",
            &[],
        )
        .unwrap()
        .len();
    // Every ended session has exited (pg_terminate_backend waited for it).
    assert!(ended >= 1);
    assert_eq!(
        ask(&mut input, r#"{"op":"count","store":"s"}"#),
        r#"{"result":1}"#
    );
    assert_eq!(
        ask(
            &mut input,
            r#"{"op":"put","store":"s","value":"b","key":2}"#
        ),
        r#"{"result":2}"#
    );
    assert_eq!(
        ask(&mut input, r#"{"op":"count","store":"s"}"#),
        r#"{"result":2}"#
    );
    drop(input);
    assert!(shell.wait().unwrap().success());
}
