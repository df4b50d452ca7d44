//! Values to and from the JSON text form; the one place the crate converts.

use indexa::{Object, Utf16String, Value};

/// A value in the text form (compact JSON).
pub(crate) fn to_text(value: &Value) -> String {
    serde_json::to_string(&to_json(value)).unwrap_or_default()
}

/// Parses the text form; the error is a human-readable message.
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    let json: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(from_json(json))
}

fn to_json(value: &Value) -> serde_json::Value {
    use serde_json::Value as J;
    match value {
        Value::Undefined | Value::Null => J::Null,
        Value::Bool(b) => J::Bool(*b),
        Value::Number(n) => {
            if n.fract() == 0.0 && n.abs() < 9.007_199_254_740_992e15 {
                J::from(*n as i64)
            } else {
                serde_json::Number::from_f64(*n).map_or(J::Null, J::Number)
            }
        }
        Value::String(s) => J::String(s.to_string_lossy()),
        Value::Date(ms) => serde_json::json!({ "$date": ms }),
        Value::Binary(b) => serde_json::json!({ "$binary": b }),
        Value::Array(items) => J::Array(items.iter().map(to_json).collect()),
        Value::Object(map) => J::Object(
            map.iter()
                .map(|(k, v)| (k.to_string_lossy(), to_json(v)))
                .collect(),
        ),
    }
}

fn from_json(json: serde_json::Value) -> Value {
    use serde_json::Value as J;
    match json {
        J::Null => Value::Null,
        J::Bool(b) => Value::Bool(b),
        J::Number(n) => Value::Number(n.as_f64().unwrap_or(f64::NAN)),
        J::String(s) => Value::from(s),
        J::Array(items) => Value::Array(items.into_iter().map(from_json).collect()),
        J::Object(map) => Value::Object(
            map.into_iter()
                .map(|(k, v)| (Utf16String::from(k), from_json(v)))
                .collect::<Object>(),
        ),
    }
}
