//! `indexa shell`: an interactive prompt over one database.
//!
//! Each line is a batch-protocol operation (`docs/batch-protocol.md`) run in its own
//! readwrite transaction, or a dot command (`.help`). Between `.begin` and `.commit` (or
//! `.abort`) the operations share one transaction. Errors are printed as the protocol's
//! `{"error":…}` lines and never end the shell. On a terminal the prompt has line editing
//! and history (kept in `~/.indexa_history`); otherwise lines are read from standard input
//! without prompts, so scripts and tests can drive it.

use std::io::{self, BufRead, IsTerminal, Read, Write};
use std::path::PathBuf;

use clap::Args;
use indexa::{Factory, TransactionMode, Value};
use rustyline::error::ReadlineError;
use rustyline::DefaultEditor;

use crate::batch::{self, BatchArgs, DurabilityArg, Mode};
use crate::error::{CliError, CmdResult};
use crate::open::DataDir;
use crate::output::{JsonObject, Lines};
use crate::schema::{self, SchemaArgs};

/// `indexa shell`: an interactive prompt.
#[derive(Debug, Clone, Args)]
pub struct ShellArgs {
    /// The database (it must exist: create stores with `create-store` or `import`).
    pub db: String,
}

const HELP: &str = "\
Each line is a batch-protocol operation, run in its own transaction, e.g.
  {\"op\":\"put\",\"store\":\"s\",\"value\":{\"id\":1},\"key\":1}
  {\"op\":\"getAll\",\"store\":\"s\",\"count\":10}
or one of:
  .schema          the schema, as create-store/create-index commands
  .stores          the object stores, one per line
  .count STORE     the number of records in STORE
  .begin [readonly]  run the following operations in one transaction
  .commit          commit that transaction
  .abort           abort it
  .help            this text
  .quit            leave (also end of input)";

/// Where lines come from: a line editor on a terminal, else plain standard input.
enum Source {
    Editor(Box<DefaultEditor>, Option<PathBuf>),
    Plain(io::StdinLock<'static>),
}

impl Source {
    fn open() -> Source {
        if io::stdin().is_terminal() && io::stdout().is_terminal() {
            if let Ok(mut editor) = DefaultEditor::new() {
                let history =
                    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".indexa_history"));
                if let Some(path) = &history {
                    // A missing history file is the normal first run.
                    let _ = editor.load_history(path);
                }
                return Source::Editor(Box::new(editor), history);
            }
        }
        Source::Plain(io::stdin().lock())
    }

    /// The next line (without its newline); `None` at the end of input.
    fn line(&mut self, prompt: &str) -> io::Result<Option<String>> {
        match self {
            Source::Plain(stdin) => {
                let mut line = String::new();
                if stdin.read_line(&mut line)? == 0 {
                    return Ok(None);
                }
                while line.ends_with(['\n', '\r']) {
                    line.pop();
                }
                Ok(Some(line))
            }
            Source::Editor(editor, _) => loop {
                match editor.readline(prompt) {
                    Ok(line) => {
                        if !line.trim().is_empty() {
                            let _ = editor.add_history_entry(line.as_str());
                        }
                        return Ok(Some(line));
                    }
                    // Ctrl-C clears the line, as in other shells.
                    Err(ReadlineError::Interrupted) => continue,
                    Err(ReadlineError::Eof) => return Ok(None),
                    Err(e) => return Err(io::Error::other(e)),
                }
            },
        }
    }

    fn save(&mut self) {
        if let Source::Editor(editor, Some(path)) = self {
            // History is a convenience; failing to keep it is no error.
            let _ = editor.save_history(path);
        }
    }
}

/// Standard output for batch runs; in autocommit mode the `{"transaction":…}` line is left
/// out (each line is its own transaction, and an error line already says it failed).
struct Shown {
    hide_transaction: bool,
    pending: Vec<u8>,
}

impl Write for Shown {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(bytes);
        while let Some(end) = self.pending.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = self.pending.drain(..=end).collect();
            if !(self.hide_transaction && line.starts_with(b"{\"transaction\":")) {
                io::stdout().write_all(&line)?;
            }
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        io::stdout().flush()
    }
}

