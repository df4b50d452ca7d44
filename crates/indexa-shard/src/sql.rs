//! The little SQL the router understands: where code ends and literals or comments begin,
//! `?` placeholders, a `RETURNING` clause, and plain identifiers.
//!
//! Statements are otherwise passed through unparsed (issue 5, "Shards").

use std::ops::Range;

use crate::error::{Error, Result};

/// The SQL dialect a statement is written in; it decides which quoting forms exist.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// SQLite: `'…'` strings, `"…"`, `` `…` `` and `[…]` identifiers, `--` and `/* */` comments.
    Sqlite,
    /// PostgreSQL: `'…'` and `E'…'` strings, `$tag$…$tag$` strings, `"…"` identifiers, `--` and
    /// nesting `/* */` comments.
    Postgres,
}

/// The byte ranges of `sql` that are code: not inside a string literal, a quoted identifier or a
/// comment. An unterminated literal or comment runs to the end of the text.
fn code_ranges(sql: &str, dialect: Dialect) -> Vec<Range<usize>> {
    let bytes = sql.as_bytes();
    let mut ranges = Vec::new();
    let mut start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let skip_to = match bytes[i] {
            b'\'' => {
                let escapes = dialect == Dialect::Postgres
                    && i > 0
                    && matches!(bytes[i - 1], b'E' | b'e')
                    && (i < 2 || !is_word_byte(bytes[i - 2]));
                Some(end_of_quoted(bytes, i, b'\'', escapes))
            }
            b'"' => Some(end_of_quoted(bytes, i, b'"', false)),
            b'`' if dialect == Dialect::Sqlite => Some(end_of_quoted(bytes, i, b'`', false)),
            b'[' if dialect == Dialect::Sqlite => Some(
                bytes[i..]
                    .iter()
                    .position(|&b| b == b']')
                    .map_or(bytes.len(), |p| i + p + 1),
            ),
            b'-' if bytes.get(i + 1) == Some(&b'-') => Some(
                bytes[i..]
                    .iter()
                    .position(|&b| b == b'\n')
                    .map_or(bytes.len(), |p| i + p + 1),
            ),
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                Some(end_of_block_comment(bytes, i, dialect == Dialect::Postgres))
            }
            b'$' if dialect == Dialect::Postgres && (i == 0 || !is_word_byte(bytes[i - 1])) => {
                dollar_quote_end(sql, i)
            }
            _ => None,
        };
        match skip_to {
            Some(end) => {
                if start < i {
                    ranges.push(start..i);
                }
                i = end;
                start = end;
            }
            None => i += 1,
        }
    }
    if start < bytes.len() {
        ranges.push(start..bytes.len());
    }
    ranges
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b >= 0x80
}

/// End (exclusive) of a quoted token opened at `open` by `quote`; a doubled quote is an escaped
/// quote, and with `backslash` a backslash escapes the next byte.
fn end_of_quoted(bytes: &[u8], open: usize, quote: u8, backslash: bool) -> usize {
    let mut i = open + 1;
    while i < bytes.len() {
        if backslash && bytes[i] == b'\\' {
            i += 2;
        } else if bytes[i] == quote {
            if bytes.get(i + 1) == Some(&quote) {
                i += 2;
            } else {
                return i + 1;
            }
        } else {
            i += 1;
        }
    }
    bytes.len()
}

fn end_of_block_comment(bytes: &[u8], open: usize, nests: bool) -> usize {
    let mut depth = 1;
    let mut i = open + 2;
    while i < bytes.len() {
        if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
            depth -= 1;
            i += 2;
            if depth == 0 || !nests {
                return i;
            }
        } else if nests && bytes[i] == b'/' && bytes.get(i + 1) == Some(&b'*') {
            depth += 1;
            i += 2;
        } else {
            i += 1;
        }
    }
    bytes.len()
}

/// For a PostgreSQL dollar-quoted string opening at `open` (`$$` or `$tag$`), the end of the
/// closing tag; `None` when `$` does not open one (e.g. `$1`).
fn dollar_quote_end(sql: &str, open: usize) -> Option<usize> {
    let rest = &sql[open + 1..];
    let tag_len = rest.find('$')?;
    let tag = &rest[..tag_len];
    let valid_tag = tag.is_empty()
        || (!tag.starts_with(|c: char| c.is_ascii_digit())
            && tag.chars().all(|c| c.is_alphanumeric() || c == '_'));
    if !valid_tag {
        return None;
    }
    let delimiter = &sql[open..open + tag_len + 2];
    let body_start = open + delimiter.len();
    Some(
        sql[body_start..]
            .find(delimiter)
            .map_or(sql.len(), |p| body_start + p + delimiter.len()),
    )
}

/// Rewrites each `?` placeholder outside literals, quoted identifiers and comments to `$1`,
/// `$2`, … (PostgreSQL's form). Returns the new text and the number of placeholders.
///
/// Every such `?` is a placeholder, so PostgreSQL's `?`-named operators (`?|`, `?&` on jsonb)
/// must be written as their function forms.
pub fn rewrite_placeholders(sql: &str) -> (String, usize) {
    let mut out = String::with_capacity(sql.len() + 8);
    let mut count = 0;
    let mut last = 0;
    for range in code_ranges(sql, Dialect::Postgres) {
        for (offset, b) in sql.as_bytes()[range.clone()].iter().enumerate() {
            if *b == b'?' {
                let at = range.start + offset;
                out.push_str(&sql[last..at]);
                count += 1;
                out.push('$');
                out.push_str(&count.to_string());
                last = at + 1;
            }
        }
    }
    out.push_str(&sql[last..]);
    (out, count)
}

