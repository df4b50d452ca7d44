//! `indexa backup` and `indexa vacuum`.

mod common;

use std::process::{Command, Stdio};

use common::{script, Env, Writer};

fn indexa(data_dir: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_indexa"))
        .arg("--data-dir")
        .arg(data_dir)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

#[test]
fn a_backup_taken_while_a_writer_runs_opens_and_passes_check() {
    let env = Env::sqlite();
    env.ok(&["create-store", "db", "s", "--auto-increment"]);
    env.ok(&["create-index", "db", "s", "n", "n"]);
    // A writer adding records in transactions of 50 until told to stop.
    let batch: String = (0..50)
        .map(|i| format!("{{\"op\":\"add\",\"store\":\"s\",\"value\":{{\"n\":{i}}}}}\n"))
        .collect();
    let writer = Writer::start(&env, "db", batch);
    let backups = env.dir.path().join("backups");
    std::thread::sleep(std::time::Duration::from_millis(300));
    let run = env.run(&["backup", "db", backups.to_str().unwrap()]);
    let rounds = writer.stop();
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stderr,
        format!(
            "backed up db to {}\n",
            backups.join("db-db.indexa").display()
        )
    );
    let check = indexa(&backups, &["check", "db"]);
    assert!(check.status.success(), "{check:?}");
    // Whole writer transactions only: a multiple of 50 records.
    let count: usize = String::from_utf8(indexa(&backups, &["query", "db", "s", "--count"]).stdout)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_eq!(count % 50, 0, "{count}");
    assert!(count <= rounds * 50);
    assert_eq!(
        String::from_utf8(indexa(&backups, &["list"]).stdout).unwrap(),
        "db\t2\n"
    );
}

#[test]
fn backup_refuses_to_overwrite_unless_replace() {
    let env = Env::sqlite();
    env.ok(&["create-store", "db", "s"]);
    env.ok(&["put", "db", "s", "1", "--key", "1"]);
    let backups = env.dir.path().join("b");
    env.ok(&["backup", "db", backups.to_str().unwrap()]);
    env.ok(&["put", "db", "s", "2", "--key", "1"]);
    let run = env.run(&["backup", "db", backups.to_str().unwrap()]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stderr, format!("indexa: ConstraintError: {} already holds database \"db\" (backup --replace replaces it)\n", backups.display()));
    assert_eq!(
        String::from_utf8(indexa(&backups, &["get", "db", "s", "1"]).stdout).unwrap(),
        "1\n"
    );
    env.ok(&["backup", "db", backups.to_str().unwrap(), "--replace"]);
    assert_eq!(
        String::from_utf8(indexa(&backups, &["get", "db", "s", "1"]).stdout).unwrap(),
        "2\n"
    );
    let run = env.run(&["backup", "nope", backups.to_str().unwrap()]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .starts_with("indexa: NotFoundError: database \"nope\" does not exist"),
        "{}",
        run.stderr
    );
}

#[test]
fn vacuum_shrinks_the_file_and_keeps_the_data() {
    let env = Env::sqlite();
    env.ok(&["create-store", "db", "s"]);
    let big = format!("\"{}\"", "x".repeat(100_000));
    let lines: Vec<String> = (0..40)
        .map(|i| format!("{{\"op\":\"put\",\"store\":\"s\",\"key\":{i},\"value\":{big}}}"))
        .collect();
    let (_, code) = env.batch(
        "db",
        &[],
        &script(&lines.iter().map(String::as_str).collect::<Vec<_>>()),
    );
    assert_eq!(code, 0);
    env.ok(&["delete", "db", "s", "--lower", "1"]);
    let file = env.data_dir().join("db-db.indexa");
    let run = env.run(&["vacuum", "db"]);
    assert_eq!(run.code, 0, "{run:?}");
    let after = std::fs::metadata(&file).unwrap().len();
    assert!(after < 1_000_000, "{after}");
    assert!(run.stderr.starts_with("vacuumed db: "), "{}", run.stderr);
    assert!(
        run.stderr
            .ends_with(&format!(" bytes before, {after} after\n")),
        "{}",
        run.stderr
    );
    assert_eq!(env.ok(&["query", "db", "s", "--count"]), "1\n");
    assert_eq!(
        indexa(&env.data_dir(), &["check", "db"]).status.code(),
        Some(0)
    );
    let run = env.run(&["vacuum", "nope"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with("indexa: NotFoundError: "),
        "{}",
        run.stderr
    );
}

/// Review finding 9: the copy gets the database file's permissions (it was 0600, from the
/// scratch file, whatever the database's).
#[cfg(unix)]
#[test]
fn a_backup_has_the_database_files_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::sqlite();
    env.ok(&["create-store", "db", "s"]);
    let source = env.data_dir().join("db-db.indexa");
    for mode in [0o644, 0o640] {
        std::fs::set_permissions(&source, std::fs::Permissions::from_mode(mode)).unwrap();
        let backups = env.dir.path().join(format!("b{mode:o}"));
        env.ok(&["backup", "db", backups.to_str().unwrap()]);
        let copy = std::fs::metadata(backups.join("db-db.indexa")).unwrap();
        assert_eq!(copy.permissions().mode() & 0o777, mode);
    }
}

/// Review finding 9: a backup into the database's own data directory (however it is spelled)
/// would replace the database with itself; it is refused and changes nothing.
#[test]
fn a_backup_into_the_databases_own_directory_is_refused() {
    let env = Env::sqlite();
    env.ok(&["create-store", "db", "s"]);
    env.ok(&["put", "db", "s", "1", "--key", "1"]);
    let data = env.data_dir();
    let spellings = [
        data.clone(),
        data.join("."),
        env.dir.path().join("other").join("..").join("data"),
    ];
    std::fs::create_dir(env.dir.path().join("other")).unwrap();
    for dir in spellings {
        let run = env.run(&["backup", "db", dir.to_str().unwrap(), "--replace"]);
        assert_eq!(
            (run.stderr, run.code),
            (
                format!(
                    "indexa: InvalidAccessError: {} is the data directory of database \"db\"; back it up into another directory\n",
                    dir.display()
                ),
                1
            )
        );
    }
    assert_eq!(env.ok(&["get", "db", "s", "1"]), "1\n");
    assert_eq!(env.ok(&["list"]), "db\t1\n");
}
