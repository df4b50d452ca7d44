//! Generated ids: what an INSERT's RETURNING rows or SQLite's last-insert rowid yield, exactly
//! (seed 004, "CollegeDB reads the generated id from the statement's RETURNING row…").

use std::fmt;

use indexa::{Utf16String, Value};
use rust_decimal::prelude::ToPrimitive;

use crate::error::{Error, Result};
use crate::shard::{Cell, Outcome};

/// Column names a RETURNING row's id is read from when no `id_column` is given, in order of
/// preference, compared ignoring ASCII letter case (seed 004: "id or rowid … along with a few
/// driver aliases such as lastInsertId").
const ID_COLUMNS: [&str; 5] = ["id", "rowid", "lastInsertId", "last_row_id", "insertId"];

/// The largest integer a double holds exactly together with every smaller one (2^53): a real
/// (floating-point) id is taken only at or below it.
const EXACT_DOUBLE: f64 = 9_007_199_254_740_992.0;

/// A database-generated id, exact: a 64-bit integer (SQLite INTEGER / rowid, PostgreSQL
/// `int2`/`int4`/`int8`, an integral `numeric` in the 64-bit range) or a string (a text or
/// `uuid` key). It is mapped under its text, [`GeneratedId::key`].
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum GeneratedId {
    /// An integer id, never rounded.
    Integer(i64),
    /// A text id (a `uuid` in PostgreSQL's output form, `8-4-4-4-12` lower-case hex digits).
    Text(String),
}

impl GeneratedId {
    /// The mapping key: JavaScript's `String(id)` of the exact id (decimal digits with a
    /// leading `-` when negative, or the text itself).
    pub fn key(&self) -> String {
        self.to_string()
    }

    /// The id as one JSON value: an integer as its exact decimal digits (a JSON number, even
    /// beyond 2^53), a text id as a JSON string.
    pub fn to_json(&self) -> String {
        match self {
            GeneratedId::Integer(i) => i.to_string(),
            GeneratedId::Text(text) => crate::text::to_text(&Value::from(text.as_str())),
        }
    }
}

impl fmt::Display for GeneratedId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GeneratedId::Integer(i) => write!(f, "{i}"),
            GeneratedId::Text(text) => f.write_str(text),
        }
    }
}

/// Every id a statement generated, in row order: one per RETURNING row, or SQLite's
/// last-insert rowid of a statement that inserted exactly one row.
///
/// # Errors
/// [`Error::GeneratedKeyUnavailable`] when a row lacks the id column, an id is not an exact
/// integer in the 64-bit range or a string, or a statement without returned rows inserted no
/// row with a new rowid or more than one row (only the last rowid would be known).
pub(crate) fn read_generated_ids(
    shard: &str,
    outcome: &Outcome,
    returning: bool,
    id_column: Option<&str>,
) -> Result<Vec<GeneratedId>> {
    let unavailable = |reason: String| Error::GeneratedKeyUnavailable {
        shard: shard.to_string(),
        reason,
    };
    if returning && !outcome.cells.is_empty() {
        let column = id_column_of(&outcome.columns, id_column).ok_or_else(|| {
            unavailable(match id_column {
                Some(column) => format!("the RETURNING row has no column {column}"),
                None => "the RETURNING row has no id, rowid, lastInsertId, last_row_id or insertId column; name the key column with --id-column (id_column in the Rust API)".to_string(),
            })
        })?;
        let name = column.to_string_lossy();
        return (0..outcome.cells.len())
            .map(|row| {
                let cell = outcome.cell(row, &column).ok_or_else(|| {
                    unavailable(format!("the RETURNING row has no column {name}"))
                })?;
                exact_id(cell).map_err(|held| {
                    unavailable(format!(
                        "the RETURNING column {name} holds {held}, not an integer in the 64-bit range or a string"
                    ))
                })
            })
            .collect();
    }
    match outcome.inserted_rowid {
        Some(_) if outcome.rows_affected > 1 => Err(unavailable(format!(
            "the statement inserted {} rows and only the last rowid is known; add RETURNING with the key column to read every id",
            outcome.rows_affected
        ))),
        Some(rowid) => Ok(vec![GeneratedId::Integer(rowid)]),
        None => Err(unavailable(
            "the statement returned no row and inserted no row with a new rowid; add RETURNING with the key column"
                .to_string(),
        )),
    }
}

/// The RETURNING column the id is read from: only `id_column` when given, else the first of
/// [`ID_COLUMNS`] present (exact name first, then ignoring ASCII letter case).
fn id_column_of(columns: &[Utf16String], id_column: Option<&str>) -> Option<Utf16String> {
    let wanted: Vec<&str> = match id_column {
        Some(column) => vec![column],
        None => ID_COLUMNS.to_vec(),
    };
    wanted.iter().find_map(|want| {
        columns
            .iter()
            .find(|name| name.eq_str(want))
            .or_else(|| {
                columns
                    .iter()
                    .find(|name| name.to_string_lossy().eq_ignore_ascii_case(want))
            })
            .cloned()
    })
}

