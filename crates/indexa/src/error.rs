//! The error type of the engine, one variant per DOMException name the spec uses.
//!
//! Source: <https://www.w3.org/TR/IndexedDB-3/#exceptions>.

/// An error named after the DOMException the IndexedDB spec throws in the same situation.
///
/// Every variant carries a human-readable message naming the offending input;
/// [`Error::name`] returns the spec's name (`"DataError"`, …), which text interfaces print.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Data given to an operation does not meet requirements: an invalid key, an invalid key
    /// range, a key path that yields no key, a value a key cannot be injected into.
    #[error("DataError: {0}")]
    Data(String),
    /// A mutation failed a constraint: a duplicate key in `add`, a unique-index violation, a
    /// duplicate object store or index name, an exhausted key generator.
    #[error("ConstraintError: {0}")]
    Constraint(String),
    /// A write was attempted in a `readonly` transaction.
    #[error("ReadOnlyError: {0}")]
    ReadOnly(String),
    /// A request was placed against a transaction that has committed or aborted.
    #[error("TransactionInactiveError: {0}")]
    TransactionInactive(String),
    /// An operation was called on an object in the wrong state (e.g. schema change outside an
    /// upgrade, a cursor that is not positioned on a record, an object store that was deleted).
    #[error("InvalidStateError: {0}")]
    InvalidState(String),
    /// The object store, index or database asked for does not exist (or is outside the scope).
    #[error("NotFoundError: {0}")]
    NotFound(String),
    /// An invalid operation on an object, e.g. `autoIncrement` with an array key path.
    #[error("InvalidAccessError: {0}")]
    InvalidAccess(String),
    /// A database was opened with a version lower than its current version.
    #[error("VersionError: {0}")]
    Version(String),
    /// The transaction was aborted (explicitly, or because an upgrade failed).
    #[error("AbortError: {0}")]
    Abort(String),
    /// The disk is full or a size limit was hit.
    #[error("QuotaExceededError: {0}")]
    QuotaExceeded(String),
    /// A key path or another string argument does not follow the required grammar.
    #[error("SyntaxError: {0}")]
    Syntax(String),
    /// An argument has the wrong type or an out-of-range value (e.g. `advance(0)`).
    #[error("TypeError: {0}")]
    Type(String),
    /// An I/O or storage failure not caused by the caller (SQLite error, unreadable file).
    #[error("UnknownError: {0}")]
    Unknown(String),
}

impl Error {
    /// The spec's name for this error, e.g. `"DataError"`.
    pub fn name(&self) -> &'static str {
        match self {
            Error::Data(_) => "DataError",
            Error::Constraint(_) => "ConstraintError",
            Error::ReadOnly(_) => "ReadOnlyError",
            Error::TransactionInactive(_) => "TransactionInactiveError",
            Error::InvalidState(_) => "InvalidStateError",
            Error::NotFound(_) => "NotFoundError",
            Error::InvalidAccess(_) => "InvalidAccessError",
            Error::Version(_) => "VersionError",
            Error::Abort(_) => "AbortError",
            Error::QuotaExceeded(_) => "QuotaExceededError",
            Error::Syntax(_) => "SyntaxError",
            Error::Type(_) => "TypeError",
            Error::Unknown(_) => "UnknownError",
        }
    }

    /// The message without the name prefix.
    pub fn message(&self) -> &str {
        match self {
            Error::Data(m)
            | Error::Constraint(m)
            | Error::ReadOnly(m)
            | Error::TransactionInactive(m)
            | Error::InvalidState(m)
            | Error::NotFound(m)
            | Error::InvalidAccess(m)
            | Error::Version(m)
            | Error::Abort(m)
            | Error::QuotaExceeded(m)
            | Error::Syntax(m)
            | Error::Type(m)
            | Error::Unknown(m) => m,
        }
    }
}

/// Shorthand for results whose error is [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
