//! `indexa::decode_value` on arbitrary bytes: never panics, and whatever decodes re-encodes to
//! bytes that decode to the same encoding again (NaN makes `==` on values useless).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(value) = indexa::decode_value(data) {
        let encoded = indexa::encode_value(&value);
        let again = indexa::decode_value(&encoded).expect("a re-encoded value decodes");
        assert_eq!(indexa::encode_value(&again), encoded);
    }
});
