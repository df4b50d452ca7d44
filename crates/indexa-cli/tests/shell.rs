//! `indexa shell` driven through standard input (no terminal: no prompts).

mod common;

use common::{script, Env};

fn setup(env: &Env) {
    let run = env.run(&["create-store", "db", "s"]);
    assert_eq!(run.code, 0, "{run:?}");
}

#[test]
fn each_line_is_its_own_transaction_and_errors_never_end_the_shell() {
    let env = Env::new();
    setup(&env);
    let run = env.run_with_input(
        &["shell", "db"],
        &script(&[
            r#"{"op":"put","store":"s","value":"a","key":1}"#,
            r#"{"op":"add","store":"s","value":"b","key":1}"#,
            "",
            "not json",
            ".count s",
            ".count nope",
            ".stores",
            ".schema",
            ".bogus",
            r#"{"op":"get","store":"s","query":1}"#,
        ]),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stderr, "");
    assert_eq!(
        run.lines(),
        [
            r#"{"result":1}"#,
            r#"{"error":{"name":"ConstraintError","message":"a record with key 1 already exists"}}"#,
            r#"{"error":{"name":"SyntaxError","message":"expected a value at byte 0"}}"#,
            "1",
            r#"{"error":{"name":"NotFoundError","message":"no object store named \"nope\""}}"#,
            "s",
            "# database db, version 1",
            "create-store db s",
            r#"{"error":{"name":"SyntaxError","message":"unknown command \".bogus\" (.help lists the commands)"}}"#,
            r#"{"result":"a"}"#,
        ]
    );
}

#[test]
fn begin_and_commit_share_one_transaction_and_abort_undoes_it() {
    let env = Env::new();
    setup(&env);
    let run = env.run_with_input(
        &["shell", "db"],
        &script(&[
            ".begin",
            r#"{"op":"put","store":"s","value":"a","key":1}"#,
            ".count s",
            r#"{"op":"count","store":"s"}"#,
            ".commit",
            ".begin",
            r#"{"op":"put","store":"s","value":"b","key":2}"#,
            ".abort",
            ".count s",
            ".commit",
            ".begin readonly",
            r#"{"op":"put","store":"s","value":"c","key":3}"#,
            ".abort",
            ".count s",
            ".begin",
            r#"{"op":"put","store":"s","value":"d","key":4}"#,
        ]),
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.lines(),
        [
            r#"{"result":1}"#,
            r#"{"error":{"name":"InvalidStateError","message":".count s is not available inside a transaction: .commit or .abort first"}}"#,
            r#"{"result":1}"#,
            r#"{"result":null}"#,
            r#"{"transaction":"committed"}"#,
            r#"{"result":2}"#,
            r#"{"result":null}"#,
            r#"{"transaction":"aborted"}"#,
            "1",
            r#"{"error":{"name":"InvalidStateError","message":".commit: no transaction was begun (.begin)"}}"#,
            r#"{"error":{"name":"ReadOnlyError","message":"the transaction is readonly"}}"#,
            r#"{"transaction":"aborted"}"#,
            // `.abort` ends the transaction the error aborted.
            r#"{"transaction":"aborted"}"#,
            "1",
            // The input ends inside a transaction: it is aborted.
            r#"{"result":4}"#,
            r#"{"result":null}"#,
            r#"{"transaction":"aborted"}"#,
        ]
    );
    let get = env.run(&["query", "db", "s", "--keys-only"]);
    assert_eq!(get.stdout, "{\"key\":1,\"primaryKey\":1}\n");
}

/// Review finding 3: after an error inside `.begin` (here NotFoundError, and ReadOnlyError in
/// `.begin readonly`), the following lines are answered with an error instead of running one
/// by one, until `.commit` (AbortError: nothing was committed) or `.abort`; the protocol's
/// `commit` and `abort` ops end the transaction like `.commit` and `.abort`.
#[test]
fn after_an_error_inside_begin_nothing_runs_until_commit_or_abort() {
    let env = Env::new();
    setup(&env);
    let run = env.run_with_input(
        &["shell", "db"],
        &script(&[
            ".begin",
            r#"{"op":"put","store":"s","value":"a","key":1}"#,
            r#"{"op":"put","store":"nope","value":"x","key":9}"#,
            r#"{"op":"put","store":"s","value":"b","key":2}"#,
            ".count s",
            ".commit",
            r#"{"op":"put","store":"s","value":"c","key":3}"#,
            ".begin readonly",
            r#"{"op":"put","store":"s","value":"d","key":4}"#,
            r#"{"op":"put","store":"s","value":"e","key":5}"#,
            ".abort",
            ".begin",
            r#"{"op":"put","store":"s","value":"f","key":6}"#,
            r#"{"op":"commit"}"#,
            r#"{"op":"put","store":"s","value":"g","key":7}"#,
            ".begin",
            r#"{"op":"put","store":"s","value":"h","key":8}"#,
            r#"{"op":"abort"}"#,
            r#"{"op":"getAllKeys","store":"s"}"#,
        ]),
    );
    assert_eq!((run.stderr.as_str(), run.code), ("", 0));
    let aborted_state = r#"{"error":{"name":"InvalidStateError","message":"the transaction was aborted; .abort to end it"}}"#;
    assert_eq!(
        run.lines(),
        [
            r#"{"result":1}"#,
            r#"{"error":{"name":"NotFoundError","message":"no object store named \"nope\""}}"#,
            r#"{"transaction":"aborted"}"#,
            aborted_state,
            aborted_state,
            r#"{"error":{"name":"AbortError","message":".commit: the transaction was aborted by the error above; nothing was committed"}}"#,
            r#"{"result":3}"#,
            r#"{"error":{"name":"ReadOnlyError","message":"the transaction is readonly"}}"#,
            r#"{"transaction":"aborted"}"#,
            aborted_state,
            r#"{"transaction":"aborted"}"#,
            r#"{"result":6}"#,
            r#"{"result":null}"#,
            r#"{"transaction":"committed"}"#,
            r#"{"result":7}"#,
            r#"{"result":8}"#,
            r#"{"result":null}"#,
            r#"{"transaction":"aborted"}"#,
            r#"{"result":[3,6,7]}"#,
        ]
    );
}

#[test]
fn a_missing_database_is_not_found() {
    let env = Env::new();
    let run = env.run_with_input(&["shell", "nope"], ".stores\n");
    assert_eq!((run.code, run.stdout.as_str()), (1, ""));
    assert!(
        run.stderr
            .starts_with("indexa: NotFoundError: database \"nope\" does not exist"),
        "{}",
        run.stderr
    );
    assert_eq!(env.run(&["list"]).stdout, "", "nothing was created");
    if !common::on_postgres() {
        assert!(!env.data_dir().join("db-nope.indexa").exists());
    }
}

#[test]
fn quit_ends_the_shell() {
    let env = Env::new();
    setup(&env);
    let run = env.run_with_input(&["shell", "db"], &script(&[".quit", ".stores"]));
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
}
