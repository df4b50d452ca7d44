//! An exact string-prefix range, next to seed 003's `bound("mar", "mar\uffff")` idiom that
//! misses keys such as "mar\u{FFFF}z".
//!
//! Run with `cargo run -p indexa --example prefix_range`.

use indexa::{Factory, Key, KeyRange, Query, TransactionMode, Value};

fn main() -> indexa::Result<()> {
    let factory = Factory::temporary()?;
    let db = factory.open("names", Some(1), |tx, _, _| {
        let names = tx.create_object_store("names", None, false)?;
        for name in ["ma", "mar", "marta", "mar\u{FFFF}z", "mas"] {
            names.put(Value::Null, Some(Key::from(name)))?;
        }
        Ok(())
    })?;

    let tx = db.transaction(&["names"], TransactionMode::ReadOnly)?;
    let names = tx.object_store("names")?;
    let idiom = KeyRange::bound(Key::from("mar"), Key::from("mar\u{FFFF}"), false, false)?;
    let exact = KeyRange::prefix("mar");
    assert_eq!(names.count(Some(idiom))?, 2);
    assert_eq!(
        names.get_all_keys(Query::from(exact))?,
        [
            Key::from("mar"),
            Key::from("marta"),
            Key::from("mar\u{FFFF}z")
        ]
    );
    println!("the prefix range finds all three names starting with \"mar\"");
    Ok(())
}
