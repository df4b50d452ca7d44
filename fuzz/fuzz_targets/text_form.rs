//! `indexa::parse_value` and `indexa::parse_key` on arbitrary text: never panic; what parses
//! is written back in a form that parses to the same text again.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(value) = indexa::parse_value(text) {
        let written = indexa::value_to_text(&value);
        let back = indexa::parse_value(&written).expect("written text parses");
        assert_eq!(indexa::value_to_text(&back), written);
    }
    if let Ok(key) = indexa::parse_key(text) {
        let written = indexa::key_to_text(&key);
        let back = indexa::parse_key(&written).expect("written key parses");
        assert_eq!(back, key);
    }
});
