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

/// The first integer literal of a JSON text (an optional `-` and digits, without fraction or
/// exponent, outside strings) that a double does not hold exactly, e.g. `9007199254740993`,
/// which the text form would read as 9007199254740992.
pub(crate) fn inexact_integer(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => {
                i += 1;
                while i < bytes.len() && bytes[i] != b'"' {
                    i += if bytes[i] == b'\\' { 2 } else { 1 };
                }
                i += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = i;
                i += 1;
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                let integer = &text[start..i];
                let fraction_or_exponent = matches!(bytes.get(i), Some(b'.' | b'e' | b'E'));
                while i < bytes.len()
                    && matches!(bytes[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-')
                {
                    i += 1;
                }
                let digits = integer.trim_start_matches('-');
                if fraction_or_exponent || digits.is_empty() {
                    continue;
                }
                let exact = integer
                    .parse::<i128>()
                    .is_ok_and(|n| (n as f64) as i128 == n);
                if !exact {
                    return Some(integer);
                }
            }
            _ => i += 1,
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_a_double_cannot_hold() {
        for (text, found) in [
            ("9007199254740993", Some("9007199254740993")),
            ("-9007199254740993", Some("-9007199254740993")),
            ("9007199254740992", None),
            ("9223372036854775807", Some("9223372036854775807")),
            (
                "{\"id\":12345678901234567891234567890}",
                Some("12345678901234567891234567890"),
            ),
            ("[1, -5, 2.5, 1e300, 9007199254740993.0]", None),
            ("\"9007199254740993\"", None),
            ("{\"a\\\"9007199254740993\":1}", None),
            ("{\"$binary\":\"AAE=\"}", None),
            ("-Infinity", None),
        ] {
            assert_eq!(inexact_integer(text), found, "{text}");
        }
    }
}
