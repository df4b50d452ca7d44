//! The batch protocol op by op: results, errors, the abort and preventDefault rules, and how
//! the database is opened.

mod common;

use common::{script, Env};
use indexa_cli::batch::{self, BatchArgs, DurabilityArg, Mode, Outcome};

const COMMITTED: &str = r#"{"transaction":"committed"}"#;
const ABORTED: &str = r#"{"transaction":"aborted"}"#;
const NULL: &str = r#"{"result":null}"#;

/// A database `db` at version 1 with store `s` (out-of-line keys) holding 1→"a", 2→"b",
/// 3→"c", and store `p` (key path `id`, index `by_tag` multiEntry on `tags`, unique index
/// `by_name` on `name`).
fn fixture() -> Env {
    let env = Env::new();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"s"}"#,
            r#"{"op":"add","store":"s","value":"a","key":1}"#,
            r#"{"op":"add","store":"s","value":"b","key":2}"#,
            r#"{"op":"add","store":"s","value":"c","key":3}"#,
            r#"{"op":"createObjectStore","name":"p","keyPath":"id"}"#,
            r#"{"op":"createIndex","store":"p","name":"by_tag","keyPath":"tags","multiEntry":true}"#,
            r#"{"op":"createIndex","store":"p","name":"by_name","keyPath":"name","unique":true}"#,
            r#"{"op":"put","store":"p","value":{"id":"x","name":"Xavi","tags":["red","blue"]}}"#,
            r#"{"op":"put","store":"p","value":{"id":"y","name":"Yuki","tags":["blue"]}}"#,
            r#"{"op":"put","store":"p","value":{"id":"z","name":"Zoe","tags":[]}}"#,
        ]),
        &[
            NULL,
            r#"{"result":1}"#,
            r#"{"result":2}"#,
            r#"{"result":3}"#,
            NULL,
            NULL,
            NULL,
            r#"{"result":"x"}"#,
            r#"{"result":"y"}"#,
            r#"{"result":"z"}"#,
            COMMITTED,
        ],
        0,
    );
    env
}

