//! `indexa query --format ndjson|json|table|csv`, `--offset`, `--values-only`.

mod common;

use common::Env;

fn setup(env: &Env) {
    let file = env.file(
        "p.json",
        r#"[{"id":1,"name":"Ada","tags":["m","e"]},{"id":2,"name":"Grace \"G\", RN"},{"id":3,"name":"Edsger","extra":true}]"#,
    );
    let run = env.run(&[
        "import",
        "db",
        "p",
        file.to_str().unwrap(),
        "--key-path",
        "id",
        "--index",
        "name",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

fn ok(env: &Env, args: &[&str]) -> String {
    let run = env.run(args);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{args:?}");
    run.stdout
}

#[test]
fn ndjson_is_the_default_and_values_only_prints_values() {
    let env = Env::new();
    setup(&env);
    assert_eq!(
        ok(&env, &["query", "db", "p", "--limit", "1"]),
        ok(
            &env,
            &["query", "db", "p", "--limit", "1", "--format", "ndjson"]
        )
    );
    assert_eq!(
        ok(&env, &["query", "db", "p", "--values-only", "--offset", "1"]),
        "{\"id\":2,\"name\":\"Grace \\\"G\\\", RN\"}\n{\"id\":3,\"name\":\"Edsger\",\"extra\":true}\n"
    );
}

#[test]
fn json_is_one_array() {
    let env = Env::new();
    setup(&env);
    assert_eq!(
        ok(&env, &["query", "db", "p", "--format", "json", "--keys-only", "--index", "name"]),
        "[{\"key\":\"Ada\",\"primaryKey\":1},{\"key\":\"Edsger\",\"primaryKey\":3},{\"key\":\"Grace \\\"G\\\", RN\",\"primaryKey\":2}]\n"
    );
    assert_eq!(
        ok(
            &env,
            &["query", "db", "p", "--format", "json", "--offset", "9"]
        ),
        "[]\n"
    );
    assert_eq!(
        ok(
            &env,
            &[
                "query",
                "db",
                "p",
                "--format",
                "json",
                "--values-only",
                "--limit",
                "1",
                "--offset",
                "2"
            ]
        ),
        "[{\"id\":3,\"name\":\"Edsger\",\"extra\":true}]\n"
    );
}

#[test]
fn csv_has_a_header_from_the_first_record() {
    let env = Env::new();
    setup(&env);
    assert_eq!(
        ok(&env, &["query", "db", "p", "--format", "csv"]),
        "key,primaryKey,id,name,tags\n\
         1,1,1,Ada,\"[\"\"m\"\",\"\"e\"\"]\"\n\
         2,2,2,\"Grace \"\"G\"\", RN\",\n\
         3,3,3,Edsger,\n"
    );
    assert_eq!(
        ok(
            &env,
            &[
                "query",
                "db",
                "p",
                "--format",
                "csv",
                "--values-only",
                "--offset",
                "2"
            ]
        ),
        "id,name,extra\n3,Edsger,true\n"
    );
    assert_eq!(
        ok(
            &env,
            &[
                "query",
                "db",
                "p",
                "--format",
                "csv",
                "--keys-only",
                "--index",
                "name",
                "--limit",
                "1"
            ]
        ),
        "key,primaryKey\nAda,1\n"
    );
}

#[test]
fn table_is_aligned() {
    let env = Env::new();
    setup(&env);
    assert_eq!(
        ok(
            &env,
            &[
                "query",
                "db",
                "p",
                "--format",
                "table",
                "--index",
                "name",
                "--direction",
                "prev"
            ]
        ),
        // The columns come from the first record printed (Grace, without tags).
        "key            primaryKey  id  name\n\
         -------------  ----------  --  -------------\n\
         Grace \"G\", RN  2           2   Grace \"G\", RN\n\
         Edsger         3           3   Edsger\n\
         Ada            1           1   Ada\n"
    );
}

/// Review finding 11: control characters in cells and column names are shown as JSON escapes,
/// so every row of a table is one line; widths count characters of the escaped text.
#[test]
fn table_cells_escape_control_characters() {
    let env = Env::new();
    let file = env.file(
        "c.json",
        r#"[{"id":1,"a\nb":"two\nlines","t":"tab\there"},{"id":2,"a\nb":"esc\u001b[31m red\r","t":"back\\slash \b\f\u007f\u0085"}]"#,
    );
    let run = env.run(&[
        "import",
        "db",
        "c",
        file.to_str().unwrap(),
        "--key-path",
        "id",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        ok(
            &env,
            &["query", "db", "c", "--format", "table", "--values-only"]
        ),
        "id  a\\nb                 t\n\
         --  -------------------  ---------------------------\n\
         1   two\\nlines           tab\\there\n\
         2   esc\\u001b[31m red\\r  back\\slash \\b\\f\\u007f\\u0085\n"
    );
}

#[test]
fn bad_input() {
    let env = Env::new();
    setup(&env);
    let run = env.run(&["query", "db", "nope", "--format", "csv"]);
    assert_eq!((run.code, run.stdout.as_str()), (1, ""));
    assert!(
        run.stderr.starts_with("indexa: NotFoundError: "),
        "{}",
        run.stderr
    );
    let run = env.run(&["query", "nodb", "p", "--format", "table"]);
    assert_eq!((run.code, run.stdout.as_str()), (1, ""));
    assert!(
        run.stderr
            .starts_with("indexa: NotFoundError: database \"nodb\""),
        "{}",
        run.stderr
    );
    for args in [
        &["query", "db", "p", "--format", "xml"][..],
        &["query", "db", "p", "--keys-only", "--values-only"],
        &["query", "db", "p", "--count", "--offset", "1"],
        &["query", "db", "p", "--offset", "-1"],
    ] {
        assert_eq!(env.run(args).code, 2, "{args:?}");
    }
}
