//! How commands fail: an error with its spec name, a quiet failure, or a closed stdout.

use std::fmt;
use std::io;

/// An error a command reports on stderr as `indexa: <name>: <message>`.
///
/// `name` is the IndexedDB spec's error name (`DataError`, `NotFoundError`, …), so scripts can
/// match on it; `message` names the offending input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliError {
    /// The spec's error name, e.g. `"DataError"`.
    pub name: &'static str,
    /// What went wrong, naming the offending input.
    pub message: String,
}

impl CliError {
    /// An error with the given spec name and message.
    pub fn new(name: &'static str, message: impl Into<String>) -> CliError {
        CliError {
            name,
            message: message.into(),
        }
    }

    /// Prefixes the message with `context` and `": "` (e.g. `record 17`).
    pub fn context(mut self, context: impl fmt::Display) -> CliError {
        self.message = format!("{context}: {}", self.message);
        self
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.name, self.message)
    }
}

impl From<indexa::Error> for CliError {
    fn from(e: indexa::Error) -> CliError {
        CliError::new(e.name(), e.message())
    }
}

/// Why a command did not succeed.
#[derive(Debug)]
pub enum Failure {
    /// An error to print on stderr; exit status 1.
    Error(CliError),
    /// A failure already reported (or, like a `get` miss, with nothing to report); exit 1.
    Quiet,
    /// Standard output was closed by its reader (e.g. `| head`); exit quietly.
    BrokenPipe,
    /// A command that reported its own outcome and chose its exit status (`indexa shard`).
    Exit(std::process::ExitCode),
}

impl From<CliError> for Failure {
    fn from(e: CliError) -> Failure {
        Failure::Error(e)
    }
}

impl From<indexa::Error> for Failure {
    fn from(e: indexa::Error) -> Failure {
        Failure::Error(e.into())
    }
}

impl From<io::Error> for Failure {
    /// An error writing standard output.
    fn from(e: io::Error) -> Failure {
        if e.kind() == io::ErrorKind::BrokenPipe {
            Failure::BrokenPipe
        } else {
            Failure::Error(CliError::new(
                "UnknownError",
                format!("cannot write the output: {e}"),
            ))
        }
    }
}

/// What every command returns.
pub type CmdResult = Result<(), Failure>;
