//! Shard router: named SQL shards (SQLite files, PostgreSQL databases) behind one API that
//! routes rows by key, reads database-generated ids and hands out cluster-unique ids
//! (seed 004, "Generated Ids"; issue 5).
//!
//! - [`Router::insert`] / [`Router::insert_shard`] run an INSERT in a transaction on the
//!   shard, read every generated id exactly ([`GeneratedId`]: a 64-bit integer or a string,
//!   from the RETURNING rows or SQLite's rowid of the one row this statement inserted) and map
//!   each to the shard before committing; with several shards an id already mapped elsewhere
//!   is refused with `GENERATED_KEY_COLLISION` (and, given the table, the refused rows are
//!   removed). Any other failure leaves nothing of the statement on the shard.
//! - [`Router::next_id`] hands out ids unique across shards: MAX over every shard + 1, or with
//!   the coordinator an atomic sequence in the catalog, optionally served in leased blocks.
//! - [`Router::insert_into`], [`Router::first`], [`Router::all`], [`Router::run`] route by key;
//!   the `*_shard` methods pin a shard; [`Router::all_shards`] and [`Router::exec_all`] fan out.
//! - Statements use `?` placeholders on every backend. Parameters and rows are
//!   [`indexa::Value`]s (the CLI reads and writes them in the JSON text form).
//! - The mapping, the sequences and the round-robin rotation live in the catalog, a SQLite
//!   file or a PostgreSQL database ([`Config`]).
//! - Errors are one enum with stable codes ([`Error::code`]).
//! - [`ShardArgs`] and [`run_cli`] are the `indexa shard` command.
//!
//! ```
//! use indexa::Value;
//! use indexa_shard::{Config, Error, GeneratedId, InsertOptions, Router};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let config = Config::from_toml(
//!     r#"
//!     [catalog]
//!     coordinator = true
//!     [shards]
//!     db-a = "sqlite:a.db"
//!     db-b = "sqlite:b.db"
//!     "#,
//!     dir.path(),
//! )?;
//! tokio::runtime::Runtime::new()?.block_on(async {
//!     let router = Router::open(&config).await?;
//!     router
//!         .exec_all("CREATE TABLE auto_users (id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT)")
//!         .await?;
//!
//!     // Each shard's AUTOINCREMENT hands out 1: the second insert is refused.
//!     let sql = "INSERT INTO auto_users (name) VALUES (?)";
//!     let ada = router
//!         .insert_shard("db-a", sql, &[Value::from("Ada")], &InsertOptions::default())
//!         .await?;
//!     assert_eq!(ada.generated_id, GeneratedId::Integer(1));
//!     let options = InsertOptions { table: Some("auto_users".into()), ..Default::default() };
//!     let refused = router.insert_shard("db-b", sql, &[Value::from("Grace")], &options).await;
//!     assert_eq!(refused.unwrap_err().code(), "GENERATED_KEY_COLLISION");
//!
//!     // Cluster-unique ids instead: the coordinator continues after the cross-shard maximum.
//!     let id = router.next_id("auto_users", &Default::default()).await?;
//!     assert_eq!(id, 2);
//!     let mut row = indexa::Object::default();
//!     row.insert("id".into(), Value::Number(id as f64));
//!     row.insert("name".into(), Value::from("Grace"));
//!     router.insert_into(&id.to_string(), "auto_users", &row).await?;
//!     let found = router
//!         .first("2", "SELECT name FROM auto_users WHERE id = ?", &[Value::Number(2.0)])
//!         .await?;
//!     let found = Value::Object(found.expect("row 2 is on its shard"));
//!     assert_eq!(found.get("name"), Some(&Value::from("Grace")));
//!     Ok::<_, Error>(())
//! })?;
//! # Ok(())
//! # }
//! ```
#![warn(missing_docs)]

mod catalog;
mod cli;
mod config;
mod error;
mod generated_id;
mod placement;
mod router;
mod shard;
mod sql;
mod text;

pub use catalog::MAX_ID;
pub use cli::{
    execute, run_cli, run_cli_output, CliOutput, InsertFlags, Params, ShardArgs, ShardCommand,
};
pub use config::{CatalogConfig, Config, Location};
pub use error::{Error, Result};
pub use generated_id::GeneratedId;
pub use placement::{hash_shard_index, Strategy};
pub use router::{InsertOptions, InsertResult, NextIdOptions, Router};
pub use shard::Row;
pub use sql::{has_returning, rewrite_placeholders, validate_identifier, Dialect};
