//! `indexa schema` and the schema-change commands, through the binary.

mod common;

use common::Env;

fn ok(env: &Env, args: &[&str]) -> String {
    let run = env.run(args);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{args:?}");
    run.stdout
}

fn fails(env: &Env, args: &[&str], stderr: &str) {
    let run = env.run(args);
    assert_eq!(run.code, 1, "{args:?}: {run:?}");
    assert_eq!(run.stdout, "", "{args:?}");
    assert_eq!(run.stderr, stderr, "{args:?}");
}

#[test]
fn each_change_is_one_upgrade_and_schema_prints_commands() {
    let env = Env::new();
    assert_eq!(
        ok(&env, &["create-store", "db", "people", "--key-path", "id"]),
        ""
    );
    assert_eq!(
        ok(&env, &["create-store", "db", "log", "--auto-increment"]),
        ""
    );
    assert_eq!(
        ok(&env, &["create-store", "db", "pairs", "--key-path", "a,b"]),
        ""
    );
    assert_eq!(
        ok(
            &env,
            &[
                "create-index",
                "db",
                "people",
                "by_name",
                "name",
                "--unique"
            ]
        ),
        ""
    );
    assert_eq!(
        ok(
            &env,
            &[
                "create-index",
                "db",
                "people",
                "tags",
                "tags",
                "--multi-entry"
            ]
        ),
        ""
    );
    assert_eq!(ok(&env, &["create-index", "db", "people", "whole", ""]), "");
    assert_eq!(ok(&env, &["list"]), "db\t6\n");
    assert_eq!(
        ok(&env, &["schema", "db"]),
        "# database db, version 6\n\
         create-store db log --auto-increment\n\
         create-store db pairs --key-path a,b\n\
         create-store db people --key-path id\n\
         create-index db people by_name name --unique\n\
         create-index db people tags tags --multi-entry\n\
         create-index db people whole ''\n"
    );
    assert_eq!(
        ok(
            &env,
            &[
                "put",
                "db",
                "people",
                r#"{"id":1,"name":"Ada","tags":["a","b"]}"#
            ]
        ),
        "1\n"
    );
    assert_eq!(
        ok(&env, &["rename-index", "db", "people", "tags", "labels"]),
        ""
    );
    assert_eq!(ok(&env, &["rename-store", "db", "people", "persons"]), "");
    assert_eq!(ok(&env, &["delete-index", "db", "persons", "whole"]), "");
    assert_eq!(ok(&env, &["delete-store", "db", "pairs"]), "");
    assert_eq!(
        ok(&env, &["schema", "db"]),
        "# database db, version 10\n\
         create-store db log --auto-increment\n\
         create-store db persons --key-path id\n\
         create-index db persons by_name name --unique\n\
         create-index db persons labels tags --multi-entry\n"
    );
    // The renamed index still holds the record's entries.
    assert_eq!(
        ok(
            &env,
            &["query", "db", "persons", "--index", "labels", "--keys-only"]
        ),
        "{\"key\":\"a\",\"primaryKey\":1}\n{\"key\":\"b\",\"primaryKey\":1}\n"
    );
}

