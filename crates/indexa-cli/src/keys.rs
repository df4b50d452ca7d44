//! Command-line arguments that name keys, key ranges, key paths and indexes.

use clap::Args;
use indexa::{parse_key, parse_value, Key, KeyPath, KeyRange};

use crate::error::CliError;

/// Reads a key given on the command line in the text form (`'"ES"'`, `42`, `'["ES","Madrid"]'`).
///
/// `what` names the argument in the error message (e.g. `--only`).
///
/// # Errors
/// `SyntaxError` for text that is not JSON (with a hint when it looks like a bare string),
/// `DataError` for JSON that is not a valid key.
pub fn key_arg(what: &str, text: &str) -> Result<Key, CliError> {
    parse_key(text).map_err(|e| {
        let mut err = CliError::from(e).context(format!("{what} {text}"));
        if err.name == "SyntaxError" && !text.trim_start().starts_with(['"', '[', '{']) {
            err.message
                .push_str(" (keys are JSON: write a string key in quotes, e.g. '\"ES\"')");
        }
        err
    })
}

/// Reads a key path argument: a key path string (`id`, `name.common`, or `""` for the whole
/// value); several comma-separated ones for a compound key path (`country,name`); or a JSON
/// array of strings (`'["a"]'`, the only way to write a one-element compound key path).
///
/// # Errors
/// `SyntaxError` for an invalid key path, `TypeError` for a JSON value that is not a string
/// or an array of strings.
pub fn key_path_arg(text: &str) -> Result<KeyPath, CliError> {
    let trimmed = text.trim();
    let parsed = if trimmed.starts_with('[') {
        parse_value(trimmed).and_then(|v| KeyPath::from_value(&v))
    } else if trimmed.contains(',') {
        let parts: Vec<&str> = trimmed.split(',').map(str::trim).collect();
        KeyPath::compound(&parts)
    } else {
        KeyPath::parse(trimmed)
    };
    parsed.map_err(|e| CliError::from(e).context(format!("key path {text:?}")))
}

/// An index to create, from `--index NAME=KEYPATH[:unique][:multi]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexSpec {
    /// The index's name.
    pub name: String,
    /// Its key path.
    pub key_path: KeyPath,
    /// `:unique` was given.
    pub unique: bool,
    /// `:multi` was given (a multiEntry index).
    pub multi_entry: bool,
}

impl IndexSpec {
    /// Parses `NAME=KEYPATH[:unique][:multi]` (the flags in either order); KEYPATH as for
    /// [`key_path_arg`]. A bare `NAME[:unique][:multi]` uses NAME as the key path.
    ///
    /// # Errors
    /// `SyntaxError` when `=` or the name is missing, or the key path is invalid.
    pub fn parse(text: &str) -> Result<IndexSpec, CliError> {
        let bad = |why: &str| {
            CliError::new(
                "SyntaxError",
                format!("--index {text:?}: {why} (expected NAME[=KEYPATH][:unique][:multi])"),
            )
        };
        let (name, mut rest) = text.split_once('=').unwrap_or(("", text));
        let (mut unique, mut multi_entry) = (false, false);
        loop {
            if let Some(r) = rest.strip_suffix(":unique").filter(|_| !unique) {
                unique = true;
                rest = r;
            } else if let Some(r) = rest.strip_suffix(":multi").filter(|_| !multi_entry) {
                multi_entry = true;
                rest = r;
            } else {
                break;
            }
        }
        // `--index country` is short for `--index country=country`.
        let name = if name.is_empty() && !text.contains('=') {
            rest
        } else {
            name
        };
        if name.is_empty() {
            return Err(bad("the index name is empty"));
        }
        let key_path = key_path_arg(rest).map_err(|e| e.context(format!("--index {name}")))?;
        Ok(IndexSpec {
            name: name.to_owned(),
            key_path,
            unique,
            multi_entry,
        })
    }
}

