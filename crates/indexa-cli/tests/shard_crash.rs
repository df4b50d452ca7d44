//! `indexa shard next-id` processes killed at random moments (SIGKILL, fixed seed) with a
//! coordinator that leases blocks of ids: every id a process printed is unique, and since each
//! process takes a fresh block from the catalog, the ids only go up — a killed process's block
//! is a gap, never handed out again.

use std::process::{Command, Stdio};
use std::time::Duration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

fn indexa(config: &std::path::Path) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_indexa"));
    command.arg("shard").arg("--config").arg(config);
    command
}

#[test]
fn killed_next_id_processes_never_repeat_an_id() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("shards.toml");
    std::fs::write(
        &config,
        "[catalog]\nurl = \"sqlite:catalog.db\"\ncoordinator = true\nlease = 5\n[shards]\ndb-a = \"sqlite:a.db\"\ndb-b = \"sqlite:b.db\"\n",
    )
    .unwrap();
    let created = indexa(&config)
        .args(["exec-all", "CREATE TABLE tickets (id INTEGER PRIMARY KEY)"])
        .output()
        .unwrap();
    assert!(created.status.success(), "{created:?}");
    let mut rng = StdRng::seed_from_u64(0x0b5e55ed);
    let mut printed: Vec<u64> = Vec::new();
    let mut killed = 0;
    for round in 0..40 {
        let mut child = indexa(&config)
            .args(["next-id", "tickets"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        if rng.random_bool(0.5) {
            std::thread::sleep(Duration::from_micros(rng.random_range(0..15_000)));
            if child.kill().is_ok() {
                killed += 1;
            }
        }
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8(out.stdout).unwrap();
        if let Some(line) = stdout.lines().next() {
            let id: u64 = line
                .strip_prefix("{\"id\":")
                .and_then(|rest| rest.strip_suffix('}'))
                .unwrap_or_else(|| panic!("round {round}: unexpected output {line:?}"))
                .parse()
                .unwrap();
            if let Some(last) = printed.last() {
                assert!(id > *last, "round {round}: id {id} after {last}");
            }
            printed.push(id);
        } else {
            assert!(
                !out.status.success(),
                "round {round}: a process that printed nothing succeeded"
            );
        }
    }
    assert!(
        killed > 0 && printed.len() > 10,
        "{killed} killed, {} printed",
        printed.len()
    );
    // Afterwards the sequence continues above everything printed.
    let out = indexa(&config)
        .args(["next-id", "tickets"])
        .output()
        .unwrap();
    let line = String::from_utf8(out.stdout).unwrap();
    let next: u64 = line.trim()[6..line.trim().len() - 1].parse().unwrap();
    assert!(next > *printed.last().unwrap(), "{next}");
}
