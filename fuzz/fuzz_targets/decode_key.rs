//! `indexa::decode_key` on arbitrary bytes: never panics, and whatever decodes is canonical
//! (re-encodes to the same bytes and decodes to an equal key).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(key) = indexa::decode_key(data) {
        let encoded = indexa::encode_key(&key);
        assert_eq!(encoded, data);
        let again = indexa::decode_key(&encoded).expect("a re-encoded key decodes");
        assert_eq!(again, key);
    }
});
