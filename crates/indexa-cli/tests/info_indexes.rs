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

#[test]
fn info_and_list_show_lone_surrogate_names_exactly() {
    let env = Env::new();
    let lone = |u: &[u16]| indexa::Utf16String::from_units(u.to_vec());
    let factory = env.factory();
    for name in [lone(&[0x64, 0xD800]), lone(&[0x70])] {
        factory
            .open(name, Some(1), |tx, _, _| {
                let s = tx.create_object_store(lone(&[0xDC00]), None, false)?;
                s.create_index(lone(&[0xDBFF]), indexa::KeyPath::parse("x")?, false, false)?;
                tx.create_object_store("\u{FFFD}", None, false)?;
                Ok(())
            })
            .unwrap()
            .close();
    }
    drop(factory);
    let run = env.run(&["list"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (0, "\"d\\uD800\"\t1\np\t1\n")
    );
    let run = env.run(&["info", "p", "--json"]);
    assert_eq!(
        (run.code, run.stderr.as_str(), run.stdout.as_str()),
        (
            0,
            "",
            "{\"name\":\"p\",\"version\":1,\"objectStores\":[{\"name\":\"\\uDC00\",\"keyPath\":null,\"autoIncrement\":false,\"currentNumber\":null,\"keyGeneratorExhausted\":null,\"count\":0,\"indexes\":[{\"name\":\"\\uDBFF\",\"keyPath\":\"x\",\"unique\":false,\"multiEntry\":false}]},{\"name\":\"\u{FFFD}\",\"keyPath\":null,\"autoIncrement\":false,\"currentNumber\":null,\"keyGeneratorExhausted\":null,\"count\":0,\"indexes\":[]}]}\n"
        )
    );
}