/// The operations of one `.begin` … `.commit` transaction, read from the source as the
/// batch asks for them: `.commit` and `.abort` become the protocol's commit and abort ops,
/// which end the transaction as those ops themselves do; the end of input aborts.
struct Transaction<'s> {
    source: &'s mut Source,
    buf: Vec<u8>,
    pos: usize,
    ended: bool,
    /// The input ended inside the transaction.
    eof: bool,
}

impl Read for Transaction<'_> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl BufRead for Transaction<'_> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        while self.pos == self.buf.len() && !self.ended {
            let line = match self.source.line("indexa*> ")? {
                None => {
                    self.eof = true;
                    self.ended = true;
                    r#"{"op":"abort"}"#.to_owned()
                }
                Some(l) => match l.trim() {
                    ".commit" => {
                        self.ended = true;
                        r#"{"op":"commit"}"#.to_owned()
                    }
                    ".abort" => {
                        self.ended = true;
                        r#"{"op":"abort"}"#.to_owned()
                    }
                    t if t.starts_with('.') => {
                        print_error(&CliError::new(
                            "InvalidStateError",
                            format!("{t} is not available inside a transaction: .commit or .abort first"),
                        ))?;
                        continue;
                    }
                    _ => {
                        self.ended = ends_transaction(&l);
                        l
                    }
                },
            };
            self.buf = line.into_bytes();
            self.buf.push(b'\n');
            self.pos = 0;
        }
        Ok(&self.buf[self.pos..])
    }

    fn consume(&mut self, n: usize) {
        self.pos += n;
    }
}

/// Whether `line` is the protocol's `commit` or `abort` op, which ends the transaction.
fn ends_transaction(line: &str) -> bool {
    match indexa::parse_value(line) {
        Ok(Value::Object(members)) => members
            .get(&indexa::Utf16String::from("op"))
            .and_then(|op| match op {
                Value::String(op) => op.to_string(),
                _ => None,
            })
            .is_some_and(|op| op == "commit" || op == "abort"),
        _ => false,
    }
}