/// Asserts that store `s` still holds exactly its fixture records.
fn assert_s_unchanged(env: &Env) {
    env.expect_batch(
        "db",
        &["--mode", "readonly"],
        &script(&[r#"{"op":"getAll","store":"s"}"#]),
        &[r#"{"result":["a","b","c"]}"#, COMMITTED],
        0,
    );
}

fn error(name: &str, message: &str) -> String {
    format!(r#"{{"error":{{"name":"{name}","message":"{message}"}}}}"#)
}

// ---- reads ----

#[test]
fn get_and_get_key() {
    let env = fixture();
    env.expect_batch(
        "db",
        &["--mode", "readonly"],
        &script(&[
            r#"{"op":"get","store":"s","query":2}"#,
            r#"{"op":"get","store":"s","query":9}"#,
            r#"{"op":"get","store":"s","query":{"lower":1,"lowerOpen":true}}"#,
            r#"{"op":"getKey","store":"s","query":{"upper":3,"upperOpen":true,"lower":2}}"#,
            r#"{"op":"getKey","store":"s","query":{"lower":4}}"#,
            r#"{"op":"get","store":"p","index":"by_tag","query":"blue"}"#,
            r#"{"op":"getKey","store":"p","index":"by_name","query":"Zoe"}"#,
        ]),
        &[
            r#"{"result":"b"}"#,
            r#"{"result":{"$undefined":true}}"#,
            r#"{"result":"b"}"#,
            r#"{"result":2}"#,
            r#"{"result":{"$undefined":true}}"#,
            r#"{"result":{"id":"x","name":"Xavi","tags":["red","blue"]}}"#,
            r#"{"result":"z"}"#,
            COMMITTED,
        ],
        0,
    );
}

#[test]
fn get_all_get_all_keys_and_count() {
    let env = fixture();
    env.expect_batch(
        "db",
        &["--mode", "readonly"],
        &script(&[
            r#"{"op":"getAll","store":"s"}"#,
            r#"{"op":"getAll","store":"s","query":null,"count":0}"#,
            r#"{"op":"getAll","store":"s","count":2,"direction":"prev"}"#,
            r#"{"op":"getAllKeys","store":"s","query":{"lower":2}}"#,
            r#"{"op":"getAllKeys","store":"p","index":"by_tag"}"#,
            r#"{"op":"getAllKeys","store":"p","index":"by_tag","direction":"prevunique"}"#,
            r#"{"op":"getAll","store":"p","index":"by_tag","query":"red"}"#,
            r#"{"op":"count","store":"s"}"#,
            r#"{"op":"count","store":"s","query":{"upper":2}}"#,
            r#"{"op":"count","store":"p","index":"by_tag"}"#,
            r#"{"op":"count","store":"p","index":"by_tag","query":"blue"}"#,
        ]),
        &[
            r#"{"result":["a","b","c"]}"#,
            r#"{"result":["a","b","c"]}"#,
            r#"{"result":["c","b"]}"#,
            r#"{"result":[2,3]}"#,
            r#"{"result":["x","y","x"]}"#,
            r#"{"result":["x","x"]}"#,
            r#"{"result":[{"id":"x","name":"Xavi","tags":["red","blue"]}]}"#,
            r#"{"result":3}"#,
            r#"{"result":2}"#,
            r#"{"result":3}"#,
            r#"{"result":2}"#,
            COMMITTED,
        ],
        0,
    );
}

// ---- writes ----

#[test]
fn add_put_delete_clear() {
    let env = fixture();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"add","store":"s","value":{"$date":0},"key":[4,"four"]}"#,
            r#"{"op":"put","store":"s","value":"B","key":2}"#,
            r#"{"op":"add","store":"s","value":"dup","key":2,"preventDefault":true}"#,
            r#"{"op":"delete","store":"s","query":1}"#,
            r#"{"op":"getAll","store":"s"}"#,
            r#"{"op":"delete","store":"s","query":{"lower":3}}"#,
            r#"{"op":"getAllKeys","store":"s"}"#,
            r#"{"op":"clear","store":"s"}"#,
            r#"{"op":"count","store":"s"}"#,
        ]),
        &[
            r#"{"result":[4,"four"]}"#,
            r#"{"result":2}"#,
            &error("ConstraintError", r#"a record with key 2 already exists"#),
            NULL,
            r#"{"result":["B","c",{"$date":0}]}"#,
            NULL,
            r#"{"result":[2]}"#,
            NULL,
            r#"{"result":0}"#,
            COMMITTED,
        ],
        0,
    );
}

#[test]
fn values_round_trip_in_the_text_form() {
    let env = fixture();
    let value = r#"{"n":-0.5,"big":1e+21,"nan":{"$number":"NaN"},"negz":{"$number":"-0"},"d":{"$date":-1},"b":{"$binary":"AAEC"},"u":{"$undefined":true},"lit":{"$object":{"$date":"not a tag"}},"s":"é\n\"","a":[null,true,false]}"#;
    env.expect_batch(
        "db",
        &[],
        &script(&[
            &format!(r#"{{"op":"put","store":"s","key":"v","value":{value}}}"#),
            r#"{"op":"get","store":"s","query":"v"}"#,
            // A Date holds a time-clipped value: 1.5 ms is 1 ms.
            r#"{"op":"put","store":"s","key":{"$date":1.5},"value":{"$date":-0.5}}"#,
            r#"{"op":"getAll","store":"s","query":{"$date":1}}"#,
        ]),
        &[
            r#"{"result":"v"}"#,
            &format!(r#"{{"result":{value}}}"#),
            r#"{"result":{"$date":1}}"#,
            r#"{"result":[{"$date":0}]}"#,
            COMMITTED,
        ],
        0,
    );
}

// ---- schema ----

#[test]
fn schema_ops_in_an_upgrade() {
    let env = fixture();
    env.expect_batch(
        "db",
        &["--version", "2"],
        &script(&[
            r#"{"op":"deleteIndex","store":"p","name":"by_name"}"#,
            r#"{"op":"createIndex","store":"p","name":"pair","keyPath":["name","id"]}"#,
            r#"{"op":"getAllKeys","store":"p","index":"pair","query":{"lower":["Y"]}}"#,
            r#"{"op":"deleteObjectStore","name":"s"}"#,
            r#"{"op":"createObjectStore","name":"t","keyPath":["a","b"]}"#,
            r#"{"op":"put","store":"t","value":{"a":1,"b":"x"}}"#,
            r#"{"op":"createObjectStore","name":"t","preventDefault":true}"#,
            r#"{"op":"deleteIndex","store":"p","name":"nope","preventDefault":true}"#,
            r#"{"op":"deleteObjectStore","name":"s","preventDefault":true}"#,
            r#"{"op":"createObjectStore","name":"bad","keyPath":"a b","preventDefault":true}"#,
            r#"{"op":"createObjectStore","name":"bad","keyPath":[],"autoIncrement":true,"preventDefault":true}"#,
            r#"{"op":"createObjectStore","name":"bad","keyPath":["a"],"autoIncrement":true,"preventDefault":true}"#,
        ]),
        &[
            NULL,
            NULL,
            r#"{"result":["y","z"]}"#,
            NULL,
            NULL,
            r#"{"result":[1,"x"]}"#,
            &error("ConstraintError", r#"an object store named \"t\" already exists"#),
            &error("NotFoundError", r#"object store \"p\" has no index named \"nope\""#),
            &error("NotFoundError", r#"no object store named \"s\""#),
            &error("SyntaxError", r#"\"a b\" is not a valid key path"#),
            &error("SyntaxError", "an array key path must not be empty"),
            &error(
                "InvalidAccessError",
                "autoIncrement needs out-of-line keys or a non-empty string key path",
            ),
            COMMITTED,
        ],
        0,
    );
    let info = env.run(&["info", "db"]);
    assert_eq!(
        info.stdout,
        "database \"db\" version 2\n  store \"p\": 3 records, key path \"id\"\n    index \"by_tag\": key path \"tags\", multiEntry\n    index \"pair\": key path [\"name\",\"id\"]\n  store \"t\": 1 record, key path [\"a\",\"b\"]\n"
    );
}

#[test]
fn schema_ops_outside_an_upgrade_are_invalid_state() {
    let env = fixture();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"t","preventDefault":true}"#,
            r#"{"op":"createIndex","store":"s","name":"i","keyPath":"x"}"#,
            r#"{"op":"put","store":"s","value":"never","key":9}"#,
        ]),
        &[
            &error(
                "InvalidStateError",
                "the schema can only change in a versionchange transaction",
            ),
            &error(
                "InvalidStateError",
                "the schema can only change in a versionchange transaction",
            ),
            ABORTED,
        ],
        1,
    );
    assert_s_unchanged(&env);
}

// ---- cursors ----

#[test]
fn cursors_without_steps_visit_every_position() {
    let env = fixture();
    env.expect_batch(
        "db",
        &["--mode", "readonly"],
        &script(&[
            r#"{"op":"openCursor","store":"s"}"#,
            r#"{"op":"openCursor","store":"s","query":{"lower":2},"direction":"prev"}"#,
            r#"{"op":"openKeyCursor","store":"s","query":{"lower":9}}"#,
            r#"{"op":"openKeyCursor","store":"p","index":"by_tag"}"#,
            r#"{"op":"openCursor","store":"p","index":"by_tag","query":"red"}"#,
            r#"{"op":"openKeyCursor","store":"p","index":"by_tag","direction":"nextunique"}"#,
        ]),
        &[
            r#"{"result":[{"key":1,"primaryKey":1,"value":"a"},{"key":2,"primaryKey":2,"value":"b"},{"key":3,"primaryKey":3,"value":"c"}]}"#,
            r#"{"result":[{"key":3,"primaryKey":3,"value":"c"},{"key":2,"primaryKey":2,"value":"b"}]}"#,
            r#"{"result":[]}"#,
            r#"{"result":[{"key":"blue","primaryKey":"x"},{"key":"blue","primaryKey":"y"},{"key":"red","primaryKey":"x"}]}"#,
            r#"{"result":[{"key":"red","primaryKey":"x","value":{"id":"x","name":"Xavi","tags":["red","blue"]}}]}"#,
            r#"{"result":[{"key":"blue","primaryKey":"x"},{"key":"red","primaryKey":"x"}]}"#,
            COMMITTED,
        ],
        0,
    );
}

#[test]
fn cursor_steps() {
    let env = fixture();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"openCursor","store":"s","steps":[{"continue":null},{"update":"B"},{"continue":3},{"delete":true},{"advance":1}]}"#,
            r#"{"op":"getAll","store":"s"}"#,
            r#"{"op":"openKeyCursor","store":"p","index":"by_tag","steps":[{"continuePrimaryKey":["blue","y"]},{"continue":null},{"continue":null}]}"#,
            r#"{"op":"openCursor","store":"s","query":{"lower":5},"steps":[]}"#,
        ]),
        &[
            r#"{"result":[{"key":1,"primaryKey":1,"value":"a"},{"key":2,"primaryKey":2,"value":"b"},{"key":2,"primaryKey":2,"value":"b"},{"key":3,"primaryKey":3,"value":"c"},{"key":3,"primaryKey":3,"value":"c"},null]}"#,
            r#"{"result":["a","B"]}"#,
            r#"{"result":[{"key":"blue","primaryKey":"x"},{"key":"blue","primaryKey":"y"},{"key":"red","primaryKey":"x"},null]}"#,
            r#"{"result":[null]}"#,
            COMMITTED,
        ],
        0,
    );
}