/// True when the statement has a `RETURNING` keyword (any letter case) outside literals,
/// quoted identifiers and comments.
pub fn has_returning(sql: &str, dialect: Dialect) -> bool {
    code_ranges(sql, dialect).into_iter().any(|range| {
        sql[range]
            .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '$'))
            .any(|word| word.eq_ignore_ascii_case("returning"))
    })
}

/// Checks that `name` is a plain SQL identifier, optionally schema-qualified: each part matches
/// `[A-Za-z_][A-Za-z0-9_]*` and is at most 63 bytes (PostgreSQL's limit).
///
/// # Errors
/// [`Error::InvalidIdentifier`] naming the identifier and the problem.
pub fn validate_identifier(name: &str) -> Result<()> {
    let invalid = |reason: &str| Error::InvalidIdentifier {
        identifier: name.to_string(),
        reason: reason.to_string(),
    };
    let parts: Vec<&str> = name.split('.').collect();
    if parts.len() > 2 {
        return Err(invalid("at most one '.' (schema.name) is allowed"));
    }
    for part in parts {
        let mut chars = part.chars();
        match chars.next() {
            None => return Err(invalid("empty name")),
            Some(c) if !(c.is_ascii_alphabetic() || c == '_') => {
                return Err(invalid("must start with an ASCII letter or '_'"))
            }
            Some(_) => {}
        }
        if !chars.all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(invalid("only ASCII letters, digits and '_' are allowed"));
        }
        if part.len() > 63 {
            return Err(invalid("longer than 63 bytes"));
        }
    }
    Ok(())
}

/// A validated identifier quoted so it means what the same name unquoted means, reserved words
/// included: PostgreSQL folds unquoted names to lower case, SQLite ignores their case.
pub(crate) fn quote_identifier(name: &str, dialect: Dialect) -> String {
    name.split('.')
        .map(|part| match dialect {
            Dialect::Postgres => format!("\"{}\"", part.to_ascii_lowercase()),
            Dialect::Sqlite => format!("\"{part}\""),
        })
        .collect::<Vec<_>>()
        .join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_outside_literals_and_comments_are_rewritten() {
        let sql = "SELECT '?', \"?\", ? -- ?\n, /* ? */ ?, E'\\'?', $$?$$, $t$ ? $t$, ?";
        let (out, n) = rewrite_placeholders(sql);
        assert_eq!(
            out,
            "SELECT '?', \"?\", $1 -- ?\n, /* ? */ $2, E'\\'?', $$?$$, $t$ ? $t$, $3"
        );
        assert_eq!(n, 3);
    }

    #[test]
    fn doubled_quotes_and_nested_comments() {
        let (out, n) = rewrite_placeholders("SELECT 'it''s ?', ? /* a /* ? */ ? */, ?");
        assert_eq!(out, "SELECT 'it''s ?', $1 /* a /* ? */ ? */, $2");
        assert_eq!(n, 2);
    }

    #[test]
    fn positional_dollar_is_not_a_quote() {
        let (out, n) = rewrite_placeholders("SELECT $1, ?");
        assert_eq!(out, "SELECT $1, $1");
        assert_eq!(n, 1);
    }

    #[test]
    fn returning_detection() {
        use Dialect::*;
        assert!(has_returning(
            "INSERT INTO t (a) VALUES (1) returning id",
            Sqlite
        ));
        assert!(has_returning(
            "INSERT INTO t DEFAULT VALUES\nRETURNING\tid",
            Postgres
        ));
        assert!(!has_returning(
            "INSERT INTO t (a) VALUES ('returning')",
            Sqlite
        ));
        assert!(!has_returning(
            "INSERT INTO t (\"returning\") VALUES (1)",
            Postgres
        ));
        assert!(!has_returning(
            "INSERT INTO t ([returning]) VALUES (1)",
            Sqlite
        ));
        assert!(!has_returning(
            "INSERT INTO t (a) VALUES (1) -- returning id",
            Sqlite
        ));
        assert!(!has_returning(
            "INSERT INTO t (a) VALUES (1) /* RETURNING */",
            Sqlite
        ));
        assert!(!has_returning(
            "INSERT INTO returning_log (a) VALUES (1)",
            Sqlite
        ));
    }

    #[test]
    fn identifiers() {
        assert!(validate_identifier("auto_users").is_ok());
        assert!(validate_identifier("public.Tickets").is_ok());
        for bad in ["", "1abc", "a b", "a;drop", "a.b.c", "\"x\"", "é"] {
            let err = validate_identifier(bad).unwrap_err();
            assert_eq!(err.code(), "INVALID_IDENTIFIER", "{bad}");
        }
        assert_eq!(
            quote_identifier("public.Tickets", Dialect::Postgres),
            "\"public\".\"tickets\""
        );
        assert_eq!(quote_identifier("Order", Dialect::Sqlite), "\"Order\"");
    }
}
