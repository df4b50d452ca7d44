//! A multiEntry index has one entry per distinct member of an array, so one tag finds every
//! record carrying it (seed 003).
//!
//! Run with `cargo run -p indexa --example multi_entry`.

use indexa::{parse_value, Factory, Key, KeyPath, Query, TransactionMode};

fn main() -> indexa::Result<()> {
    let factory = Factory::temporary()?;
    let db = factory.open("notes", Some(1), |tx, _, _| {
        let notes = tx.create_object_store("notes", Some(KeyPath::parse("id")?), false)?;
        notes.create_index("by_tag", KeyPath::parse("tags")?, false, true)?;
        notes.add(
            parse_value(r#"{"id":1,"tags":["local-first","rust","rust"]}"#)?,
            None,
        )?;
        notes.add(parse_value(r#"{"id":2,"tags":["sqlite"]}"#)?, None)?;
        notes.add(parse_value(r#"{"id":3,"tags":["rust",null]}"#)?, None)?;
        Ok(())
    })?;

    let tx = db.transaction(&["notes"], TransactionMode::ReadOnly)?;
    let by_tag = tx.object_store("notes")?.index("by_tag")?;
    let rust = by_tag.get_all_keys(Query::from(Key::from("rust")))?;
    assert_eq!(rust, [Key::from(1), Key::from(3)]);
    // Duplicates within a record and invalid members (null) make no entries.
    assert_eq!(by_tag.count(None)?, 4);
    println!("notes tagged rust: {rust:?}");
    Ok(())
}
