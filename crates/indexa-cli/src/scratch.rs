//! Scratch directories for `restore` and `backup`: the new database is built in one, inside
//! the directory it goes to (so moving it into place is one rename), then the directory is
//! removed.
//!
//! A scratch directory is named `.restore-…` or `.backup-…` and locked (`flock`) for as long
//! as its command runs. A command killed before it could remove its directory leaves it
//! behind; the next `restore` or `backup` into the same directory removes every such
//! directory that no running command has locked. Without `flock` (outside Unix) stale
//! directories are left for the user to remove.

use std::fs;
use std::path::{Path, PathBuf};

use crate::error::CliError;

/// The name prefixes of scratch directories.
const PREFIXES: [&str; 2] = [".restore-", ".backup-"];

/// A locked scratch directory, removed (with its contents) when dropped.
pub struct Scratch {
    dir: tempfile::TempDir,
    /// The open directory holding the lock; released when dropped.
    _lock: Option<fs::File>,
}

impl Scratch {
    /// Removes the stale scratch directories in `parent`, then creates and locks a new one
    /// named `prefix` (one of `.restore-`, `.backup-`) plus random characters.
    ///
    /// # Errors
    /// `UnknownError` when the directory cannot be created or locked.
    pub fn new(parent: &Path, prefix: &str) -> Result<Scratch, CliError> {
        remove_stale(parent);
        let io = |e: std::io::Error| {
            CliError::new(
                "UnknownError",
                format!(
                    "cannot create a scratch directory in {}: {e}",
                    parent.display()
                ),
            )
        };
        // Another command's clean-up may lock and remove a directory between its creation
        // and its locking here: then make another.
        let mut attempts = 0;
        loop {
            let dir = tempfile::Builder::new()
                .prefix(prefix)
                .tempdir_in(parent)
                .map_err(io)?;
            match lock_exclusive(dir.path()) {
                Ok(lock) if dir.path().is_dir() => return Ok(Scratch { dir, _lock: lock }),
                _ if attempts < 10 => attempts += 1,
                Ok(_) => {
                    return Err(io(std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "it was removed as soon as it was made",
                    )))
                }
                Err(e) => return Err(io(e)),
            }
        }
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
}

/// Removes the scratch directories (and files) in `parent` that no running command holds. Failures are
/// ignored: a directory that cannot be examined or removed stays.
fn remove_stale(parent: &Path) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    let stale: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name();
            let name = name.to_string_lossy();
            PREFIXES.iter().any(|p| name.starts_with(p))
                // Files too: earlier versions wrote `.backup-…` scratch files.
                && e.file_type().is_ok_and(|t| t.is_dir() || t.is_file())
        })
        .map(|e| e.path())
        .collect();
    for path in stale {
        // Held while removing, so no command can start using it meanwhile.
        if let Ok(Some(_held)) = lock_exclusive(&path) {
            let _ = if path.is_dir() {
                fs::remove_dir_all(&path)
            } else {
                fs::remove_file(&path)
            };
        }
    }
}

/// Locks the directory `path` exclusively without waiting: `Ok(Some(file))` holds the lock
/// until the file is dropped; an error when another open file holds it (or it cannot be
/// locked). `Ok(None)` where there is no `flock`.
#[cfg(unix)]
fn lock_exclusive(path: &Path) -> std::io::Result<Option<fs::File>> {
    use std::os::fd::AsRawFd;
    let dir = fs::File::open(path)?;
    // SAFETY: the descriptor is open for the call (borrowed from `dir`).
    let rc = unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
    if rc == 0 {
        Ok(Some(dir))
    } else {
        Err(std::io::Error::last_os_error())
    }
}

#[cfg(not(unix))]
fn lock_exclusive(_path: &Path) -> std::io::Result<Option<fs::File>> {
    Ok(None)
}
