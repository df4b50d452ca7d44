//! Every example of seed 000 (key generators) and seed 003 (keys, indexes, ranges), written
//! as batch scripts and run through the `indexa` binary.

mod common;

use common::{script, Env};

const CREATED: &str = r#"{"transaction":"committed"}"#;
const ABORTED: &str = r#"{"transaction":"aborted"}"#;

// ---- seed 000: key generators ----

#[test]
fn seed000_each_store_has_its_own_generator() {
    let env = Env::new();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"store1","autoIncrement":true}"#,
            r#"{"op":"put","store":"store1","value":"a"}"#,
            r#"{"op":"createObjectStore","name":"store2","autoIncrement":true}"#,
            r#"{"op":"put","store":"store2","value":"a"}"#,
            r#"{"op":"put","store":"store1","value":"b"}"#,
            r#"{"op":"put","store":"store2","value":"b"}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"result":1}"#,
            r#"{"result":null}"#,
            r#"{"result":1}"#,
            r#"{"result":2}"#,
            r#"{"result":2}"#,
            CREATED,
        ],
        0,
    );
}

#[test]
fn seed000_failed_insert_does_not_advance_the_generator() {
    let env = Env::new();
    // transaction.onerror = e => e.preventDefault(): every op carries preventDefault.
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"store1","autoIncrement":true,"preventDefault":true}"#,
            r#"{"op":"createIndex","store":"store1","name":"index1","keyPath":"ix","unique":true,"preventDefault":true}"#,
            r#"{"op":"put","store":"store1","value":{"ix":"a"},"preventDefault":true}"#,
            r#"{"op":"put","store":"store1","value":{"ix":"a"},"preventDefault":true}"#,
            r#"{"op":"put","store":"store1","value":{"ix":"b"},"preventDefault":true}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"result":null}"#,
            r#"{"result":1}"#,
            r#"{"error":{"name":"ConstraintError","message":"unique index \"index1\" already has a record with key \"a\""}}"#,
            r#"{"result":2}"#,
            CREATED,
        ],
        0,
    );
    env.expect_batch(
        "db",
        &["--mode", "readonly"],
        &script(&[
            r#"{"op":"getAll","store":"store1"}"#,
            r#"{"op":"getAllKeys","store":"store1"}"#,
        ]),
        &[
            r#"{"result":[{"ix":"a"},{"ix":"b"}]}"#,
            r#"{"result":[1,2]}"#,
            CREATED,
        ],
        0,
    );
}

#[test]
fn seed000_delete_and_clear_never_reset_the_generator() {
    let env = Env::new();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"store1","autoIncrement":true}"#,
            r#"{"op":"put","store":"store1","value":"a"}"#,
            r#"{"op":"delete","store":"store1","query":1}"#,
            r#"{"op":"put","store":"store1","value":"b"}"#,
            r#"{"op":"clear","store":"store1"}"#,
            r#"{"op":"put","store":"store1","value":"c"}"#,
            r#"{"op":"delete","store":"store1","query":{"lower":0}}"#,
            r#"{"op":"put","store":"store1","value":"d"}"#,
            r#"{"op":"getAllKeys","store":"store1"}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"result":1}"#,
            r#"{"result":null}"#,
            r#"{"result":2}"#,
            r#"{"result":null}"#,
            r#"{"result":3}"#,
            r#"{"result":null}"#,
            r#"{"result":4}"#,
            r#"{"result":[4]}"#,
            CREATED,
        ],
        0,
    );
}

/// The results of seed 000's explicit-key sequence.
const EXPLICIT_KEYS: [&str; 13] = [
    "1", "3", "4", "-10", "5", "6.00001", "7", "8.9999", "9", r#""foo""#, "10", "[1000]", "11",
];

