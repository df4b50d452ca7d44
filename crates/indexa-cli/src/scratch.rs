//! Scratch directories for `restore` and `backup`: the new database is built in one, inside
//! the directory it goes to (so moving it into place is one rename), then the directory is
//! removed.
//!
//! A scratch directory is named `.restore-…` or `.backup-…` and locked (`flock`) for as long
//! as its command runs.

use std::fs;
use std::path::Path;

use crate::error::CliError;

/// A locked scratch directory, removed (with its contents) when dropped.
pub struct Scratch {
    dir: tempfile::TempDir,
    /// The open directory holding the lock; released when dropped.
    _lock: Option<fs::File>,
}

impl Scratch {
    /// Creates and locks a new scratch directory in `parent`, named `prefix` (one of `.restore-`, `.backup-`) plus random characters.
    ///
    /// # Errors
    /// `UnknownError` when the directory cannot be created or locked.
    pub fn new(parent: &Path, prefix: &str) -> Result<Scratch, CliError> {
        let io = |e: std::io::Error| {
            CliError::new(
                "UnknownError",
                format!(
                    "cannot create a scratch directory in {}: {e}",
                    parent.display()
                ),
            )
        };
        let dir = tempfile::Builder::new()
            .prefix(prefix)
            .tempdir_in(parent)
            .map_err(io)?;
        let lock = lock_exclusive(dir.path()).map_err(io)?;
        Ok(Scratch { dir, _lock: lock })
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        self.dir.path()
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
