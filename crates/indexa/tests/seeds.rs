//! Every example of seed 000 (key generators) and seed 003 (keys and indexes), end to end
//! through the engine, with the exact keys the seeds state.

mod support;

use indexa::{
    parse_value, CursorDirection, Factory, Key, KeyPath, KeyRange, Query, Transaction,
    TransactionMode, Value,
};

fn v(text: &str) -> Value {
    parse_value(text).unwrap()
}

fn n(x: f64) -> Key {
    Key::Number(x)
}

/// Opens database "db" at version 1 with `setup` as its upgrade.
fn open_with(
    factory: &Factory,
    setup: impl FnOnce(&Transaction) -> indexa::Result<()>,
) -> indexa::Database {
    factory.open("db", Some(1), |tx, _, _| setup(tx)).unwrap()
}

#[test]
fn seed_000_each_store_has_its_own_generator() {
    let factory = support::factory();
    let mut keys = Vec::new();
    factory
        .open("db", Some(1), |tx, _, _| {
            let store1 = tx.create_object_store("store1", None, true)?;
            keys.push(store1.put(v(r#""a""#), None)?);
            let store2 = tx.create_object_store("store2", None, true)?;
            keys.push(store2.put(v(r#""a""#), None)?);
            keys.push(store1.put(v(r#""b""#), None)?);
            keys.push(store2.put(v(r#""b""#), None)?);
            Ok(())
        })
        .unwrap();
    assert_eq!(keys, [n(1.0), n(1.0), n(2.0), n(2.0)]);
}

#[test]
fn seed_000_failed_insertion_does_not_update_the_generator() {
    let factory = support::factory();
    factory
        .open("db", Some(1), |tx, _, _| {
            let store = tx.create_object_store("store1", None, true)?;
            store.create_index("index1", KeyPath::parse("ix")?, true, false)?;
            assert_eq!(store.put(v(r#"{"ix":"a"}"#), None)?, n(1.0));
            let err = store.put(v(r#"{"ix":"a"}"#), None).unwrap_err();
            assert_eq!(err.name(), "ConstraintError");
            // e.preventDefault(): the transaction goes on.
            assert_eq!(store.put(v(r#"{"ix":"b"}"#), None)?, n(2.0));
            assert_eq!(store.count(None)?, 2);
            assert_eq!(store.index("index1")?.count(None)?, 2);
            Ok(())
        })
        .unwrap();
}

#[test]
fn seed_000_delete_and_clear_never_reset_the_generator() {
    let factory = support::factory();
    factory
        .open("db", Some(1), |tx, _, _| {
            let store = tx.create_object_store("store1", None, true)?;
            assert_eq!(store.put(v(r#""a""#), None)?, n(1.0));
            store.delete(n(1.0))?;
            assert_eq!(store.put(v(r#""b""#), None)?, n(2.0));
            store.clear()?;
            assert_eq!(store.put(v(r#""c""#), None)?, n(3.0));
            store.delete(KeyRange::lower_bound(n(0.0), false))?;
            assert_eq!(store.put(v(r#""d""#), None)?, n(4.0));
            Ok(())
        })
        .unwrap();
}

/// The explicit-key sequence of seed 000, given an object store where `put(value, key)`
/// stores `value` under `key` (out-of-line) or with `key` in-line.
fn explicit_key_sequence(put: &dyn Fn(&str, Option<Key>) -> indexa::Result<Key>) {
    let steps: Vec<(&str, Option<Key>, Key)> = vec![
        ("a", None, n(1.0)),
        ("b", Some(n(3.0)), n(3.0)),
        ("c", None, n(4.0)),
        ("d", Some(n(-10.0)), n(-10.0)),
        ("e", None, n(5.0)),
        ("f", Some(n(6.00001)), n(6.00001)),
        ("g", None, n(7.0)),
        ("f", Some(n(8.9999)), n(8.9999)),
        ("g", None, n(9.0)),
        ("h", Some(Key::from("foo")), Key::from("foo")),
        ("i", None, n(10.0)),
        (
            "j",
            Some(Key::Array(vec![n(1000.0)])),
            Key::Array(vec![n(1000.0)]),
        ),
        ("k", None, n(11.0)),
    ];
    for (value, key, expected) in steps {
        assert_eq!(put(value, key).unwrap(), expected, "put({value:?})");
    }
}

#[test]
fn seed_000_explicit_keys_out_of_line() {
    let factory = support::factory();
    let db = open_with(&factory, |tx| {
        tx.create_object_store("store1", None, true).map(|_| ())
    });
    let tx = db
        .transaction(&["store1"], TransactionMode::ReadWrite)
        .unwrap();
    let store = tx.object_store("store1").unwrap();
    explicit_key_sequence(&|value, key| store.put(Value::from(value), key));
    tx.commit().unwrap();
}

#[test]
fn seed_000_explicit_keys_in_line() {
    let factory = support::factory();
    let db = open_with(&factory, |tx| {
        tx.create_object_store("store1", Some(KeyPath::parse("id")?), true)
            .map(|_| ())
    });
    let tx = db
        .transaction(&["store1"], TransactionMode::ReadWrite)
        .unwrap();
    let store = tx.object_store("store1").unwrap();
    explicit_key_sequence(&|value, key| {
        let mut object = indexa::Object::default();
        object.insert("v".into(), Value::from(value));
        if let Some(k) = key {
            object.insert("id".into(), Value::from(&k));
        }
        store.put(Value::Object(object), None)
    });
    // The generated key was written into the value.
    assert_eq!(store.get(n(11.0)).unwrap(), Some(v(r#"{"v":"k","id":11}"#)));
}

#[test]
fn seed_000_abort_rolls_back_the_generator() {
    let factory = support::factory();
    let db = open_with(&factory, |tx| {
        tx.create_object_store("store", None, true).map(|_| ())
    });
    let trans1 = db
        .transaction(&["store"], TransactionMode::ReadWrite)
        .unwrap();
    let store_t1 = trans1.object_store("store").unwrap();
    assert_eq!(store_t1.put(v(r#""a""#), None).unwrap(), n(1.0));
    assert_eq!(store_t1.put(v(r#""b""#), None).unwrap(), n(2.0));
    trans1.abort();
    let trans2 = db
        .transaction(&["store"], TransactionMode::ReadWrite)
        .unwrap();
    let store_t2 = trans2.object_store("store").unwrap();
    assert_eq!(store_t2.put(v(r#""c""#), None).unwrap(), n(1.0));
    assert_eq!(store_t2.put(v(r#""d""#), None).unwrap(), n(2.0));
    trans2.commit().unwrap();
}

#[test]
fn seed_000_key_injection() {
    let factory = support::factory();
    let db = open_with(&factory, |tx| {
        tx.create_object_store("bar", Some(KeyPath::parse("foo.bar")?), true)?;
        tx.create_object_store("baz", Some(KeyPath::parse("foo.bar.baz")?), true)?;
        tx.create_object_store("prim", Some(KeyPath::parse("foo")?), true)?;
        Ok(())
    });
    let tx = db
        .transaction(&["bar", "baz", "prim"], TransactionMode::ReadWrite)
        .unwrap();
    let bar = tx.object_store("bar").unwrap();
    assert_eq!(bar.put(v(r#"{"foo":{}}"#), None).unwrap(), n(1.0));
    assert_eq!(bar.get(n(1.0)).unwrap(), Some(v(r#"{"foo":{"bar":1}}"#)));
    assert_eq!(bar.put(v(r#"{"foo":{"bar":10}}"#), None).unwrap(), n(10.0));
    assert_eq!(bar.get(n(10.0)).unwrap(), Some(v(r#"{"foo":{"bar":10}}"#)));

    let baz = tx.object_store("baz").unwrap();
    assert_eq!(baz.put(v(r#"{"zip":{}}"#), None).unwrap(), n(1.0));
    assert_eq!(
        baz.get(n(1.0)).unwrap(),
        Some(v(r#"{"zip":{},"foo":{"bar":{"baz":1}}}"#))
    );

    let prim = tx.object_store("prim").unwrap();
    assert_eq!(prim.put(v("4"), None).unwrap_err().name(), "DataError");
    assert_eq!(prim.put(v("[10]"), None).unwrap_err().name(), "DataError");
    // Neither failure consumed a key.
    assert_eq!(prim.current_number().unwrap(), Some(1));
    assert_eq!(prim.count(None).unwrap(), 0);
}

#[test]
fn seed_000_generator_limit_is_2_pow_53() {
    let factory = support::factory();
    let db = open_with(&factory, |tx| {
        tx.create_object_store("s", None, true).map(|_| ())
    });
    let tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
    let s = tx.object_store("s").unwrap();
    assert_eq!(
        s.put(v("1"), Some(n(9007199254740991.0))).unwrap(),
        n(9007199254740991.0)
    );
    assert_eq!(s.put(v("2"), None).unwrap(), n(9007199254740992.0));
    let err = s.put(v("3"), None).unwrap_err();
    assert_eq!(err.name(), "ConstraintError");
    // Explicit keys still work.
    assert_eq!(s.put(v("4"), Some(n(-1.0))).unwrap(), n(-1.0));
    assert_eq!(s.count(None).unwrap(), 3);
    tx.commit().unwrap();
}

#[test]
fn seed_003_eventos_gaps_are_never_reused() {
    let factory = support::factory();
    let db = open_with(&factory, |tx| {
        tx.create_object_store("eventos", Some(KeyPath::parse("id")?), true)
            .map(|_| ())
    });
    let tx = db
        .transaction(&["eventos"], TransactionMode::ReadWrite)
        .unwrap();
    let eventos = tx.object_store("eventos").unwrap();
    assert_eq!(eventos.put(v(r#"{"texto":"uno"}"#), None).unwrap(), n(1.0));
    assert_eq!(eventos.put(v(r#"{"texto":"dos"}"#), None).unwrap(), n(2.0));
    eventos.delete(n(2.0)).unwrap();
    assert_eq!(eventos.put(v(r#"{"texto":"tres"}"#), None).unwrap(), n(3.0));
    assert_eq!(
        eventos
            .put(v(r#"{"id":900,"texto":"manual"}"#), None)
            .unwrap(),
        n(900.0)
    );
    assert_eq!(
        eventos.put(v(r#"{"texto":"cuatro"}"#), None).unwrap(),
        n(901.0)
    );
    assert_eq!(
        eventos.get(n(1.0)).unwrap(),
        Some(v(r#"{"texto":"uno","id":1}"#))
    );
    tx.commit().unwrap();
}

#[test]
fn seed_003_in_line_and_out_of_line_keys() {
    let factory = support::factory();
    let db = open_with(&factory, |tx| {
        tx.create_object_store("libros", Some(KeyPath::parse("isbn")?), false)?;
        tx.create_object_store("miniaturas", None, false)?;
        Ok(())
    });
    let tx = db
        .transaction(&["libros", "miniaturas"], TransactionMode::ReadWrite)
        .unwrap();
    let libros = tx.object_store("libros").unwrap();
    assert_eq!(
        libros
            .put(v(r#"{"isbn":"978-84","titulo":"Rayuela"}"#), None)
            .unwrap(),
        Key::from("978-84")
    );
    // In-line keys refuse an explicit key; out-of-line keys without a generator need one.
    assert_eq!(
        libros
            .put(v(r#"{"isbn":"1"}"#), Some(Key::from("1")))
            .unwrap_err()
            .name(),
        "DataError"
    );
    let miniaturas = tx.object_store("miniaturas").unwrap();
    assert_eq!(
        miniaturas
            .put(
                Value::Binary(vec![1, 2, 3]),
                Some(Key::from("portada-978-84"))
            )
            .unwrap(),
        Key::from("portada-978-84")
    );
    assert_eq!(
        miniaturas.put(v("1"), None).unwrap_err().name(),
        "DataError"
    );
    assert_eq!(
        miniaturas.get(Key::from("portada-978-84")).unwrap(),
        Some(Value::Binary(vec![1, 2, 3]))
    );
}

/// The `notas` store of seed 003 with all four indexes, and the queries the seed shows.
#[test]
fn seed_003_notas_indexes_and_queries() {
    let factory = support::factory();
    let db = open_with(&factory, |tx| {
        let notas = tx.create_object_store("notas", Some(KeyPath::parse("id")?), false)?;
        notas.create_index("por_fecha", KeyPath::parse("creado")?, false, false)?;
        notas.create_index("por_uuid", KeyPath::parse("uuid")?, true, false)?;
        notas.create_index(
            "por_libreta_fecha",
            KeyPath::compound(&["libreta", "creado"])?,
            false,
            false,
        )?;
        notas.create_index("por_etiqueta", KeyPath::parse("etiquetas")?, false, true)?;
        Ok(())
    });
    let tx = db
        .transaction(&["notas"], TransactionMode::ReadWrite)
        .unwrap();
    let notas = tx.object_store("notas").unwrap();
    for text in [
        r#"{"id":1,"uuid":"u1","libreta":"trabajo","creado":{"$date":300},"etiquetas":["local-first","rust"]}"#,
        r#"{"id":2,"uuid":"u2","libreta":"casa","creado":{"$date":100},"etiquetas":["compras"]}"#,
        r#"{"id":3,"uuid":"u3","libreta":"trabajo","creado":{"$date":200},"etiquetas":["local-first","local-first"]}"#,
        r#"{"id":4,"uuid":"u4","libreta":"trabajo","creado":{"$date":400}}"#,
        r#"{"id":5,"uuid":"u5","libreta":"trabajoz","creado":{"$date":50},"etiquetas":[]}"#,
    ] {
        notas.add(v(text), None).unwrap();
    }
    // unique: a duplicate uuid is refused with ConstraintError and changes nothing.
    let err = notas
        .add(v(r#"{"id":6,"uuid":"u1","libreta":"casa"}"#), None)
        .unwrap_err();
    assert_eq!(err.name(), "ConstraintError");
    assert_eq!(notas.count(None).unwrap(), 5);
    assert_eq!(
        notas
            .index("por_libreta_fecha")
            .unwrap()
            .count(None)
            .unwrap(),
        5
    );

    // Compound prefix: bound(["trabajo"], ["trabajo", []]) — all of one libreta, by date.
    let libreta = notas.index("por_libreta_fecha").unwrap();
    let de_la_libreta = KeyRange::bound(
        Key::Array(vec![Key::from("trabajo")]),
        Key::Array(vec![Key::from("trabajo"), Key::Array(vec![])]),
        false,
        false,
    )
    .unwrap();
    assert_eq!(
        libreta.get_all_keys(Query::from(de_la_libreta)).unwrap(),
        [n(3.0), n(1.0), n(4.0)]
    );

    // multiEntry: one entry per distinct member; direct lookup by one tag.
    let etiqueta = notas.index("por_etiqueta").unwrap();
    assert_eq!(
        etiqueta
            .get_all_keys(Query::from(Key::from("local-first")))
            .unwrap(),
        [n(1.0), n(3.0)]
    );
    assert_eq!(etiqueta.count(None).unwrap(), 4);

    // get on an index returns only the first match in key order.
    let fecha = notas.index("por_fecha").unwrap();
    let rango = KeyRange::lower_bound(Key::Date(100.0), false);
    assert_eq!(
        fecha.get(rango.clone()).unwrap().unwrap().get("id"),
        Some(&Value::from(2))
    );
    // getAll(rango, 20), getAllKeys(rango, 20), count(rango).
    let all = fecha.get_all(Query::from(rango.clone()).count(20)).unwrap();
    let ids: Vec<&Value> = all.iter().map(|r| r.get("id").unwrap()).collect();
    assert_eq!(
        ids,
        [
            &Value::from(2),
            &Value::from(3),
            &Value::from(1),
            &Value::from(4)
        ]
    );
    assert_eq!(
        fecha
            .get_all_keys(Query::from(rango.clone()).count(2))
            .unwrap(),
        [n(2.0), n(3.0)]
    );
    assert_eq!(fecha.count(Some(rango)).unwrap(), 4);
    // upperBound(fechaFin, true) and bound(desde, hasta, false, true).
    assert_eq!(
        fecha
            .get_all_keys(Query::from(KeyRange::upper_bound(Key::Date(200.0), true)))
            .unwrap(),
        [n(5.0), n(2.0)]
    );
    assert_eq!(
        fecha
            .get_all_keys(Query::from(
                KeyRange::bound(Key::Date(100.0), Key::Date(300.0), false, true).unwrap()
            ))
            .unwrap(),
        [n(2.0), n(3.0)]
    );
    // A direction on getAll.
    assert_eq!(
        fecha
            .get_all_keys(Query::all().direction(CursorDirection::Prev).count(2))
            .unwrap(),
        [n(4.0), n(1.0)]
    );
    tx.commit().unwrap();
}

#[test]
fn seed_003_unique_index_over_duplicates_fails_the_upgrade() {
    let factory = support::factory();
    open_with(&factory, |tx| {
        let notas = tx.create_object_store("notas", Some(KeyPath::parse("id")?), false)?;
        notas.put(v(r#"{"id":1,"uuid":"x"}"#), None)?;
        notas.put(v(r#"{"id":2,"uuid":"x"}"#), None)?;
        Ok(())
    });
    let err = factory
        .open("db", Some(2), |tx, old, new| {
            assert_eq!((old, new), (1, 2));
            let notas = tx.object_store("notas")?;
            notas.create_index("por_uuid", KeyPath::parse("uuid")?, true, false)?;
            Ok(())
        })
        .unwrap_err();
    assert_eq!(err.name(), "ConstraintError");
    // The database is exactly as before: version 1, no index.
    let db = factory.open("db", None, |_, _, _| Ok(())).unwrap();
    assert_eq!(db.version(), 1);
    let tx = db
        .transaction(&["notas"], TransactionMode::ReadOnly)
        .unwrap();
    assert!(tx
        .object_store("notas")
        .unwrap()
        .index_names()
        .unwrap()
        .is_empty());
    assert_eq!(tx.object_store("notas").unwrap().count(None).unwrap(), 2);
}

#[test]
fn seed_003_prefix_range_is_exact() {
    let factory = support::factory();
    let db = open_with(&factory, |tx| {
        let s = tx.create_object_store("p", Some(KeyPath::parse("nombre")?), false)?;
        for name in ["ma", "mar", "marta", "mar\u{FFFF}z", "mas", "Mar"] {
            let mut o = indexa::Object::default();
            o.insert("nombre".into(), Value::from(name));
            s.put(Value::Object(o), None)?;
        }
        Ok(())
    });
    let tx = db.transaction(&["p"], TransactionMode::ReadOnly).unwrap();
    let s = tx.object_store("p").unwrap();
    let idiom = KeyRange::bound(Key::from("mar"), Key::from("mar\u{FFFF}"), false, false).unwrap();
    assert_eq!(
        s.get_all_keys(Query::from(idiom)).unwrap(),
        [Key::from("mar"), Key::from("marta")]
    );
    assert_eq!(
        s.get_all_keys(Query::from(KeyRange::prefix("mar")))
            .unwrap(),
        [
            Key::from("mar"),
            Key::from("marta"),
            Key::from("mar\u{FFFF}z")
        ]
    );
}
