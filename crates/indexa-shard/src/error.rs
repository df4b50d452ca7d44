//! The router's one error type, with stable string codes.

use crate::generated_id::GeneratedId;

/// Every failure the router reports.
///
/// [`Error::code`] gives a stable string (`"GENERATED_KEY_COLLISION"`, …) that text interfaces
/// print and callers may match on; the message ([`std::fmt::Display`]) is for people and may
/// change. New variants may be added, hence `#[non_exhaustive]`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `GENERATED_KEY_COLLISION`: an insert read a generated id that is already mapped to a
    /// different shard (seed 004, "The collision check runs only when more than one shard is
    /// configured"). Only raised with two or more shards; none of the statement's ids is
    /// mapped.
    ///
    /// `row_removed` tells whether the router removed the rows the refused INSERT wrote (only
    /// with the caller's `table`; it undoes the statement's transaction, so exactly those
    /// rows go); when that failed, `cause` carries the failure and the rows are left on
    /// `shard`. Without `table` the rows stay, committed.
    #[error("{}", collision_message(.shard, .id, .mapped_to, .table.as_deref(), *.rows, *.row_removed))]
    GeneratedKeyCollision {
        /// The shard the refused INSERT ran on (where the row was written).
        shard: String,
        /// The colliding generated id, exactly as read from the statement.
        id: GeneratedId,
        /// The shard the id was already mapped to.
        mapped_to: String,
        /// The table named by the caller, if any.
        table: Option<String>,
        /// How many rows the refused statement wrote (one per RETURNING row; 1 without
        /// RETURNING).
        rows: usize,
        /// True when the router removed the rows the statement had just written.
        row_removed: bool,
        /// Why the rows could not be removed (the shard transaction's rollback failed).
        #[source]
        cause: Option<Box<Error>>,
    },
    /// `GENERATED_KEY_UNAVAILABLE`: a generated id could not be read exactly from an insert:
    /// a RETURNING row lacks the id column (or the `id_column` the caller named) or holds a
    /// value that is not an integer in the 64-bit range or a string, or without returned rows
    /// the statement did not insert exactly one row that got a new rowid (seed 004, "If
    /// neither yields an id, the call throws GENERATED_KEY_UNAVAILABLE"). The statement is
    /// undone.
    #[error("generated key unavailable on shard {shard}: {reason}")]
    GeneratedKeyUnavailable {
        /// The shard the INSERT ran on.
        shard: String,
        /// What was missing.
        reason: String,
    },
    /// `SHARD_NOT_FOUND`: a shard name that is not in the configuration.
    #[error("shard not found: {shard:?}")]
    ShardNotFound {
        /// The name asked for.
        shard: String,
    },
    /// `INVALID_IDENTIFIER`: a table or column name that is not a plain SQL identifier
    /// (`[A-Za-z_][A-Za-z0-9_]*`, at most 63 bytes, optionally `schema.name`), or an insert's
    /// `table` that has no such id column on its shard. Raised before the statement runs.
    #[error("invalid SQL identifier {identifier:?}: {reason}")]
    InvalidIdentifier {
        /// The rejected name.
        identifier: String,
        /// What is wrong with it.
        reason: String,
    },
    /// `INVALID_CONFIG`: the configuration file cannot be read or does not follow the format.
    #[error("invalid configuration: {message}")]
    InvalidConfig {
        /// What is wrong.
        message: String,
    },
    /// `NO_SHARDS`: an operation needs a shard but none is configured.
    #[error("no shards configured")]
    NoShards,
    /// `QUERY_FAILED`: a statement failed on a shard (SQL error, connection failure, a
    /// parameter that does not convert to the column type, a result column of an unsupported
    /// type).
    #[error("query failed on shard {shard}: {message}")]
    QueryFailed {
        /// The shard the statement ran on.
        shard: String,
        /// The database's or the converter's message.
        message: String,
    },
    /// `COORDINATOR_UNAVAILABLE`: the catalog (id→shard mapping, sequences, round-robin
    /// rotation) could not be opened, read or written.
    #[error("coordinator unavailable: {message}")]
    CoordinatorUnavailable {
        /// The catalog database's message.
        message: String,
    },
    /// `ID_LIMIT_EXCEEDED`: an id would pass 2^53 (9007199254740992), the largest integer a
    /// JavaScript number holds exactly.
    #[error("id limit exceeded for {table}.{column}: ids stay at or below 2^53")]
    IdLimitExceeded {
        /// The table of the sequence.
        table: String,
        /// The id column of the sequence.
        column: String,
    },
}

