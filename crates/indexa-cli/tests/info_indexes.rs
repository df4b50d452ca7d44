//! `indexa info` on a store with many indexes lists every one, in name order, with its own
//! key path and flags (each index is found by one lookup; see BENCHMARKS.md for the cost).

mod common;

use common::Env;

#[test]
fn info_describes_thousands_of_indexes() {
    let env = Env::new();
    let count = 3_000;
    let mut script = String::from("{\"op\":\"createObjectStore\",\"name\":\"s\"}\n");
    for i in 0..count {
        script.push_str(&format!(
            "{{\"op\":\"createIndex\",\"store\":\"s\",\"name\":\"ix{i:05}\",\"keyPath\":\"f{i}\",\"unique\":{},\"multiEntry\":{}}}\n",
            i % 3 == 0,
            i % 5 == 0
        ));
    }
    script.push_str("{\"op\":\"deleteIndex\",\"store\":\"s\",\"name\":\"ix00001\"}\n");
    let (lines, code) = env.batch("db", &[], &script);
    assert_eq!(code, 0);
    assert_eq!(lines.last().unwrap(), r#"{"transaction":"committed"}"#);
    let run = env.run(&["info", "db", "--json"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    let info: serde_json::Value = serde_json::from_str(&run.stdout).unwrap();
    let indexes = info["objectStores"][0]["indexes"].as_array().unwrap();
    let expected: Vec<serde_json::Value> = (0..count)
        .filter(|&i| i != 1)
        .map(|i| {
            serde_json::json!({
                "name": format!("ix{i:05}"),
                "keyPath": format!("f{i}"),
                "unique": i % 3 == 0,
                "multiEntry": i % 5 == 0,
            })
        })
        .collect();
    assert_eq!(indexes, &expected);
}