#[test]
fn a_failed_step_fails_the_cursor_op() {
    let env = fixture();
    // Without preventDefault the transaction aborts, the update of the first step included.
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"openCursor","store":"s","steps":[{"update":"A"},{"continue":1},{"advance":1}]}"#,
            r#"{"op":"put","store":"s","value":"never","key":9}"#,
        ]),
        &[
            r#"{"result":[{"key":1,"primaryKey":1,"value":"a"},{"key":1,"primaryKey":1,"value":"a"},{"error":{"name":"DataError","message":"the key is not beyond the cursor's position in its direction"}}]}"#,
            ABORTED,
        ],
        1,
    );
    assert_s_unchanged(&env);
    // With preventDefault the transaction goes on and the failed op leaves no trace: the
    // update of its first step is undone too.
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"openCursor","store":"s","preventDefault":true,"steps":[{"update":"A"},{"advance":0},{"continue":null}]}"#,
            r#"{"op":"openKeyCursor","store":"s","preventDefault":true,"steps":[{"update":"x"}]}"#,
            r#"{"op":"openCursor","store":"s","preventDefault":true,"steps":[{"continuePrimaryKey":[1,1]}]}"#,
            r#"{"op":"openCursor","store":"s","preventDefault":true,"steps":[{"advance":5},{"continue":null}]}"#,
            r#"{"op":"openCursor","store":"s","preventDefault":true,"steps":[{"jump":1}]}"#,
            r#"{"op":"openCursor","store":"s","preventDefault":true,"steps":[{"delete":false}]}"#,
            r#"{"op":"openCursor","store":"s","preventDefault":true,"steps":[{"advance":-1}]}"#,
            r#"{"op":"openCursor","store":"s","preventDefault":true,"steps":[{"continue":{"not":"a key"}}]}"#,
            r#"{"op":"openCursor","store":"s","preventDefault":true,"steps":{"continue":null}}"#,
            r#"{"op":"getAll","store":"s"}"#,
        ]),
        &[
            r#"{"result":[{"key":1,"primaryKey":1,"value":"a"},{"key":1,"primaryKey":1,"value":"a"},{"error":{"name":"TypeError","message":"advance() needs a count above 0"}}]}"#,
            r#"{"result":[{"key":1,"primaryKey":1},{"error":{"name":"InvalidStateError","message":"a key cursor has no value to update"}}]}"#,
            r#"{"result":[{"key":1,"primaryKey":1,"value":"a"},{"error":{"name":"InvalidAccessError","message":"continuePrimaryKey needs an index cursor"}}]}"#,
            r#"{"result":[{"key":1,"primaryKey":1,"value":"a"},null,{"error":{"name":"InvalidStateError","message":"the cursor is past its end"}}]}"#,
            r#"{"result":[{"key":1,"primaryKey":1,"value":"a"},{"error":{"name":"TypeError","message":"a step is one of {\"continue\":K|null}, {\"advance\":N}, {\"continuePrimaryKey\":[K,PK]}, {\"update\":V}, {\"delete\":true}"}}]}"#,
            r#"{"result":[{"key":1,"primaryKey":1,"value":"a"},{"error":{"name":"TypeError","message":"a step is one of {\"continue\":K|null}, {\"advance\":N}, {\"continuePrimaryKey\":[K,PK]}, {\"update\":V}, {\"delete\":true}"}}]}"#,
            r#"{"result":[{"key":1,"primaryKey":1,"value":"a"},{"error":{"name":"TypeError","message":"advance needs an integer from 1 to 4294967295"}}]}"#,
            r#"{"result":[{"key":1,"primaryKey":1,"value":"a"},{"error":{"name":"DataError","message":"{\"not\":\"a key\"} is not a valid key"}}]}"#,
            &error("TypeError", r#"openCursor: argument \"steps\" must be an array"#),
            r#"{"result":["a","b","c"]}"#,
            COMMITTED,
        ],
        0,
    );
}

