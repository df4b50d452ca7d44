//! The `indexa` command-line tool: import and query data, inspect databases, and drive the
//! engine with the NDJSON batch protocol (`docs/batch-protocol.md`).
//!
//! The binary (`src/main.rs`) only parses the command line and maps errors to exit codes;
//! every command lives in a module here, so tests can also run them in-process.
#![warn(missing_docs)]

pub mod admin;
pub mod batch;
pub mod check;
pub mod dump;
pub mod error;
pub mod import;
pub mod keys;
pub mod maintenance;
pub mod open;
pub mod output;
pub mod query;
pub mod schema;
pub mod scratch;
pub mod shell;
pub mod table;
