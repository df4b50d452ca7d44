//! The `indexa` command: see `indexa --help`.

use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use indexa_cli::admin::{self, DropArgs, InfoArgs, ListArgs};
use indexa_cli::batch::{self, BatchArgs, Outcome};
use indexa_cli::check::{self, CheckArgs};
use indexa_cli::dump::{self, DumpArgs, RestoreArgs};
use indexa_cli::error::{CmdResult, Failure};
use indexa_cli::import::{self, ImportArgs};
use indexa_cli::maintenance::{self, BackupArgs, VacuumArgs};
use indexa_cli::open::DataDir;
use indexa_cli::output::Lines;
use indexa_cli::query::{self, DeleteArgs, GetArgs, QueryArgs, StoreArgs, WriteArgs};
use indexa_cli::schema::{
    self, CreateIndexArgs, CreateStoreArgs, DeleteIndexArgs, DeleteStoreArgs, RenameIndexArgs,
    RenameStoreArgs, SchemaArgs,
};
use indexa_cli::shell::{self, ShellArgs};

/// Indexa: an embeddable database with IndexedDB's data model, durable on SQLite.
///
/// Each database is one file in the data directory. Keys and values on the command line and
/// in the output are JSON in Indexa's text form: '"ES"' is a string key, 42 a number,
/// '["ES","Madrid"]' an array key, {"$date":0} a date.
///
/// Errors go to stderr as `indexa: <SpecErrorName>: <message>` with exit status 1; usage
/// errors exit with status 2.
#[derive(Debug, Parser)]
#[command(name = "indexa", version, after_help = EXAMPLES)]
struct Cli {
    /// The directory holding the databases.
    #[arg(
        long,
        global = true,
        value_name = "DIR",
        env = "INDEXA_DATA_DIR",
        default_value = "./indexa-data"
    )]
    data_dir: PathBuf,
    /// How many seconds a drop or an upgrade waits for other processes to close the
    /// database (and an open for another process's drop or upgrade) before failing with
    /// InvalidStateError.
    #[arg(
        long,
        global = true,
        value_name = "SECONDS",
        env = "INDEXA_LOCK_TIMEOUT",
        default_value_t = 30.0,
        value_parser = parse_seconds
    )]
    lock_timeout: f64,
    #[command(subcommand)]
    command: Command,
}

const EXAMPLES: &str = "\
Examples:
  indexa import geo cities cities.json --auto-increment --index country --index country_name=country,name
  indexa query geo cities --index country --only '\"ES\"' --count
  indexa query geo cities --index country_name --lower '[\"ES\"]' --upper '[\"ES\",[]]' --limit 3
  indexa get geo cities 1
  echo '{\"op\":\"count\",\"store\":\"cities\"}' | indexa batch geo";

