//! `indexa backup` and `indexa vacuum`: work on a database's SQLite file as a whole.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use clap::Args;
use indexa::Factory;
use rusqlite::backup::{Backup, StepResult};
use rusqlite::Connection;

use crate::error::{CliError, CmdResult};
use crate::open::DataDir;
use crate::scratch::Scratch;

/// `indexa backup`: copy a live database into another data directory.
#[derive(Debug, Clone, Args)]
pub struct BackupArgs {
    /// The database.
    pub db: String,
    /// The data directory to write the copy into (created when missing); `indexa --data-dir
    /// DIR` then opens it under the same name.
    pub dir: PathBuf,
    /// Replace a copy of the database already in DIR.
    #[arg(long)]
    pub replace: bool,
}

/// `indexa vacuum`: rebuild a database file to reclaim free pages.
#[derive(Debug, Clone, Args)]
pub struct VacuumArgs {
    /// The database.
    pub db: String,
}

fn sql(what: &str) -> impl Fn(rusqlite::Error) -> CliError + '_ {
    move |e| CliError::new("UnknownError", format!("{what}: {e}"))
}

/// The file of database `name`, which must exist.
fn existing_file(dir: &DataDir, name: &str) -> Result<PathBuf, CliError> {
    let missing = || dir.missing(name);
    let factory = dir.existing_factory()?.ok_or_else(missing)?;
    if DataDir::version_of(&factory, name)? == 0 {
        return Err(missing());
    }
    Ok(factory.database_path(name))
}

fn open(path: &Path) -> Result<Connection, CliError> {
    let conn = Connection::open(path).map_err(sql("cannot open the database file"))?;
    conn.busy_timeout(std::time::Duration::from_secs(30))
        .map_err(sql("cannot open the database file"))?;
    Ok(conn)
}

/// Runs `indexa backup` with SQLite's online backup: all pages are copied in one step, inside
/// one read transaction, so the copy is one consistent snapshot even while writers run. The
/// copy is written to a scratch directory in DIR (see [`Scratch`]), given the permissions of
/// the database's file, and renamed into place in one step when complete
/// ([`Factory::replace_database`]); with `--replace`, once no other process has the copy
/// already in DIR open.
///
/// # Errors
/// `NotFoundError` for a missing database; `InvalidAccessError` when DIR is the database's
/// own data directory (the copy would be the database itself); `ConstraintError` if DIR
/// already holds the database (without `--replace`); `InvalidStateError` if another process
/// still has that copy open after the lock timeout (with `--replace`); `UnknownError` for
/// I/O and SQLite failures.
pub fn backup(dir: &DataDir, a: &BackupArgs) -> CmdResult {
    dir.files_only("backup")?;
    let source = existing_file(dir, &a.db)?;
    let mut target_dir = Factory::open_dir(&a.dir)?;
    target_dir.set_lock_timeout(dir.lock_timeout());
    if source.parent() == Some(target_dir.dir()) {
        return Err(CliError::new(
            "InvalidAccessError",
            format!(
                "{} is the data directory of database {:?}; back it up into another directory",
                a.dir.display(),
                a.db
            ),
        )
        .into());
    }
    let exists = || {
        CliError::new(
            "ConstraintError",
            format!(
                "{} already holds database {:?} (backup --replace replaces it)",
                a.dir.display(),
                a.db
            ),
        )
    };
    if DataDir::version_of(&target_dir, &a.db)? > 0 && !a.replace {
        return Err(exists().into());
    }
    let scratch = Scratch::new(target_dir.dir(), ".backup-")?;
    let copy_path = scratch.path().join(
        target_dir
            .database_path(a.db.as_str())
            .file_name()
            .expect("a database path ends in its file name"),
    );
    {
        let src = open(&source)?;
        let mut dst = open(&copy_path)?;
        let copy = Backup::new(&src, &mut dst).map_err(sql("backup failed"))?;
        // All pages in one step; a busy or locked source copies nothing, so try again.
        let mut waited = 0;
        loop {
            match copy.step(-1).map_err(sql("backup failed"))? {
                StepResult::Done => break,
                _ if waited < 30_000 => {
                    std::thread::sleep(std::time::Duration::from_millis(50));
                    waited += 50;
                }
                _ => {
                    return Err(CliError::new(
                        "UnknownError",
                        "backup failed: the database stayed locked for 30 s",
                    )
                    .into())
                }
            }
        }
    }
    fs::metadata(&source)
        .map(|m| m.permissions())
        .and_then(|p| fs::set_permissions(&copy_path, p))
        .map_err(|e| {
            CliError::new(
                "UnknownError",
                format!("cannot copy the permissions of {}: {e}", source.display()),
            )
        })?;
    let target = target_dir.database_path(a.db.as_str());
    target_dir
        .replace_database(a.db.as_str(), &copy_path, a.replace)
        .map_err(|e| match e {
            indexa::Error::Constraint(_) => exists(),
            other => CliError::from(other),
        })?;
    let _ = writeln!(
        io::stderr().lock(),
        "backed up {} to {}",
        a.db,
        target.display()
    );
    Ok(())
}

/// Runs `indexa vacuum`: SQLite's `VACUUM`, which rewrites the file without free pages
/// (waiting for other connections' transactions to end).
///
/// # Errors
/// `NotFoundError` for a missing database; `UnknownError` for SQLite failures.
pub fn vacuum(dir: &DataDir, a: &VacuumArgs) -> CmdResult {
    dir.files_only("vacuum")?;
    let path = existing_file(dir, &a.db)?;
    let size = || fs::metadata(&path).map_or(0, |m| m.len());
    let before = size();
    let conn = open(&path)?;
    conn.execute_batch("VACUUM; PRAGMA wal_checkpoint(TRUNCATE);")
        .map_err(sql("vacuum failed"))?;
    drop(conn);
    let _ = writeln!(
        io::stderr().lock(),
        "vacuumed {}: {before} bytes before, {} after",
        a.db,
        size()
    );
    Ok(())
}
