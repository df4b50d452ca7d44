//! The router on bad days: a PostgreSQL shard stopped in the middle of a run, and coordinators
//! restarted (leased blocks lost) again and again.
//!
//! The stopped-shard test starts its own PostgreSQL server with `scripts/pg-test-cluster.sh`
//! (its own `INDEXA_PG_DIR` and `INDEXA_PG_PORT`), so stopping it disturbs no other test;
//! that needs root or passwordless access to the postgres user, as the script says.
//! `INDEXA_SKIP_PG=1` skips the PostgreSQL tests.

mod common;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use common::{cluster, num, obj, s, Kind, Setup};
use indexa_shard::{NextIdOptions, Router};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// A PostgreSQL server of this test's own, stopped and removed on drop.
struct OwnServer {
    dir: PathBuf,
    port: u16,
    bin: String,
    base_url: String,
}

fn script() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scripts/pg-test-cluster.sh")
}

/// Runs a command as the postgres user (pg_ctl refuses root); panics with its output if it
/// fails.
fn as_postgres(args: &[&str]) {
    let out = Command::new("runuser")
        .args(["-u", "postgres", "--"])
        .args(args)
        .output()
        .expect("runuser");
    assert!(
        out.status.success(),
        "{args:?}: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

impl OwnServer {
    fn start() -> Option<OwnServer> {
        if std::env::var("INDEXA_SKIP_PG").as_deref() == Ok("1") {
            eprintln!("skipped: INDEXA_SKIP_PG=1");
            return None;
        }
        let port = {
            let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            listener.local_addr().unwrap().port()
        };
        let dir =
            std::env::temp_dir().join(format!("indexa-pg-stop-{}-{port}", std::process::id()));
        let out = Command::new("bash")
            .arg(script())
            .arg("start")
            .env("INDEXA_PG_DIR", &dir)
            .env("INDEXA_PG_PORT", port.to_string())
            .output()
            .expect("run pg-test-cluster.sh");
        assert!(
            out.status.success(),
            "pg-test-cluster.sh start failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let lines = String::from_utf8(out.stdout).unwrap();
        let base_url = lines
            .lines()
            .find_map(|l| l.strip_prefix("export INDEXA_TEST_PG_URL="))
            .expect("the script prints the URL")
            .to_string();
        let bin = std::fs::read_to_string(dir.join("bin"))
            .unwrap()
            .trim()
            .to_string();
        Some(OwnServer {
            dir,
            port,
            bin,
            base_url,
        })
    }

    fn data(&self) -> String {
        self.dir.join("data").display().to_string()
    }

    /// Stops the server the hard way (`-m immediate`: no shutdown checkpoint, like a crash).
    fn stop(&self) {
        let pg_ctl = format!("{}/pg_ctl", self.bin);
        as_postgres(&[&pg_ctl, "-D", &self.data(), "-m", "immediate", "-w", "stop"]);
    }

    /// Starts it again with the options the script uses.
    fn restart(&self) {
        let pg_ctl = format!("{}/pg_ctl", self.bin);
        let log = self.dir.join("server.log").display().to_string();
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {} -k {} -c fsync=off -c max_connections=300",
            self.port,
            self.dir.display()
        );
        as_postgres(&[
            &pg_ctl,
            "-D",
            &self.data(),
            "-l",
            &log,
            "-w",
            "-t",
            "60",
            "-o",
            &options,
            "start",
        ]);
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        let _ = Command::new("bash")
            .arg(script())
            .arg("stop")
            .env("INDEXA_PG_DIR", &self.dir)
            .output();
    }
}

fn ticket(id: u64) -> indexa::Object {
    obj(&[
        ("id", num(id as f64)),
        ("title", s(&format!("ticket {id}"))),
    ])
}

/// Inserts ticket `id` through the router and reads it back; the read must be that ticket.
async fn write_and_read(router: &Router, id: u64) -> Result<(), indexa_shard::Error> {
    router
        .insert_into(&id.to_string(), "tickets", &ticket(id))
        .await?;
    let row = router
        .first(
            &id.to_string(),
            "SELECT id, title FROM tickets WHERE id = ?",
            &[num(id as f64)],
        )
        .await?;
    assert_eq!(row, Some(ticket(id)), "ticket {id} reads back as itself");
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stopped_postgres_shard_gives_query_failed_never_a_wrong_id() {
    let Some(server) = OwnServer::start() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let pg = common::pg_database(&server.base_url, "stopped").await;
    let config = format!(
        "strategy = \"hash\"\n[catalog]\nurl = \"sqlite:catalog.db\"\ncoordinator = true\n[shards]\ndb-pg = \"{pg}\"\ndb-lite = \"sqlite:lite.db\"\n"
    );
    let router = common::open(&config, &dir).await;
    let no_coordinator = common::open(
        &config.replace("coordinator = true", "coordinator = false"),
        &dir,
    )
    .await;
    router
        .exec_all("CREATE TABLE tickets (id BIGINT PRIMARY KEY, title TEXT NOT NULL)")
        .await
        .unwrap();
    router
        .exec_all("CREATE TABLE late (id BIGINT PRIMARY KEY)")
        .await
        .unwrap();
    router
        .run_shard("db-pg", "INSERT INTO late VALUES (50)", &[])
        .await
        .unwrap();

    let mut issued = HashSet::new();
    let mut written = Vec::new();
    let mut take = |id: u64| assert!(issued.insert(id), "id {id} handed out twice");
    for _ in 0..20 {
        let id = router
            .next_id("tickets", &NextIdOptions::default())
            .await
            .unwrap();
        take(id);
        write_and_read(&router, id).await.unwrap();
        written.push(id);
    }

    // A worker keeps writing and reading while the server stops under it, and for 20 more
    // rounds after.
    let router = Arc::new(router);
    let stopped = Arc::new(AtomicBool::new(false));
    let worker = tokio::spawn({
        let router = router.clone();
        let stopped = stopped.clone();
        async move {
            let mut results = Vec::new();
            let mut after_stop = 0;
            while after_stop < 20 {
                if stopped.load(Ordering::SeqCst) {
                    after_stop += 1;
                }
                // The sequence lives in the catalog: ids keep coming, and stay unique.
                let id = router
                    .next_id("tickets", &NextIdOptions::default())
                    .await
                    .unwrap();
                results.push((id, write_and_read(&router, id).await.map_err(|e| e.code())));
            }
            results
        }
    });
    tokio::time::sleep(Duration::from_millis(30)).await;
    tokio::task::block_in_place(|| server.stop());
    stopped.store(true, Ordering::SeqCst);
    let mut failures: HashMap<&'static str, usize> = HashMap::new();
    for (id, result) in worker.await.unwrap() {
        take(id);
        match result {
            Ok(()) => written.push(id),
            Err(code) => *failures.entry(code).or_default() += 1,
        }
    }
    // Rows placed on the stopped shard fail with QUERY_FAILED; nothing else goes wrong.
    assert_eq!(failures.keys().collect::<Vec<_>>(), vec![&"QUERY_FAILED"]);
    // Seeding a sequence, or MAX+1 without the coordinator, needs every shard: no low id.
    for r in [&*router, &no_coordinator] {
        let err = r
            .next_id("late", &NextIdOptions::default())
            .await
            .unwrap_err();
        assert_eq!(err.code(), "QUERY_FAILED");
        assert_eq!(err.shard(), Some("db-pg"));
    }

    server.restart();
    // The pool reconnects: within a few tries the shard answers again.
    let deadline = Instant::now() + Duration::from_secs(30);
    while router
        .first_shard("db-pg", "SELECT 1 AS one", &[])
        .await
        .is_err()
    {
        assert!(Instant::now() < deadline, "the shard never came back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    for r in [&*router, &no_coordinator] {
        assert_eq!(
            r.next_id("late", &NextIdOptions::default()).await.unwrap(),
            51
        );
    }
    // Every acknowledged write survived the stop, and reads give exactly it.
    for id in &written {
        let row = router
            .first(
                &id.to_string(),
                "SELECT id, title FROM tickets WHERE id = ?",
                &[num(*id as f64)],
            )
            .await
            .unwrap();
        assert_eq!(row, Some(ticket(*id)));
    }
    for _ in 0..5 {
        let id = router
            .next_id("tickets", &NextIdOptions::default())
            .await
            .unwrap();
        take(id);
        write_and_read(&router, id).await.unwrap();
    }
}

/// Coordinators restarted many times — each start loses its unserved leased block, and each
/// runs beside the one started before it — never hand out an id twice. Without leases the
/// sequence only goes up, also past ids written by hand through the router.
async fn next_id_survives_restarts(kind: Kind, lease: u64) {
    let setup = Setup {
        coordinator: true,
        lease,
        ..Default::default()
    };
    let Some(c) = cluster(kind, setup).await else {
        return;
    };
    c.router
        .exec_all("CREATE TABLE tickets (id BIGINT PRIMARY KEY, title TEXT)")
        .await
        .unwrap();
    let mut rng = StdRng::seed_from_u64(0x1d5 + lease);
    let mut issued = HashSet::new();
    let mut highest = 0;
    let mut previous = c.reopen(|t| t.to_string()).await;
    for restart in 0..25 {
        let current = c.reopen(|t| t.to_string()).await;
        for _ in 0..rng.random_range(0..15) {
            let router = if rng.random_bool(0.7) {
                &current
            } else {
                &previous
            };
            let id = router
                .next_id("tickets", &NextIdOptions::default())
                .await
                .unwrap();
            assert!(
                issued.insert(id),
                "restart {restart}: id {id} handed out twice"
            );
            if lease == 1 {
                assert!(id > highest, "restart {restart}: id {id} after {highest}");
            }
            highest = highest.max(id);
            if rng.random_ratio(1, 4) {
                router
                    .insert_into(&id.to_string(), "tickets", &ticket(id))
                    .await
                    .unwrap();
            }
        }
        // Leased blocks of other coordinators are not told about ids written by hand (see
        // Router::next_id), so only the lease-free sequence is pushed this way.
        if lease == 1 && rng.random_ratio(1, 5) {
            let explicit = highest + rng.random_range(1..5);
            current
                .insert_into(&explicit.to_string(), "tickets", &ticket(explicit))
                .await
                .unwrap();
            highest = explicit;
        }
        previous = current;
    }
    assert!(issued.len() > 100, "{}", issued.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_id_survives_restarts_sqlite_lease_1() {
    next_id_survives_restarts(Kind::Sqlite, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_id_survives_restarts_sqlite_lease_10() {
    next_id_survives_restarts(Kind::Sqlite, 10).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_id_survives_restarts_postgres_lease_1() {
    next_id_survives_restarts(Kind::Postgres, 1).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn next_id_survives_restarts_postgres_lease_10() {
    next_id_survives_restarts(Kind::Postgres, 10).await;
}
