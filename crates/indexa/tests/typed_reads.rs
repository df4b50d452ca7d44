//! The typed read path: `ObjectStore::get_as`, `get_all_as`, `Index::get_as`, `get_all_as` and
//! `Cursor::value_as` decode stored records straight into a serde type, giving what
//! `from_value` gives for the generic value. On the backend under test (see `support`).

mod support;

use indexa::{
    from_value, parse_value, CursorDirection, Key, KeyPath, KeyRange, Query, TransactionMode,
};
use serde::Deserialize;

#[derive(Debug, PartialEq, Deserialize)]
struct City {
    id: u32,
    name: String,
    country: String,
    pop: Option<u64>,
}

fn city(id: u32, name: &str, country: &str, pop: Option<u64>) -> City {
    City {
        id,
        name: name.into(),
        country: country.into(),
        pop,
    }
}

#[test]
fn typed_reads_give_the_records_as_structs() -> indexa::Result<()> {
    let factory = support::factory();
    let db = factory.open("typed", Some(1), |tx, _, _| {
        let s = tx.create_object_store("cities", Some(KeyPath::parse("id")?), false)?;
        s.create_index("country", KeyPath::parse("country")?, false, false)?;
        Ok(())
    })?;
    let tx = db.transaction(&["cities"], TransactionMode::ReadWrite)?;
    let store = tx.object_store("cities")?;
    for text in [
        r#"{"id":1,"name":"Ávila","country":"ES","pop":57744,"walls":true}"#,
        r#"{"id":2,"name":"Porto","country":"PT","pop":null}"#,
        r#"{"id":3,"name":"Braga","country":"PT"}"#,
        r#"{"id":4,"name":"Lone \ud800","country":"XX"}"#,
    ] {
        store.put(parse_value(text)?, None)?;
    }
    tx.commit()?;

    let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
    let store = tx.object_store("cities")?;
    assert_eq!(
        store.get_as::<City>(Key::Number(1.0))?,
        Some(city(1, "Ávila", "ES", Some(57744)))
    );
    assert_eq!(store.get_as::<City>(Key::Number(9.0))?, None);
    assert_eq!(
        store.get_as::<City>(KeyRange::lower_bound(Key::Number(1.0), true))?,
        Some(city(2, "Porto", "PT", None))
    );
    let err = store.get_as::<City>(Key::Number(4.0)).unwrap_err();
    assert_eq!(err.name(), "TypeError");
    assert_eq!(
        store.get_all_as::<City>(Query::from(KeyRange::bound(
            Key::Number(1.0),
            Key::Number(3.0),
            false,
            false
        )?))?,
        vec![
            city(1, "Ávila", "ES", Some(57744)),
            city(2, "Porto", "PT", None),
            city(3, "Braga", "PT", None)
        ]
    );
    let index = store.index("country")?;
    assert_eq!(
        index.get_as::<City>(Key::from("PT"))?,
        Some(city(2, "Porto", "PT", None))
    );
    assert_eq!(
        index
            .get_all_as::<String>(Query::from(Key::from("PT")))
            .unwrap_err()
            .name(),
        "TypeError"
    );
    let names: Vec<City> = index.get_all_as(Query::from(Key::from("PT")))?;
    assert_eq!(names.len(), 2);

    // A cursor gives the struct, and the generic value converted gives the same.
    let mut cursor =
        index.open_cursor(Some(KeyRange::only(Key::from("PT"))), CursorDirection::Prev)?;
    let mut seen = Vec::new();
    while let Some(c) = cursor.value_as::<City>()? {
        assert_eq!(from_value::<City>(cursor.value()?.unwrap().clone())?, c);
        seen.push(c);
        cursor.continue_key(&tx, None)?;
    }
    assert_eq!(
        seen,
        vec![city(3, "Braga", "PT", None), city(2, "Porto", "PT", None)]
    );
    assert_eq!(cursor.value_as::<City>()?, None);
    let keys = store.open_key_cursor(None, CursorDirection::Next)?;
    assert_eq!(keys.value_as::<City>()?, None);
    Ok(())
}

/// Collects what a visit reports: strings as they are, other kinds by name.
#[derive(Default)]
struct Seen(Vec<String>);

impl indexa::ValueVisitor for Seen {
    fn undefined(&mut self) {
        self.0.push("undefined".into());
    }
    fn null(&mut self) {
        self.0.push("null".into());
    }
    fn boolean(&mut self, b: bool) {
        self.0.push(format!("{b}"));
    }
    fn number(&mut self, n: f64) {
        self.0.push(format!("{n}"));
    }
    fn date(&mut self, time: f64) {
        self.0.push(format!("date {time}"));
    }
    fn string(&mut self, text: indexa::StoredText<'_>) {
        self.0.push(format!("{text:?}"));
    }
    fn binary(&mut self, bytes: &[u8]) {
        self.0.push(format!("{bytes:?}"));
    }
    fn array(&mut self, len: usize) {
        self.0.push(format!("array {len}"));
    }
    fn object(&mut self, len: usize) {
        self.0.push(format!("object {len}"));
    }
    fn name(&mut self, name: indexa::StoredText<'_>) {
        self.0.push(format!("name {name:?}"));
    }
}

#[test]
fn gets_with_a_visitor_report_the_first_record_in_range() -> indexa::Result<()> {
    let factory = support::factory();
    let db = factory.open("visits", Some(1), |tx, _, _| {
        let s = tx.create_object_store("cities", Some(KeyPath::parse("id")?), false)?;
        s.create_index("country", KeyPath::parse("country")?, false, false)?;
        Ok(())
    })?;
    let tx = db.transaction(&["cities"], TransactionMode::ReadWrite)?;
    let store = tx.object_store("cities")?;
    for text in [
        r#"{"id":1,"name":"Ávila","country":"ES"}"#,
        r#"{"id":2,"name":"Porto","country":"PT","walls":[true,null]}"#,
    ] {
        store.put(parse_value(text)?, None)?;
    }
    let mut seen = Seen::default();
    assert!(store.get_with(Key::Number(2.0), &mut seen)?);
    let porto = [
        "object 4",
        "name Utf8(\"id\")",
        "2",
        "name Utf8(\"name\")",
        "Utf8(\"Porto\")",
        "name Utf8(\"country\")",
        "Utf8(\"PT\")",
        "name Utf8(\"walls\")",
        "array 2",
        "true",
        "null",
    ];
    assert_eq!(seen.0, porto);
    let mut none = Seen::default();
    assert!(!store.get_with(Key::Number(3.0), &mut none)?);
    assert!(!store
        .index("country")?
        .get_with(Key::from("FR"), &mut none)?);
    assert!(none.0.is_empty());
    let mut first = Seen::default();
    assert!(store
        .index("country")?
        .get_with(KeyRange::lower_bound(Key::from("A"), false), &mut first)?);
    assert_eq!(
        first.0,
        [
            "object 3",
            "name Utf8(\"id\")",
            "1",
            "name Utf8(\"name\")",
            "Utf8(\"Ávila\")",
            "name Utf8(\"country\")",
            "Utf8(\"ES\")",
        ]
    );
    Ok(())
}
