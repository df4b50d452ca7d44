//! Finding the data directory (or PostgreSQL database) and opening databases for the
//! commands.

use std::path::{Path, PathBuf};
use std::time::Duration;

use indexa::{Database, Factory};

use crate::error::CliError;

/// The data directory given by `--data-dir` (or `INDEXA_DATA_DIR`): a directory of SQLite
/// files, or a `postgres://user@host:port/dbname` URL of an existing PostgreSQL database.
#[derive(Debug, Clone)]
pub struct DataDir {
    path: PathBuf,
    lock_timeout: Duration,
}

impl DataDir {
    /// The data directory at `path` (not created until a command writes).
    pub fn new(path: impl Into<PathBuf>) -> DataDir {
        DataDir {
            path: path.into(),
            lock_timeout: indexa::DEFAULT_LOCK_TIMEOUT,
        }
    }

    /// The same directory, with the factories' lock timeout (`--lock-timeout`; see
    /// [`Factory::set_lock_timeout`]).
    pub fn with_lock_timeout(self, lock_timeout: Duration) -> DataDir {
        DataDir {
            lock_timeout,
            ..self
        }
    }

    /// The lock timeout the factories get.
    pub fn lock_timeout(&self) -> Duration {
        self.lock_timeout
    }

    /// The URL, when `--data-dir` is one (`scheme://…`): a PostgreSQL database's, or one
    /// that making a factory refuses with `SyntaxError` (another scheme).
    pub fn url(&self) -> Option<&str> {
        self.path.to_str().filter(|p| Factory::is_url(p))
    }

    /// Refuses `command` on a PostgreSQL database: it works on SQLite files.
    ///
    /// # Errors
    /// `InvalidStateError` when the data directory is a PostgreSQL URL.
    pub fn files_only(&self, command: &str) -> Result<(), CliError> {
        match self.url() {
            Some(_) => Err(CliError::new(
                "InvalidStateError",
                format!("indexa {command} works on the SQLite files of a data directory, not on a database server"),
            )),
            None => Ok(()),
        }
    }

    fn factory_over(&self) -> Result<Factory, CliError> {
        let mut factory = match self.url() {
            Some(url) => Factory::open_url(url)?,
            None => Factory::open_dir(&self.path)?,
        };
        factory.set_lock_timeout(self.lock_timeout);
        Ok(factory)
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// A factory over the directory, creating the directory if needed (for commands that
    /// may create a database).
    ///
    /// # Errors
    /// `UnknownError` if the directory cannot be created.
    pub fn factory(&self) -> Result<Factory, CliError> {
        self.factory_over()
    }

    /// A factory over the directory if it exists; `None` when it does not (then there are
    /// no databases, and read-only commands create nothing).
    ///
    /// # Errors
    /// `UnknownError` if the directory cannot be opened.
    pub fn existing_factory(&self) -> Result<Option<Factory>, CliError> {
        if self.url().is_some() || self.path.is_dir() {
            Ok(Some(self.factory_over()?))
        } else {
            Ok(None)
        }
    }

    /// The version of database `name`, 0 when it does not exist. Only that database's file
    /// is looked at.
    ///
    /// # Errors
    /// `UnknownError` when something is under the database's file name but it is not an
    /// Indexa database of that name (damaged, foreign, a directory, a link, a FIFO, …).
    pub fn version_of(factory: &Factory, name: &str) -> Result<u64, CliError> {
        Ok(factory.version(name)?)
    }

    /// The `NotFoundError` for database `name`, which is not in this data directory.
    pub fn missing(&self, name: &str) -> CliError {
        let place = match self.url() {
            // Never the URL, which may hold a password.
            Some(_) => "the PostgreSQL database".to_string(),
            None => self.path.display().to_string(),
        };
        CliError::new(
            "NotFoundError",
            format!("database {name:?} does not exist in {place}"),
        )
    }

    /// Opens database `name`, which must exist; never creates one.
    ///
    /// # Errors
    /// `NotFoundError` when there is no such database; `UnknownError` when the file under its
    /// name is not a usable Indexa database; engine errors otherwise.
    pub fn open_existing(&self, name: &str) -> Result<Database, CliError> {
        let missing = || self.missing(name);
        let factory = self.existing_factory()?.ok_or_else(missing)?;
        if DataDir::version_of(&factory, name)? == 0 {
            return Err(missing());
        }
        // The database exists, so no upgrade runs; should it vanish meanwhile, the upgrade
        // refuses to create it again.
        factory
            .open(name, None, |_, _, _| {
                Err(indexa::Error::NotFound(String::new()))
            })
            .map_err(|e| match e {
                indexa::Error::NotFound(_) => missing(),
                other => other.into(),
            })
    }
}
