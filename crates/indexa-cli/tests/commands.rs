//! The commands other than `batch`, run through the `indexa` binary.

mod common;

use common::{script, Env};

const PEOPLE: &str = r#"[
  {"id": 1, "name": "Ada", "team": "core", "tags": ["math", "engines"]},
  {"id": 2, "name": "Grace", "team": "lang", "tags": ["compilers"]},
  {"id": 3, "name": "Edsger", "team": "core", "tags": []},
  {"id": 4, "name": "Barbara", "team": "lang", "tags": ["math"]}
]"#;

/// Imports PEOPLE into db/people with key path `id` and indexes.
fn people(env: &Env) {
    let file = env.file("people.json", PEOPLE);
    let run = env.run(&[
        "import",
        "db",
        "people",
        file.to_str().unwrap(),
        "--key-path",
        "id",
        "--index",
        "team",
        "--index",
        "by_tag=tags:multi",
        "--index",
        "by_name=name:unique",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr
            .starts_with("imported 4 records into db/people in "),
        "{}",
        run.stderr
    );
    assert!(run.stderr.ends_with(" records/s)\n"), "{}", run.stderr);
    assert_eq!(run.stderr.lines().count(), 1);
}

fn stdout_of(env: &Env, args: &[&str]) -> String {
    let run = env.run(args);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{args:?}");
    run.stdout
}

fn error_of(env: &Env, args: &[&str]) -> String {
    let run = env.run(args);
    assert_eq!(run.code, 1, "{args:?}: {run:?}");
    assert_eq!(run.stdout, "", "{args:?}");
    run.stderr
}

#[test]
fn import_then_get_and_query() {
    let env = Env::new();
    people(&env);
    assert_eq!(
        stdout_of(&env, &["get", "db", "people", "2"]),
        "{\"id\":2,\"name\":\"Grace\",\"team\":\"lang\",\"tags\":[\"compilers\"]}\n"
    );
    assert_eq!(
        stdout_of(
            &env,
            &["get", "db", "people", "\"math\"", "--index", "by_tag"]
        ),
        "{\"id\":1,\"name\":\"Ada\",\"team\":\"core\",\"tags\":[\"math\",\"engines\"]}\n"
    );
    assert_eq!(
        stdout_of(
            &env,
            &[
                "query",
                "db",
                "people",
                "--index",
                "team",
                "--only",
                "\"core\"",
                "--keys-only"
            ]
        ),
        "{\"key\":\"core\",\"primaryKey\":1}\n{\"key\":\"core\",\"primaryKey\":3}\n"
    );
    assert_eq!(
        stdout_of(&env, &["query", "db", "people", "--count"]),
        "4\n"
    );
    assert_eq!(
        stdout_of(
            &env,
            &["query", "db", "people", "--index", "by_tag", "--only", "\"math\"", "--count"]
        ),
        "2\n"
    );
    assert_eq!(
        stdout_of(
            &env,
            &[
                "query",
                "db",
                "people",
                "--lower",
                "2",
                "--upper",
                "4",
                "--upper-open",
                "--keys-only"
            ]
        ),
        "{\"key\":2,\"primaryKey\":2}\n{\"key\":3,\"primaryKey\":3}\n"
    );
    assert_eq!(
        stdout_of(
            &env,
            &[
                "query",
                "db",
                "people",
                "--lower",
                "2",
                "--lower-open",
                "--direction",
                "prev",
                "--keys-only"
            ]
        ),
        "{\"key\":4,\"primaryKey\":4}\n{\"key\":3,\"primaryKey\":3}\n"
    );
    assert_eq!(
        stdout_of(&env, &["query", "db", "people", "--index", "by_name", "--prefix", "G"]),
        "{\"key\":\"Grace\",\"primaryKey\":2,\"value\":{\"id\":2,\"name\":\"Grace\",\"team\":\"lang\",\"tags\":[\"compilers\"]}}\n"
    );
    assert_eq!(
        stdout_of(
            &env,
            &[
                "query",
                "db",
                "people",
                "--index",
                "team",
                "--direction",
                "prevunique",
                "--keys-only"
            ]
        ),
        "{\"key\":\"lang\",\"primaryKey\":2}\n{\"key\":\"core\",\"primaryKey\":1}\n"
    );
    assert_eq!(
        stdout_of(
            &env,
            &[
                "query",
                "db",
                "people",
                "--upper",
                "9",
                "--limit",
                "1",
                "--keys-only"
            ]
        ),
        "{\"key\":1,\"primaryKey\":1}\n"
    );
}

#[test]
fn get_misses_print_nothing_and_exit_1() {
    let env = Env::new();
    people(&env);
    let run = env.run(&["get", "db", "people", "99"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (1, "", "")
    );
    let run = env.run(&["get", "db", "people", "\"nobody\"", "--index", "by_name"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (1, "", "")
    );
}

#[test]
fn errors_name_the_spec_error_and_the_input() {
    let env = Env::new();
    people(&env);
    assert_eq!(
        error_of(&env, &["get", "nodb", "people", "1"]),
        format!(
            "indexa: NotFoundError: database \"nodb\" does not exist in {}\n",
            env.place()
        )
    );
    assert_eq!(
        error_of(&env, &["get", "db", "nostore", "1"]),
        "indexa: NotFoundError: no object store named \"nostore\"\n"
    );
    assert_eq!(
        error_of(&env, &["query", "db", "people", "--index", "nope"]),
        "indexa: NotFoundError: object store \"people\" has no index named \"nope\"\n"
    );
    assert_eq!(
        error_of(&env, &["query", "db", "people", "--only", "ES"]),
        "indexa: SyntaxError: --only ES: expected a value at byte 0 (keys are JSON: write a string key in quotes, e.g. '\"ES\"')\n"
    );
    assert_eq!(
        error_of(&env, &["get", "db", "people", "null"]),
        "indexa: DataError: KEY null: null is not a valid key\n"
    );
    assert_eq!(
        error_of(
            &env,
            &["query", "db", "people", "--lower", "3", "--upper", "1"]
        ),
        "indexa: DataError: --lower/--upper: the lower bound is greater than the upper bound\n"
    );
    assert_eq!(
        error_of(&env, &["put", "db", "people", "{\"id\":1,"]),
        "indexa: SyntaxError: VALUE: expected a member name at byte 8\n"
    );
    assert_eq!(
        error_of(&env, &["add", "db", "people", "{\"id\":1}"]),
        "indexa: ConstraintError: a record with key 1 already exists\n"
    );
    assert_eq!(
        error_of(
            &env,
            &["put", "db", "people", "{\"id\":9,\"name\":\"Ada\"}"]
        ),
        "indexa: ConstraintError: unique index \"by_name\" already has a record with key \"Ada\"\n"
    );
    // Nothing was created by the failed reads.
    assert_eq!(stdout_of(&env, &["list"]), "db\t1\n");
}

#[test]
fn usage_errors_exit_2() {
    let env = Env::new();
    for args in [
        &["query", "db", "s", "--only", "1", "--lower", "2"][..],
        &["query", "db", "s", "--prefix", "a", "--upper", "2"],
        &["query", "db", "s", "--lower-open"],
        &["query", "db", "s", "--count", "--limit", "2"],
        &["query", "db", "s", "--limit", "0"],
        &["query", "db", "s", "--direction", "up"],
        &["delete", "db", "s"],
        &["delete", "db", "s", "1", "--lower", "2"],
        &["import", "db", "s"],
        &["import", "db", "s", "f", "--format", "xml"],
        &["frobnicate"],
        &[],
    ] {
        let run = env.run(args);
        assert_eq!(run.code, 2, "{args:?}: {run:?}");
        assert_eq!(run.stdout, "");
    }
    assert_eq!(
        stdout_of(&env, &["list"]),
        "",
        "usage errors create nothing"
    );
    if !common::on_postgres() {
        assert!(
            !env.data_dir().exists(),
            "usage errors must not create the data directory"
        );
    }
}

#[test]
fn help_describes_every_command() {
    let env = Env::new();
    let help = stdout_of(&env, &["--help"]);
    for command in [
        "import",
        "get",
        "query",
        "put",
        "add",
        "delete",
        "clear",
        "info",
        "list",
        "export",
        "drop",
        "batch",
        "dump",
        "restore",
        "schema",
        "create-store",
        "delete-store",
        "rename-store",
        "create-index",
        "delete-index",
        "rename-index",
        "check",
        "backup",
        "vacuum",
        "shell",
    ] {
        assert!(
            help.contains(&format!("\n  {command} ")),
            "{command} missing from:\n{help}"
        );
    }
    assert!(help.contains("--data-dir <DIR>"));
    assert!(help.contains("INDEXA_DATA_DIR"));
    let help = stdout_of(&env, &["import", "--help"]);
    assert!(
        help.contains("--skip-invalid") && help.contains("Examples:"),
        "{help}"
    );
}

#[test]
fn put_add_delete_clear() {
    let env = Env::new();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"kv"}"#,
            r#"{"op":"createObjectStore","name":"gen","autoIncrement":true}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"result":null}"#,
            r#"{"transaction":"committed"}"#,
        ],
        0,
    );
    assert_eq!(
        stdout_of(
            &env,
            &[
                "put",
                "db",
                "kv",
                "{\"$date\":86400000}",
                "--key",
                "\"day\""
            ]
        ),
        "\"day\"\n"
    );
    assert_eq!(
        stdout_of(&env, &["add", "db", "kv", "[1,2]", "--key", "[\"a\",1]"]),
        "[\"a\",1]\n"
    );
    assert_eq!(
        stdout_of(&env, &["add", "db", "kv", "3", "--key", "3"]),
        "3\n"
    );
    assert_eq!(
        stdout_of(&env, &["put", "db", "kv", "4", "--key", "3"]),
        "3\n"
    );
    assert_eq!(stdout_of(&env, &["add", "db", "gen", "\"x\""]), "1\n");
    assert_eq!(stdout_of(&env, &["put", "db", "gen", "\"y\""]), "2\n");
    assert_eq!(
        error_of(&env, &["add", "db", "kv", "1"]),
        "indexa: DataError: the object store uses out-of-line keys and has no key generator, and no key was given\n"
    );
    assert_eq!(
        stdout_of(&env, &["get", "db", "kv", "\"day\""]),
        "{\"$date\":86400000}\n"
    );
    assert_eq!(
        stdout_of(&env, &["query", "db", "kv", "--keys-only"]),
        "{\"key\":3,\"primaryKey\":3}\n{\"key\":\"day\",\"primaryKey\":\"day\"}\n{\"key\":[\"a\",1],\"primaryKey\":[\"a\",1]}\n"
    );
    assert_eq!(stdout_of(&env, &["delete", "db", "kv", "3"]), "");
    assert_eq!(
        stdout_of(&env, &["delete", "db", "kv", "--lower", "[]"]),
        ""
    );
    assert_eq!(stdout_of(&env, &["query", "db", "kv", "--count"]), "1\n");
    assert_eq!(stdout_of(&env, &["clear", "db", "gen"]), "");
    assert_eq!(stdout_of(&env, &["query", "db", "gen", "--count"]), "0\n");
    // clear() keeps the key generator going (seed 000).
    assert_eq!(stdout_of(&env, &["add", "db", "gen", "\"z\""]), "3\n");
}