/// After an error aborted a `.begin` transaction: answers every line with an error until
/// `.commit` (which reports that nothing was committed) or `.abort`, so no operation meant for
/// the transaction runs on its own. Returns true when the input ended.
fn until_ended(source: &mut Source) -> io::Result<bool> {
    while let Some(line) = source.line("indexa!> ")? {
        match line.trim() {
            "" => {}
            ".abort" => {
                let mut out = io::stdout().lock();
                writeln!(out, r#"{{"transaction":"aborted"}}"#)?;
                out.flush()?;
                return Ok(false);
            }
            ".commit" => {
                print_error(&CliError::new(
                    "AbortError",
                    ".commit: the transaction was aborted by the error above; nothing was committed",
                ))?;
                return Ok(false);
            }
            _ => print_error(&CliError::new(
                "InvalidStateError",
                "the transaction was aborted; .abort to end it",
            ))?,
        }
    }
    Ok(true)
}

fn print_error(e: &CliError) -> io::Result<()> {
    let line = JsonObject::new()
        .raw(
            "error",
            &JsonObject::new()
                .value("name", &Value::string(e.name))
                .value("message", &Value::string(&e.message))
                .finish(),
        )
        .finish();
    let mut out = io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush()
}

/// Runs a dot command other than `.begin`; returns false for `.quit`.
fn dot_command(dir: &DataDir, factory: &Factory, db: &str, line: &str) -> Result<bool, CliError> {
    let mut words = line.split_whitespace();
    let command = words.next().unwrap_or_default();
    let argument = words.next();
    let mut out = Lines::flushed(io::stdout().lock());
    let write_error =
        |e: io::Error| CliError::new("UnknownError", format!("cannot write the output: {e}"));
    match (command, argument) {
        (".quit" | ".exit", None) => return Ok(false),
        (".help", None) => {
            for l in HELP.lines() {
                out.line(l).map_err(write_error)?;
            }
        }
        (".schema", None) => {
            schema::schema(dir, &SchemaArgs { db: db.to_owned() }, &mut out).map_err(
                |f| match f {
                    crate::error::Failure::Error(e) => e,
                    _ => CliError::new("UnknownError", "cannot print the schema"),
                },
            )?;
        }
        (".stores", None) => {
            let database = factory.open(db, None, |_, _, _| Ok(()))?;
            for name in database.object_store_names_utf16() {
                let (name, _) = schema::printed_name(&name);
                out.line(&name).map_err(write_error)?;
            }
        }
        (".count", Some(store)) if words.next().is_none() => {
            let database = factory.open(db, None, |_, _, _| Ok(()))?;
            let tx = database.transaction(&[store], TransactionMode::ReadOnly)?;
            let n = tx.object_store(store)?.count(None)?;
            tx.commit()?;
            out.line(&n.to_string()).map_err(write_error)?;
        }
        (".commit" | ".abort", None) => {
            return Err(CliError::new(
                "InvalidStateError",
                format!("{command}: no transaction was begun (.begin)"),
            ))
        }
        _ => {
            return Err(CliError::new(
                "SyntaxError",
                format!("unknown command {line:?} (.help lists the commands)"),
            ))
        }
    }
    out.finish().map_err(write_error)?;
    Ok(true)
}

/// Runs `indexa shell`.
///
/// # Errors
/// `NotFoundError` for a missing database; `UnknownError` when standard input or output
/// fails. Errors of the lines themselves are printed, never returned.
pub fn shell(dir: &DataDir, a: &ShellArgs) -> CmdResult {
    dir.open_existing(&a.db)?;
    let factory = dir.factory()?;
    let mut source = Source::open();
    let io_error =
        |e: io::Error| CliError::new("UnknownError", format!("shell input or output failed: {e}"));
    if let Source::Editor(..) = source {
        println!("indexa shell on {:?}: .help for help, .quit to leave", a.db);
    }
    while let Some(line) = source.line("indexa> ").map_err(io_error)? {
        let trimmed = line.trim();
        if trimmed.is_empty() {
            continue;
        }
        let batch_args = |mode| BatchArgs {
            db: a.db.clone(),
            version: None,
            mode,
            durability: DurabilityArg::Default,
        };
        if let Some(rest) = trimmed.strip_prefix(".begin") {
            let mode = match rest.trim() {
                "" | "readwrite" => Mode::ReadWrite,
                "readonly" => Mode::ReadOnly,
                other => {
                    print_error(&CliError::new(
                        "SyntaxError",
                        format!(".begin {other}: the mode is readonly or readwrite"),
                    ))
                    .map_err(io_error)?;
                    continue;
                }
            };
            let mut tx = Transaction {
                source: &mut source,
                buf: Vec::new(),
                pos: 0,
                ended: false,
                eof: false,
            };
            let shown = Shown {
                hide_transaction: false,
                pending: Vec::new(),
            };
            batch::run(&factory, &a.db, &batch_args(mode), &mut tx, shown).map_err(io_error)?;
            if tx.eof {
                break;
            }
            // The batch stopped reading before the transaction's end: an error aborted it.
            if !tx.ended && until_ended(&mut source).map_err(io_error)? {
                break;
            }
            continue;
        }
        if trimmed.starts_with('.') {
            match dot_command(dir, &factory, &a.db, trimmed) {
                Ok(true) => {}
                Ok(false) => break,
                Err(e) => print_error(&e).map_err(io_error)?,
            }
            continue;
        }
        let shown = Shown {
            hide_transaction: true,
            pending: Vec::new(),
        };
        let input = format!("{line}\n");
        batch::run(
            &factory,
            &a.db,
            &batch_args(Mode::ReadWrite),
            input.as_bytes(),
            shown,
        )
        .map_err(io_error)?;
    }
    source.save();
    Ok(())
}
