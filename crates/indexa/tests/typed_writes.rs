//! The typed write path: `ObjectStore::add_as` and `put_as` store a serde type straight in its
//! stored form, with key paths evaluated on the stored bytes, and must do exactly what
//! `add`/`put` of `to_value(x)` do: the same keys (generated, in-line, compound, injected),
//! the same index entries (unique, multiEntry, compound, `length`), the same errors, the same
//! key generator. Each case runs on two stores of the same shape, one written each way. On
//! the backend under test (see `support`).

mod support;

use indexa::{to_value, Database, Key, KeyPath, Query, Record, TransactionMode};
use serde::Serialize;
use serde_json::json;

/// The stores: (name, key path, key generator), each with the same indexes.
const STORES: [(&str, Option<&str>, bool); 5] = [
    ("out_of_line", None, false),
    ("generated", None, true),
    ("inline", Some("id"), false),
    ("nested_generated", Some("a.b"), true),
    ("compound", Some("[country,id]"), false),
];

/// The indexes of every store: (name, key path, unique, multiEntry).
const INDEXES: [(&str, &str, bool, bool); 5] = [
    ("email", "email", true, false),
    ("tags", "tags", false, true),
    ("country_name", "[country,name]", false, false),
    ("name_length", "name.length", false, false),
    ("deep", "a.b.c", false, false),
];

fn key_path(text: &str) -> indexa::Result<KeyPath> {
    match text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
        Some(parts) => KeyPath::compound(&parts.split(',').collect::<Vec<_>>()),
        None => KeyPath::parse(text),
    }
}

fn open(factory: &indexa::Factory) -> indexa::Result<Database> {
    factory.open("typed_writes", Some(1), |tx, _, _| {
        for (store, path, generator) in STORES {
            for side in ["generic", "typed"] {
                let kp = path.map(key_path).transpose()?;
                let s = tx.create_object_store(format!("{side}_{store}"), kp, generator)?;
                for (name, path, unique, multi_entry) in INDEXES {
                    s.create_index(name, key_path(path)?, unique, multi_entry)?;
                }
            }
        }
        Ok(())
    })
}

/// What a write gave: its key, or its error's name and message.
fn outcome(result: indexa::Result<Key>) -> Result<Key, (String, String)> {
    result.map_err(|e| (e.name().to_string(), e.message().to_string()))
}

/// Writes `value` both ways into `store` (`put` or `add`), each in its own transaction, and
/// checks that both give the same outcome; returns it.
fn write_both<T: Serialize>(
    db: &Database,
    store: &str,
    value: &T,
    key: Option<Key>,
    put: bool,
) -> indexa::Result<Result<Key, (String, String)>> {
    let mut outcomes = Vec::new();
    for side in ["generic", "typed"] {
        let name = format!("{side}_{store}");
        let tx = db.transaction(&[name.as_str()], TransactionMode::ReadWrite)?;
        let s = tx.object_store(name.as_str())?;
        let result = match (side, put) {
            ("generic", true) => to_value(value).and_then(|v| s.put(v, key.clone())),
            ("generic", false) => to_value(value).and_then(|v| s.add(v, key.clone())),
            (_, true) => s.put_as(value, key.clone()),
            (_, false) => s.add_as(value, key.clone()),
        };
        outcomes.push(outcome(result));
        tx.commit()?;
    }
    assert_eq!(outcomes[0], outcomes[1], "{store}: {}", json_of(value));
    Ok(outcomes.remove(0))
}

/// [`write_both`] where only the sameness of the outcomes matters.
fn same_both<T: Serialize>(
    db: &Database,
    store: &str,
    value: &T,
    key: Option<Key>,
    put: bool,
) -> indexa::Result<()> {
    write_both(db, store, value, key, put).map(drop)
}

fn json_of<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Every record of a store and every entry of its indexes.
fn contents(db: &Database, store: &str) -> indexa::Result<Vec<Vec<Record>>> {
    let tx = db.transaction(&[store], TransactionMode::ReadOnly)?;
    let s = tx.object_store(store)?;
    let mut all = vec![s.get_all_records(Query::all())?];
    for (name, ..) in INDEXES {
        all.push(s.index(name)?.get_all_records(Query::all())?);
    }
    Ok(all)
}

#[derive(Serialize)]
struct Person {
    id: u32,
    name: String,
    email: Option<String>,
    country: &'static str,
    tags: Vec<&'static str>,
}