#[test]
fn info_list_drop() {
    let env = Env::new();
    assert_eq!(stdout_of(&env, &["list"]), "");
    people(&env);
    env.expect_batch(
        "other",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"g","autoIncrement":true}"#,
            r#"{"op":"add","store":"g","value":1}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"result":1}"#,
            r#"{"transaction":"committed"}"#,
        ],
        0,
    );
    assert_eq!(stdout_of(&env, &["list"]), "db\t1\nother\t1\n");
    assert_eq!(
        stdout_of(&env, &["list", "--json"]),
        "{\"name\":\"db\",\"version\":1}\n{\"name\":\"other\",\"version\":1}\n"
    );
    assert_eq!(
        stdout_of(&env, &["info", "db"]),
        "database \"db\" version 1\n  store \"people\": 4 records, key path \"id\"\n    index \"by_name\": key path \"name\", unique\n    index \"by_tag\": key path \"tags\", multiEntry\n    index \"team\": key path \"team\"\n"
    );
    assert_eq!(
        stdout_of(&env, &["info", "other"]),
        "database \"other\" version 1\n  store \"g\": 1 record, out-of-line keys, key generator at 2\n"
    );
    assert_eq!(
        stdout_of(&env, &["info", "other", "--json"]),
        "{\"name\":\"other\",\"version\":1,\"objectStores\":[{\"name\":\"g\",\"keyPath\":null,\"autoIncrement\":true,\"currentNumber\":2,\"keyGeneratorExhausted\":false,\"count\":1,\"indexes\":[]}]}\n"
    );
    assert_eq!(stdout_of(&env, &["drop", "other"]), "");
    assert_eq!(stdout_of(&env, &["list"]), "db\t1\n");
    assert_eq!(
        error_of(&env, &["drop", "other"]),
        format!(
            "indexa: NotFoundError: database \"other\" does not exist in {}\n",
            env.place()
        )
    );
    assert_eq!(stdout_of(&env, &["drop", "other", "--if-exists"]), "");
    assert_eq!(
        error_of(&env, &["info", "other"]),
        format!(
            "indexa: NotFoundError: database \"other\" does not exist in {}\n",
            env.place()
        )
    );
}

