//! Batch-protocol lines (`indexa_cli::batch::run`) on arbitrary input, against a fresh
//! database: first as its upgrade transaction, then again as a readwrite transaction on what
//! the upgrade left. Never panics, and every batch ends with its transaction line.
#![no_main]

use std::sync::OnceLock;

use indexa::Factory;
use indexa_cli::batch::{self, BatchArgs, DurabilityArg, Mode, Outcome};
use libfuzzer_sys::fuzz_target;

/// One factory for the whole run, over a scratch directory (in memory when /dev/shm exists).
fn factory() -> &'static Factory {
    static FACTORY: OnceLock<Factory> = OnceLock::new();
    FACTORY.get_or_init(|| {
        let base = if std::path::Path::new("/dev/shm").is_dir() {
            std::path::PathBuf::from("/dev/shm")
        } else {
            std::env::temp_dir()
        };
        Factory::open_dir(base.join(format!("indexa-fuzz-{}", std::process::id())))
            .expect("a scratch data directory")
    })
}

fn run(args: &BatchArgs, input: &[u8]) -> Outcome {
    let mut out = Vec::new();
    let outcome = batch::run(factory(), &args.db, args, input, &mut out).expect("output to memory");
    let text = String::from_utf8(out).expect("output is UTF-8");
    let last = text.lines().last().expect("at least one output line");
    match outcome {
        Outcome::Committed => assert_eq!(last, r#"{"transaction":"committed"}"#),
        Outcome::Aborted => assert_eq!(last, r#"{"transaction":"aborted"}"#),
        Outcome::OpenFailed => assert!(last.starts_with(r#"{"error":"#), "{last}"),
    }
    outcome
}

fuzz_target!(|data: &[u8]| {
    let factory = factory();
    factory
        .delete_database("fuzz")
        .expect("delete the scratch database");
    let upgrade = BatchArgs {
        db: "fuzz".into(),
        version: Some(1),
        mode: Mode::ReadWrite,
        durability: DurabilityArg::Relaxed,
    };
    if run(&upgrade, data) == Outcome::Committed {
        let readwrite = BatchArgs {
            version: None,
            ..upgrade
        };
        run(&readwrite, data);
    }
});
