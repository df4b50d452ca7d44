//! The command-line face: `indexa shard --config FILE <command>` (issue 5, "CLI").
//!
//! Every command prints exactly one compact JSON line (the text form) on stdout. A failure
//! prints `{"error":{"code":…,"message":…}}` plus, where they apply, `shard`, `table`, `id`,
//! `rowRemoved` and `cause`, also on stdout, and exits with status 1. Usage errors (a
//! `--param` or VALUES_JSON that is not valid JSON, or holds an integer literal a double does
//! not hold exactly) print a message on stderr and exit with status 2, as clap does for its
//! own usage errors.

use std::path::PathBuf;
use std::process::ExitCode;

use indexa::{Object, Utf16String, Value};

use crate::error::Error;
use crate::router::{InsertOptions, InsertResult, NextIdOptions, Router};
use crate::shard::{Cell, Outcome};
use indexmap::IndexMap;

/// Arguments of `indexa shard`: the configuration file and a command.
#[derive(Debug, Clone, clap::Args)]
pub struct ShardArgs {
    /// The TOML configuration file (shards, catalog, strategy).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    /// What to do.
    #[command(subcommand)]
    pub command: ShardCommand,
}

/// `--param JSON`, repeatable: the values bound to the statement's `?` placeholders, in order,
/// in the JSON text form.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct Params {
    /// A value for the next `?` placeholder, in the JSON text form (e.g. `5`, `"Ada"`,
    /// `{"$binary":"AAE="}`).
    #[arg(long = "param", value_name = "JSON", allow_hyphen_values = true)]
    pub params: Vec<String>,
}

/// `--id-column C` and `--table T` of the insert commands.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct InsertFlags {
    /// Read the generated id only from this RETURNING column (and delete a refused row by it).
    #[arg(long, value_name = "C")]
    pub id_column: Option<String>,
    /// The table written to: enables deleting a row refused as a collision.
    #[arg(long, value_name = "T")]
    pub table: Option<String>,
}

/// The commands of `indexa shard`.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ShardCommand {
    /// Run a script (e.g. DDL) on every shard → `{"shards":[…]}`.
    ExecAll {
        /// The SQL script. May start with `-` (a `--` comment).
        #[arg(allow_hyphen_values = true)]
        sql: String,
    },
    /// Run a statement on one shard → `{"rowsAffected":N}`.
    RunShard {
        /// The shard name.
        shard: String,
        /// The statement, with `?` placeholders. May start with `-` (a `--` comment).
        #[arg(allow_hyphen_values = true)]
        sql: String,
        /// The placeholder values.
        #[command(flatten)]
        params: Params,
    },
    /// The first row of a query on one shard → row object or null.
    FirstShard {
        /// The shard name.
        shard: String,
        /// The query, with `?` placeholders. May start with `-` (a `--` comment).
        #[arg(allow_hyphen_values = true)]
        sql: String,
        /// The placeholder values.
        #[command(flatten)]
        params: Params,
    },
    /// Every row of a query on one shard → array.
    AllShard {
        /// The shard name.
        shard: String,
        /// The query, with `?` placeholders. May start with `-` (a `--` comment).
        #[arg(allow_hyphen_values = true)]
        sql: String,
        /// The placeholder values.
        #[command(flatten)]
        params: Params,
    },
    /// A query on every shard → one flat array, shards in configuration order.
    AllShards {
        /// The query, with `?` placeholders. May start with `-` (a `--` comment).
        #[arg(allow_hyphen_values = true)]
        sql: String,
        /// The placeholder values.
        #[command(flatten)]
        params: Params,
    },
    /// An INSERT on the shard the strategy picks → `{"generatedId":…,"shard":"…"}`.
    Insert {
        /// The INSERT, with `?` placeholders. May start with `-` (a `--` comment).
        #[arg(allow_hyphen_values = true)]
        sql: String,
        /// The placeholder values.
        #[command(flatten)]
        params: Params,
        /// `--id-column` and `--table`.
        #[command(flatten)]
        flags: InsertFlags,
    },
    /// An INSERT on the named shard → `{"generatedId":…,"shard":"…"}`.
    InsertShard {
        /// The shard name.
        shard: String,
        /// The INSERT, with `?` placeholders. May start with `-` (a `--` comment).
        #[arg(allow_hyphen_values = true)]
        sql: String,
        /// The placeholder values.
        #[command(flatten)]
        params: Params,
        /// `--id-column` and `--table`.
        #[command(flatten)]
        flags: InsertFlags,
    },
    /// A cluster-unique id for a table → `{"id":N}`.
    NextId {
        /// The table.
        table: String,
        /// The id column (default `id`).
        #[arg(long, value_name = "C")]
        column: Option<String>,
        /// A floor the id never undercuts.
        #[arg(long, value_name = "N")]
        min: Option<u64>,
    },
    /// Insert an object's fields as a row under a key → `{"shard":"…"}`.
    InsertInto {
        /// The key (raw text), e.g. the id as a string; may start with `-`.
        #[arg(allow_hyphen_values = true)]
        key: String,
        /// The table.
        table: String,
        /// The row as a JSON object in the text form.
        values: String,
    },
    /// The first row of a query on the key's shard → row object or null.
    First {
        /// The key (raw text); may start with `-` (e.g. a negative id).
        #[arg(allow_hyphen_values = true)]
        key: String,
        /// The query, with `?` placeholders. May start with `-` (a `--` comment).
        #[arg(allow_hyphen_values = true)]
        sql: String,
        /// The placeholder values.
        #[command(flatten)]
        params: Params,
    },
    /// Every row of a query on the key's shard → array.
    All {
        /// The key (raw text); may start with `-` (e.g. a negative id).
        #[arg(allow_hyphen_values = true)]
        key: String,
        /// The query, with `?` placeholders. May start with `-` (a `--` comment).
        #[arg(allow_hyphen_values = true)]
        sql: String,
        /// The placeholder values.
        #[command(flatten)]
        params: Params,
    },
    /// A write on the key's shard (placing an unmapped key) → `{"rowsAffected":N}`.
    Run {
        /// The key (raw text); may start with `-` (e.g. a negative id).
        #[arg(allow_hyphen_values = true)]
        key: String,
        /// The statement, with `?` placeholders. May start with `-` (a `--` comment).
        #[arg(allow_hyphen_values = true)]
        sql: String,
        /// The placeholder values.
        #[command(flatten)]
        params: Params,
    },
}