#[test]
fn cursor_updates_check_in_line_keys_and_readonly() {
    let env = fixture();
    env.expect_batch(
        "db",
        &["--mode", "readonly"],
        &script(&[r#"{"op":"openCursor","store":"s","steps":[{"delete":true}]}"#]),
        &[
            r#"{"result":[{"key":1,"primaryKey":1,"value":"a"},{"error":{"name":"ReadOnlyError","message":"the transaction is readonly"}}]}"#,
            ABORTED,
        ],
        1,
    );
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"openCursor","store":"p","preventDefault":true,"steps":[{"update":{"id":"other"}}]}"#,
            r#"{"op":"openCursor","store":"p","index":"by_name","query":"Yuki","steps":[{"update":{"id":"y","name":"Yuki","tags":["green"]}}]}"#,
            r#"{"op":"getAllKeys","store":"p","index":"by_tag","query":"green"}"#,
        ]),
        &[
            r#"{"result":[{"key":"x","primaryKey":"x","value":{"id":"x","name":"Xavi","tags":["red","blue"]}},{"error":{"name":"DataError","message":"the value's key at key path \"id\" must equal the cursor's primary key"}}]}"#,
            r#"{"result":[{"key":"Yuki","primaryKey":"y","value":{"id":"y","name":"Yuki","tags":["blue"]}},{"key":"Yuki","primaryKey":"y","value":{"id":"y","name":"Yuki","tags":["blue"]}}]}"#,
            r#"{"result":["y"]}"#,
            COMMITTED,
        ],
        0,
    );
}

