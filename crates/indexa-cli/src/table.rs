//! The output formats of `indexa query`: NDJSON lines, one JSON array, an aligned table, or
//! CSV.
//!
//! Table and CSV columns are `key`, `primaryKey` (left out with `--values-only`), then the
//! first record's top-level properties in order (or one column `value` when the first value
//! is not an object). A string cell is the string itself; every other cell is its text form
//! (`docs/text-form.md`), nested arrays and objects included; a property a record lacks is
//! an empty cell. In a table, control characters (newlines, tabs, escape, …) are shown as
//! JSON escapes (`\n`, `\t`, `\u001b`), so each row is one line; columns are as wide as
//! their longest cell in characters (wide and combining characters are not measured).

use std::io::Write;

use clap::ValueEnum;
use indexa::{key_to_text, value_to_text, Key, Value};

use crate::error::CmdResult;
use crate::output::{JsonObject, Lines};

/// `indexa query --format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum OutputFormat {
    /// One JSON object per line: {"key","primaryKey","value"} (or the value alone with
    /// --values-only).
    #[default]
    Ndjson,
    /// One JSON array holding what ndjson prints line by line.
    Json,
    /// Columns aligned for a terminal, with a header line.
    Table,
    /// RFC 4180 CSV with a header line.
    Csv,
}

/// One result: its key, primary key and (unless keys only) value.
pub struct Row {
    /// The index key (the record's key when querying a store).
    pub key: Key,
    /// The record's key.
    pub primary_key: Key,
    /// The record's value; `None` for `--keys-only`.
    pub value: Option<Value>,
}

/// Writes rows in one format. Table output is held until [`RowWriter::finish`] (the column
/// widths depend on every row); the other formats are written as rows come.
pub struct RowWriter<'o, W: Write> {
    out: &'o mut Lines<W>,
    format: OutputFormat,
    values_only: bool,
    rows: u64,
    /// The columns taken from the first value: `None` for a single `value` column.
    columns: Option<Option<Vec<String>>>,
    table: Vec<Vec<String>>,
}

fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.to_string().unwrap_or_else(|| value_to_text(v)),
        other => value_to_text(other),
    }
}

fn key_cell(k: &Key) -> String {
    match k {
        Key::String(_) => cell(&Value::from(k)),
        other => key_to_text(other),
    }
}

/// A table cell: `text` with each control character written as its JSON escape.
fn table_cell(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out
}

fn csv_field(text: &str) -> String {
    if text.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", text.replace('"', "\"\""))
    } else {
        text.to_owned()
    }
}

impl<'o, W: Write> RowWriter<'o, W> {
    /// A writer of `format` onto `out`.
    pub fn new(out: &'o mut Lines<W>, format: OutputFormat, values_only: bool) -> Self {
        RowWriter {
            out,
            format,
            values_only,
            rows: 0,
            columns: None,
            table: Vec::new(),
        }
    }

    /// The JSON text ndjson and json print for a row.
    fn json_text(&self, row: &Row) -> String {
        match (&row.value, self.values_only) {
            (Some(v), true) => value_to_text(v),
            (value, _) => {
                let mut o = JsonObject::new()
                    .key("key", &row.key)
                    .key("primaryKey", &row.primary_key);
                if let Some(v) = value {
                    o = o.value("value", v);
                }
                o.finish()
            }
        }
    }

    /// The header and the cells of a row, for table and csv.
    fn cells(&mut self, row: &Row) -> (Option<Vec<String>>, Vec<String>) {
        let mut header = None;
        if self.columns.is_none() {
            let props = match &row.value {
                Some(Value::Object(map)) => Some(
                    map.keys()
                        .map(|k| cell(&Value::String(k.clone())))
                        .collect::<Vec<_>>(),
                ),
                _ => None,
            };
            let mut names = Vec::new();
            if !self.values_only {
                names.extend(["key".to_owned(), "primaryKey".to_owned()]);
            }
            match (&props, &row.value) {
                (Some(p), _) => names.extend(p.iter().cloned()),
                (None, Some(_)) => names.push("value".to_owned()),
                (None, None) => {}
            }
            header = Some(names);
            self.columns = Some(props);
        }
        let mut cells = Vec::new();
        if !self.values_only {
            cells.push(key_cell(&row.key));
            cells.push(key_cell(&row.primary_key));
        }
        match (&self.columns, &row.value) {
            (Some(Some(props)), Some(v)) => {
                for p in props {
                    cells.push(v.get(p).map_or_else(String::new, cell));
                }
            }
            (_, Some(v)) => cells.push(cell(v)),
            (_, None) => {}
        }
        (header, cells)
    }

    /// Writes (or, for a table, keeps) one row.
    ///
    /// # Errors
    /// Output errors.
    pub fn row(&mut self, row: &Row) -> CmdResult {
        self.rows += 1;
        match self.format {
            OutputFormat::Ndjson => self.out.line(&self.json_text(row))?,
            OutputFormat::Json => {
                let sep = if self.rows == 1 { "[" } else { "," };
                let text = format!("{sep}{}", self.json_text(row));
                self.out.write(&text)?;
            }
            OutputFormat::Csv => {
                let (header, cells) = self.cells(row);
                if let Some(h) = header {
                    let line: Vec<String> = h.iter().map(|c| csv_field(c)).collect();
                    self.out.line(&line.join(","))?;
                }
                let line: Vec<String> = cells.iter().map(|c| csv_field(c)).collect();
                self.out.line(&line.join(","))?;
            }
            OutputFormat::Table => {
                let (header, cells) = self.cells(row);
                if let Some(h) = header {
                    self.table.push(h.iter().map(|c| table_cell(c)).collect());
                }
                self.table
                    .push(cells.iter().map(|c| table_cell(c)).collect());
            }
        }
        Ok(())
    }

    /// Ends the output: closes the JSON array, or prints the table.
    ///
    /// # Errors
    /// Output errors.
    pub fn finish(self) -> CmdResult {
        match self.format {
            OutputFormat::Json if self.rows == 0 => self.out.line("[]")?,
            OutputFormat::Json => self.out.line("]")?,
            OutputFormat::Table => {
                let columns = self.table.iter().map(Vec::len).max().unwrap_or(0);
                let mut widths = vec![0; columns];
                for r in &self.table {
                    for (i, c) in r.iter().enumerate() {
                        widths[i] = widths[i].max(c.chars().count());
                    }
                }
                for (n, r) in self.table.iter().enumerate() {
                    let mut line = String::new();
                    for (i, c) in r.iter().enumerate() {
                        if i + 1 < r.len() {
                            line.push_str(&format!("{c:<w$}  ", w = widths[i]));
                        } else {
                            line.push_str(c);
                        }
                    }
                    self.out.line(&line)?;
                    if n == 0 {
                        let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
                        self.out.line(&rule.join("  "))?;
                    }
                }
            }
            OutputFormat::Ndjson | OutputFormat::Csv => {}
        }
        Ok(())
    }
}
