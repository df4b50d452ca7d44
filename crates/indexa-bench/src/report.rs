//! What a worker process reports to the harness, one line each on standard output.

use std::time::Duration;

/// `metric NAME SECONDS`: the time one workload took.
pub fn metric(name: &str, elapsed: Duration) {
    println!("metric {name} {}", elapsed.as_secs_f64());
}

/// `check NAME N`: a result count the harness compares across systems.
pub fn check(name: &str, n: u64) {
    println!("check {name} {n}");
}

/// Whether to run the workload `name`: all of them, unless `INDEXA_BENCH_ONLY` names one
/// (`callgrind.sh` counts instructions per workload that way; the import always runs).
pub fn wanted(name: &str) -> bool {
    std::env::var("INDEXA_BENCH_ONLY").map_or(true, |only| only == name)
}