// ---- commit and abort ----

#[test]
fn commit_ends_the_batch() {
    let env = fixture();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"put","store":"s","value":"d","key":4}"#,
            r#"{"op":"commit"}"#,
            r#"{"op":"put","store":"s","value":"never","key":5}"#,
            "not even JSON",
        ]),
        &[r#"{"result":4}"#, NULL, COMMITTED],
        0,
    );
    env.expect_batch(
        "db",
        &["--mode", "readonly"],
        &script(&[r#"{"op":"getAllKeys","store":"s"}"#]),
        &[r#"{"result":[1,2,3,4]}"#, COMMITTED],
        0,
    );
}

#[test]
fn abort_rolls_everything_back_and_exits_1() {
    let env = fixture();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"put","store":"s","value":"d","key":4}"#,
            r#"{"op":"delete","store":"s","query":1}"#,
            r#"{"op":"abort"}"#,
            r#"{"op":"put","store":"s","value":"never","key":5}"#,
        ]),
        &[r#"{"result":4}"#, NULL, NULL, ABORTED],
        1,
    );
    assert_s_unchanged(&env);
}

#[test]
fn an_error_aborts_and_the_remaining_lines_are_not_run() {
    let env = fixture();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"put","store":"s","value":"d","key":4}"#,
            r#"{"op":"add","store":"s","value":"dup","key":1}"#,
            r#"{"op":"put","store":"s","value":"never","key":5}"#,
            r#"{"op":"commit"}"#,
        ]),
        &[
            r#"{"result":4}"#,
            &error("ConstraintError", "a record with key 1 already exists"),
            ABORTED,
        ],
        1,
    );
    assert_s_unchanged(&env);
}

#[test]
fn prevent_default_keeps_the_transaction_going() {
    let env = fixture();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"add","store":"s","value":"dup","key":1,"preventDefault":true}"#,
            r#"{"op":"frobnicate","preventDefault":true}"#,
            r#"{"op":"get","store":"nope","query":1,"preventDefault":true}"#,
            r#"{"op":"put","store":"s","value":"d","key":4,"preventDefault":false}"#,
        ]),
        &[
            &error("ConstraintError", "a record with key 1 already exists"),
            &error("TypeError", r#"unknown op \"frobnicate\""#),
            &error("NotFoundError", r#"no object store named \"nope\""#),
            r#"{"result":4}"#,
            COMMITTED,
        ],
        0,
    );
}

#[test]
fn blank_lines_are_ignored_and_end_of_input_commits() {
    let env = fixture();
    env.expect_batch(
        "db",
        &[],
        "\n  \n{\"op\":\"put\",\"store\":\"s\",\"value\":\"d\",\"key\":4}\r\n\t\n{\"op\":\"count\",\"store\":\"s\"}",
        &[r#"{"result":4}"#, r#"{"result":4}"#, COMMITTED],
        0,
    );
    env.expect_batch("db", &[], "", &[COMMITTED], 0);
}

// ---- bad input: the error line, and nothing lost ----

/// Runs `line` after a write in one batch: the error line, an aborted transaction, and
/// the store as it was.
fn rejects(line: &str, expected_error: &str) {
    let env = fixture();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"put","store":"s","value":"d","key":4}"#,
            line,
            r#"{"op":"commit"}"#,
        ]),
        &[r#"{"result":4}"#, expected_error, ABORTED],
        1,
    );
    assert_s_unchanged(&env);
}

