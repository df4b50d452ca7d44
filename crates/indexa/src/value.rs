//! The values records hold: a tree of JavaScript-like values.
//!
//! This is the subset of what the HTML structured clone algorithm carries that the engine
//! understands today (<https://html.spec.whatwg.org/multipage/structured-data.html>); the
//! binary codec ([`crate::encode_value`]) reserves room for more kinds.

use crate::key::Key;
use crate::object::Object;
use crate::utf16::Utf16String;

/// ECMAScript's TimeClip (<https://tc39.es/ecma262/#sec-timeclip>): the time value a Date
/// really holds. Milliseconds beyond ±8.64e15 (or not finite) give NaN, an invalid Date;
/// others are truncated toward zero, with `-0` becoming `+0`.
pub fn time_clip(ms: f64) -> f64 {
    if !ms.is_finite() || ms.abs() > 8.64e15 {
        return f64::NAN;
    }
    ms.trunc() + 0.0
}

/// A value stored in a record.
///
/// Unlike a [`Key`], a value may hold NaN and `-0.0`, and they survive storage exactly.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    /// JavaScript `undefined`.
    #[default]
    Undefined,
    /// JavaScript `null`.
    Null,
    /// A boolean.
    Bool(bool),
    /// A Number (any `f64`, NaN and `-0.0` included).
    Number(f64),
    /// A string as UTF-16 code units.
    String(Utf16String),
    /// A Date: its time value in milliseconds since the Unix epoch (NaN for an invalid Date).
    Date(f64),
    /// Binary data (an ArrayBuffer's bytes).
    Binary(Vec<u8>),
    /// An array of values.
    Array(Vec<Value>),
    /// A plain object: named properties in insertion order.
    Object(Object),
}

impl Value {
    /// The property `name` of an object value, or `None` (also for non-objects).
    pub fn get(&self, name: &str) -> Option<&Value> {
        match self {
            Value::Object(map) => map.get(&Utf16String::from(name)),
            _ => None,
        }
    }

    /// True when arrays and objects nest deeper than `limit` levels (a scalar is depth 0).
    /// The walk stops `limit` levels down, so any depth is safe to measure; it allocates
    /// nothing (it runs on every record written).
    pub(crate) fn nests_deeper_than(&self, limit: usize) -> bool {
        let deeper = |c: &Value| limit == 1 || c.nests_deeper_than(limit - 1);
        match self {
            Value::Array(_) | Value::Object(_) if limit == 0 => true,
            Value::Array(items) => items.iter().filter(|c| c.is_container()).any(deeper),
            Value::Object(map) => map.values().filter(|c| c.is_container()).any(deeper),
            _ => false,
        }
    }

    fn is_container(&self) -> bool {
        matches!(self, Value::Array(_) | Value::Object(_))
    }

    /// A string value from Rust text.
    pub fn string(s: &str) -> Value {
        Value::String(Utf16String::from(s))
    }
}

impl From<&Key> for Value {
    /// The ECMAScript value a key converts to
    /// (<https://www.w3.org/TR/IndexedDB-3/#convert-a-key-to-a-value>).
    fn from(key: &Key) -> Value {
        match key {
            Key::Number(n) => Value::Number(*n),
            Key::Date(ms) => Value::Date(*ms),
            Key::String(s) => Value::String(s.clone()),
            Key::Binary(b) => Value::Binary(b.clone()),
            Key::Array(keys) => Value::Array(keys.iter().map(Value::from).collect()),
        }
    }
}

impl From<Key> for Value {
    fn from(key: Key) -> Value {
        Value::from(&key)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::string(s)
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(Utf16String::from(s))
    }
}

impl From<f64> for Value {
    fn from(n: f64) -> Value {
        Value::Number(n)
    }
}

impl From<i32> for Value {
    fn from(n: i32) -> Value {
        Value::Number(f64::from(n))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<Vec<Value>> for Value {
    fn from(items: Vec<Value>) -> Value {
        Value::Array(items)
    }
}

impl From<Object> for Value {
    fn from(map: Object) -> Value {
        Value::Object(map)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nested(levels: usize) -> Value {
        (0..levels).fold(Value::Null, |inner, _| {
            Value::Array(vec![Value::Null, inner])
        })
    }

    #[test]
    fn nesting_depth_is_measured_against_the_limit() {
        assert!(!Value::Null.nests_deeper_than(0));
        assert!(Value::Array(Vec::new()).nests_deeper_than(0));
        assert!(!Value::Array(Vec::new()).nests_deeper_than(1));
        let mut object = Object::default();
        object.insert("a".into(), nested(2));
        let object = Value::Object(object);
        assert!(!object.nests_deeper_than(3));
        assert!(object.nests_deeper_than(2));
        assert!(!nested(5).nests_deeper_than(5));
        assert!(nested(6).nests_deeper_than(5));
    }
}