#[test]
fn a_unique_index_over_duplicates_fails_and_changes_nothing() {
    let env = Env::new();
    ok(&env, &["create-store", "db", "s", "--key-path", "id"]);
    ok(&env, &["put", "db", "s", r#"{"id":1,"c":"x"}"#]);
    ok(&env, &["put", "db", "s", r#"{"id":2,"c":"x"}"#]);
    let run = env.run(&["create-index", "db", "s", "by_c", "c", "--unique"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with("indexa: ConstraintError: "),
        "{}",
        run.stderr
    );
    assert_eq!(
        ok(&env, &["schema", "db"]),
        "# database db, version 1\ncreate-store db s --key-path id\n"
    );
}

#[test]
fn bad_input_gets_spec_errors_and_changes_nothing() {
    let env = Env::new();
    ok(&env, &["create-store", "db", "s"]);
    ok(&env, &["create-index", "db", "s", "i", "x"]);
    let missing_db = |_cmd: &str| {
        format!(
            "indexa: NotFoundError: database \"nope\" does not exist in {}\n",
            env.place()
        )
    };
    for args in [
        vec!["schema", "nope"],
        vec!["delete-store", "nope", "s"],
        vec!["rename-store", "nope", "s", "t"],
        vec!["create-index", "nope", "s", "i", "x"],
        vec!["delete-index", "nope", "s", "i"],
        vec!["rename-index", "nope", "s", "i", "j"],
    ] {
        fails(&env, &args, &missing_db(args[0]));
    }
    let run = env.run(&["delete-store", "db", "t"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with("indexa: NotFoundError: "),
        "{}",
        run.stderr
    );
    let run = env.run(&["create-index", "db", "t", "i", "x"]);
    assert!(
        run.stderr.starts_with("indexa: NotFoundError: "),
        "{}",
        run.stderr
    );
    let run = env.run(&["rename-index", "db", "s", "nope", "j"]);
    assert!(
        run.stderr.starts_with("indexa: NotFoundError: "),
        "{}",
        run.stderr
    );
    let run = env.run(&["create-store", "db", "s"]);
    assert!(
        run.stderr.starts_with("indexa: ConstraintError: "),
        "{}",
        run.stderr
    );
    let run = env.run(&["create-index", "db", "s", "i", "y"]);
    assert!(
        run.stderr.starts_with("indexa: ConstraintError: "),
        "{}",
        run.stderr
    );
    let run = env.run(&[
        "create-store",
        "db",
        "g",
        "--key-path",
        "a,b",
        "--auto-increment",
    ]);
    assert!(
        run.stderr.starts_with("indexa: InvalidAccessError: "),
        "{}",
        run.stderr
    );
    let run = env.run(&["create-index", "db", "s", "k", "a b"]);
    assert!(
        run.stderr.starts_with("indexa: SyntaxError: "),
        "{}",
        run.stderr
    );
    assert_eq!(
        ok(&env, &["schema", "db"]),
        "# database db, version 2\ncreate-store db s\ncreate-index db s i x\n"
    );
    assert_eq!(ok(&env, &["list"]), "db\t2\n");
}

#[test]
fn an_index_that_matches_no_record_is_warned_about() {
    let env = Env::new();
    ok(&env, &["create-store", "db", "s", "--key-path", "id"]);
    // No records yet: nothing to warn about.
    assert_eq!(ok(&env, &["create-index", "db", "s", "early", "nme"]), "");
    ok(&env, &["put", "db", "s", r#"{"id":1,"name":"Ada"}"#]);
    let run = env.run(&["create-index", "db", "s", "typo", "nmae"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""));
    assert_eq!(
        run.stderr,
        "indexa: warning: index \"typo\" (key path nmae) matched no record of db/s\n"
    );
    assert_eq!(ok(&env, &["create-index", "db", "s", "name", "name"]), "");
}

/// Database `odd` with object stores "\uD800" (a lone surrogate, as the Node.js package can
/// name it; its index "\uDFFF" on `a`, unique) and `plain` (its index "\uDC00" on `b`); made
/// through the engine, as no command line can carry such names.
fn lone_surrogate_names(env: &Env) {
    use indexa::{KeyPath, Utf16String};
    let unit = |u: u16| Utf16String::from_units(vec![u]);
    let factory = env.factory();
    let db = factory
        .open("odd", Some(1), |tx, _, _| {
            let store = tx.create_object_store(unit(0xD800), None, false)?;
            store.create_index(unit(0xDFFF), KeyPath::parse("a")?, true, false)?;
            let plain = tx.create_object_store("plain", None, false)?;
            plain.create_index(unit(0xDC00), KeyPath::parse("b")?, false, false)?;
            plain.create_index("by_c", KeyPath::parse("c")?, false, false)?;
            Ok(())
        })
        .unwrap();
    db.close();
}

#[test]
fn lone_surrogate_names_are_printed_in_the_text_form_on_comment_lines() {
    let env = Env::new();
    lone_surrogate_names(&env);
    let expected = [
        "# database odd, version 1",
        "create-store odd plain",
        "create-index odd plain by_c c",
        "# create-index odd plain \"\\uDC00\" b",
        "# create-store odd \"\\uD800\"",
        "# create-index odd \"\\uD800\" \"\\uDFFF\" a --unique",
    ];
    assert_eq!(ok(&env, &["schema", "odd"]), expected.join("\n") + "\n");
    let run = env.run_with_input(&["shell", "odd"], ".stores\n.schema\n");
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    let mut lines = vec!["plain", "\"\\uD800\""];
    lines.extend(expected);
    assert_eq!(run.lines(), lines);
}
