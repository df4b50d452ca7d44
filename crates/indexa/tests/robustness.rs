//! Robustness of the parsers on arbitrary input (the CI counterpart of the fuzz targets in
//! `fuzz/`): key paths here; key and value decoding and the text form have the same
//! properties in their modules' unit tests. None may panic; what parses must round-trip.

use indexa::{
    check_that_a_key_could_be_injected_into_a_value, extract_key_from_value_using_key_path,
    inject_key_into_value_using_key_path, parse_value, Key, KeyPath, KeyPathExtraction,
};
use proptest::prelude::*;

/// Text made of key-path-like pieces, so that many cases are valid key paths.
fn key_path_text() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(
        &[
            "a", "b", "_", "$", "é", "ℵ", "x1", "1", ".", "..", " ", "", "length", "\u{200c}",
            "\u{0}", "𝒳", "-",
        ][..],
    );
    prop::collection::vec(piece, 0..8).prop_map(|pieces| pieces.concat())
}

/// Values in the text form that key paths can walk into.
fn value_text() -> impl Strategy<Value = &'static str> {
    prop::sample::select(
        &[
            r#"{"a":1}"#,
            r#"{"a":{"b":"x"}}"#,
            r#"{"a":[1,2],"b":{"$date":0}}"#,
            r#"{"é":{"ℵ":[["k"]]}}"#,
            r#""text""#,
            r#"[1,2,3]"#,
            r#"{"a":{"$binary":"AAE="},"b":null}"#,
            r#"{"$object":{"$date":1}}"#,
            r#"{"_":{"$":{"x1":{"$number":"NaN"}}}}"#,
        ][..],
    )
}

fn check_key_path(text: &str, value: &str) -> Result<(), TestCaseError> {
    let Ok(key_path) = KeyPath::parse(text) else {
        return Ok(());
    };
    // A valid key path survives its value form, and parses back from its one string.
    prop_assert_eq!(
        &KeyPath::from_value(&key_path.to_value()).unwrap(),
        &key_path
    );
    prop_assert_eq!(key_path.strings(), vec![text]);
    let value = parse_value(value).unwrap();
    let _ = extract_key_from_value_using_key_path(&value, &key_path, false);
    let _ = extract_key_from_value_using_key_path(&value, &key_path, true);
    if check_that_a_key_could_be_injected_into_a_value(&value, &key_path) {
        let mut injected = value.clone();
        if inject_key_into_value_using_key_path(&mut injected, &Key::from(7), &key_path).is_ok() {
            // What was injected is what the key path now finds.
            match extract_key_from_value_using_key_path(&injected, &key_path, false) {
                KeyPathExtraction::Key(k) => prop_assert_eq!(k, Key::from(7)),
                other => prop_assert!(false, "injected 7, extracted {:?}", other),
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn key_path_parsing_never_panics(text in any::<String>(), value in value_text()) {
        check_key_path(&text, value)?;
    }

    #[test]
    fn key_path_like_text_round_trips(text in key_path_text(), value in value_text()) {
        check_key_path(&text, value)?;
    }
}
