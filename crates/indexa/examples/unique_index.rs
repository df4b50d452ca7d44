//! A unique index refuses duplicates with ConstraintError, and the failed request leaves no
//! trace: the transaction goes on (seed 000's `preventDefault()` example).
//!
//! Run with `cargo run -p indexa --example unique_index`.

use indexa::{parse_value, Factory, Key, KeyPath, TransactionMode};

fn main() -> indexa::Result<()> {
    let factory = Factory::temporary()?;
    let db = factory.open("accounts", Some(1), |tx, _, _| {
        let users = tx.create_object_store("users", Some(KeyPath::parse("id")?), true)?;
        users.create_index("by_email", KeyPath::parse("email")?, true, false)?;
        Ok(())
    })?;

    let tx = db.transaction(&["users"], TransactionMode::ReadWrite)?;
    let users = tx.object_store("users")?;
    users.add(parse_value(r#"{"email":"ada@example.com"}"#)?, None)?;
    let err = users
        .add(parse_value(r#"{"email":"ada@example.com"}"#)?, None)
        .unwrap_err();
    println!("second add: {err}");
    assert_eq!(err.name(), "ConstraintError");
    // No key was used up by the failed add.
    assert_eq!(
        users.add(parse_value(r#"{"email":"grace@example.com"}"#)?, None)?,
        Key::from(2)
    );
    let by_email = users.index("by_email")?;
    assert_eq!(
        by_email.get_key(Key::from("grace@example.com"))?,
        Some(Key::from(2))
    );
    tx.commit()
}