#[test]
fn data_dir_comes_from_the_environment() {
    let env = Env::new();
    people(&env);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_indexa"))
        .arg("list")
        .env("INDEXA_DATA_DIR", env.data_arg())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8(out.stdout).unwrap(), "db\t1\n");
}

#[test]
fn import_formats() {
    let env = Env::new();
    let ndjson = env.file(
        "a.ndjson",
        "{\"k\":\"a\"}\n\n  \n{\"k\":\"b\"}\r\n{\"k\":\"c\"}",
    );
    let run = env.run(&[
        "import",
        "db",
        "nd",
        ndjson.to_str().unwrap(),
        "--key-path",
        "k",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // Detection: an NDJSON file whose first line is an array is still NDJSON with --format.
    let arrays = env.file("b.ndjson", "[1,\"x\"]\n[2,\"y\"]\n");
    let run = env.run(&[
        "import",
        "db",
        "arr",
        arrays.to_str().unwrap(),
        "--format",
        "ndjson",
        "--key-path",
        "'[\"0\"]'",
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr, "indexa: SyntaxError: key path \"'[\\\"0\\\"]'\": \"'[\\\"0\\\"]'\" is not a valid key path\n");
    let run = env.run(&[
        "import",
        "db",
        "arr",
        arrays.to_str().unwrap(),
        "--format",
        "ndjson",
        "--auto-increment",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(stdout_of(&env, &["query", "db", "nd", "--keys-only"]), "{\"key\":\"a\",\"primaryKey\":\"a\"}\n{\"key\":\"b\",\"primaryKey\":\"b\"}\n{\"key\":\"c\",\"primaryKey\":\"c\"}\n");
    assert_eq!(stdout_of(&env, &["query", "db", "arr"]), "{\"key\":1,\"primaryKey\":1,\"value\":[1,\"x\"]}\n{\"key\":2,\"primaryKey\":2,\"value\":[2,\"y\"]}\n");
    // Standard input, and a one-element compound key path.
    let run = env.run_with_input(
        &["import", "db", "compound", "-", "--key-path", "[\"k\"]"],
        "[{\"k\":\"x\"}]",
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        stdout_of(&env, &["query", "db", "compound", "--keys-only"]),
        "{\"key\":[\"x\"],\"primaryKey\":[\"x\"]}\n"
    );
    let run = env.run(&[
        "import",
        "db",
        "x",
        env.dir.path().join("missing.json").to_str().unwrap(),
    ]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with("indexa: UnknownError: cannot read "),
        "{}",
        run.stderr
    );
    // The file is read as it is imported, so the first error in file order is reported.
    let bad = env.file("bad.json", "[{\"a\":1},]");
    assert_eq!(
        error_of(
            &env,
            &[
                "import",
                "db",
                "x",
                bad.to_str().unwrap(),
                "--auto-increment"
            ]
        ),
        format!(
            "indexa: SyntaxError: {}: expected a value at byte 9\n",
            bad.display()
        )
    );
    let not_array = env.file("obj.json", "{\"a\":1}\n");
    assert_eq!(
        error_of(
            &env,
            &[
                "import",
                "db",
                "x",
                not_array.to_str().unwrap(),
                "--format",
                "json"
            ]
        ),
        format!(
            "indexa: DataError: {}: a JSON array of records was expected\n",
            not_array.display()
        )
    );
}

#[test]
fn export_writes_structured_clone_values_as_a_tag_and_import_reads_them_back() {
    // A value stored with its structured-clone serialization (as the Node.js package stores
    // Maps, typed arrays, Blobs …): the text form shows what key paths see and the bytes.
    let env = Env::new();
    let clone = r#"{"$structuredClone":{"value":{"id":1,"file":{"size":3,"type":"text/plain","name":"a.txt","lastModified":5}},"serialized":{"$binary":"AgD/"}}}"#;
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"files","keyPath":"id"}"#,
            r#"{"op":"createIndex","store":"files","name":"by_name","keyPath":"file.name"}"#,
            &format!(r#"{{"op":"put","store":"files","value":{clone}}}"#),
            r#"{"op":"getAllKeys","store":"files","index":"by_name","query":"a.txt"}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"result":null}"#,
            r#"{"result":1}"#,
            r#"{"result":[1]}"#,
            r#"{"transaction":"committed"}"#,
        ],
        0,
    );
    let exported = stdout_of(&env, &["export", "db", "files"]);
    assert_eq!(exported, format!("{{\"key\":1,\"value\":{clone}}}\n"));
    assert!(!exported.contains("\\u0000"));
    let file = env.file("files.ndjson", &exported);
    let run = env.run(&[
        "import",
        "copy",
        "files",
        file.to_str().unwrap(),
        "--format",
        "export",
        "--key-path",
        "id",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(stdout_of(&env, &["export", "copy", "files"]), exported);
}

#[test]
fn export_and_import_back_keep_out_of_line_keys() {
    let env = Env::new();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"kv"}"#,
            r#"{"op":"put","store":"kv","value":{"$binary":"AAE="},"key":"blob"}"#,
            r#"{"op":"put","store":"kv","value":{"$date":5},"key":[1,{"$date":2}]}"#,
            r#"{"op":"put","store":"kv","value":{"$object":{"$undefined":true}},"key":-1.5}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"result":"blob"}"#,
            r#"{"result":[1,{"$date":2}]}"#,
            r#"{"result":-1.5}"#,
            r#"{"transaction":"committed"}"#,
        ],
        0,
    );
    let exported = stdout_of(&env, &["export", "db", "kv"]);
    assert_eq!(
        exported,
        "{\"key\":-1.5,\"value\":{\"$object\":{\"$undefined\":true}}}\n{\"key\":\"blob\",\"value\":{\"$binary\":\"AAE=\"}}\n{\"key\":[1,{\"$date\":2}],\"value\":{\"$date\":5}}\n"
    );
    let file = env.file("kv.ndjson", &exported);
    let run = env.run(&[
        "import",
        "copy",
        "kv",
        file.to_str().unwrap(),
        "--format",
        "export",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(stdout_of(&env, &["export", "copy", "kv"]), exported);
    // Into a store with in-line keys, the key travels inside the value.
    people(&env);
    let exported = stdout_of(&env, &["export", "db", "people"]);
    let file = env.file("people.ndjson", &exported);
    let run = env.run(&[
        "import",
        "copy",
        "people",
        file.to_str().unwrap(),
        "--format",
        "export",
        "--key-path",
        "id",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(stdout_of(&env, &["export", "copy", "people"]), exported);
    let bad = env.file("bad.ndjson", "{\"key\":1,\"value\":2}\n{\"value\":3}\n");
    assert_eq!(
        error_of(
            &env,
            &[
                "import",
                "copy",
                "kv",
                bad.to_str().unwrap(),
                "--format",
                "export"
            ]
        ),
        "indexa: DataError: record 2: an export line must be {\"key\":…,\"value\":…}\n"
    );
}

#[test]
fn importing_again_is_a_constraint_error_and_changes_nothing() {
    let env = Env::new();
    people(&env);
    let before = stdout_of(&env, &["export", "db", "people"]);
    let changed = env.file(
        "people2.json",
        r#"[{"id": 5, "name": "New"}, {"id": 1, "name": "Changed"}]"#,
    );
    assert_eq!(
        error_of(
            &env,
            &[
                "import",
                "db",
                "people",
                changed.to_str().unwrap(),
                "--key-path",
                "id",
                "--index",
                "team"
            ]
        ),
        "indexa: ConstraintError: record 2: a record with key 1 already exists\n"
    );
    assert_eq!(stdout_of(&env, &["export", "db", "people"]), before);
    // --put overwrites.
    let run = env.run(&["import", "db", "people", changed.to_str().unwrap(), "--put"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        stdout_of(&env, &["get", "db", "people", "1"]),
        "{\"id\":1,\"name\":\"Changed\"}\n"
    );
    assert_eq!(
        stdout_of(&env, &["query", "db", "people", "--count"]),
        "5\n"
    );
}

#[test]
fn a_bad_record_imports_nothing_into_a_new_database() {
    let env = Env::new();
    let file = env.file(
        "bad.json",
        r#"[{"id": 1}, {"id": 2}, {"name": "no id"}, {"id": 4}]"#,
    );
    assert_eq!(
        error_of(
            &env,
            &[
                "import",
                "db",
                "s",
                file.to_str().unwrap(),
                "--key-path",
                "id",
                "--index",
                "name"
            ]
        ),
        "indexa: DataError: record 3: key path \"id\" yielded no key\n"
    );
    assert_eq!(stdout_of(&env, &["list"]), "");
    let ndjson = env.file("bad.ndjson", "{\"id\":1}\n\n{\"id\":2\n");
    assert_eq!(
        error_of(
            &env,
            &[
                "import",
                "db",
                "s",
                ndjson.to_str().unwrap(),
                "--key-path",
                "id"
            ]
        ),
        "indexa: SyntaxError: record 2 (line 3): expected ',' or '}' at byte 7\n"
    );
    assert_eq!(stdout_of(&env, &["list"]), "");
}

#[test]
fn a_bad_record_changes_nothing_in_an_existing_database() {
    let env = Env::new();
    people(&env);
    let info = stdout_of(&env, &["info", "db", "--json"]);
    // A new store and a new index on an existing store: both would need an upgrade.
    let file = env.file(
        "bad.json",
        r#"[{"id": 10, "name": "Ok"}, {"id": 11, "name": "Ok"}]"#,
    );
    assert_eq!(
        error_of(&env, &["import", "db", "more", file.to_str().unwrap(), "--key-path", "id", "--index", "by_name=name:unique"]),
        "indexa: ConstraintError: record 2: unique index \"by_name\" already has a record with key \"Ok\"\n"
    );
    assert_eq!(stdout_of(&env, &["info", "db", "--json"]), info);
    assert_eq!(
        error_of(&env, &["import", "db", "people", file.to_str().unwrap(), "--index", "extra=team"]),
        "indexa: ConstraintError: record 2: unique index \"by_name\" already has a record with key \"Ok\"\n"
    );
    assert_eq!(stdout_of(&env, &["info", "db", "--json"]), info);
    // A unique index over existing duplicates aborts the upgrade.
    let more = env.file("more.json", r#"[{"id": 20, "name": "Z", "team": "core"}]"#);
    assert_eq!(
        error_of(&env, &["import", "db", "people", more.to_str().unwrap(), "--index", "one_per_team=team:unique"]),
        "indexa: ConstraintError: index \"one_per_team\": cannot create unique index \"one_per_team\": key \"core\" is not unique; the upgrade is aborted\n"
    );
    assert_eq!(stdout_of(&env, &["info", "db", "--json"]), info);
    // Options that contradict the existing store.
    assert_eq!(
        error_of(&env, &["import", "db", "people", more.to_str().unwrap(), "--key-path", "name"]),
        "indexa: ConstraintError: object store \"people\" already exists with key path \"id\", not \"name\"\n"
    );
    assert_eq!(
        error_of(
            &env,
            &[
                "import",
                "db",
                "people",
                more.to_str().unwrap(),
                "--auto-increment"
            ]
        ),
        "indexa: ConstraintError: object store \"people\" already exists without a key generator\n"
    );
    assert_eq!(
        error_of(&env, &["import", "db", "people", more.to_str().unwrap(), "--index", "team=team:unique"]),
        "indexa: ConstraintError: object store \"people\" already exists with a different index \"team\" (key path \"team\", unique false, multiEntry false)\n"
    );
    assert_eq!(stdout_of(&env, &["info", "db", "--json"]), info);
}

#[test]
fn skip_invalid_imports_the_rest() {
    let env = Env::new();
    let file = env.file(
        "mixed.ndjson",
        "{\"id\":1,\"u\":\"a\"}\n{\"nokey\":true}\nnot json\n{\"id\":2,\"u\":\"a\"}\n{\"id\":3,\"u\":\"b\"}\n{\"id\":1,\"u\":\"c\"}\n",
    );
    let run = env.run(&[
        "import",
        "db",
        "s",
        file.to_str().unwrap(),
        "--key-path",
        "id",
        "--index",
        "u:unique",
        "--skip-invalid",
    ]);
    assert_eq!(run.code, 0);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(
        lines[..4],
        [
            "indexa: skipped record 2: DataError: key path \"id\" yielded no key",
            "indexa: skipped record 3: SyntaxError: expected a value at byte 0",
            "indexa: skipped record 4: ConstraintError: unique index \"u\" already has a record with key \"a\"",
            "indexa: skipped record 6: ConstraintError: a record with key 1 already exists",
        ]
    );
    assert!(
        lines[4].starts_with("imported 2 records into db/s in "),
        "{}",
        lines[4]
    );
    assert!(
        lines[4].ends_with(" records/s), skipped 4 invalid records"),
        "{}",
        lines[4]
    );
    assert_eq!(lines.len(), 5);
    assert_eq!(stdout_of(&env, &["export", "db", "s"]), "{\"key\":1,\"value\":{\"id\":1,\"u\":\"a\"}}\n{\"key\":3,\"value\":{\"id\":3,\"u\":\"b\"}}\n");
}

#[test]
fn a_closed_stdout_exits_quietly() {
    use std::io::Read;
    let env = Env::new();
    let records: Vec<String> = (0..20_000)
        .map(|i| format!("{{\"n\":{i},\"pad\":\"{}\"}}", "x".repeat(50)))
        .collect();
    let file = env.file("many.ndjson", &records.join("\n"));
    let run = env.run(&[
        "import",
        "db",
        "many",
        file.to_str().unwrap(),
        "--auto-increment",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_indexa"))
        .arg("--data-dir")
        .arg(env.data_arg())
        .args(["query", "db", "many"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut first = [0u8; 10];
    stdout.read_exact(&mut first).unwrap();
    assert_eq!(&first, b"{\"key\":1,\"");
    drop(stdout);
    let mut stderr = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut stderr)
        .unwrap();
    let status = child.wait().unwrap();
    assert_eq!(stderr, "");
    assert!(status.success(), "{status:?}");
}

#[test]
fn info_reports_an_exhausted_key_generator() {
    let env = Env::new();
    env.expect_batch(
        "g",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"s","autoIncrement":true}"#,
            r#"{"op":"put","store":"s","value":1,"key":9007199254740991}"#,
            r#"{"op":"put","store":"s","value":2}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"result":9007199254740991}"#,
            r#"{"result":9007199254740992}"#,
            r#"{"transaction":"committed"}"#,
        ],
        0,
    );
    assert_eq!(
        stdout_of(&env, &["info", "g"]),
        "database \"g\" version 1\n  store \"s\": 2 records, out-of-line keys, key generator exhausted\n"
    );
    assert!(stdout_of(&env, &["info", "g", "--json"])
        .contains(r#""currentNumber":null,"keyGeneratorExhausted":true"#));
}

#[test]
fn foreign_files_are_never_dropped_or_written() {
    // SQLite-only: a foreign file in the data directory.
    let env = Env::sqlite();
    std::fs::create_dir_all(env.data_dir()).unwrap();
    let garbage = env.data_dir().join("db-bad.indexa");
    std::fs::write(&garbage, b"garbage").unwrap();
    let err = error_of(&env, &["drop", "bad"]);
    assert!(err.starts_with("indexa: UnknownError: "), "{err}");
    assert_eq!(std::fs::read(&garbage).unwrap(), b"garbage");
    let run = env.run_with_input(
        &["batch", "bad"],
        "{\"op\":\"createObjectStore\",\"name\":\"s\"}\n",
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .starts_with(r#"{"error":{"name":"UnknownError","#),
        "{}",
        run.stdout
    );
    assert_eq!(std::fs::read(&garbage).unwrap(), b"garbage");
}

#[test]
fn versions_above_2_pow_53_minus_1_are_refused() {
    let env = Env::new();
    let run = env.run_with_input(
        &["batch", "big", "--version", "9007199254740992"],
        "{\"op\":\"createObjectStore\",\"name\":\"s\"}\n",
    );
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.starts_with(r#"{"error":{"name":"TypeError","#),
        "{}",
        run.stdout
    );
    assert_eq!(stdout_of(&env, &["list"]), "");
}

#[test]
fn negative_keys_and_a_byte_order_mark_are_accepted() {
    let env = Env::new();
    let file = env.file("bom.ndjson", "\u{FEFF}{\"id\":-1}\n{\"id\":2}\n");
    let run = env.run(&[
        "import",
        "db",
        "s",
        file.to_str().unwrap(),
        "--key-path",
        "id",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stderr.lines().next().unwrap_or("").split(" in ").next(),
        Some("imported 2 records into db/s")
    );
    assert_eq!(stdout_of(&env, &["get", "db", "s", "-1"]), "{\"id\":-1}\n");
    assert_eq!(
        stdout_of(&env, &["query", "db", "s", "--only", "-1", "--keys-only"]),
        "{\"key\":-1,\"primaryKey\":-1}\n"
    );
    assert_eq!(stdout_of(&env, &["delete", "db", "s", "-1"]), "");
    assert_eq!(stdout_of(&env, &["query", "db", "s", "--count"]), "1\n");
}
