//! A database file written by format version 1 (`crates/indexa/tests/fixtures/format-v1`, made
//! by `make-format-v1.sh` there with the Node.js package and the CLI) still opens, and dumps to
//! exactly the records recorded when it was made (`format-v1.dump`).

use std::path::{Path, PathBuf};
use std::process::Command;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../indexa/tests/fixtures")
}

fn indexa(dir: &Path, args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_indexa"))
        .arg("--data-dir")
        .arg(dir)
        .args(args)
        .output()
        .expect("run indexa");
    assert!(
        out.status.success(),
        "indexa {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

#[test]
fn a_version_1_file_dumps_to_its_recorded_records() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(
        fixtures().join("format-v1/db-v1.indexa"),
        dir.path().join("db-v1.indexa"),
    )
    .unwrap();
    let recorded = std::fs::read_to_string(fixtures().join("format-v1.dump")).unwrap();
    assert_eq!(recorded.lines().count(), 62);
    assert_eq!(indexa(dir.path(), &["dump", "v1"]), recorded);
    // Opened again (and checked), it still holds the same records.
    assert_eq!(
        indexa(dir.path(), &["check", "v1"]),
        "",
        "check reports no problem"
    );
    assert_eq!(indexa(dir.path(), &["dump", "v1"]), recorded);
}