#[test]
fn typed_writes_store_what_generic_writes_store() -> indexa::Result<()> {
    let factory = support::factory();
    let db = open(&factory)?;
    let person = |id: u32, name: &str, email: Option<&str>| Person {
        id,
        name: name.into(),
        email: email.map(String::from),
        country: "ES",
        tags: vec!["a", "b", "a"],
    };
    let values = [
        json!({"id": 1, "name": "Ávila", "email": "x@e", "country": "ES", "tags": ["x", "y", "x", null]}),
        json!({"id": 2, "name": "🏰", "email": "x@e", "tags": "solo"}),
        json!({"id": "s", "a": {"b": 7, "c": [1, 2]}, "name": ["not", "a", "string"]}),
        json!({"id": [1, "two"], "a": {"b": {"c": 3}}, "country": "PT", "name": "Porto"}),
        json!({"a": {}, "country": "PT", "name": ""}),
        json!({"a": 5}),
        json!({"id": null, "a": {"b": null}}),
        json!({"id": {"nested": true}, "a": []}),
        json!({"a": {"b": 1e300}, "id": -0.5, "tags": [[1], {"k": 1}, 2.5]}),
        json!("a string"),
        json!([1, 2, 3]),
        json!(null),
    ];
    for store in STORES.map(|(name, ..)| name) {
        for (i, value) in values.iter().enumerate() {
            for put in [true, false] {
                let key = Some(Key::Number(i as f64 + 0.5));
                same_both(&db, store, value, key, put)?;
                same_both(&db, store, value, None, put)?;
            }
        }
        for id in [1, 10, 11] {
            let p = person(id, "Braga", Some(&format!("{id}@e")));
            same_both(&db, store, &p, None, false)?;
            same_both(&db, store, &p, Some(Key::Number(f64::from(id))), true)?;
            // A unique index already holding the email: a ConstraintError both ways.
            let again = person(id + 100, "Braga", Some(&format!("{id}@e")));
            same_both(&db, store, &again, Some(Key::from("k")), false)?;
        }
        assert_eq!(
            contents(&db, &format!("generic_{store}"))?,
            contents(&db, &format!("typed_{store}"))?,
            "{store}"
        );
    }
    Ok(())
}

/// A `Serialize` that calls the serializer in ways `to_value` answers: a map value before
/// its key, a key left without its value, failed members gone past.
struct Odd(u8);

impl Serialize for Odd {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.0 {
            0 => {
                let mut m = s.serialize_map(Some(1))?;
                m.serialize_value(&1)?;
                m.end()
            }
            1 => {
                let mut m = s.serialize_map(None)?;
                m.serialize_entry("a", &1)?;
                m.serialize_key("dangling")?;
                m.end()
            }
            _ => {
                let mut q = s.serialize_seq(None)?;
                let _ = q.serialize_element(&u64::MAX);
                q.serialize_element(&7)?;
                q.end()
            }
        }
    }
}

#[test]
fn odd_serialize_calls_store_what_the_generic_way_stores() -> indexa::Result<()> {
    let factory = support::factory();
    let db = open(&factory)?;
    for store in ["out_of_line", "generated", "nested_generated"] {
        for odd in 0..3 {
            same_both(&db, store, &Odd(odd), Some(Key::Number(1.0)), true)?;
            same_both(&db, store, &Odd(odd), None, true)?;
        }
        assert_eq!(
            contents(&db, &format!("generic_{store}"))?,
            contents(&db, &format!("typed_{store}"))?,
            "{store}"
        );
    }
    Ok(())
}

#[test]
fn typed_writes_give_the_exact_keys_and_errors() -> indexa::Result<()> {
    let factory = support::factory();
    let db = open(&factory)?;
    // In-line key at a nested key path with a key generator: the key is injected (seed 000).
    let injected = write_both(&db, "nested_generated", &json!({"a": {}}), None, false)?;
    assert_eq!(injected, Ok(Key::Number(1.0)));
    let tx = db.transaction(&["typed_nested_generated"], TransactionMode::ReadOnly)?;
    let stored = tx
        .object_store("typed_nested_generated")?
        .get(Key::Number(1.0))?;
    assert_eq!(stored, Some(to_value(&json!({"a": {"b": 1}}))?));
    drop(tx);
    // An explicit numeric key pushes the current number up; the next generated key follows.
    assert_eq!(
        write_both(
            &db,
            "nested_generated",
            &json!({"a": {"b": 41.5}}),
            None,
            true
        )?,
        Ok(Key::Number(41.5))
    );
    assert_eq!(
        write_both(&db, "generated", &json!({}), None, true)?,
        Ok(Key::Number(1.0))
    );
    assert_eq!(
        write_both(&db, "nested_generated", &json!({"x": 1}), None, true)?,
        Ok(Key::Number(42.0))
    );
    // A compound in-line key.
    assert_eq!(
        write_both(
            &db,
            "compound",
            &json!({"country": "PT", "id": 3}),
            None,
            true
        )?,
        Ok(Key::Array(vec![Key::from("PT"), Key::Number(3.0)]))
    );
    let data_error = |r: Result<Key, (String, String)>| r.map_err(|(name, _)| name);
    // No key where the key path points, no generator; a key path yielding no valid key; a
    // key given for in-line keys; no key for out-of-line keys without a generator.
    for (store, value, key) in [
        ("inline", json!({"x": 1}), None),
        ("inline", json!({"id": {"not": "a key"}}), None),
        ("compound", json!({"country": "PT"}), None),
        ("inline", json!({"id": 1}), Some(Key::Number(1.0))),
        ("out_of_line", json!({}), None),
        ("nested_generated", json!({"a": 5}), None),
    ] {
        let r = write_both(&db, store, &value, key, true)?;
        assert_eq!(
            data_error(r),
            Err("DataError".to_string()),
            "{store} {value}"
        );
    }
    // A value serde cannot give as a Number.
    let r = write_both(&db, "generated", &json!({"n": u64::MAX}), None, true)?;
    assert_eq!(data_error(r), Err("DataError".to_string()));
    // add over an existing key.
    same_both(&db, "inline", &json!({"id": 5}), None, false)?;
    let r = write_both(&db, "inline", &json!({"id": 5}), None, false)?;
    assert_eq!(data_error(r), Err("ConstraintError".to_string()));
    Ok(())
}
