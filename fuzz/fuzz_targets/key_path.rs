//! `indexa::KeyPath::parse` on arbitrary text: never panics; a valid key path survives the
//! round trip through its value form, and evaluating it on a value never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // The part after the first newline, when it is a value, is evaluated with the key path.
    let (path, value) = text.split_once('\n').unwrap_or((text, ""));
    if let Ok(key_path) = indexa::KeyPath::parse(path) {
        let back = indexa::KeyPath::from_value(&key_path.to_value()).expect("round trip");
        assert_eq!(back, key_path);
        if let Ok(value) = indexa::parse_value(value) {
            let _ = indexa::extract_key_from_value_using_key_path(&value, &key_path, false);
            let _ = indexa::extract_key_from_value_using_key_path(&value, &key_path, true);
            let mut injected = value.clone();
            if indexa::check_that_a_key_could_be_injected_into_a_value(&value, &key_path) {
                let _ = indexa::inject_key_into_value_using_key_path(
                    &mut injected,
                    &indexa::Key::from(1),
                    &key_path,
                );
            }
        }
    }
});