#[test]
fn seed000_explicit_keys_update_the_generator_only_when_numeric_and_higher() {
    let env = Env::new();
    let puts = [
        (r#""a""#, None),
        (r#""b""#, Some("3")),
        (r#""c""#, None),
        (r#""d""#, Some("-10")),
        (r#""e""#, None),
        (r#""f""#, Some("6.00001")),
        (r#""g""#, None),
        (r#""f""#, Some("8.9999")),
        (r#""g""#, None),
        (r#""h""#, Some(r#""foo""#)),
        (r#""i""#, None),
        (r#""j""#, Some("[1000]")),
        (r#""k""#, None),
    ];
    // Out-of-line keys, passed as the key argument.
    let mut lines =
        vec![r#"{"op":"createObjectStore","name":"store1","autoIncrement":true}"#.to_owned()];
    for (value, key) in puts {
        lines.push(match key {
            Some(k) => format!(r#"{{"op":"put","store":"store1","value":{value},"key":{k}}}"#),
            None => format!(r#"{{"op":"put","store":"store1","value":{value}}}"#),
        });
    }
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let mut expected = vec![r#"{"result":null}"#.to_owned()];
    expected.extend(EXPLICIT_KEYS.iter().map(|k| format!(r#"{{"result":{k}}}"#)));
    expected.push(CREATED.to_owned());
    let expected: Vec<&str> = expected.iter().map(String::as_str).collect();
    env.expect_batch("out_of_line", &[], &script(&lines), &expected, 0);

    // "All of these would behave the same if the objectStore used a keyPath and the
    // explicit key was passed inline in the object."
    let mut lines = vec![
        r#"{"op":"createObjectStore","name":"store1","keyPath":"id","autoIncrement":true}"#
            .to_owned(),
    ];
    for (value, key) in puts {
        lines.push(match key {
            Some(k) => {
                format!(r#"{{"op":"put","store":"store1","value":{{"v":{value},"id":{k}}}}}"#)
            }
            None => format!(r#"{{"op":"put","store":"store1","value":{{"v":{value}}}}}"#),
        });
    }
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    env.expect_batch("in_line", &[], &script(&lines), &expected, 0);
    env.expect_batch(
        "in_line",
        &[],
        &script(&[
            r#"{"op":"get","store":"store1","query":11}"#,
            r#"{"op":"get","store":"store1","query":3}"#,
        ]),
        &[
            r#"{"result":{"v":"k","id":11}}"#,
            r#"{"result":{"v":"b","id":3}}"#,
            CREATED,
        ],
        0,
    );
}

#[test]
fn seed000_abort_rolls_back_the_generator() {
    let env = Env::new();
    env.expect_batch(
        "db",
        &[],
        &script(&[r#"{"op":"createObjectStore","name":"store","autoIncrement":true}"#]),
        &[r#"{"result":null}"#, CREATED],
        0,
    );
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"put","store":"store","value":"a"}"#,
            r#"{"op":"put","store":"store","value":"b"}"#,
            r#"{"op":"abort"}"#,
        ]),
        &[
            r#"{"result":1}"#,
            r#"{"result":2}"#,
            r#"{"result":null}"#,
            ABORTED,
        ],
        1,
    );
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"put","store":"store","value":"c"}"#,
            r#"{"op":"put","store":"store","value":"d"}"#,
        ]),
        &[r#"{"result":1}"#, r#"{"result":2}"#, CREATED],
        0,
    );
}

#[test]
fn seed000_generated_keys_are_injected_at_the_key_path() {
    let env = Env::new();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"store","keyPath":"foo.bar","autoIncrement":true}"#,
            r#"{"op":"put","store":"store","value":{"foo":{}}}"#,
            r#"{"op":"get","store":"store","query":1}"#,
            r#"{"op":"put","store":"store","value":{"foo":{"bar":10}}}"#,
            r#"{"op":"get","store":"store","query":10}"#,
            r#"{"op":"createObjectStore","name":"deep","keyPath":"foo.bar.baz","autoIncrement":true}"#,
            r#"{"op":"put","store":"deep","value":{"zip":{}}}"#,
            r#"{"op":"get","store":"deep","query":1}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"result":1}"#,
            r#"{"result":{"foo":{"bar":1}}}"#,
            r#"{"result":10}"#,
            r#"{"result":{"foo":{"bar":10}}}"#,
            r#"{"result":null}"#,
            r#"{"result":1}"#,
            r#"{"result":{"zip":{},"foo":{"bar":{"baz":1}}}}"#,
            CREATED,
        ],
        0,
    );
}

#[test]
fn seed000_keys_cannot_be_injected_into_primitives_or_arrays() {
    let env = Env::new();
    let injected = r#"{"error":{"name":"DataError","message":"a generated key cannot be injected into this value at key path \"foo\""}}"#;
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"store","keyPath":"foo","autoIncrement":true}"#,
            r#"{"op":"put","store":"store","value":4,"preventDefault":true}"#,
            r#"{"op":"put","store":"store","value":[10],"preventDefault":true}"#,
            r#"{"op":"count","store":"store"}"#,
            r#"{"op":"put","store":"store","value":4}"#,
            r#"{"op":"count","store":"store"}"#,
        ]),
        &[
            r#"{"result":null}"#,
            injected,
            injected,
            r#"{"result":0}"#,
            injected,
            ABORTED,
        ],
        1,
    );
    // The upgrade was aborted, so the new database does not exist.
    assert_eq!(env.run(&["list"]).stdout, "");
}

#[test]
fn seed000_an_exhausted_generator_is_a_constraint_error() {
    let env = Env::new();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"g","autoIncrement":true}"#,
            r#"{"op":"add","store":"g","key":9007199254740992,"value":1}"#,
            r#"{"op":"add","store":"g","value":2,"preventDefault":true}"#,
            r#"{"op":"add","store":"g","key":"still fine","value":3}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"result":9007199254740992}"#,
            r#"{"error":{"name":"ConstraintError","message":"the key generator is exhausted (its current number is above 2^53)"}}"#,
            r#"{"result":"still fine"}"#,
            CREATED,
        ],
        0,
    );
}

// ---- seed 003: keys, indexes and ranges ----

#[test]
fn seed003_in_line_and_out_of_line_keys() {
    let env = Env::new();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"libros","keyPath":"isbn"}"#,
            r#"{"op":"put","store":"libros","value":{"isbn":"978-84","titulo":"Rayuela"}}"#,
            r#"{"op":"createObjectStore","name":"miniaturas"}"#,
            r#"{"op":"put","store":"miniaturas","value":{"$binary":"iVBORw0KGgo="},"key":"portada-978-84"}"#,
            r#"{"op":"get","store":"miniaturas","query":"portada-978-84"}"#,
            r#"{"op":"put","store":"miniaturas","value":"sin clave","preventDefault":true}"#,
            r#"{"op":"put","store":"libros","value":{"isbn":"1"},"key":"1","preventDefault":true}"#,
            r#"{"op":"createObjectStore","name":"entero","keyPath":""}"#,
            r#"{"op":"put","store":"entero","value":"la clave es el valor"}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"result":"978-84"}"#,
            r#"{"result":null}"#,
            r#"{"result":"portada-978-84"}"#,
            r#"{"result":{"$binary":"iVBORw0KGgo="}}"#,
            r#"{"error":{"name":"DataError","message":"the object store uses out-of-line keys and has no key generator, and no key was given"}}"#,
            r#"{"error":{"name":"DataError","message":"the object store uses in-line keys and a key was given"}}"#,
            r#"{"result":null}"#,
            r#"{"result":"la clave es el valor"}"#,
            CREATED,
        ],
        0,
    );
}

#[test]
fn seed003_eventos_generator_gaps_are_permanent() {
    let env = Env::new();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"eventos","keyPath":"id","autoIncrement":true}"#,
            r#"{"op":"put","store":"eventos","value":{"texto":"uno"}}"#,
            r#"{"op":"put","store":"eventos","value":{"texto":"dos"}}"#,
            r#"{"op":"delete","store":"eventos","query":2}"#,
            r#"{"op":"put","store":"eventos","value":{"texto":"tres"}}"#,
            r#"{"op":"put","store":"eventos","value":{"id":900,"texto":"manual"}}"#,
            r#"{"op":"put","store":"eventos","value":{"texto":"cuatro"}}"#,
            r#"{"op":"getAll","store":"eventos"}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"result":1}"#,
            r#"{"result":2}"#,
            r#"{"result":null}"#,
            r#"{"result":3}"#,
            r#"{"result":900}"#,
            r#"{"result":901}"#,
            r#"{"result":[{"texto":"uno","id":1},{"texto":"tres","id":3},{"id":900,"texto":"manual"},{"texto":"cuatro","id":901}]}"#,
            CREATED,
        ],
        0,
    );
    let info = env.run(&["info", "db", "--json"]);
    assert!(
        info.stdout.contains(r#""currentNumber":902"#),
        "{}",
        info.stdout
    );
}

/// Creates seed 003's `notas` store with its four indexes and a few notes.
fn notas(env: &Env) {
    env.expect_batch(
        "db",
        &["--version", "1"],
        &script(&[
            r#"{"op":"createObjectStore","name":"notas","keyPath":"id"}"#,
            r#"{"op":"createIndex","store":"notas","name":"por_fecha","keyPath":"creado"}"#,
            r#"{"op":"createIndex","store":"notas","name":"por_uuid","keyPath":"uuid","unique":true}"#,
            r#"{"op":"createIndex","store":"notas","name":"por_libreta_fecha","keyPath":["libreta","creado"]}"#,
            r#"{"op":"createIndex","store":"notas","name":"por_etiqueta","keyPath":"etiquetas","multiEntry":true}"#,
            r#"{"op":"put","store":"notas","value":{"id":1,"uuid":"u1","libreta":"trabajo","creado":{"$date":1700000000000},"etiquetas":["local-first","idb"],"texto":"mar"}}"#,
            r#"{"op":"put","store":"notas","value":{"id":2,"uuid":"u2","libreta":"casa","creado":{"$date":1700000100000},"etiquetas":["compras"],"texto":"marea"}}"#,
            r#"{"op":"put","store":"notas","value":{"id":3,"uuid":"u3","libreta":"trabajo","creado":{"$date":1700000200000},"etiquetas":["local-first"],"texto":"martes"}}"#,
            r#"{"op":"put","store":"notas","value":{"id":4,"uuid":"u4","libreta":"trabajo","creado":{"$date":1699999900000},"etiquetas":[],"texto":"luna"}}"#,
            r#"{"op":"put","store":"notas","value":{"id":5,"uuid":"u5","libreta":"trabajillo","texto":"sin fecha"}}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"result":null}"#,
            r#"{"result":null}"#,
            r#"{"result":null}"#,
            r#"{"result":null}"#,
            r#"{"result":1}"#,
            r#"{"result":2}"#,
            r#"{"result":3}"#,
            r#"{"result":4}"#,
            r#"{"result":5}"#,
            CREATED,
        ],
        0,
    );
}

#[test]
fn seed003_unique_index_rejects_duplicates() {
    let env = Env::new();
    notas(&env);
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"put","store":"notas","value":{"id":6,"uuid":"u1"}}"#,
            r#"{"op":"put","store":"notas","value":{"id":7,"uuid":"u7"}}"#,
        ]),
        &[
            r#"{"error":{"name":"ConstraintError","message":"unique index \"por_uuid\" already has a record with key \"u1\""}}"#,
            ABORTED,
        ],
        1,
    );
    // Overwriting a record with its own unique key is fine.
    env.expect_batch(
        "db",
        &[],
        &script(&[r#"{"op":"put","store":"notas","value":{"id":1,"uuid":"u1","texto":"nuevo"}}"#]),
        &[r#"{"result":1}"#, CREATED],
        0,
    );
}

#[test]
fn seed003_index_queries() {
    let env = Env::new();
    notas(&env);
    env.expect_batch(
        "db",
        &["--mode", "readonly"],
        &script(&[
            // idx.get(rango): only the first match, in index order.
            r#"{"op":"get","store":"notas","index":"por_fecha","query":{"lower":{"$date":1700000000000}}}"#,
            // idx.getAll(rango, 20) and idx.getAllKeys(rango, 20).
            r#"{"op":"getAll","store":"notas","index":"por_fecha","query":{"lower":{"$date":1700000000000}},"count":20}"#,
            r#"{"op":"getAllKeys","store":"notas","index":"por_fecha","query":{"lower":{"$date":1700000000000}},"count":20}"#,
            // idx.count(rango).
            r#"{"op":"count","store":"notas","index":"por_fecha","query":{"upper":{"$date":1700000100000},"upperOpen":true}}"#,
            // A record whose key path yields nothing is left out of the index.
            r#"{"op":"count","store":"notas","index":"por_fecha"}"#,
            // Compound prefix: bound(["trabajo"], ["trabajo", []]).
            r#"{"op":"getAllKeys","store":"notas","index":"por_libreta_fecha","query":{"lower":["trabajo"],"upper":["trabajo",[]]}}"#,
            // multiEntry: every note tagged local-first.
            r#"{"op":"getAllKeys","store":"notas","index":"por_etiqueta","query":"local-first"}"#,
            r#"{"op":"getAllKeys","store":"notas","index":"por_etiqueta","direction":"nextunique"}"#,
            r#"{"op":"get","store":"notas","index":"por_uuid","query":"u3"}"#,
            r#"{"op":"getKey","store":"notas","index":"por_uuid","query":"u9"}"#,
        ]),
        &[
            r#"{"result":{"id":1,"uuid":"u1","libreta":"trabajo","creado":{"$date":1700000000000},"etiquetas":["local-first","idb"],"texto":"mar"}}"#,
            r#"{"result":[{"id":1,"uuid":"u1","libreta":"trabajo","creado":{"$date":1700000000000},"etiquetas":["local-first","idb"],"texto":"mar"},{"id":2,"uuid":"u2","libreta":"casa","creado":{"$date":1700000100000},"etiquetas":["compras"],"texto":"marea"},{"id":3,"uuid":"u3","libreta":"trabajo","creado":{"$date":1700000200000},"etiquetas":["local-first"],"texto":"martes"}]}"#,
            r#"{"result":[1,2,3]}"#,
            r#"{"result":2}"#,
            r#"{"result":4}"#,
            r#"{"result":[4,1,3]}"#,
            r#"{"result":[1,3]}"#,
            r#"{"result":[2,1,1]}"#,
            r#"{"result":{"id":3,"uuid":"u3","libreta":"trabajo","creado":{"$date":1700000200000},"etiquetas":["local-first"],"texto":"martes"}}"#,
            r#"{"result":{"$undefined":true}}"#,
            CREATED,
        ],
        0,
    );
}

#[test]
fn seed003_key_range_constructors_and_string_prefix() {
    let env = Env::new();
    let mut lines = vec![r#"{"op":"createObjectStore","name":"n"}"#.to_owned()];
    for (i, word) in ["mar", "marea", "martes", "mas", "luna", "mar\u{ffff}z"]
        .iter()
        .enumerate()
    {
        lines.push(format!(
            r#"{{"op":"add","store":"n","value":{i},"key":"{word}"}}"#
        ));
    }
    for k in [3, 7, 10] {
        lines.push(format!(
            r#"{{"op":"add","store":"n","value":"n{k}","key":{k}}}"#
        ));
    }
    lines.extend(
        [
            // IDBKeyRange.only(7)
            r#"{"op":"getAllKeys","store":"n","query":7}"#,
            // lowerBound(7)
            r#"{"op":"getAllKeys","store":"n","query":{"lower":7}}"#,
            // upperBound(7, true)
            r#"{"op":"getAllKeys","store":"n","query":{"upper":7,"upperOpen":true}}"#,
            // bound(3, 10, false, true)
            r#"{"op":"getAllKeys","store":"n","query":{"lower":3,"upper":10,"lowerOpen":false,"upperOpen":true}}"#,
            // The seed's prefix idiom bound("mar", "mar\uffff") misses "mar\uffffz".
            r#"{"op":"getAllKeys","store":"n","query":{"lower":"mar","upper":"mar\uffff"}}"#,
            r#"{"op":"getAllKeys","store":"n","query":{"lower":"mar","upper":"mar\uffff"},"direction":"prev","count":2}"#,
        ]
        .map(str::to_owned),
    );
    let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
    let (out, code) = env.batch("db", &[], &script(&lines));
    assert_eq!(code, 0);
    assert_eq!(
        &out[10..],
        [
            r#"{"result":[7]}"#,
            "{\"result\":[7,10,\"luna\",\"mar\",\"marea\",\"martes\",\"mar\u{ffff}z\",\"mas\"]}",
            r#"{"result":[3]}"#,
            r#"{"result":[3,7]}"#,
            r#"{"result":["mar","marea","martes"]}"#,
            r#"{"result":["martes","marea"]}"#,
            CREATED,
        ]
    );
    // The exact prefix range of the command line does not miss it.
    let q = env.run(&["query", "db", "n", "--prefix", "mar", "--keys-only"]);
    assert_eq!(
        q.lines(),
        [
            r#"{"key":"mar","primaryKey":"mar"}"#,
            r#"{"key":"marea","primaryKey":"marea"}"#,
            r#"{"key":"martes","primaryKey":"martes"}"#,
            "{\"key\":\"mar\u{ffff}z\",\"primaryKey\":\"mar\u{ffff}z\"}",
        ]
    );
}

#[test]
fn seed003_multientry_and_compound_are_exclusive() {
    let env = Env::new();
    env.expect_batch(
        "db",
        &[],
        &script(&[
            r#"{"op":"createObjectStore","name":"notas","keyPath":"id"}"#,
            r#"{"op":"createIndex","store":"notas","name":"x","keyPath":["libreta","creado"],"multiEntry":true}"#,
            r#"{"op":"createIndex","store":"notas","name":"never","keyPath":"y"}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"error":{"name":"InvalidAccessError","message":"a multiEntry index cannot have an array key path"}}"#,
            ABORTED,
        ],
        1,
    );
}

#[test]
fn seed003_unique_index_over_duplicates_aborts_the_migration() {
    let env = Env::new();
    notas(&env);
    // Even with preventDefault: the spec aborts the upgrade itself.
    env.expect_batch(
        "db",
        &["--version", "2"],
        &script(&[
            r#"{"op":"createIndex","store":"notas","name":"por_libreta","keyPath":"libreta","unique":true,"preventDefault":true}"#,
            r#"{"op":"count","store":"notas"}"#,
        ]),
        &[
            r#"{"error":{"name":"ConstraintError","message":"cannot create unique index \"por_libreta\": key \"trabajo\" is not unique; the upgrade is aborted"}}"#,
            ABORTED,
        ],
        1,
    );
    assert_eq!(env.run(&["list"]).stdout, "db\t1\n");
    let info = env.run(&["info", "db", "--json"]);
    assert!(!info.stdout.contains("por_libreta\""), "{}", info.stdout);
}