/// What a command printed and its exit status, for callers that do not want the process's own
/// streams (tests, embedding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CliOutput {
    /// The one JSON line for stdout (without the newline); empty for a usage error.
    pub stdout: String,
    /// A usage error's message for stderr; empty otherwise.
    pub stderr: String,
    /// 0 on success, 1 on a router error, 2 on a usage error.
    pub code: u8,
}

/// Runs a command on a fresh tokio runtime, prints its output and returns the exit status.
pub fn run_cli(args: ShardArgs) -> ExitCode {
    let output = run_cli_output(args);
    if !output.stdout.is_empty() {
        println!("{}", output.stdout);
    }
    if !output.stderr.is_empty() {
        eprintln!("{}", output.stderr);
    }
    ExitCode::from(output.code)
}

/// Runs a command on a fresh tokio runtime and returns what [`run_cli`] would print.
pub fn run_cli_output(args: ShardArgs) -> CliOutput {
    match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime.block_on(execute(args)),
        Err(e) => CliOutput {
            stdout: String::new(),
            stderr: format!("cannot start the async runtime: {e}"),
            code: 1,
        },
    }
}

/// Runs a command on the current tokio runtime and returns what [`run_cli`] would print.
pub async fn execute(args: ShardArgs) -> CliOutput {
    let parsed = match parse_inputs(&args.command) {
        Ok(parsed) => parsed,
        Err(message) => {
            return CliOutput {
                stdout: String::new(),
                stderr: message,
                code: 2,
            }
        }
    };
    let result = match Router::from_file(&args.config).await {
        Ok(router) => dispatch(&router, args.command, parsed).await,
        Err(error) => Err(error),
    };
    match result {
        Ok(value) => CliOutput {
            stdout: value.into_text(),
            stderr: String::new(),
            code: 0,
        },
        Err(error) => CliOutput {
            stdout: error_text(&error),
            stderr: String::new(),
            code: 1,
        },
    }
}