/// A cell as an exact id, or the text of what it holds.
fn exact_id(cell: &Cell) -> std::result::Result<GeneratedId, String> {
    match cell {
        Cell::Integer(i) => Ok(GeneratedId::Integer(*i)),
        Cell::Numeric(d) if d.fract().is_zero() => d
            .to_i64()
            .map(GeneratedId::Integer)
            .ok_or_else(|| d.to_string()),
        Cell::Numeric(d) => Err(d.to_string()),
        Cell::Other(Value::Number(n)) if n.fract() == 0.0 && n.abs() <= EXACT_DOUBLE => {
            Ok(GeneratedId::Integer(*n as i64))
        }
        Cell::Other(Value::String(s)) => Ok(GeneratedId::Text(s.to_string_lossy())),
        Cell::Other(other) => Err(crate::text::to_text(other)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every 64-bit integer a shard returns is the id, its mapping key and its JSON, digit
        /// for digit; a double without fraction is taken only where it is exact.
        #[test]
        fn integer_ids_are_exact(n in any::<i64>(), x in any::<f64>()) {
            let ids = read_generated_ids("s", &outcome("id", vec![Cell::Integer(n)]), true, None)
                .unwrap();
            prop_assert_eq!(&ids, &vec![GeneratedId::Integer(n)]);
            prop_assert_eq!(ids[0].key().parse::<i64>().unwrap(), n);
            prop_assert_eq!(ids[0].to_json(), n.to_string());
            let real = read_generated_ids("s", &outcome("id", vec![Cell::Other(Value::Number(x))]), true, None);
            match real {
                Ok(ids) => {
                    prop_assert!(x.fract() == 0.0 && x.abs() <= EXACT_DOUBLE);
                    prop_assert_eq!(&ids, &vec![GeneratedId::Integer(x as i64)]);
                    prop_assert_eq!(ids[0].key().parse::<f64>().unwrap(), x);
                }
                Err(_) => prop_assert!(!(x.fract() == 0.0 && x.abs() <= EXACT_DOUBLE)),
            }
        }
    }

    fn outcome(column: &str, cells: Vec<Cell>) -> Outcome {
        Outcome {
            columns: vec![Utf16String::from(column)],
            rows_affected: cells.len() as u64,
            cells: cells.into_iter().map(|c| vec![c]).collect(),
            inserted_rowid: None,
        }
    }

    #[test]
    fn integers_stay_exact_and_every_row_is_read() {
        let ids = read_generated_ids(
            "s",
            &outcome(
                "ID",
                vec![
                    Cell::Integer(9_007_199_254_740_993),
                    Cell::Integer(i64::MAX),
                    Cell::Integer(i64::MIN),
                ],
            ),
            true,
            None,
        )
        .unwrap();
        assert_eq!(
            ids,
            vec![
                GeneratedId::Integer(9_007_199_254_740_993),
                GeneratedId::Integer(i64::MAX),
                GeneratedId::Integer(i64::MIN)
            ]
        );
        assert_eq!(ids[0].key(), "9007199254740993");
        assert_eq!(ids[1].to_json(), "9223372036854775807");
    }

    #[test]
    fn unrepresentable_ids_are_unavailable() {
        for cell in [
            Cell::Other(Value::Number(1.5)),
            Cell::Other(Value::Number(1e19)),
            Cell::Other(Value::Null),
            Cell::Other(Value::Binary(vec![1])),
            Cell::Numeric("9223372036854775808".parse().unwrap()),
            Cell::Numeric("2.5".parse().unwrap()),
        ] {
            let err = read_generated_ids("s", &outcome("id", vec![cell.clone()]), true, None)
                .unwrap_err();
            assert_eq!(err.code(), "GENERATED_KEY_UNAVAILABLE", "{cell:?}");
        }
        let ids = read_generated_ids(
            "s",
            &outcome(
                "id",
                vec![
                    Cell::Numeric("-42".parse().unwrap()),
                    Cell::Other(Value::Number(7.0)),
                    Cell::Other(Value::from("abc")),
                ],
            ),
            true,
            None,
        )
        .unwrap();
        assert_eq!(
            ids,
            vec![
                GeneratedId::Integer(-42),
                GeneratedId::Integer(7),
                GeneratedId::Text("abc".into())
            ]
        );
        assert_eq!(ids[2].to_json(), "\"abc\"");
    }

    #[test]
    fn a_multi_row_insert_without_returning_has_no_ids() {
        let mut plain = Outcome {
            rows_affected: 2,
            inserted_rowid: Some(2),
            ..Outcome::default()
        };
        let err = read_generated_ids("s", &plain, false, None).unwrap_err();
        assert_eq!(err.code(), "GENERATED_KEY_UNAVAILABLE");
        plain.rows_affected = 1;
        assert_eq!(
            read_generated_ids("s", &plain, false, None).unwrap(),
            vec![GeneratedId::Integer(2)]
        );
    }
}