/// The message of [`Error::GeneratedKeyCollision`]: what became of the statement's rows, in
/// the singular for one row and with their number for several (the whole statement is
/// refused, so all of its rows share one fate).
fn collision_message(
    shard: &str,
    id: &GeneratedId,
    mapped_to: &str,
    table: Option<&str>,
    rows: usize,
    row_removed: bool,
) -> String {
    let head =
        format!("generated key {id} from shard {shard} is already mapped to shard {mapped_to}");
    let several = rows > 1;
    match (table, row_removed, several) {
        (Some(table), true, false) => format!("{head}; the row was removed from {shard}.{table}"),
        (Some(table), true, true) => {
            format!("{head}; the statement's {rows} rows were removed from {shard}.{table}")
        }
        (Some(table), false, false) => format!(
            "{head}; the row could not be removed and is left on shard {shard} in table {table} with id {id}"
        ),
        (Some(table), false, true) => format!(
            "{head}; the statement's {rows} rows could not be removed and are left on shard {shard} in table {table}, id {id} among them"
        ),
        (None, _, false) => format!("{head}; the row stays on shard {shard} with id {id}"),
        (None, _, true) => format!(
            "{head}; the statement's {rows} rows stay on shard {shard}, id {id} among them"
        ),
    }
}

impl Error {
    /// The stable code of this error, e.g. `"SHARD_NOT_FOUND"`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::GeneratedKeyCollision { .. } => "GENERATED_KEY_COLLISION",
            Error::GeneratedKeyUnavailable { .. } => "GENERATED_KEY_UNAVAILABLE",
            Error::ShardNotFound { .. } => "SHARD_NOT_FOUND",
            Error::InvalidIdentifier { .. } => "INVALID_IDENTIFIER",
            Error::InvalidConfig { .. } => "INVALID_CONFIG",
            Error::NoShards => "NO_SHARDS",
            Error::QueryFailed { .. } => "QUERY_FAILED",
            Error::CoordinatorUnavailable { .. } => "COORDINATOR_UNAVAILABLE",
            Error::IdLimitExceeded { .. } => "ID_LIMIT_EXCEEDED",
        }
    }

    /// The shard the error concerns, when there is one.
    pub fn shard(&self) -> Option<&str> {
        match self {
            Error::GeneratedKeyCollision { shard, .. }
            | Error::GeneratedKeyUnavailable { shard, .. }
            | Error::ShardNotFound { shard }
            | Error::QueryFailed { shard, .. } => Some(shard),
            _ => None,
        }
    }

    /// The table the error concerns, when there is one.
    pub fn table(&self) -> Option<&str> {
        match self {
            Error::GeneratedKeyCollision { table, .. } => table.as_deref(),
            Error::IdLimitExceeded { table, .. } => Some(table),
            _ => None,
        }
    }

    /// The id the error concerns (the colliding generated id), when there is one.
    pub fn id(&self) -> Option<&GeneratedId> {
        match self {
            Error::GeneratedKeyCollision { id, .. } => Some(id),
            _ => None,
        }
    }

    /// For a collision where the caller named the table: whether the refused statement's rows
    /// were removed.
    pub fn row_removed(&self) -> Option<bool> {
        match self {
            Error::GeneratedKeyCollision {
                table: Some(_),
                row_removed,
                ..
            } => Some(*row_removed),
            _ => None,
        }
    }

    /// The underlying failure (a collision whose row could not be removed carries the failed
    /// delete here).
    pub fn cause(&self) -> Option<&Error> {
        match self {
            Error::GeneratedKeyCollision { cause, .. } => cause.as_deref(),
            _ => None,
        }
    }

    pub(crate) fn query(shard: &str, message: impl std::fmt::Display) -> Error {
        Error::QueryFailed {
            shard: shard.to_string(),
            message: message.to_string(),
        }
    }

    pub(crate) fn coordinator(message: impl std::fmt::Display) -> Error {
        Error::CoordinatorUnavailable {
            message: message.to_string(),
        }
    }

    pub(crate) fn config(message: impl std::fmt::Display) -> Error {
        Error::InvalidConfig {
            message: message.to_string(),
        }
    }
}

/// Shorthand for results whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