/// The JSON inputs of a command, parsed before anything runs.
struct Inputs {
    params: Vec<Value>,
    values: Object,
}

fn parse_inputs(command: &ShardCommand) -> Result<Inputs, String> {
    let raw = match command {
        ShardCommand::RunShard { params, .. }
        | ShardCommand::FirstShard { params, .. }
        | ShardCommand::AllShard { params, .. }
        | ShardCommand::AllShards { params, .. }
        | ShardCommand::Insert { params, .. }
        | ShardCommand::InsertShard { params, .. }
        | ShardCommand::First { params, .. }
        | ShardCommand::All { params, .. }
        | ShardCommand::Run { params, .. } => params.params.as_slice(),
        ShardCommand::ExecAll { .. }
        | ShardCommand::NextId { .. }
        | ShardCommand::InsertInto { .. } => &[],
    };
    // A JSON number is a double: an integer literal it cannot hold (an id past 2^53) would
    // be rounded to another id, so it is refused before anything runs.
    let exact = |what: &str, text: &str| {
        match crate::text::inexact_integer(text) {
        Some(integer) => Err(format!(
            "{what} {text}: the integer {integer} is not exact as a JSON number (a double); pass it as a string, \"{integer}\""
        )),
        None => Ok(()),
    }
    };
    let params = raw
        .iter()
        .map(|text| {
            exact("--param", text)?;
            crate::text::parse(text).map_err(|e| format!("--param {text}: not valid JSON: {e}"))
        })
        .collect::<Result<Vec<_>, _>>()?;
    if let ShardCommand::InsertInto { values, .. } = command {
        exact("VALUES_JSON", values)?;
    }
    let values = match command {
        ShardCommand::InsertInto { values, .. } => match crate::text::parse(values) {
            Ok(Value::Object(map)) => map,
            Ok(_) => return Err(format!("VALUES_JSON {values}: not a JSON object")),
            Err(e) => return Err(format!("VALUES_JSON {values}: not valid JSON: {e}")),
        },
        _ => Object::default(),
    };
    Ok(Inputs { params, values })
}

/// A command's result: a value in the text form, or JSON text built around exact ids.
enum Output {
    Value(Value),
    Json(String),
}

impl Output {
    fn into_text(self) -> String {
        match self {
            Output::Value(value) => crate::text::to_text(&value),
            Output::Json(text) => text,
        }
    }
}

/// A JSON object from member names and their members already written as JSON text.
fn json_object(fields: &[(&str, String)]) -> String {
    let members: Vec<String> = fields
        .iter()
        .map(|(name, json)| format!("{}:{json}", crate::text::to_text(&Value::from(*name))))
        .collect();
    format!("{{{}}}", members.join(","))
}

fn object(fields: Vec<(&str, Value)>) -> Value {
    Value::Object(
        fields
            .into_iter()
            .map(|(name, value)| (Utf16String::from(name), value))
            .collect(),
    )
}

/// One result row as a JSON object, integers with all their digits (a later column of the
/// same name wins at the first one's position, as in [`crate::Row`]).
fn row_json(columns: &[Utf16String], cells: &[Cell]) -> String {
    let mut members: IndexMap<&Utf16String, String> = IndexMap::with_capacity(columns.len());
    for (name, cell) in columns.iter().zip(cells) {
        let json = match cell {
            Cell::Integer(i) => i.to_string(),
            other => crate::text::to_text(&other.to_value()),
        };
        members.insert(name, json);
    }
    let members: Vec<String> = members
        .into_iter()
        .map(|(name, json)| {
            format!(
                "{}:{json}",
                crate::text::to_text(&Value::String(name.clone()))
            )
        })
        .collect();
    format!("{{{}}}", members.join(","))
}

/// Every row of the outcomes as one JSON array.
fn rows_output(outcomes: &[Outcome]) -> Output {
    let rows: Vec<String> = outcomes
        .iter()
        .flat_map(|o| o.cells.iter().map(|cells| row_json(&o.columns, cells)))
        .collect();
    Output::Json(format!("[{}]", rows.join(",")))
}

/// The first row of an outcome as a JSON object, or `null`.
fn first_output(outcome: Option<Outcome>) -> Output {
    Output::Json(
        outcome
            .as_ref()
            .and_then(|o| o.cells.first().map(|cells| row_json(&o.columns, cells)))
            .unwrap_or_else(|| "null".to_string()),
    )
}

