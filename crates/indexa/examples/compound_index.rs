//! A compound index orders by its components; a prefix of the components is a key range
//! (seed 003: `bound(["trabajo"], ["trabajo", []])`).
//!
//! Run with `cargo run -p indexa --example compound_index`.

use indexa::{parse_value, Factory, Key, KeyPath, KeyRange, Query, TransactionMode, Value};

fn main() -> indexa::Result<()> {
    let factory = Factory::temporary()?;
    let db = factory.open("notes", Some(1), |tx, _, _| {
        let notes = tx.create_object_store("notes", Some(KeyPath::parse("id")?), false)?;
        notes.create_index(
            "by_notebook_date",
            KeyPath::compound(&["notebook", "created"])?,
            false,
            false,
        )?;
        for text in [
            r#"{"id":1,"notebook":"work","created":{"$date":300}}"#,
            r#"{"id":2,"notebook":"home","created":{"$date":100}}"#,
            r#"{"id":3,"notebook":"work","created":{"$date":200}}"#,
        ] {
            notes.add(parse_value(text)?, None)?;
        }
        Ok(())
    })?;

    let tx = db.transaction(&["notes"], TransactionMode::ReadOnly)?;
    let index = tx.object_store("notes")?.index("by_notebook_date")?;
    // Every note of "work", by date: an empty array sorts after every date.
    let work = KeyRange::bound(
        Key::Array(vec![Key::from("work")]),
        Key::Array(vec![Key::from("work"), Key::Array(vec![])]),
        false,
        false,
    )?;
    let ids: Vec<Value> = index
        .get_all(Query::from(work))?
        .into_iter()
        .filter_map(|note| note.get("id").cloned())
        .collect();
    assert_eq!(ids, [Value::from(3), Value::from(1)]);
    println!("work notes by date: {ids:?}");
    Ok(())
}
