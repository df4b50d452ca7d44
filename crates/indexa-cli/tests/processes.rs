//! Several processes on one data directory: each test runs the built `indexa` binary as
//! separate child processes (RELIABILITY.md, "Several processes").

mod common;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::thread;
use std::time::Duration;

use common::{script, Env};

const COMMITTED: &str = r#"{"transaction":"committed"}"#;

/// An `indexa batch` running in its own process, its transaction open until told otherwise.
struct Batch {
    child: Child,
    input: Option<ChildStdin>,
    output: BufReader<ChildStdout>,
}

impl Batch {
    fn start(env: &Env, args: &[&str]) -> Batch {
        let mut all = vec!["batch"];
        all.extend_from_slice(args);
        Batch::spawn(env, &all)
    }

    /// Any command that reads lines and answers each (`batch`, `shell`), in its own process.
    fn spawn(env: &Env, args: &[&str]) -> Batch {
        let mut child = Command::new(env!("CARGO_BIN_EXE_indexa"))
            .arg("--data-dir")
            .arg(env.data_arg())
            .args(args)
            .env_remove("INDEXA_DATA_DIR")
            .env_remove("INDEXA_LOCK_TIMEOUT")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("run indexa batch");
        let input = child.stdin.take();
        let output = BufReader::new(child.stdout.take().expect("stdout"));
        Batch {
            child,
            input,
            output,
        }
    }

    /// Sends one op and returns the line it printed.
    fn send(&mut self, op: &str) -> String {
        let input = self.input.as_mut().expect("input open");
        writeln!(input, "{op}").unwrap();
        input.flush().unwrap();
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        line.trim_end().to_owned()
    }

