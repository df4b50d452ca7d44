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

/// Ávila (ES, key 1), Porto (PT, key 2, with an array) and Braga (PT, key 3) in a database
/// called `name`, for the visitor tests.
fn visited_cities(factory: &indexa::Factory, name: &str) -> indexa::Result<indexa::Database> {
    cities(
        factory,
        name,
        &[
            r#"{"id":1,"name":"Ávila","country":"ES"}"#,
            r#"{"id":2,"name":"Porto","country":"PT","walls":[true,null]}"#,
            r#"{"id":3,"name":"Braga","country":"PT"}"#,
        ],
    )
}

/// What a visit of one of [`visited_cities`] reports (see [`Visits`]).
fn city_visits(id: u32) -> Vec<String> {
    let (name, country) = match id {
        1 => ("Ávila", "ES"),
        2 => ("Porto", "PT"),
        _ => ("Braga", "PT"),
    };
    let mut visits = vec![
        format!("object {}", if id == 2 { 4 } else { 3 }),
        "name Utf8(\"id\")".into(),
        id.to_string(),
        "name Utf8(\"name\")".into(),
        format!("Utf8({name:?})"),
        "name Utf8(\"country\")".into(),
        format!("Utf8({country:?})"),
    ];
    if id == 2 {
        visits.extend(["name Utf8(\"walls\")", "array 2", "true", "null"].map(String::from));
    }
    visits
}

#[test]
fn gets_with_a_visitor_report_the_first_record_in_range() -> indexa::Result<()> {
    let factory = support::factory();
    let db = visited_cities(&factory, "visits")?;
    let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
    let store = tx.object_store("cities")?;
    let mut seen = Visits::default();
    assert!(store.get_with(Key::Number(2.0), &mut seen)?);
    assert_eq!(seen.0, city_visits(2));
    let mut none = Visits::default();
    assert!(!store.get_with(Key::Number(4.0), &mut none)?);
    assert!(!store
        .index("country")?
        .get_with(Key::from("FR"), &mut none)?);
    assert!(none.0.is_empty());
    let mut first = Visits::default();
    assert!(store
        .index("country")?
        .get_with(KeyRange::lower_bound(Key::from("A"), false), &mut first)?);
    assert_eq!(first.0, city_visits(1));
    Ok(())
}

#[test]
fn get_alls_with_a_visitor_report_every_value_in_order() -> indexa::Result<()> {
    let factory = support::factory();
    let db = visited_cities(&factory, "visit-all")?;
    let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
    let store = tx.object_store("cities")?;
    // Store order: by primary key, here descending, the count as asked.
    let mut seen = Visits::default();
    let query = Query::all().direction(CursorDirection::Prev).count(2);
    assert_eq!(store.get_all_with(query, &mut seen)?, 2);
    assert_eq!(seen.0, [city_visits(3), city_visits(2)].concat());
    // Index order: by index key, then primary key.
    let index = store.index("country")?;
    let mut seen = Visits::default();
    assert_eq!(
        index.get_all_with(Query::from(Key::from("PT")), &mut seen)?,
        2
    );
    assert_eq!(seen.0, [city_visits(2), city_visits(3)].concat());
    let mut none = Visits::default();
    assert_eq!(
        index.get_all_with(Query::from(Key::from("FR")), &mut none)?,
        0
    );
    assert!(none.0.is_empty());
    Ok(())
}

#[test]
fn get_all_records_with_a_visitor_report_keys_then_value_in_order() -> indexa::Result<()> {
    let factory = support::factory();
    let db = visited_cities(&factory, "visit-records")?;
    let tx = db.transaction(&["cities"], TransactionMode::ReadOnly)?;
    let store = tx.object_store("cities")?;
    let record = |key: Key, primary_key: u32, id: u32| {
        let mut visits = vec![format!("record {key:?} {:?}", Key::from(primary_key))];
        visits.extend(city_visits(id));
        visits
    };
    // A store's records: the key is the primary key.
    let mut seen = Visits::default();
    let query = Query::all().direction(CursorDirection::Prev).count(2);
    assert_eq!(store.get_all_records_with(query, &mut seen)?, 2);
    assert_eq!(
        seen.0,
        [record(Key::from(3), 3, 3), record(Key::from(2), 2, 2)].concat()
    );
    // An index's: the index key, then the primary key, in index order.
    let index = store.index("country")?;
    let mut seen = Visits::default();
    assert_eq!(index.get_all_records_with(Query::all(), &mut seen)?, 3);
    assert_eq!(
        seen.0,
        [
            record(Key::from("ES"), 1, 1),
            record(Key::from("PT"), 2, 2),
            record(Key::from("PT"), 3, 3)
        ]
        .concat()
    );
    let mut none = Visits::default();
    let fr = Query::from(Key::from("FR"));
    assert_eq!(index.get_all_records_with(fr, &mut none)?, 0);
    assert!(none.0.is_empty());
    Ok(())
}
