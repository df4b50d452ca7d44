//! The command-line reproductions of files that are not what they seem: a FIFO, a symbolic
//! link and damaged files under a database's file name, and a data directory named like a
//! SQLite URI. No command hangs, and each names what is wrong.

#![cfg(unix)]

mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Env, Run};

/// Runs `indexa ARGS…` in `cwd` with `input` on its standard input, and fails the test if
/// it has not exited within 20 seconds.
fn run_within_deadline(cwd: &Path, args: &[&str], input: &str) -> Run {
    let mut child = Command::new(env!("CARGO_BIN_EXE_indexa"))
        .args(args)
        .current_dir(cwd)
        .env_remove("INDEXA_DATA_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let _ = stdin.write_all(input.as_bytes());
    drop(stdin);
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("indexa {args:?} blocked");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let out = child.wait_with_output().unwrap();
    Run {
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
        code: out.status.code().unwrap(),
    }
}

/// `indexa --data-dir DATA ARGS…` with a deadline.
fn run(env: &Env, args: &[&str]) -> Run {
    let data = env.data_dir();
    let mut all = vec!["--data-dir", data.to_str().unwrap()];
    all.extend_from_slice(args);
    run_within_deadline(env.dir.path(), &all, "")
}

/// A database `db` with store `s` holding key 1 → "one".
fn good(env: &Env) {
    env.expect_batch(
        "good",
        &[],
        "{\"op\":\"createObjectStore\",\"name\":\"s\"}\n{\"op\":\"put\",\"store\":\"s\",\"key\":1,\"value\":\"one\"}\n",
        &[
            r#"{"result":null}"#,
            r#"{"result":1}"#,
            r#"{"transaction":"committed"}"#,
        ],
        0,
    );
}

#[test]
fn a_fifo_hangs_no_command() {
    let env = Env::sqlite();
    good(&env);
    let fifo = env.data_dir().join("db-f.indexa");
    assert!(Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap()
        .success());
    let expected = format!(
        "indexa: UnknownError: {} is a FIFO, not a regular file, so it is not an Indexa database; it was left as it is\n",
        fifo.display()
    );
    // `list` lists the good database and names the FIFO (exit status 1).
    let list = run(&env, &["list"]);
    assert_eq!(
        (list.code, list.stdout.as_str(), list.stderr.as_str()),
        (1, "good\t1\n", expected.as_str())
    );
    let get = run(&env, &["get", "good", "s", "1"]);
    assert_eq!((get.code, get.stdout.as_str()), (0, "\"one\"\n"));
    for args in [
        &["info", "f"][..],
        &["get", "f", "s", "1"],
        &["export", "f", "s"],
        &["query", "f", "s", "--count"],
        &["drop", "f"],
    ] {
        let r = run(&env, args);
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (1, expected.as_str()),
            "{args:?}"
        );
    }
    let drop = run(&env, &["drop", "good"]);
    assert_eq!((drop.code, drop.stderr.as_str()), (0, ""));
}

#[test]
fn a_symlink_is_neither_written_nor_dropped() {
    let env = Env::sqlite();
    good(&env);
    let target = env.dir.path().join("elsewhere");
    std::fs::write(&target, b"").unwrap();
    let link = env.data_dir().join("db-x.indexa");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let expected = format!(
        "{} is a symbolic link; database files must be regular files inside the data directory, so it was left as it is",
        link.display()
    );
    let (lines, code) = env.batch("x", &[], "{\"op\":\"createObjectStore\",\"name\":\"s\"}\n");
    assert_eq!(code, 1);
    assert_eq!(
        lines,
        [format!(
            "{{\"error\":{{\"name\":\"UnknownError\",\"message\":{}}}}}",
            serde_json::to_string(&expected).unwrap()
        )]
    );
    let r = run(&env, &["drop", "x"]);
    assert_eq!(
        (r.code, r.stderr),
        (1, format!("indexa: UnknownError: {expected}\n"))
    );
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(std::fs::read(&target).unwrap(), b"");
    assert!(!env.dir.path().join("elsewhere-wal").exists());
}

#[test]
fn damaged_files_are_reported_not_missing() {
    let env = Env::sqlite();
    good(&env);
    let garbage = env.data_dir().join("db-g.indexa");
    std::fs::write(&garbage, vec![0x5Au8; 8192]).unwrap();
    let expected = format!(
        "indexa: UnknownError: {} is not an Indexa database (storage failure: file is not a database); it was left as it is\n",
        garbage.display()
    );
    for args in [
        &["info", "g"][..],
        &["get", "g", "s", "1"],
        &["export", "g", "s"],
    ] {
        let r = run(&env, args);
        assert_eq!(
            (r.code, r.stderr.as_str()),
            (1, expected.as_str()),
            "{args:?}"
        );
    }
    let dir = env.data_dir().join("db-d.indexa");
    std::fs::create_dir(&dir).unwrap();
    let r = run(&env, &["info", "d"]);
    assert_eq!(
        (r.code, r.stderr),
        (
            1,
            format!(
                "indexa: UnknownError: {} is a directory, not a regular file, so it is not an Indexa database; it was left as it is\n",
                dir.display()
            )
        )
    );
    // A missing database is still NotFoundError.
    let r = run(&env, &["info", "missing"]);
    assert_eq!(
        (r.code, r.stderr),
        (
            1,
            format!(
                "indexa: NotFoundError: database \"missing\" does not exist in {}\n",
                env.place()
            )
        )
    );
}

#[test]
fn a_data_directory_named_file_colon_is_a_path() {
    let env = Env::sqlite();
    let cwd = env.dir.path();
    for db in ["a", "b"] {
        let script = format!(
            "{{\"op\":\"createObjectStore\",\"name\":\"s\"}}\n{{\"op\":\"put\",\"store\":\"s\",\"key\":1,\"value\":\"{db}\"}}\n"
        );
        let r = run_within_deadline(cwd, &["--data-dir", "file:d2#", "batch", db], &script);
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    }
    for db in ["a", "b"] {
        let r = run_within_deadline(cwd, &["--data-dir", "file:d2#", "get", db, "s", "1"], "");
        assert_eq!(r.stdout, format!("\"{db}\"\n"));
    }
    let mut files: Vec<_> = std::fs::read_dir(cwd.join("file:d2#"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".indexa"))
        .collect();
    files.sort();
    assert_eq!(files, ["db-a.indexa", "db-b.indexa"]);
    let outside: Vec<_> = std::fs::read_dir(cwd)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(outside, ["file:d2#"]);
}