/// The subcommands.
#[derive(Debug, Subcommand)]
enum Command {
    /// Import a JSON array or NDJSON file into an object store, all or nothing.
    ///
    /// Creates the database, the store and the indexes when missing (in one upgrade).
    /// Records are added with `add`, so importing the same file twice fails with
    /// ConstraintError (use --put to overwrite). The first record that fails stops the
    /// import with its number and nothing at all changes, schema included, unless
    /// --skip-invalid is given. A summary goes to stderr.
    #[command(after_help = "\
Examples:
  indexa import geo cities cities.json --auto-increment --index country --index country_name=country,name
  indexa import world countries countries.json --key-path cca3 --index borders=borders:multi
  indexa export geo cities > cities.ndjson && indexa import geo2 cities cities.ndjson --format export --auto-increment")]
    Import(ImportArgs),
    /// Print the value of the record with KEY (one JSON line); a miss prints nothing and exits 1.
    #[command(after_help = "\
Examples:
  indexa get world countries '\"DEU\"'
  indexa get geo cities '[\"ES\",\"Madrid\"]' --index country_name")]
    Get(GetArgs),
    /// List (or count) the records in a key range as NDJSON {"key","primaryKey","value"} lines.
    ///
    /// Without range options, every record. With --index, KEYs are index keys and records
    /// come in index order.
    #[command(after_help = "\
Examples:
  indexa query geo cities --index country --only '\"ES\"' --count
  indexa query geo cities --index country_name --lower '[\"ES\"]' --upper '[\"ES\",[]]' --limit 3
  indexa query world countries --index borders --only '\"DEU\"' --keys-only
  indexa query geo cities --lower 100 --upper 200 --upper-open --direction prev")]
    Query(QueryArgs),
    /// Store a record, replacing any with the same key; prints the key.
    #[command(after_help = "\
Examples:
  indexa put notes notes '{\"id\":1,\"text\":\"hello\"}'   (into an existing store: create stores with import or batch)
  indexa put blobs blobs '{\"$binary\":\"AAEC\"}' --key '\"cover\"'")]
    Put(WriteArgs),
    /// Add a record (ConstraintError if its key exists); prints the key.
    Add(WriteArgs),
    /// Delete the record with KEY, or the records in a key range.
    #[command(after_help = "\
Examples:
  indexa delete notes notes 1
  indexa delete geo cities --lower 1000")]
    Delete(DeleteArgs),
    /// Delete every record of an object store (its key generator keeps counting).
    Clear(StoreArgs),
    /// Describe a database: version, object stores, key paths, key generators, indexes and
    /// record counts.
    Info(InfoArgs),
    /// List the databases and their versions (one line each: NAME, a tab, VERSION; a name
    /// with a control character or backslash, or starting with `"`, is written as a JSON
    /// string). Files under database file names that cannot be read are named on stderr,
    /// and the exit status is then 1.
    List(ListArgs),
    /// Print an object store as NDJSON {"key":…,"value":…} lines (read back with
    /// `import --format export`).
    Export(StoreArgs),
    /// Delete a database.
    Drop(DropArgs),
    /// Print a whole database as NDJSON (see docs/dump-format.md): schema, key generators
    /// and every record, from one consistent snapshot.
    #[command(after_help = "\
Examples:
  indexa dump geo > geo.dump
  indexa restore geo-copy geo.dump")]
    Dump(DumpArgs),
    /// Check a database: SQLite's integrity check, every index entry against its record,
    /// key generators above their stores' numeric keys, every key and value decoding and
    /// encoding back to the same bytes. Exit 0 when healthy; else 1 with one NDJSON line per
    /// problem (see docs/check.md).
    Check(CheckArgs),
    /// Copy a live database into another data directory with SQLite's online backup (one
    /// consistent snapshot while writers run); `indexa --data-dir DIR` opens the copy.
    #[command(after_help = "\
Examples:
  indexa backup geo /backups/2026-11-30
  indexa --data-dir /backups/2026-11-30 check geo")]
    Backup(BackupArgs),
    /// Rewrite a database's file without its free pages (SQLite's VACUUM).
    Vacuum(VacuumArgs),
    /// An interactive prompt: batch-protocol operations, each in its own transaction unless
    /// between .begin and .commit, and dot commands (.schema, .stores, .count STORE, .help).
    /// Without a terminal it reads lines from stdin and prints results without prompts.
    #[command(after_help = "\
Examples:
  indexa shell geo
  printf '%s\\n' '.count cities' '{\"op\":\"get\",\"store\":\"cities\",\"query\":1}' | indexa shell geo")]
    Shell(ShellArgs),
    /// Print a database's schema as the create-store and create-index commands that would
    /// recreate it (after a comment line with the version).
    Schema(SchemaArgs),
    /// Create an object store (one upgrade to version + 1; creates the database if missing).
    #[command(after_help = "\
Examples:
  indexa create-store geo cities --key-path id --auto-increment
  indexa create-store blobs blobs")]
    CreateStore(CreateStoreArgs),
    /// Delete an object store with its records and indexes (one upgrade to version + 1).
    DeleteStore(DeleteStoreArgs),
    /// Rename an object store (one upgrade to version + 1).
    RenameStore(RenameStoreArgs),
    /// Create an index and fill it from the records (one upgrade to version + 1); a unique
    /// index over duplicate keys fails with ConstraintError and changes nothing.
    #[command(after_help = "\
Examples:
  indexa create-index geo cities by_country country
  indexa create-index world countries borders borders --multi-entry
  indexa create-index geo cities country_name country,name --unique")]
    CreateIndex(CreateIndexArgs),
    /// Delete an index (one upgrade to version + 1).
    DeleteIndex(DeleteIndexArgs),
    /// Rename an index (one upgrade to version + 1).
    RenameIndex(RenameIndexArgs),
    /// Create a database from a dump, all or nothing; an existing one is replaced only with
    /// --replace.
    Restore(RestoreArgs),
    /// Run NDJSON operations from stdin in one transaction (see docs/batch-protocol.md).
    ///
    /// One JSON object per input line, e.g. {"op":"put","store":"s","value":1,"key":"a"};
    /// one output line per op ({"result":…} or {"error":{"name","message"}}), then
    /// {"transaction":"committed"} (exit 0) or {"transaction":"aborted"} (exit 1).
    /// A failed op aborts the transaction unless it carries "preventDefault":true. With
    /// --version above the current version (or for a new database) the batch is the
    /// upgrade transaction and may create object stores and indexes.
    #[command(after_help = "\
Examples:
  printf '%s\\n' '{\"op\":\"createObjectStore\",\"name\":\"s\",\"autoIncrement\":true}' '{\"op\":\"add\",\"store\":\"s\",\"value\":\"a\"}' | indexa batch demo
  echo '{\"op\":\"getAll\",\"store\":\"s\",\"count\":10}' | indexa batch demo --mode readonly")]
    Batch(BatchArgs),
    /// Route SQL across shards with cluster-unique generated ids (see docs/shard-cli.md).
    ///
    /// Shards, catalog and placement strategy come from a TOML config file. Every command
    /// prints one compact JSON line on stdout; errors are {"error":{"code","message",…}}
    /// on stdout with exit status 1.
    #[command(after_help = "\
Examples:
  indexa shard --config shards.toml exec-all 'CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT)'
  indexa shard --config shards.toml next-id t
  indexa shard --config shards.toml insert-into 42 t '{\"id\":42,\"name\":\"Ada\"}'
  indexa shard --config shards.toml first 42 'SELECT * FROM t WHERE id = ?' --param 42")]
    Shard(indexa_shard::ShardArgs),
}

