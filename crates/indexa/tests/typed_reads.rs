//! The typed read path: `ObjectStore::get_as`, `get_all_as`, `Index::get_as`, `get_all_as` and
//! `Cursor::value_as` decode stored records straight into a serde type, giving what
//! `from_value` gives for the generic value. On the backend under test (see `support`).

mod support;
mod visits;

use indexa::{
    from_value, parse_value, CursorDirection, Database, Key, KeyPath, KeyRange, Query,
    TransactionMode,
};
use serde::Deserialize;
use visits::Visits;

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

/// Database `name` with object store "cities" (key path `id`, index "country") holding
/// `records` (JSON text).
fn cities(factory: &indexa::Factory, name: &str, records: &[&str]) -> indexa::Result<Database> {
    let db = factory.open(name, Some(1), |tx, _, _| {
        let s = tx.create_object_store("cities", Some(KeyPath::parse("id")?), false)?;
        s.create_index("country", KeyPath::parse("country")?, false, false)?;
        Ok(())
    })?;
    let tx = db.transaction(&["cities"], TransactionMode::ReadWrite)?;
    let store = tx.object_store("cities")?;
    for text in records {
        store.put(parse_value(text)?, None)?;
    }
    tx.commit()?;
    Ok(db)
}

#[test]
fn typed_reads_give_the_records_as_structs() -> indexa::Result<()> {
    let factory = support::factory();
    let db = cities(
        &factory,
        "typed",
        &[
            r#"{"id":1,"name":"Ávila","country":"ES","pop":57744,"walls":true}"#,
            r#"{"id":2,"name":"Porto","country":"PT","pop":null}"#,
            r#"{"id":3,"name":"Braga","country":"PT"}"#,
            r#"{"id":4,"name":"Lone \ud800","country":"XX"}"#,
        ],
    )?;

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

#[test]
fn get_alls_with_a_visitor_report_every_value_in_order() -> indexa::Result<()> {
    let factory = support::factory();
    let db = cities(
        &factory,
        "visit-all",
        &[
            r#"{"id":1,"name":"Ávila","country":"ES"}"#,
            r#"{"id":2,"name":"Porto","country":"PT","walls":[true,null]}"#,
            r#"{"id":3,"name":"Braga","country":"PT"}"#,
        ],
    )?;
    let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
    let store = tx.object_store("cities")?;
    let city = |id: &str, name: &str, country: &str| {
        [
            "object 3".to_string(),
            "name Utf8(\"id\")".into(),
            id.into(),
            "name Utf8(\"name\")".into(),
            format!("Utf8({name:?})"),
            "name Utf8(\"country\")".into(),
            format!("Utf8({country:?})"),
        ]
    };
    let mut porto = city("2", "Porto", "PT").to_vec();
    porto[0] = "object 4".into();
    porto.extend(["name Utf8(\"walls\")", "array 2", "true", "null"].map(String::from));

    // Store order: by primary key, the count as asked.
    let mut seen = Visits::default();
    assert_eq!(
        store.get_all_with(
            Query::all().direction(CursorDirection::Prev).count(2),
            &mut seen
        )?,
        2
    );
    let expected: Vec<String> = city("3", "Braga", "PT")
        .into_iter()
        .chain(porto.clone())
        .collect();
    assert_eq!(seen.0, expected);

    // Index order: by index key, then primary key.
    let mut seen = Visits::default();
    let index = store.index("country")?;
    assert_eq!(
        index.get_all_with(Query::from(Key::from("PT")), &mut seen)?,
        2
    );
    let expected: Vec<String> = porto.into_iter().chain(city("3", "Braga", "PT")).collect();
    assert_eq!(seen.0, expected);

    let mut none = Visits::default();
    assert_eq!(
        index.get_all_with(Query::from(Key::from("FR")), &mut none)?,
        0
    );
    assert!(none.0.is_empty());
    Ok(())
}

#[test]
fn gets_with_a_visitor_report_the_first_record_in_range() -> indexa::Result<()> {
    let factory = support::factory();
    let db = cities(
        &factory,
        "visits",
        &[
            r#"{"id":1,"name":"Ávila","country":"ES"}"#,
            r#"{"id":2,"name":"Porto","country":"PT","walls":[true,null]}"#,
        ],
    )?;
    let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
    let store = tx.object_store("cities")?;
    let mut seen = Visits::default();
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
    let mut none = Visits::default();
    assert!(!store.get_with(Key::Number(3.0), &mut none)?);
    assert!(!store
        .index("country")?
        .get_with(Key::from("FR"), &mut none)?);
    assert!(none.0.is_empty());
    let mut first = Visits::default();
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
