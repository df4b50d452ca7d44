//! Key generators (seed 000): generated keys, explicit keys pushing the current number up,
//! and an abort rolling it back.
//!
//! Run with `cargo run -p indexa --example key_generator`.

use indexa::{Factory, Key, TransactionMode, Value};

fn main() -> indexa::Result<()> {
    let factory = Factory::temporary()?;
    let db = factory.open("events", Some(1), |tx, _, _| {
        tx.create_object_store("log", None, true).map(|_| ())
    })?;

    let tx = db.transaction(&["log"], TransactionMode::ReadWrite)?;
    let log = tx.object_store("log")?;
    assert_eq!(log.put(Value::from("a"), None)?, Key::from(1));
    // An explicit numeric key above the current number pushes it up...
    assert_eq!(
        log.put(Value::from("b"), Some(Key::from(10)))?,
        Key::from(10)
    );
    assert_eq!(log.put(Value::from("c"), None)?, Key::from(11));
    // ...a string key does not.
    log.put(Value::from("d"), Some(Key::from("x")))?;
    assert_eq!(log.put(Value::from("e"), None)?, Key::from(12));
    tx.commit()?;

    // Aborting gives the generated keys back; deleting records never does.
    let tx = db.transaction(&["log"], TransactionMode::ReadWrite)?;
    let log = tx.object_store("log")?;
    assert_eq!(log.put(Value::from("f"), None)?, Key::from(13));
    tx.abort();
    let tx = db.transaction(&["log"], TransactionMode::ReadWrite)?;
    let log = tx.object_store("log")?;
    log.clear()?;
    assert_eq!(log.put(Value::from("g"), None)?, Key::from(13));
    println!("current number: {:?}", log.current_number()?);
    tx.commit()
}