/// A number of seconds: finite and not negative.
fn parse_seconds(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(v) if (0.0..=1e9).contains(&v) => Ok(v),
        _ => Err(format!("{s:?} is not a number of seconds from 0 to 1e9")),
    }
}

fn run(cli: &Cli) -> CmdResult {
    let dir = DataDir::new(&cli.data_dir)
        .with_lock_timeout(std::time::Duration::from_secs_f64(cli.lock_timeout));
    let mut out = Lines::buffered(io::stdout().lock());
    match &cli.command {
        Command::Import(a) => import::import(&dir, a)?,
        Command::Get(a) => query::get(&dir, a, &mut out)?,
        Command::Query(a) => query::query(&dir, a, &mut out)?,
        Command::Put(a) => query::write(&dir, a, true, &mut out)?,
        Command::Add(a) => query::write(&dir, a, false, &mut out)?,
        Command::Delete(a) => query::delete(&dir, a)?,
        Command::Clear(a) => query::clear(&dir, a)?,
        Command::Info(a) => admin::info(&dir, a, &mut out)?,
        Command::List(a) => admin::list(&dir, a, &mut out)?,
        Command::Export(a) => admin::export(&dir, a, &mut out)?,
        Command::Drop(a) => admin::drop_database(&dir, a)?,
        Command::Dump(a) => dump::dump(&dir, a, &mut out)?,
        Command::Restore(a) => dump::restore(&dir, a)?,
        Command::Check(a) => check::check(&dir, a, &mut out)?,
        Command::Backup(a) => maintenance::backup(&dir, a)?,
        Command::Vacuum(a) => maintenance::vacuum(&dir, a)?,
        Command::Shell(a) => {
            drop(out);
            shell::shell(&dir, a)?;
            return Ok(());
        }
        Command::Schema(a) => schema::schema(&dir, a, &mut out)?,
        Command::CreateStore(a) => schema::create_store(&dir, a)?,
        Command::DeleteStore(a) => schema::delete_store(&dir, a)?,
        Command::RenameStore(a) => schema::rename_store(&dir, a)?,
        Command::CreateIndex(a) => schema::create_index(&dir, a)?,
        Command::DeleteIndex(a) => schema::delete_index(&dir, a)?,
        Command::RenameIndex(a) => schema::rename_index(&dir, a)?,
        Command::Shard(a) => {
            drop(out);
            return Err(Failure::Exit(indexa_shard::run_cli(a.clone())));
        }
        Command::Batch(a) => {
            drop(out);
            let outcome = batch::run_in_dir(&dir, a, io::stdin().lock(), io::stdout().lock())?;
            return match outcome {
                Outcome::Committed => Ok(()),
                Outcome::Aborted | Outcome::OpenFailed => Err(Failure::Quiet),
            };
        }
    }
    Ok(out.finish()?)
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(&cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Error(e)) => {
            let _ = writeln!(io::stderr(), "indexa: {e}");
            ExitCode::FAILURE
        }
        Err(Failure::Quiet) => ExitCode::FAILURE,
        Err(Failure::Exit(code)) => code,
        Err(Failure::BrokenPipe) => match cli.command {
            // Nobody saw the batch's results, so its transaction was aborted.
            Command::Batch(_) => ExitCode::FAILURE,
            _ => ExitCode::SUCCESS,
        },
    }
}
