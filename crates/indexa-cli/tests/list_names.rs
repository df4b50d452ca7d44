//! `indexa list` never lets a database name forge a line or a column: plain names print as
//! they are, others as JSON strings.

mod common;

use common::Env;

#[test]
fn list_quotes_names_that_could_forge_lines() {
    let env = Env::new();
    let names = [
        "plain",
        "with space é",
        "a\tb",
        "x\ny\tz 9",
        "\"quoted",
        "back\\slash",
        "bell\u{7}",
        "line\u{2028}sep",
    ];
    for name in names {
        env.expect_batch(
            name,
            &[],
            "{\"op\":\"createObjectStore\",\"name\":\"s\"}\n",
            &[r#"{"result":null}"#, r#"{"transaction":"committed"}"#],
            0,
        );
    }
    let run = env.run(&["list"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    assert_eq!(
        run.stdout,
        concat!(
            "\"\\\"quoted\"\t1\n",
            "\"a\\tb\"\t1\n",
            "\"back\\\\slash\"\t1\n",
            "\"bell\\u0007\"\t1\n",
            "\"line\u{2028}sep\"\t1\n",
            "plain\t1\n",
            "with space é\t1\n",
            "\"x\\ny\\tz 9\"\t1\n",
        )
    );
    // Every line has exactly one tab outside the quoted name, and quoted names read back.
    let mut read_back = Vec::new();
    for line in run.stdout.lines() {
        let (name, version) = line.rsplit_once('\t').unwrap();
        assert_eq!(version, "1");
        read_back.push(if name.starts_with('"') {
            serde_json::from_str::<String>(name).unwrap()
        } else {
            name.to_owned()
        });
    }
    read_back.sort();
    let mut expected: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    expected.sort();
    assert_eq!(read_back, expected);
}

/// `indexa --data-dir DIR ARGS…`.
fn indexa(dir: &std::path::Path, args: &[&str]) -> common::Run {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_indexa"))
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .env_remove("INDEXA_DATA_DIR")
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    common::Run {
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
        code: out.status.code().unwrap(),
    }
}

#[test]
fn a_data_directory_reached_through_a_link_works() {
    let env = Env::new();
    let real = env.dir.path().join("real");
    let link = env.dir.path().join("rl");
    std::fs::create_dir(&real).unwrap();
    std::os::unix::fs::symlink(&real, &link).unwrap();
    let run = indexa(&link, &["create-store", "newdb", "s"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    let run = indexa(&link, &["put", "newdb", "s", "\"one\"", "--key", "1"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    for dir in [&link, &real] {
        let run = indexa(dir, &["list"]);
        assert_eq!(
            (run.code, run.stdout.as_str()),
            (0, "newdb\t1\n"),
            "{run:?}"
        );
        let run = indexa(dir, &["get", "newdb", "s", "1"]);
        assert_eq!((run.code, run.stdout.as_str()), (0, "\"one\"\n"), "{run:?}");
    }
}

#[test]
fn list_names_the_files_it_cannot_read_and_fails() {
    // SQLite-only: files in the data directory that are not databases.
    let env = Env::sqlite();
    env.expect_batch(
        "good",
        &[],
        "{\"op\":\"createObjectStore\",\"name\":\"s\"}\n",
        &[r#"{"result":null}"#, r#"{"transaction":"committed"}"#],
        0,
    );
    let garbage = env.data_dir().join("db-g.indexa");
    std::fs::write(&garbage, vec![0x5Au8; 8192]).unwrap();
    let link = env.data_dir().join("db-x.indexa");
    std::os::unix::fs::symlink(env.dir.path().join("elsewhere"), &link).unwrap();
    let run = env.run(&["list"]);
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr),
        (
            1,
            "good\t1\n",
            format!(
                "indexa: UnknownError: {} is not a readable Indexa database (storage failure: file is not a database); it was left as it is\n\
                 indexa: UnknownError: {} is a symbolic link; database files must be regular files inside the data directory, so it was left as it is\n",
                garbage.display(),
                link.display()
            )
        )
    );
}