/// `{"generatedId":ID,"shard":"NAME"}`, plus `"generatedIds":[…]` when the statement
/// generated more than one id; ids as exact JSON integers or strings.
fn insert_output(result: InsertResult) -> Output {
    let mut fields = vec![
        ("generatedId", result.generated_id.to_json()),
        ("shard", crate::text::to_text(&Value::from(result.shard))),
    ];
    if result.generated_ids.len() > 1 {
        let ids: Vec<String> = result.generated_ids.iter().map(|id| id.to_json()).collect();
        fields.push(("generatedIds", format!("[{}]", ids.join(","))));
    }
    Output::Json(json_object(&fields))
}

fn affected_value(rows: u64) -> Value {
    object(vec![("rowsAffected", Value::Number(rows as f64))])
}

async fn dispatch(router: &Router, command: ShardCommand, inputs: Inputs) -> Result<Output, Error> {
    let params = inputs.params.as_slice();
    let insert_options = |flags: InsertFlags| InsertOptions {
        id_column: flags.id_column,
        table: flags.table,
    };
    Ok(Output::Value(match command {
        ShardCommand::ExecAll { sql } => {
            let shards = router.exec_all(&sql).await?;
            object(vec![(
                "shards",
                Value::Array(shards.into_iter().map(Value::from).collect()),
            )])
        }
        ShardCommand::RunShard { shard, sql, .. } => {
            affected_value(router.run_shard(&shard, &sql, params).await?)
        }
        ShardCommand::FirstShard { shard, sql, .. } => {
            return Ok(first_output(Some(
                router.query_shard(&shard, &sql, params).await?,
            )))
        }
        ShardCommand::AllShard { shard, sql, .. } => {
            return Ok(rows_output(&[router
                .query_shard(&shard, &sql, params)
                .await?]))
        }
        ShardCommand::AllShards { sql, .. } => {
            return Ok(rows_output(&router.query_all_shards(&sql, params).await?))
        }
        ShardCommand::Insert { sql, flags, .. } => {
            return Ok(insert_output(
                router.insert(&sql, params, &insert_options(flags)).await?,
            ))
        }
        ShardCommand::InsertShard {
            shard, sql, flags, ..
        } => {
            return Ok(insert_output(
                router
                    .insert_shard(&shard, &sql, params, &insert_options(flags))
                    .await?,
            ))
        }
        ShardCommand::NextId { table, column, min } => {
            let id = router
                .next_id(&table, &NextIdOptions { column, min })
                .await?;
            object(vec![("id", Value::Number(id as f64))])
        }
        ShardCommand::InsertInto { key, table, .. } => {
            let shard = router.insert_into(&key, &table, &inputs.values).await?;
            object(vec![("shard", Value::from(shard))])
        }
        ShardCommand::First { key, sql, .. } => {
            return Ok(first_output(router.query_routed(&key, &sql, params).await?))
        }
        ShardCommand::All { key, sql, .. } => {
            let outcome = router.query_routed(&key, &sql, params).await?;
            return Ok(rows_output(outcome.as_slice()));
        }
        ShardCommand::Run { key, sql, .. } => affected_value(router.run(&key, &sql, params).await?),
    }))
}

/// `{"error":{"code","message",…}}` for an error; the id as an exact JSON integer or string.
pub(crate) fn error_text(error: &Error) -> String {
    let text = |value: Value| crate::text::to_text(&value);
    let mut fields = vec![
        ("code", text(Value::from(error.code()))),
        ("message", text(Value::from(error.to_string()))),
    ];
    if let Some(shard) = error.shard() {
        fields.push(("shard", text(Value::from(shard))));
    }
    if let Some(table) = error.table() {
        fields.push(("table", text(Value::from(table))));
    }
    if let Some(id) = error.id() {
        fields.push(("id", id.to_json()));
    }
    if let Some(removed) = error.row_removed() {
        fields.push(("rowRemoved", text(Value::Bool(removed))));
    }
    if let Some(cause) = error.cause() {
        fields.push(("cause", text(Value::from(cause.to_string()))));
    }
    json_object(&[("error", json_object(&fields))])
}