    /// Commits: the op's result, then the transaction's line.
    fn commit(&mut self) -> (String, String) {
        let result = self.send(r#"{"op":"commit"}"#);
        let mut line = String::new();
        self.output.read_line(&mut line).unwrap();
        (result, line.trim_end().to_owned())
    }

    /// Ends the input and returns the remaining lines and the exit code.
    fn finish(mut self) -> (Vec<String>, i32) {
        drop(self.input.take());
        let rest: Vec<String> = self.output.lines().map(Result::unwrap).collect();
        (rest, self.child.wait().unwrap().code().unwrap())
    }
}

/// A database `x` with object store `s` holding 1 → "a", and index `by_v` on `v` in store `p`.
fn make_x(env: &Env) {
    env.expect_batch(
        "x",
        &["--version", "1"],
        &script(&[
            r#"{"op":"createObjectStore","name":"s"}"#,
            r#"{"op":"put","store":"s","value":"a","key":1}"#,
            r#"{"op":"createObjectStore","name":"p","keyPath":"id"}"#,
            r#"{"op":"createIndex","store":"p","name":"by_v","keyPath":"v"}"#,
            r#"{"op":"put","store":"p","value":{"id":1,"v":"one"}}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"result":1}"#,
            r#"{"result":null}"#,
            r#"{"result":null}"#,
            r#"{"result":1}"#,
            COMMITTED,
        ],
        0,
    );
}

/// Issue 17 item 1, the reproduction: a drop from another process while a batch holds its
/// transaction open fails after the lock timeout, and the batch's commit is kept.
#[test]
fn drop_fails_against_a_batch_open_in_another_process() {
    let env = Env::new();
    make_x(&env);
    let mut batch = Batch::start(&env, &["x"]);
    assert_eq!(
        batch.send(r#"{"op":"put","store":"s","value":"b","key":2}"#),
        r#"{"result":2}"#
    );
    let dropped = env.run(&["--lock-timeout", "0.2", "drop", "x"]);
    assert_eq!(dropped.code, 1);
    assert_eq!(
        dropped.stderr,
        "indexa: InvalidStateError: database \"x\" is open in another process; close it there first (waited 200 ms)\n"
    );
    assert_eq!(
        batch.commit(),
        (r#"{"result":null}"#.to_owned(), COMMITTED.to_owned())
    );
    let (rest, code) = batch.finish();
    assert_eq!((rest, code), (vec![], 0));
    let export = env.run(&["export", "x", "s"]);
    assert_eq!(
        export.lines(),
        vec![r#"{"key":1,"value":"a"}"#, r#"{"key":2,"value":"b"}"#]
    );
}

/// Item 1: a drop waits for the other process's connection, and deletes only after the
/// batch committed and exited (never reporting a commit for a deleted database).
#[test]
fn drop_waits_until_the_other_process_closes() {
    let env = Env::new();
    make_x(&env);
    let mut batch = Batch::start(&env, &["x"]);
    assert_eq!(
        batch.send(r#"{"op":"put","store":"s","value":"b","key":2}"#),
        r#"{"result":2}"#
    );
    let mut drop_cmd = Command::new(env!("CARGO_BIN_EXE_indexa"))
        .arg("--data-dir")
        .arg(env.data_arg())
        .args(["--lock-timeout", "60", "drop", "x"])
        .env_remove("INDEXA_DATA_DIR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    thread::sleep(Duration::from_millis(300));
    assert!(
        drop_cmd.try_wait().unwrap().is_none(),
        "the drop finished while the batch had the database open"
    );
    // The batch still reads and commits its database.
    assert_eq!(
        batch.send(r#"{"op":"get","store":"s","query":2}"#),
        r#"{"result":"b"}"#
    );
    assert_eq!(
        batch.commit(),
        (r#"{"result":null}"#.to_owned(), COMMITTED.to_owned())
    );
    assert_eq!(batch.finish(), (vec![], 0));
    let out = drop_cmd.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(env.run(&["list"]).stdout, "");
}

/// Item 1: a process that dies with the database open does not block a drop.
#[test]
fn a_killed_process_does_not_block_a_drop() {
    let env = Env::new();
    make_x(&env);
    let mut batch = Batch::start(&env, &["x"]);
    assert_eq!(
        batch.send(r#"{"op":"put","store":"s","value":"b","key":2}"#),
        r#"{"result":2}"#
    );
    batch.child.kill().unwrap();
    batch.child.wait().unwrap();
    let dropped = env.run(&["--lock-timeout", "5", "drop", "x"]);
    assert_eq!((dropped.stderr.as_str(), dropped.code), ("", 0));
    assert_eq!(env.run(&["list"]).stdout, "");
}

/// Item 2: with a readwrite batch open (holding SQLite's write lock after its first write),
/// other processes open and read the database without waiting: export sees the committed
/// records only, and a readonly batch reads.
#[test]
fn readers_in_other_processes_do_not_wait_for_a_writer() {
    let env = Env::new();
    make_x(&env);
    let mut writer = Batch::start(&env, &["x"]);
    assert_eq!(
        writer.send(r#"{"op":"put","store":"s","value":"b","key":2}"#),
        r#"{"result":2}"#
    );
    // Opening used to take SQLite's write lock, so these waited 30 s for the batch and
    // failed with "database is locked".
    let export = env.run(&["--lock-timeout", "0", "export", "x", "s"]);
    assert_eq!((export.stderr.as_str(), export.code), ("", 0));
    assert_eq!(export.lines(), vec![r#"{"key":1,"value":"a"}"#]);
    let got = env.run(&["--lock-timeout", "0", "get", "x", "s", "1"]);
    assert_eq!((got.stderr.as_str(), got.code), ("", 0));
    env.expect_batch(
        "x",
        &["--mode", "readonly", "--lock-timeout", "0"],
        &script(&[r#"{"op":"count","store":"s"}"#]),
        &[r#"{"result":1}"#, COMMITTED],
        0,
    );
    assert_eq!(
        writer.commit(),
        (r#"{"result":null}"#.to_owned(), COMMITTED.to_owned())
    );
    assert_eq!(writer.finish(), (vec![], 0));
}

/// Item 3: an upgrade from another process waits for (here: fails against) the open older
/// connection, which keeps reading through its index under the schema it opened with; once
/// it is closed the upgrade runs.
#[test]
fn an_upgrade_waits_for_older_connections_in_other_processes() {
    let env = Env::new();
    make_x(&env);
    let mut old = Batch::start(&env, &["x", "--mode", "readonly"]);
    assert_eq!(
        old.send(r#"{"op":"get","store":"p","index":"by_v","query":"one"}"#),
        r#"{"result":{"id":1,"v":"one"}}"#
    );
    let upgrade = script(&[
        r#"{"op":"deleteIndex","store":"p","name":"by_v"}"#,
        r#"{"op":"put","store":"p","value":{"id":2,"v":"two"}}"#,
    ]);
    let blocked = env.run_with_input(
        &["--lock-timeout", "0.2", "batch", "x", "--version", "2"],
        &upgrade,
    );
    assert_eq!(
        blocked.stdout,
        "{\"error\":{\"name\":\"InvalidStateError\",\"message\":\"database \\\"x\\\" is open in another process; close it there first (waited 200 ms)\"}}\n"
    );
    assert_eq!(
        old.send(r#"{"op":"get","store":"p","index":"by_v","query":"one"}"#),
        r#"{"result":{"id":1,"v":"one"}}"#
    );
    assert_eq!(old.finish(), (vec![COMMITTED.to_owned()], 0));
    env.expect_batch(
        "x",
        &["--version", "2"],
        &upgrade,
        &[r#"{"result":null}"#, r#"{"result":2}"#, COMMITTED],
        0,
    );
}

/// Item 3: processes that all create (upgrade) the same database at once do not wait for
/// each other's new connections: one upgrades, the others then find it at the version.
#[test]
fn simultaneous_upgrades_from_several_processes_all_finish() {
    let env = Env::new();
    let children: Vec<Child> = (0..8)
        .map(|_| {
            let mut child = Command::new(env!("CARGO_BIN_EXE_indexa"))
                .arg("--data-dir")
                .arg(env.data_arg())
                .args(["--lock-timeout", "30", "batch", "x", "--version", "1"])
                .env_remove("INDEXA_DATA_DIR")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap();
            drop(child.stdin.take());
            child
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!("{COMMITTED}\n")
        );
        assert_eq!(out.status.code(), Some(0));
    }
    assert_eq!(env.run(&["list"]).stdout, "x\t1\n");
}

/// Six batches adding a record to a store of a database that does not exist yet, racing three
/// `create-store` commands that create that store. A batch that comes first creates the
/// database, its `add` fails, and its aborted creation is removed; the batches queued behind
/// it then find no database or the one a `create-store` made. Whatever the order, every batch
/// that reported its commit has its record stored exactly once, under the key it printed, and
/// exactly one `create-store` made the store. Run several times, on fresh databases.
#[test]
fn batches_racing_the_creation_of_their_database_keep_every_commit() {
    let env = Env::new();
    for round in 0..15 {
        let db = format!("race{round:02}");
        let batches: Vec<(usize, Batch)> = (1..=6)
            .map(|value| {
                let mut batch = Batch::start(&env, &[&db]);
                let input = batch.input.as_mut().expect("input open");
                writeln!(input, r#"{{"op":"add","store":"s","value":{value}}}"#).unwrap();
                drop(batch.input.take());
                (value, batch)
            })
            .collect();
        let creators: Vec<Child> = (0..3)
            .map(|_| {
                Command::new(env!("CARGO_BIN_EXE_indexa"))
                    .arg("--data-dir")
                    .arg(env.data_arg())
                    .args(["create-store", &db, "s", "--auto-increment"])
                    .env_remove("INDEXA_DATA_DIR")
                    .env_remove("INDEXA_LOCK_TIMEOUT")
                    .stdin(Stdio::null())
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .expect("run indexa create-store")
            })
            .collect();
        let not_found =
            r#"{"error":{"name":"NotFoundError","message":"no object store named \"s\""}}"#;
        let mut committed = Vec::new();
        for (value, batch) in batches {
            let (lines, code) = batch.finish();
            match (lines.as_slice(), code) {
                ([result, end], 0) if end == COMMITTED => {
                    let key: u64 = result
                        .strip_prefix(r#"{"result":"#)
                        .and_then(|k| k.strip_suffix('}'))
                        .and_then(|k| k.parse().ok())
                        .unwrap_or_else(|| {
                            panic!("round {round}: batch {value} printed {lines:?}")
                        });
                    committed.push((key, value));
                }
                ([error, end], 1)
                    if error == not_found && end == r#"{"transaction":"aborted"}"# => {}
                _ => panic!("round {round}: batch {value} printed {lines:?}, exit {code}"),
            }
        }
        let mut created = 0;
        for creator in creators {
            let out = creator.wait_with_output().unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert_eq!(String::from_utf8_lossy(&out.stdout), "", "round {round}");
            match (out.status.code(), stderr.as_str()) {
                (Some(0), "") => created += 1,
                (Some(1), e)
                    if e == format!("indexa: AbortError: database {db:?} was upgraded by another process meanwhile; nothing changed\n")
                        || e == "indexa: ConstraintError: an object store named \"s\" already exists\n" => {}
                other => panic!("round {round}: create-store ended with {other:?}"),
            }
        }
        assert_eq!(
            created, 1,
            "round {round}: create-store commands that made the store"
        );
        let listed: String = (0..=round).map(|r| format!("race{r:02}\t1\n")).collect();
        assert_eq!(env.run(&["list"]).stdout, listed, "round {round}");
        committed.sort();
        let expected: Vec<String> = committed
            .iter()
            .map(|(key, value)| format!(r#"{{"key":{key},"value":{value}}}"#))
            .collect();
        let export = env.run(&["export", &db, "s"]);
        assert_eq!(export.lines(), expected, "round {round}: records stored");
    }
}

/// The names in the data directory other than database files (scratch directories).
fn scratch_entries(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with("db-"))
        .collect();
    names.sort();
    names
}

/// Review finding 2: `restore --replace` against a database another process has open (a
/// batch in a transaction) fails after the lock timeout like a drop, and leaves the database,
/// with the other process's commit, exactly as it was.
#[test]
fn restore_replace_fails_against_a_batch_open_in_another_process() {
    // SQLite-only: restore writes a database file into place (a URL is refused).
    let env = Env::sqlite();
    make_x(&env);
    let dump = env.run(&["dump", "x"]);
    let file = env.file("x.dump", &dump.stdout);
    let mut batch = Batch::start(&env, &["x"]);
    assert_eq!(
        batch.send(r#"{"op":"put","store":"s","value":"b","key":2}"#),
        r#"{"result":2}"#
    );
    let restored = env.run(&[
        "--lock-timeout",
        "0.2",
        "restore",
        "x",
        file.to_str().unwrap(),
        "--replace",
    ]);
    assert_eq!(
        (restored.stderr.as_str(), restored.code),
        (
            "indexa: InvalidStateError: database \"x\" is open in another process; close it there first (waited 200 ms)\n",
            1
        )
    );
    assert_eq!(
        batch.commit(),
        (r#"{"result":null}"#.to_owned(), COMMITTED.to_owned())
    );
    assert_eq!(batch.finish(), (vec![], 0));
    assert_eq!(
        env.run(&["export", "x", "s"]).lines(),
        vec![r#"{"key":1,"value":"a"}"#, r#"{"key":2,"value":"b"}"#]
    );
    assert_eq!(scratch_entries(&env.data_dir()), Vec::<String>::new());
}

/// Review finding 2: a shell that wrote to the database before a `restore --replace` writes
/// to the restored database afterwards (never to the replaced file), and a restore waits for
/// a shell's open transaction (`.begin`) to end before it replaces the database.
#[test]
fn a_shell_writes_to_the_restored_database_after_restore_replace() {
    // SQLite-only: restore writes a database file into place (a URL is refused).
    let env = Env::sqlite();
    make_x(&env);
    let dump = env.run(&["dump", "x"]);
    let file = env.file("x.dump", &dump.stdout);
    let mut shell = Batch::spawn(&env, &["shell", "x"]);
    assert_eq!(
        shell.send(r#"{"op":"put","store":"s","value":"b","key":2}"#),
        r#"{"result":2}"#
    );
    let restored = env.run(&["restore", "x", file.to_str().unwrap(), "--replace"]);
    assert_eq!((restored.stderr.as_str(), restored.code), ("", 0));
    assert_eq!(
        shell.send(r#"{"op":"put","store":"s","value":"c","key":3}"#),
        r#"{"result":3}"#
    );
    // A transaction open in the shell holds the database: the restore waits for it.
    let input = shell.input.as_mut().unwrap();
    writeln!(input, ".begin").unwrap();
    assert_eq!(
        shell.send(r#"{"op":"put","store":"s","value":"d","key":4}"#),
        r#"{"result":4}"#
    );
    let mut restore = Command::new(env!("CARGO_BIN_EXE_indexa"))
        .arg("--data-dir")
        .arg(env.data_arg())
        .args(["--lock-timeout", "60", "restore", "x"])
        .arg(&file)
        .arg("--replace")
        .env_remove("INDEXA_DATA_DIR")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    thread::sleep(Duration::from_millis(300));
    assert!(
        restore.try_wait().unwrap().is_none(),
        "the restore replaced the database while the shell had a transaction open"
    );
    assert_eq!(shell.send(".commit"), r#"{"result":null}"#);
    let mut line = String::new();
    shell.output.read_line(&mut line).unwrap();
    assert_eq!(line.trim_end(), COMMITTED);
    let out = restore.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(
        shell.send(r#"{"op":"put","store":"s","value":"e","key":5}"#),
        r#"{"result":5}"#
    );
    assert_eq!(shell.finish(), (vec![], 0));
    assert_eq!(
        env.run(&["export", "x", "s"]).lines(),
        vec![r#"{"key":1,"value":"a"}"#, r#"{"key":5,"value":"e"}"#]
    );
}

/// Review finding 2: `backup --replace` over a copy another process has open fails after
/// the lock timeout and leaves that copy as it was.
#[test]
fn backup_replace_fails_against_a_copy_open_in_another_process() {
    // SQLite-only: backup copies a database file (a URL is refused).
    let env = Env::sqlite();
    make_x(&env);
    let backups = env.dir.path().join("b");
    let b = backups.to_str().unwrap();
    assert_eq!(env.run(&["backup", "x", b]).code, 0);
    env.expect_batch(
        "x",
        &[],
        &script(&[r#"{"op":"put","store":"s","value":"new","key":1}"#]),
        &[r#"{"result":1}"#, COMMITTED],
        0,
    );
    let mut batch = Command::new(env!("CARGO_BIN_EXE_indexa"))
        .arg("--data-dir")
        .arg(&backups)
        .args(["batch", "x"])
        .env_remove("INDEXA_DATA_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut input = batch.stdin.take().unwrap();
    let mut output = BufReader::new(batch.stdout.take().unwrap());
    writeln!(input, r#"{{"op":"get","store":"s","query":1}}"#).unwrap();
    input.flush().unwrap();
    let mut line = String::new();
    output.read_line(&mut line).unwrap();
    assert_eq!(line, "{\"result\":\"a\"}\n");
    let replaced = env.run(&["--lock-timeout", "0.2", "backup", "x", b, "--replace"]);
    assert_eq!(
        (replaced.stderr.as_str(), replaced.code),
        (
            "indexa: InvalidStateError: database \"x\" is open in another process; close it there first (waited 200 ms)\n",
            1
        )
    );
    drop(input);
    assert_eq!(batch.wait().unwrap().code(), Some(0));
    assert_eq!(scratch_entries(&backups), Vec::<String>::new());
    let got = Command::new(env!("CARGO_BIN_EXE_indexa"))
        .arg("--data-dir")
        .arg(&backups)
        .args(["get", "x", "s", "1"])
        .env_remove("INDEXA_DATA_DIR")
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&got.stdout), "\"a\"\n");
}

/// Review finding 10: scratch directories a killed `restore` or `backup` left behind are
/// removed by the next one into the directory; one a running restore uses stays.
#[test]
fn stale_scratch_directories_are_removed_and_live_ones_kept() {
    // SQLite-only: the scratch directories of restore and backup are files in the data directory.
    let env = Env::sqlite();
    make_x(&env);
    let dump = env.run(&["dump", "x"]);
    let file = env.file("x.dump", &dump.stdout);
    let data = env.data_dir();
    std::fs::create_dir(data.join(".restore-stale1")).unwrap();
    std::fs::write(data.join(".restore-stale1").join("db-x.indexa"), "partial").unwrap();
    std::fs::create_dir(data.join(".backup-stale2")).unwrap();
    std::fs::write(data.join(".backup-stale3"), "an old scratch file").unwrap();
    std::fs::write(data.join("notes.txt"), "not ours").unwrap();
    // A restore in progress, reading its dump from a pipe.
    let mut live = Command::new(env!("CARGO_BIN_EXE_indexa"))
        .arg("--data-dir")
        .arg(&data)
        .args(["restore", "live", "-"])
        .env_remove("INDEXA_DATA_DIR")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = live.stdin.take().unwrap();
    let lines: Vec<&str> = dump.stdout.lines().collect();
    writeln!(input, "{}", lines[0]).unwrap();
    input.flush().unwrap();
    let before = scratch_entries(&data);
    // The live restore removes the stale entries and makes its own scratch directory, in
    // that order: wait for an entry that was not there before, not just for a change.
    let mut waited = 0;
    while scratch_entries(&data).iter().all(|n| before.contains(n)) && waited < 10_000 {
        thread::sleep(Duration::from_millis(20));
        waited += 20;
    }
    let with_live = scratch_entries(&data);
    let live_dir: Vec<String> = with_live
        .iter()
        .filter(|n| !before.contains(n))
        .cloned()
        .collect();
    assert_eq!(live_dir.len(), 1, "{with_live:?}");
    assert!(live_dir[0].starts_with(".restore-"), "{live_dir:?}");
    let restored = env.run(&["restore", "y", file.to_str().unwrap()]);
    assert_eq!((restored.stderr.as_str(), restored.code), ("", 0));
    let mut expected = vec!["notes.txt".to_owned(), live_dir[0].clone()];
    expected.sort();
    assert_eq!(scratch_entries(&data), expected);
    for line in &lines[1..] {
        writeln!(input, "{line}").unwrap();
    }
    drop(input);
    let out = live.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stderr), "");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(scratch_entries(&data), vec!["notes.txt".to_owned()]);
    assert_eq!(env.run(&["list"]).stdout, "live\t1\nx\t1\ny\t1\n");
}
