//! Helpers shared by the integration tests: run the built `indexa` binary against a
//! temporary data directory.
#![allow(dead_code)] // Each test file uses a different subset.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;

use tempfile::TempDir;

/// What one run of the binary printed, and its exit status.
#[derive(Debug)]
pub struct Run {
    pub stdout: String,
    pub stderr: String,
    pub code: i32,
}

impl Run {
    /// The stdout lines.
    pub fn lines(&self) -> Vec<&str> {
        self.stdout.lines().collect()
    }
}

/// A temporary data directory, and the binary run against it.
pub struct Env {
    pub dir: TempDir,
}

impl Env {
    pub fn new() -> Env {
        Env {
            dir: tempfile::tempdir().expect("temporary directory"),
        }
    }

    pub fn data_dir(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// Runs `indexa --data-dir DIR ARGS…` with `stdin` as its input.
    pub fn run_with_input(&self, args: &[&str], stdin: &str) -> Run {
        let mut child = Command::new(env!("CARGO_BIN_EXE_indexa"))
            .arg("--data-dir")
            .arg(self.data_dir())
            .args(args)
            .env_remove("INDEXA_DATA_DIR")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run indexa");
        let mut input = child.stdin.take().expect("stdin");
        // The command may stop reading early (e.g. after an aborting op).
        let _ = input.write_all(stdin.as_bytes());
        drop(input);
        let out = child.wait_with_output().expect("wait for indexa");
        Run {
            stdout: String::from_utf8(out.stdout).expect("UTF-8 stdout"),
            stderr: String::from_utf8(out.stderr).expect("UTF-8 stderr"),
            code: out.status.code().expect("exit code"),
        }
    }

    /// Runs `indexa --data-dir DIR ARGS…` with empty input.
    pub fn run(&self, args: &[&str]) -> Run {
        self.run_with_input(args, "")
    }

    /// Runs a batch script (lines of JSON) against `db`; returns the output lines and the
    /// exit code.
    pub fn batch(&self, db: &str, extra: &[&str], script: &str) -> (Vec<String>, i32) {
        let mut args = vec!["batch", db];
        args.extend_from_slice(extra);
        let run = self.run_with_input(&args, script);
        assert_eq!(run.stderr, "", "batch wrote to stderr");
        (run.stdout.lines().map(str::to_owned).collect(), run.code)
    }

    /// Runs a batch and asserts its exact output lines and exit code.
    pub fn expect_batch(
        &self,
        db: &str,
        extra: &[&str],
        script: &str,
        expected: &[&str],
        code: i32,
    ) {
        let (lines, got) = self.batch(db, extra, script);
        assert_eq!(lines, expected, "output of batch:\n{script}");
        assert_eq!(got, code, "exit code of batch:\n{script}");
    }

    /// Writes a file in the temporary directory and returns its path.
    pub fn file(&self, name: &str, contents: &str) -> PathBuf {
        let path = self.dir.path().join(name);
        std::fs::write(&path, contents).expect("write test file");
        path
    }
}

/// A writer in the background: commits `batch` (batch-protocol lines, one transaction) to
/// database `db` through a new `indexa batch` process, again and again, at least three times
/// and until [`Writer::stop`].
pub struct Writer {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<usize>,
}

impl Writer {
    /// Starts writing to `db` in the data directory of `env`.
    pub fn start(env: &Env, db: &str, batch: String) -> Writer {
        let stop = Arc::new(AtomicBool::new(false));
        let (flag, dir, db) = (stop.clone(), env.data_dir(), db.to_owned());
        let thread = std::thread::spawn(move || {
            let mut rounds = 0;
            while !flag.load(Ordering::Relaxed) || rounds < 3 {
                let mut child = Command::new(env!("CARGO_BIN_EXE_indexa"))
                    .arg("--data-dir")
                    .arg(&dir)
                    .args(["batch", &db])
                    .stdin(Stdio::piped())
                    .stdout(Stdio::null())
                    .spawn()
                    .unwrap();
                child
                    .stdin
                    .take()
                    .unwrap()
                    .write_all(batch.as_bytes())
                    .unwrap();
                assert!(child.wait().unwrap().success());
                rounds += 1;
            }
            rounds
        });
        Writer { stop, thread }
    }

    /// Stops the writer after its current transaction; returns how many it committed.
    pub fn stop(self) -> usize {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap()
    }
}

/// A real data set, read in place: `data/NAME` when the repository ships it, else
/// `data/external/NAME`, where `scripts/fetch-data.sh` fetches the large ones (`scripts/test.sh`
/// runs that script first). A missing file fails the test with a message naming the script.
pub fn data_file(name: &str) -> String {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../data");
    let path = [data.join(name), data.join("external").join(name)]
        .into_iter()
        .find(|p| p.is_file())
        .unwrap_or_else(|| {
            panic!("test data {name} is missing from data/ and data/external/: run scripts/fetch-data.sh")
        });
    path.to_str().expect("UTF-8 path").to_owned()
}

/// Joins script lines with newlines.
pub fn script(lines: &[&str]) -> String {
    let mut s = lines.join("\n");
    s.push('\n');
    s
}
