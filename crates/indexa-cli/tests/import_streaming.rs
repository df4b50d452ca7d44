//! `indexa import` reading its file incrementally: JSON array structure, chunked commits,
//! the warning for indexes that match nothing, and export files imported without --format.

mod common;

use common::Env;

fn error_of(env: &Env, args: &[&str]) -> String {
    let run = env.run(args);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (1, ""),
        "{args:?}: {run:?}"
    );
    run.stderr
}

#[test]
fn array_elements_are_split_at_top_level_commas_only() {
    let env = Env::new();
    let file = env.file(
        "a.json",
        "\u{feff} [ {\"s\":\"a,]}\\\"[\",\"n\":[1,[2,{\"x\":\"]\"}]]} ,\r\n\"é\", [ ] ,{\"$date\":5}\n ]\n\n",
    );
    let run = env.run(&[
        "import",
        "db",
        "s",
        file.to_str().unwrap(),
        "--auto-increment",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        env.ok(&["query", "db", "s", "--values-only"]),
        "{\"s\":\"a,]}\\\"[\",\"n\":[1,[2,{\"x\":\"]\"}]]}\n\"é\"\n[]\n{\"$date\":5}\n"
    );
    let empty = env.file("empty.json", " [ ] ");
    let run = env.run(&[
        "import",
        "db",
        "t",
        empty.to_str().unwrap(),
        "--auto-increment",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(env.ok(&["query", "db", "t", "--count"]), "0\n");
}

#[test]
fn a_broken_array_imports_nothing() {
    let env = Env::new();
    for (text, message) in [
        (
            &b"[1, 2"[..],
            "the array is not closed (the file ends at byte 5)",
        ),
        (b"[1, 2] 3", "unexpected text after the array at byte 7"),
        // Review finding 7: after a one-element array the byte after `]` was skipped.
        (
            b"[{\"id\":1}]]",
            "unexpected text after the array at byte 10",
        ),
        (
            b"[{\"id\":1}]x",
            "unexpected text after the array at byte 10",
        ),
        (b"[1] ]", "unexpected text after the array at byte 4"),
        (b"[]x", "unexpected text after the array at byte 2"),
        (b"[1, , 2]", "expected a value at byte 4"),
        (b"[1, \"x\xff\"]", "not UTF-8 text (byte 6)"),
    ] {
        let file = env.dir.path().join("bad.json");
        std::fs::write(&file, text).unwrap();
        let text = String::from_utf8_lossy(text);
        let shown = file.display();
        assert_eq!(
            error_of(
                &env,
                &[
                    "import",
                    "db",
                    "s",
                    file.to_str().unwrap(),
                    "--auto-increment"
                ]
            ),
            format!("indexa: SyntaxError: {shown}: {message}\n"),
            "{text}"
        );
        assert_eq!(env.ok(&["list"]), "", "{text}");
    }
}

/// Review finding 8: with `--commit-every`, a file whose first chunk looks like an export file
/// but whose later records do not is imported (the first chunk grows until the first record
/// of another shape), and chunks are committed from there on; a file that is all export
/// records is refused with nothing committed.
#[test]
fn commit_every_decides_about_export_files_before_committing() {
    let env = Env::new();
    let file = env.file(
        "r.ndjson",
        &[
            r#"{"key":1,"value":"a"}"#,
            r#"{"key":2,"value":"b"}"#,
            r#"{"key":3,"value":"c"}"#,
            r#"{"k":10}"#,
            r#"{"k":11}"#,
            r#"{"k":12}"#,
            r#"{"k":{}}"#,
        ]
        .join("\n"),
    );
    let args = [
        "import",
        "db",
        "s",
        file.to_str().unwrap(),
        "--key-path",
        "k",
        "--auto-increment",
        "--commit-every",
        "2",
    ];
    assert_eq!(
        error_of(&env, &args),
        "indexa: DataError: record 7: key path \"k\" yielded a value that is not a valid key\n"
    );
    // Chunks of records 1–4 and 5–6 were committed; the failing chunk was rolled back.
    assert_eq!(
        env.ok(&["query", "db", "s", "--keys-only"]),
        "{\"key\":1,\"primaryKey\":1}\n{\"key\":2,\"primaryKey\":2}\n{\"key\":3,\"primaryKey\":3}\n{\"key\":10,\"primaryKey\":10}\n{\"key\":11,\"primaryKey\":11}\n{\"key\":12,\"primaryKey\":12}\n"
    );
    let export = env.file(
        "e.ndjson",
        "{\"key\":1,\"value\":\"a\"}\n{\"key\":2,\"value\":\"b\"}\n{\"key\":3,\"value\":\"c\"}\n",
    );
    let shown = export.display();
    assert_eq!(
        error_of(
            &env,
            &[
                "import",
                "db",
                "t",
                export.to_str().unwrap(),
                "--auto-increment",
                "--commit-every",
                "1"
            ]
        ),
        format!("indexa: DataError: every record of {shown} is {{\"key\":…,\"value\":…}}, as `indexa export` writes: import it with --format export (or --format ndjson to store the records as they are)\n")
    );
    // No store t, no version bump.
    assert_eq!(env.ok(&["list"]), "db\t1\n");
}

#[test]
fn commit_every_keeps_the_chunks_before_a_failure() {
    let env = Env::new();
    let lines: Vec<String> = (1..=7)
        .map(|i| {
            if i == 6 {
                "{}".to_owned()
            } else {
                format!("{{\"id\":{i}}}")
            }
        })
        .collect();
    let file = env.file("r.ndjson", &lines.join("\n"));
    let args = [
        "import",
        "db",
        "s",
        file.to_str().unwrap(),
        "--key-path",
        "id",
    ];
    // All or nothing by default.
    assert_eq!(
        error_of(&env, &args),
        "indexa: DataError: record 6: key path \"id\" yielded no key\n"
    );
    assert_eq!(env.ok(&["list"]), "");
    // In chunks of 2: records 1-4 are committed, the chunk holding record 6 is not.
    let mut chunked = args.to_vec();
    chunked.extend(["--commit-every", "2"]);
    assert_eq!(
        error_of(&env, &chunked),
        "indexa: DataError: record 6: key path \"id\" yielded no key\n"
    );
    assert_eq!(
        env.ok(&["query", "db", "s", "--keys-only"]).lines().count(),
        4
    );
    let good = env.file(
        "g.ndjson",
        &(10..=14)
            .map(|i| format!("{{\"id\":{i}}}"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
    let run = env.run(&[
        "import",
        "db",
        "s",
        good.to_str().unwrap(),
        "--commit-every",
        "2",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr.starts_with("imported 5 records into db/s in "),
        "{}",
        run.stderr
    );
    assert_eq!(env.ok(&["query", "db", "s", "--count"]), "9\n");
}

#[test]
fn an_index_that_matches_no_record_is_warned_about() {
    let env = Env::new();
    let file = env.file("p.json", r#"[{"id":1,"name":"Ada"},{"id":2,"name":"Bob"}]"#);
    let run = env.run(&[
        "import",
        "db",
        "p",
        file.to_str().unwrap(),
        "--key-path",
        "id",
        "--index",
        "name",
        "--index",
        "by_team=team",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(
        lines[0],
        "indexa: warning: index \"by_team\" (key path \"team\") matched no record of db/p"
    );
    assert!(
        lines[1].starts_with("imported 2 records into db/p in "),
        "{}",
        lines[1]
    );
    assert_eq!(lines.len(), 2);
}

#[test]
fn an_export_file_without_format_export_is_a_data_error() {
    let env = Env::new();
    let file = env.file(
        "e.ndjson",
        "{\"key\":1,\"value\":\"a\"}\n{\"value\":\"b\",\"key\":2}\n",
    );
    let shown = file.display();
    assert_eq!(
        error_of(&env, &["import", "db", "s", file.to_str().unwrap(), "--auto-increment"]),
        format!("indexa: DataError: every record of {shown} is {{\"key\":…,\"value\":…}}, as `indexa export` writes: import it with --format export (or --format ndjson to store the records as they are)\n")
    );
    assert_eq!(env.ok(&["list"]), "");
    // A store that cannot take them as they are: the first failure names the remedy too.
    assert_eq!(
        error_of(&env, &["import", "db", "s", file.to_str().unwrap()]),
        format!("indexa: DataError: record 1: DataError: the object store uses out-of-line keys and has no key generator, and no key was given: every record of {shown} is {{\"key\":…,\"value\":…}}, as `indexa export` writes: import it with --format export (or --format ndjson to store the records as they are)\n")
    );
    assert_eq!(env.ok(&["list"]), "");
    env.ok(&[
        "import",
        "db",
        "as_is",
        file.to_str().unwrap(),
        "--auto-increment",
        "--format",
        "ndjson",
    ]);
    assert_eq!(
        env.ok(&["get", "db", "as_is", "1"]),
        "{\"key\":1,\"value\":\"a\"}\n"
    );
    env.ok(&[
        "import",
        "db",
        "exported",
        file.to_str().unwrap(),
        "--format",
        "export",
    ]);
    assert_eq!(env.ok(&["get", "db", "exported", "2"]), "\"b\"\n");
    // One record of another shape and the file is an ordinary one.
    let mixed = env.file("m.ndjson", "{\"key\":1,\"value\":\"a\"}\n{\"k\":2}\n");
    env.ok(&[
        "import",
        "db",
        "mixed",
        mixed.to_str().unwrap(),
        "--auto-increment",
    ]);
    assert_eq!(env.ok(&["query", "db", "mixed", "--count"]), "2\n");
}