#[test]
fn malformed_json_is_a_syntax_error() {
    rejects(
        r#"{"op":"get","store":"s","query":1"#,
        &error("SyntaxError", "expected ',' or '}' at byte 33"),
    );
    rejects(
        "{'op':'get'}",
        &error("SyntaxError", "expected a member name at byte 1"),
    );
    let env = fixture();
    // A line that is not UTF-8.
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_indexa"))
        .arg("--data-dir")
        .arg(env.data_arg())
        .args(["batch", "db"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"{\"op\":\"commit\xff\"}\n")
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!(
            "{}\n{ABORTED}\n",
            error("SyntaxError", "the line is not UTF-8 text (byte 13)")
        )
    );
    assert_s_unchanged(&env);
}

#[test]
fn unknown_ops_and_arguments_are_type_errors() {
    rejects(
        r#"{"op":"getEverything","store":"s"}"#,
        &error("TypeError", r#"unknown op \"getEverything\""#),
    );
    rejects(
        r#"{"store":"s"}"#,
        &error("TypeError", r#"missing argument \"op\""#),
    );
    rejects(
        r#"{"op":7}"#,
        &error("TypeError", r#"\"op\" must be a string"#),
    );
    rejects(
        r#"[{"op":"clear"}]"#,
        &error("TypeError", "an operation must be a JSON object"),
    );
    rejects(
        r#"{"op":"getAll","store":"s","querry":1}"#,
        &error("TypeError", r#"getAll: unknown argument \"querry\""#),
    );
}

#[test]
fn missing_arguments_are_type_errors() {
    rejects(
        r#"{"op":"get","query":1}"#,
        &error("TypeError", r#"get: missing argument \"store\""#),
    );
    rejects(
        r#"{"op":"put","store":"s","key":1}"#,
        &error("TypeError", r#"put: missing argument \"value\""#),
    );
    rejects(
        r#"{"op":"deleteObjectStore"}"#,
        &error(
            "TypeError",
            r#"deleteObjectStore: missing argument \"name\""#,
        ),
    );
}

#[test]
fn wrong_argument_types_are_type_errors() {
    rejects(
        r#"{"op":"clear","store":1}"#,
        &error("TypeError", r#"clear: argument \"store\" must be a string"#),
    );
    rejects(
        r#"{"op":"getAll","store":"s","count":-1}"#,
        &error(
            "TypeError",
            r#"getAll: argument \"count\" must be an integer from 0 to 4294967295"#,
        ),
    );
    rejects(
        r#"{"op":"getAll","store":"s","count":1.5}"#,
        &error(
            "TypeError",
            r#"getAll: argument \"count\" must be an integer from 0 to 4294967295"#,
        ),
    );
    rejects(
        r#"{"op":"getAll","store":"s","direction":"sideways"}"#,
        &error(
            "TypeError",
            r#"\"sideways\" is not a cursor direction (next, nextunique, prev, prevunique)"#,
        ),
    );
    rejects(
        r#"{"op":"openCursor","store":"s","direction":1}"#,
        &error(
            "TypeError",
            r#"openCursor: argument \"direction\" must be a string"#,
        ),
    );
    rejects(
        r#"{"op":"getAll","store":"s","index":false}"#,
        &error(
            "TypeError",
            r#"getAll: argument \"index\" must be a string"#,
        ),
    );
    rejects(
        r#"{"op":"count","store":"s","preventDefault":"yes"}"#,
        &error("TypeError", r#"\"preventDefault\" must be a boolean"#),
    );
    rejects(
        r#"{"op":"count","store":"s","query":{"lower":1,"lowerOpen":"no"}}"#,
        &error(
            "TypeError",
            r#"a key range's \"lowerOpen\" must be a boolean"#,
        ),
    );
}

#[test]
fn missing_stores_and_indexes_are_not_found() {
    rejects(
        r#"{"op":"get","store":"nope","query":1}"#,
        &error("NotFoundError", r#"no object store named \"nope\""#),
    );
    rejects(
        r#"{"op":"getAll","store":"s","index":"nope"}"#,
        &error(
            "NotFoundError",
            r#"object store \"s\" has no index named \"nope\""#,
        ),
    );
}

#[test]
fn invalid_keys_and_queries_are_data_errors() {
    rejects(
        r#"{"op":"get","store":"s"}"#,
        &error("DataError", "get: the query must be a key or a key range"),
    );
    rejects(
        r#"{"op":"getKey","store":"s","query":null}"#,
        &error(
            "DataError",
            "getKey: the query must be a key or a key range",
        ),
    );
    rejects(
        r#"{"op":"delete","store":"s"}"#,
        &error(
            "DataError",
            "delete: the query must be a key or a key range",
        ),
    );
    rejects(
        r#"{"op":"put","store":"s","value":1,"key":null}"#,
        &error("DataError", "null is not a valid key"),
    );
    rejects(
        r#"{"op":"get","store":"s","query":true}"#,
        &error("DataError", "true is not a valid key"),
    );
    rejects(
        r#"{"op":"get","store":"s","query":{"$number":"NaN"}}"#,
        &error("DataError", r#"{\"$number\":\"NaN\"} is not a valid key"#),
    );
    rejects(
        r#"{"op":"count","store":"s","query":{}}"#,
        &error("DataError", "a key range needs at least one bound"),
    );
    rejects(
        r#"{"op":"count","store":"s","query":{"lowerOpen":true}}"#,
        &error("DataError", "a key range needs at least one bound"),
    );
    rejects(
        r#"{"op":"count","store":"s","query":{"lower":2,"upper":1}}"#,
        &error(
            "DataError",
            "the lower bound is greater than the upper bound",
        ),
    );
    rejects(
        r#"{"op":"count","store":"s","query":{"lower":1,"upper":1,"upperOpen":true}}"#,
        &error("DataError", "the bounds are equal and one of them is open"),
    );
    rejects(
        r#"{"op":"count","store":"s","query":{"lower":1,"step":2}}"#,
        &error(
            "DataError",
            r#"{\"lower\":1,\"step\":2} is not a valid key or key range"#,
        ),
    );
    rejects(
        r#"{"op":"count","store":"s","query":{"lower":null}}"#,
        &error("DataError", "null is not a valid key"),
    );
}

#[test]
fn readonly_transactions_reject_writes() {
    let env = fixture();
    env.expect_batch(
        "db",
        &["--mode", "readonly", "--durability", "relaxed"],
        &script(&[
            r#"{"op":"count","store":"s"}"#,
            r#"{"op":"clear","store":"s"}"#,
        ]),
        &[
            r#"{"result":3}"#,
            &error("ReadOnlyError", "the transaction is readonly"),
            ABORTED,
        ],
        1,
    );
    assert_s_unchanged(&env);
}

// ---- opening ----

#[test]
fn a_new_database_is_created_at_version_1_by_its_upgrade() {
    let env = Env::new();
    env.expect_batch(
        "fresh",
        &[],
        &script(&[r#"{"op":"createObjectStore","name":"s"}"#]),
        &[NULL, COMMITTED],
        0,
    );
    assert_eq!(env.run(&["list"]).stdout, "fresh\t1\n");
    // An aborted creation leaves no database behind.
    env.expect_batch(
        "gone",
        &[],
        &script(&[r#"{"op":"abort"}"#]),
        &[NULL, ABORTED],
        1,
    );
    env.expect_batch(
        "gone2",
        &["--version", "5"],
        &script(&[r#"{"op":"nope"}"#]),
        &[&error("TypeError", r#"unknown op \"nope\""#), ABORTED],
        1,
    );
    assert_eq!(env.run(&["list"]).stdout, "fresh\t1\n");
}

#[test]
fn a_database_without_stores_runs_ops_against_an_empty_scope() {
    let env = Env::new();
    env.expect_batch("empty", &[], "", &[COMMITTED], 0);
    env.expect_batch(
        "empty",
        &[],
        &script(&[r#"{"op":"count","store":"s"}"#]),
        &[
            &error("NotFoundError", r#"no object store named \"s\""#),
            ABORTED,
        ],
        1,
    );
    assert_eq!(env.run(&["list"]).stdout, "empty\t1\n");
}

#[test]
fn versions() {
    let env = fixture();
    // The same version: a normal transaction.
    env.expect_batch(
        "db",
        &["--version", "1"],
        &script(&[r#"{"op":"createObjectStore","name":"t"}"#]),
        &[
            &error(
                "InvalidStateError",
                "the schema can only change in a versionchange transaction",
            ),
            ABORTED,
        ],
        1,
    );
    // A lower version: the open fails, with no transaction line.
    env.expect_batch(
        "db",
        &["--version", "3"],
        &script(&[r#"{"op":"createObjectStore","name":"t"}"#]),
        &[NULL, COMMITTED],
        0,
    );
    env.expect_batch(
        "db",
        &["--version", "2"],
        &script(&[r#"{"op":"count","store":"s"}"#]),
        &[&error(
            "VersionError",
            r#"database \"db\" is at version 3, above the requested 2"#,
        )],
        1,
    );
    assert_eq!(env.run(&["list"]).stdout, "db\t3\n");
    // An aborted upgrade keeps the old version.
    env.expect_batch(
        "db",
        &["--version", "4"],
        &script(&[
            r#"{"op":"deleteObjectStore","name":"s"}"#,
            r#"{"op":"abort"}"#,
        ]),
        &[NULL, NULL, ABORTED],
        1,
    );
    assert_eq!(env.run(&["list"]).stdout, "db\t3\n");
    assert_s_unchanged(&env);
}

#[test]
fn usage_errors_exit_2() {
    let env = Env::new();
    for args in [
        &["batch", "db", "--mode", "versionchange"][..],
        &["batch", "db", "--version", "0"],
        &["batch", "db", "--version", "x"],
        &["batch", "db", "--durability", "lax"],
        &["batch"],
    ] {
        let run = env.run(args);
        assert_eq!(run.code, 2, "{args:?}");
        assert_eq!(run.stdout, "");
        assert!(run.stderr.starts_with("error: "), "{}", run.stderr);
    }
}

#[test]
fn the_protocol_runs_in_process() {
    let env = Env::new();
    let factory = env.factory();
    let args = BatchArgs {
        db: "mem".into(),
        version: None,
        mode: Mode::ReadWrite,
        durability: DurabilityArg::Default,
    };
    let input = script(&[
        r#"{"op":"createObjectStore","name":"s","autoIncrement":true}"#,
        r#"{"op":"add","store":"s","value":"a"}"#,
    ]);
    let mut out = Vec::new();
    let outcome = batch::run(&factory, "mem", &args, input.as_bytes(), &mut out).unwrap();
    assert_eq!(outcome, Outcome::Committed);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        format!("{NULL}\n{{\"result\":1}}\n{COMMITTED}\n")
    );

    let mut out = Vec::new();
    let input = script(&[
        r#"{"op":"add","store":"s","value":"b"}"#,
        r#"{"op":"abort"}"#,
    ]);
    let outcome = batch::run(&factory, "mem", &args, input.as_bytes(), &mut out).unwrap();
    assert_eq!(outcome, Outcome::Aborted);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        format!("{{\"result\":2}}\n{NULL}\n{ABORTED}\n")
    );

    let mut out = Vec::new();
    let lower = BatchArgs {
        version: Some(1),
        ..args.clone()
    };
    let input = script(&[r#"{"op":"getAll","store":"s"}"#]);
    let outcome = batch::run(&factory, "mem", &lower, input.as_bytes(), &mut out).unwrap();
    assert_eq!(outcome, Outcome::Committed);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        format!("{{\"result\":[\"a\"]}}\n{COMMITTED}\n")
    );
}

#[test]
fn output_is_written_as_each_op_runs() {
    use std::io::{BufRead, BufReader, Write};
    let env = fixture();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_indexa"))
        .arg("--data-dir")
        .arg(env.data_arg())
        .args(["batch", "db"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    // Each answer arrives before the next op is sent: a script can talk to the batch.
    writeln!(input, r#"{{"op":"get","store":"s","query":1}}"#).unwrap();
    output.read_line(&mut line).unwrap();
    assert_eq!(line, "{\"result\":\"a\"}\n");
    line.clear();
    writeln!(input, r#"{{"op":"put","store":"s","value":"z","key":26}}"#).unwrap();
    output.read_line(&mut line).unwrap();
    assert_eq!(line, "{\"result\":26}\n");
    drop(input);
    line.clear();
    output.read_line(&mut line).unwrap();
    assert_eq!(line, format!("{COMMITTED}\n"));
    assert!(child.wait().unwrap().success());
}

#[test]
fn schema_ops_outside_an_upgrade_are_invalid_state_before_key_path_checks() {
    let env = fixture();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"createIndex","store":"s","name":"q","keyPath":"a b","preventDefault":true}"#,
            r#"{"op":"createObjectStore","name":"t","keyPath":"a b","preventDefault":true}"#,
        ]),
        &[
            &error(
                "InvalidStateError",
                "the schema can only change in a versionchange transaction",
            ),
            &error(
                "InvalidStateError",
                "the schema can only change in a versionchange transaction",
            ),
            COMMITTED,
        ],
        0,
    );
}
