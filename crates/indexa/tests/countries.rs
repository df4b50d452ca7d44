//! Real data: countries.json (world-countries 5.1.0, ODbL-1.0) in a store with key path
//! `cca3`, a nested index, a multiEntry index and a plain index; data survives reopening.

mod support;

use std::path::PathBuf;

use indexa::{parse_value, Key, KeyPath, Query, TransactionMode, Value};

/// A data set shipped in the repository's `data/` folder.
fn data_file(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../data")
        .join(name)
}

fn keys(names: &[&str]) -> Vec<Key> {
    names.iter().map(|n| Key::from(*n)).collect()
}

#[test]
fn countries_with_nested_multi_entry_and_plain_indexes() {
    let text = std::fs::read_to_string(data_file("countries.json")).unwrap();
    let Value::Array(countries) = parse_value(&text).unwrap() else {
        panic!("countries.json is an array");
    };
    assert_eq!(countries.len(), 250);
    let first = support::factory();
    {
        let db = first
            .open("world", Some(1), |tx, _, _| {
                let store =
                    tx.create_object_store("countries", Some(KeyPath::parse("cca3")?), false)?;
                store.create_index("name", KeyPath::parse("name.common")?, false, false)?;
                store.create_index("borders", KeyPath::parse("borders")?, false, true)?;
                store.create_index("region", KeyPath::parse("region")?, false, false)?;
                for country in countries {
                    store.add(country, None)?;
                }
                Ok(())
            })
            .unwrap();
        db.close();
    }
    // A new factory over the same databases: everything came from storage.
    let factory = first.another();
    let db = factory.open("world", None, |_, _, _| Ok(())).unwrap();
    assert_eq!(db.version(), 1);
    let tx = db
        .transaction(&["countries"], TransactionMode::ReadOnly)
        .unwrap();
    let store = tx.object_store("countries").unwrap();
    assert_eq!(store.count(None).unwrap(), 250);

    let borders = store.index("borders").unwrap();
    assert_eq!(
        borders.get_all_keys(Query::from(Key::from("DEU"))).unwrap(),
        keys(&["AUT", "BEL", "CHE", "CZE", "DNK", "FRA", "LUX", "NLD", "POL"])
    );
    assert_eq!(
        store
            .index("region")
            .unwrap()
            .count(Some(Key::from("Europe").into()))
            .unwrap(),
        53
    );
    let first_three = store
        .index("name")
        .unwrap()
        .get_all(Query::all().count(3))
        .unwrap();
    let names: Vec<&Value> = first_three
        .iter()
        .map(|c| c.get("name").and_then(|n| n.get("common")).unwrap())
        .collect();
    assert_eq!(
        names,
        [
            &Value::from("Afghanistan"),
            &Value::from("Albania"),
            &Value::from("Algeria")
        ]
    );
    assert_eq!(
        factory.databases().unwrap(),
        [indexa::DatabaseInfo {
            name: "world".into(),
            version: 1
        }]
    );
}
