//! Values to and from the JSON text form (`indexa::text`, issue 2); the one place the crate
//! converts.

use indexa::Value;

/// A value in the text form (compact JSON, numbers as JavaScript writes them).
pub(crate) fn to_text(value: &Value) -> String {
    indexa::value_to_text(value)
}

/// Parses the text form; the error is a human-readable message.
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    indexa::parse_value(text).map_err(|e| e.message().to_string())
}