/// The key-range options shared by `query` and `delete`.
#[derive(Debug, Clone, Default, Args)]
pub struct RangeArgs {
    /// Only this key (JSON text form, e.g. '"ES"', 42, '["ES","Madrid"]').
    #[arg(long, value_name = "KEY", allow_negative_numbers = true, conflicts_with_all = ["lower", "upper", "prefix"])]
    pub only: Option<String>,
    /// Keys at or above this key.
    #[arg(
        long,
        value_name = "KEY",
        allow_negative_numbers = true,
        conflicts_with = "prefix"
    )]
    pub lower: Option<String>,
    /// Exclude the --lower key itself.
    #[arg(long, requires = "lower")]
    pub lower_open: bool,
    /// Keys at or below this key.
    #[arg(
        long,
        value_name = "KEY",
        allow_negative_numbers = true,
        conflicts_with = "prefix"
    )]
    pub upper: Option<String>,
    /// Exclude the --upper key itself.
    #[arg(long, requires = "upper")]
    pub upper_open: bool,
    /// Exactly the string keys that start with TEXT (raw text, not JSON).
    #[arg(long, value_name = "TEXT")]
    pub prefix: Option<String>,
}

impl RangeArgs {
    /// The key range the options describe; `None` when none was given (all keys).
    ///
    /// # Errors
    /// As [`key_arg`]; `DataError` when `--lower` is above `--upper` or they are equal with
    /// an open side.
    pub fn range(&self) -> Result<Option<KeyRange>, CliError> {
        if let Some(only) = &self.only {
            return Ok(Some(KeyRange::only(key_arg("--only", only)?)));
        }
        if let Some(prefix) = &self.prefix {
            return Ok(Some(KeyRange::prefix(prefix.as_str())));
        }
        let lower = self
            .lower
            .as_deref()
            .map(|t| key_arg("--lower", t))
            .transpose()?;
        let upper = self
            .upper
            .as_deref()
            .map(|t| key_arg("--upper", t))
            .transpose()?;
        if lower.is_none() && upper.is_none() {
            return Ok(None);
        }
        KeyRange::from_bounds(lower, upper, self.lower_open, self.upper_open)
            .map(Some)
            .map_err(|e| CliError::from(e).context("--lower/--upper"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_paths() {
        assert_eq!(key_path_arg("id").unwrap(), KeyPath::parse("id").unwrap());
        assert_eq!(
            key_path_arg("country,name").unwrap(),
            KeyPath::compound(&["country", "name"]).unwrap()
        );
        assert_eq!(
            key_path_arg(r#"["a"]"#).unwrap(),
            KeyPath::compound(&["a"]).unwrap()
        );
        assert_eq!(key_path_arg("").unwrap(), KeyPath::parse("").unwrap());
        assert_eq!(key_path_arg("a b").unwrap_err().name, "SyntaxError");
        assert_eq!(key_path_arg("[1]").unwrap_err().name, "TypeError");
        assert_eq!(key_path_arg("[]").unwrap_err().name, "SyntaxError");
    }

    #[test]
    fn index_specs() {
        let s = IndexSpec::parse("borders=borders:multi").unwrap();
        assert_eq!(
            (s.name.as_str(), s.unique, s.multi_entry),
            ("borders", false, true)
        );
        let s = IndexSpec::parse("u=a.b:multi:unique").unwrap();
        assert_eq!(s.key_path, KeyPath::parse("a.b").unwrap());
        assert!(s.unique && s.multi_entry);
        let s = IndexSpec::parse("cn=country,name").unwrap();
        assert!(s.key_path.is_compound() && !s.unique);
        let s = IndexSpec::parse("country").unwrap();
        assert_eq!(
            (s.name.as_str(), s.key_path),
            ("country", KeyPath::parse("country").unwrap())
        );
        let s = IndexSpec::parse("uuid:unique").unwrap();
        assert_eq!((s.name.as_str(), s.unique), ("uuid", true));
        assert_eq!(IndexSpec::parse("a b").unwrap_err().name, "SyntaxError");
        assert_eq!(IndexSpec::parse("=a").unwrap_err().name, "SyntaxError");
        assert_eq!(
            IndexSpec::parse("x=a:unique:unique").unwrap_err().name,
            "SyntaxError"
        );
    }

    #[test]
    fn keys() {
        assert_eq!(key_arg("KEY", r#""ES""#).unwrap(), Key::from("ES"));
        let e = key_arg("KEY", "ES").unwrap_err();
        assert_eq!(e.name, "SyntaxError");
        assert!(e.message.starts_with("KEY ES: "), "{}", e.message);
        assert!(e.message.contains("in quotes"), "{}", e.message);
        assert_eq!(key_arg("KEY", "null").unwrap_err().name, "DataError");
    }
}
