//! `indexa dump` and `indexa restore`: the format, round trips (a property test on random
//! databases, and byte-identical dumps of the repository's countries data), and bad input.

mod common;

use std::path::Path;

use common::{script, Env, Writer};
use indexa::{Factory, Key, KeyPath, TransactionMode, Value};
use indexa_cli::dump::{dump, restore, DumpArgs, RestoreArgs};
use indexa_cli::open::DataDir;
use indexa_cli::output::Lines;
use proptest::prelude::*;

fn countries() -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../data/countries.json")
        .to_str()
        .unwrap()
        .to_owned()
}

/// A small database with every kind of line: out-of-line keys with a generator above its
/// keys, in-line keys, and indexes of each flavour.
fn small(env: &Env) {
    env.expect_batch(
        "db",
        &["--version", "3"],
        &script(&[
            r#"{"op":"createObjectStore","name":"auto","autoIncrement":true}"#,
            r#"{"op":"add","store":"auto","value":"a"}"#,
            r#"{"op":"add","store":"auto","value":{"\u0000v8":{"$binary":"/w0="},"size":2}}"#,
            r#"{"op":"add","store":"auto","value":"c","key":10}"#,
            r#"{"op":"delete","store":"auto","query":10}"#,
            r#"{"op":"createObjectStore","name":"people","keyPath":"id"}"#,
            r#"{"op":"createIndex","store":"people","name":"tags","keyPath":"tags","multiEntry":true}"#,
            r#"{"op":"createIndex","store":"people","name":"name","keyPath":"name","unique":true}"#,
            r#"{"op":"add","store":"people","value":{"id":[1,"x"],"name":"Ada","tags":["m","e"],"born":{"$date":-4000}}}"#,
        ]),
        &[
            r#"{"result":null}"#,
            r#"{"result":1}"#,
            r#"{"result":2}"#,
            r#"{"result":10}"#,
            r#"{"result":null}"#,
            r#"{"result":null}"#,
            r#"{"result":null}"#,
            r#"{"result":null}"#,
            r#"{"result":[1,"x"]}"#,
            r#"{"transaction":"committed"}"#,
        ],
        0,
    );
}

const SMALL_DUMP: &str = r#"{"indexaDump":1,"name":"db","version":3}
{"store":"auto","keyPath":null,"autoIncrement":true,"currentNumber":11}
{"key":1,"value":"a"}
{"key":2,"value":{"$structuredClone":{"value":{"size":2},"serialized":{"$binary":"/w0="}}}}
{"store":"people","keyPath":"id","autoIncrement":false}
{"index":"name","keyPath":"name","unique":true,"multiEntry":false}
{"index":"tags","keyPath":"tags","unique":false,"multiEntry":true}
{"key":[1,"x"],"value":{"id":[1,"x"],"name":"Ada","tags":["m","e"],"born":{"$date":-4000}}}
{"end":{"stores":2,"indexes":2,"records":3}}
"#;

#[test]
fn dump_writes_the_documented_lines() {
    let env = Env::new();
    small(&env);
    assert_eq!(env.ok(&["dump", "db"]), SMALL_DUMP);
}

#[test]
fn restore_gives_back_schema_records_indexes_and_generator() {
    // SQLite-only: restore writes a database file into place (a URL is refused).
    let env = Env::sqlite();
    let file = env.file("small.dump", SMALL_DUMP);
    assert_eq!(env.ok(&["restore", "copy", file.to_str().unwrap()]), "");
    assert_eq!(env.ok(&["list"]), "copy\t3\n");
    // The generator continues at 11, above the deleted key 10.
    assert_eq!(env.ok(&["add", "copy", "auto", "\"d\""]), "11\n");
    assert_eq!(
        env.ok(&["query", "copy", "people", "--index", "tags", "--keys-only"]),
        "{\"key\":\"e\",\"primaryKey\":[1,\"x\"]}\n{\"key\":\"m\",\"primaryKey\":[1,\"x\"]}\n"
    );
    // The unique index is back: a second "Ada" is refused.
    let run = env.run(&["add", "copy", "people", r#"{"id":2,"name":"Ada"}"#]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr.starts_with("indexa: ConstraintError: "),
        "{}",
        run.stderr
    );
    // The serialization the Node.js package stores survives byte for byte.
    assert_eq!(
        env.ok(&["get", "copy", "auto", "2"]),
        "{\"$structuredClone\":{\"value\":{\"size\":2},\"serialized\":{\"$binary\":\"/w0=\"}}}\n"
    );
}

#[test]
fn dump_restore_dump_is_byte_identical_on_countries() {
    let env = Env::new();
    let run = env.run(&[
        "import",
        "world",
        "countries",
        &countries(),
        "--key-path",
        "cca3",
        "--index",
        "borders=borders:multi",
        "--index",
        "region",
        "--index",
        "cca2=cca2:unique",
        "--index",
        "name=name.common",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let first = env.ok(&["dump", "world"]);
    assert_eq!(first.lines().count(), 1 + 1 + 4 + 250 + 1);
    let file = env.file("world.dump", &first);
    // Restore writes SQLite files: a dump taken on PostgreSQL restores there byte for byte.
    let other = Env::sqlite();
    assert_eq!(other.ok(&["restore", "world", file.to_str().unwrap()]), "");
    assert_eq!(other.ok(&["dump", "world"]), first);
}

#[test]
fn restore_refuses_an_existing_database_unless_replace() {
    // SQLite-only: restore writes a database file into place (a URL is refused).
    let env = Env::sqlite();
    small(&env);
    let file = env.file(
        "small.dump",
        &SMALL_DUMP.replace("\"key\":1,\"value\":\"a\"", "\"key\":1,\"value\":\"A\""),
    );
    let run = env.run(&["restore", "db", file.to_str().unwrap()]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "indexa: ConstraintError: database \"db\" already exists (restore --replace replaces it)\n"
    );
    assert_eq!(env.ok(&["get", "db", "auto", "1"]), "\"a\"\n");
    assert_eq!(
        env.ok(&["restore", "db", file.to_str().unwrap(), "--replace"]),
        ""
    );
    assert_eq!(env.ok(&["get", "db", "auto", "1"]), "\"A\"\n");
    assert_eq!(env.ok(&["list"]), "db\t3\n");
    // No scratch directory is left behind.
    let scratch = std::fs::read_dir(env.data_dir())
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .file_name()
                .to_string_lossy()
                .starts_with(".restore-")
        })
        .count();
    assert_eq!(scratch, 0);
}

/// Each malformed dump fails with DataError naming its line, and changes nothing — not even
/// with --replace over an existing database.
#[test]
fn malformed_dumps_fail_with_data_error_and_change_nothing() {
    // SQLite-only: restore writes a database file into place (a URL is refused).
    let env = Env::sqlite();
    small(&env);
    let before = env.ok(&["dump", "db"]);
    let lines: Vec<&str> = SMALL_DUMP.lines().collect();
    let cases: Vec<(String, &str)> = vec![
        (lines[..8].join("\n"), "DataError: the dump has no end line (it is truncated)"),
        (SMALL_DUMP.replace(r#"{"key":1,"value":"a"}"#, r#"{"key":1,"value":"a""#), "DataError: dump line 3: SyntaxError: "),
        (SMALL_DUMP.replace(r#"{"key":1,"value":"a"}"#, r#"{"key":null,"value":"a"}"#), "DataError: dump line 3: null is not a valid key"),
        (SMALL_DUMP.replace(r#"{"key":1,"value":"a"}"#, r#"{"key":1,"value":"a","x":1}"#), "DataError: dump line 3: unexpected member \"x\""),
        (SMALL_DUMP.replace(r#""records":3"#, r#""records":4"#), "DataError: dump line 9: the end line counts 2 stores, 2 indexes and 4 records; the dump holds 2, 2 and 3"),
        (SMALL_DUMP.replace(r#"{"key":2,"#, r#"{"key":1,"#), "ConstraintError: dump line 4: "),
        (SMALL_DUMP.replace(r#""indexaDump":1"#, r#""indexaDump":2"#), "DataError: dump line 1: dump format version 2; this build reads version 1"),
        (lines[1..].join("\n"), "DataError: dump line 1: the first line must be the header"),
        (SMALL_DUMP.replace(r#"{"id":[1,"x"],"name""#, r#"{"id":[2],"name""#), "DataError: dump line 8: the record's in-line key is [2], not its key [1,\"x\"]"),
        (format!("{SMALL_DUMP}{{\"key\":5,\"value\":1}}\n"), "DataError: dump line 10: a line after the end line"),
    ];
    for (i, (text, expected)) in cases.iter().enumerate() {
        let file = env.file(&format!("bad{i}.dump"), text);
        for args in [
            vec!["restore", "db", file.to_str().unwrap(), "--replace"],
            vec!["restore", "fresh", file.to_str().unwrap()],
        ] {
            let run = env.run(&args);
            assert_eq!(run.code, 1, "case {i}: {run:?}");
            assert!(
                run.stderr.starts_with(&format!("indexa: {expected}")),
                "case {i}: {}",
                run.stderr
            );
        }
        assert_eq!(env.ok(&["dump", "db"]), before, "case {i}");
        assert_eq!(env.ok(&["list"]), "db\t3\n", "case {i}");
    }
    let run = env.run(&["restore", "db2", "/nonexistent/x.dump"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stderr
            .starts_with("indexa: NotFoundError: cannot open /nonexistent/x.dump"),
        "{}",
        run.stderr
    );
}

#[test]
fn dump_of_a_missing_database_is_not_found() {
    let env = Env::new();
    let run = env.run(&["dump", "nope"]);
    assert_eq!((run.code, run.stdout.as_str()), (1, ""));
    assert!(
        run.stderr
            .starts_with("indexa: NotFoundError: database \"nope\" does not exist"),
        "{}",
        run.stderr
    );
}

// ---- the property: restore(dump(db)) is the same database ----

#[derive(Debug, Clone)]
struct StoreSpec {
    /// 0: out-of-line keys; 1: key path `id`; 2: the empty key path (the value is the key).
    key_kind: u8,
    auto_increment: bool,
    indexes: Vec<(String, bool, bool)>,
    records: Vec<(u8, Value)>,
    deletes: Vec<u8>,
}

fn value_strategy() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        Just(Value::Undefined),
        any::<bool>().prop_map(Value::Bool),
        any::<f64>().prop_map(Value::Number),
        "[a-c\u{0}é]{0,3}".prop_map(|s| Value::string(&s)),
        (-1e13f64..1e13).prop_map(|t| Value::Date(t.trunc())),
        proptest::collection::vec(any::<u8>(), 0..4).prop_map(Value::Binary),
    ];
    leaf.prop_recursive(2, 12, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec(("[abt$]{1,2}", inner), 0..4).prop_map(|members| {
                indexa_cli::output::object(
                    members
                        .iter()
                        .map(|(k, v)| (k.as_str(), v.clone()))
                        .collect(),
                )
            }),
        ]
    })
}

fn store_strategy() -> impl Strategy<Value = StoreSpec> {
    (
        0u8..3,
        any::<bool>(),
        proptest::collection::vec(
            (
                prop_oneof![Just("a"), Just("b"), Just("t")],
                any::<bool>(),
                any::<bool>(),
            ),
            0..3,
        ),
        proptest::collection::vec((0u8..20, value_strategy()), 0..12),
        proptest::collection::vec(0u8..20, 0..4),
    )
        .prop_map(
            |(key_kind, auto_increment, indexes, records, deletes)| StoreSpec {
                key_kind,
                // A key generator needs a non-empty key path or none.
                auto_increment: auto_increment && key_kind != 2,
                indexes: indexes
                    .into_iter()
                    .map(|(p, u, m)| (p.to_owned(), u, m))
                    .collect(),
                records,
                deletes,
            },
        )
}

/// Builds the database; records that a constraint refuses are simply left out.
fn build(factory: &Factory, stores: &[StoreSpec]) {
    let db = factory
        .open("p", Some(2), |tx, _, _| {
            for (i, spec) in stores.iter().enumerate() {
                let kp = match spec.key_kind {
                    0 => None,
                    1 => Some(KeyPath::parse("id")?),
                    _ => Some(KeyPath::parse("")?),
                };
                let s = tx.create_object_store(format!("s{i}"), kp, spec.auto_increment)?;
                for (j, (path, unique, multi)) in spec.indexes.iter().enumerate() {
                    s.create_index(format!("i{j}"), KeyPath::parse(path)?, *unique, *multi)?;
                }
            }
            Ok(())
        })
        .unwrap();
    for (i, spec) in stores.iter().enumerate() {
        let name = format!("s{i}");
        for (k, v) in &spec.records {
            let tx = db
                .transaction(&[&name], TransactionMode::ReadWrite)
                .unwrap();
            let s = tx.object_store(&name).unwrap();
            let key = Key::Number(f64::from(*k));
            let explicit = !spec.auto_increment || k % 2 == 0;
            let result = match (spec.key_kind, explicit) {
                (2, _) if k % 2 == 0 => s.put(Value::Number(f64::from(*k)), None),
                (2, _) => s.put(Value::string(&format!("k{k}")), None),
                (1, true) => s.put(
                    indexa_cli::output::object(vec![
                        ("id", Value::Number(f64::from(*k))),
                        ("a", v.clone()),
                        ("t", v.clone()),
                    ]),
                    None,
                ),
                (1, false) => s.put(
                    indexa_cli::output::object(vec![
                        ("a", v.clone()),
                        ("b", Value::Number(f64::from(*k))),
                    ]),
                    None,
                ),
                (_, true) => s.put(v.clone(), Some(key)),
                (_, false) => s.put(v.clone(), None),
            };
            if result.is_ok() {
                tx.commit().unwrap();
            }
        }
        let tx = db
            .transaction(&[&name], TransactionMode::ReadWrite)
            .unwrap();
        for k in &spec.deletes {
            tx.object_store(&name)
                .unwrap()
                .delete(Key::Number(f64::from(*k)))
                .unwrap();
        }
        tx.commit().unwrap();
    }
}

fn dump_text(dir: &DataDir) -> String {
    let mut bytes = Vec::new();
    let mut out = Lines::buffered(&mut bytes);
    assert!(dump(dir, &DumpArgs { db: "p".into() }, &mut out).is_ok());
    out.finish().unwrap();
    String::from_utf8(bytes).unwrap()
}

/// One index's entries: store name, index name, (index key, primary key) pairs.
type IndexContents = (String, String, Vec<(Key, Key)>);

/// Every index's entries, store by store.
fn index_contents(dir: &Path) -> Vec<IndexContents> {
    let factory = Factory::open_dir(dir).unwrap();
    let db = factory.open("p", None, |_, _, _| Ok(())).unwrap();
    let tx = db
        .transaction_over_all_stores(TransactionMode::ReadOnly, indexa::Durability::Default)
        .unwrap();
    let mut out = Vec::new();
    for s in tx.object_store_names() {
        let store = tx.object_store(&s).unwrap();
        for i in store.index_names().unwrap() {
            let records = store
                .index(&i)
                .unwrap()
                .get_all_records(indexa::Query::default())
                .unwrap();
            out.push((
                s.clone(),
                i,
                records
                    .into_iter()
                    .map(|r| (r.key, r.primary_key))
                    .collect(),
            ));
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn restore_of_a_dump_is_the_same_database(stores in proptest::collection::vec(store_strategy(), 1..4)) {
        let temp = tempfile::tempdir().unwrap();
        let (from, to) = (temp.path().join("from"), temp.path().join("to"));
        build(&Factory::open_dir(&from).unwrap(), &stores);
        let text = dump_text(&DataDir::new(&from));
        let file = temp.path().join("p.dump");
        std::fs::write(&file, &text).unwrap();
        let restored = restore(&DataDir::new(&to), &RestoreArgs { db: "p".into(), file, replace: false });
        prop_assert!(restored.is_ok(), "{:?}", restored.err());
        // Same schema, key generators and records (all in the dump) …
        prop_assert_eq!(dump_text(&DataDir::new(&to)), text);
        // … and the same index contents.
        prop_assert_eq!(index_contents(&to), index_contents(&from));
    }
}

#[test]
fn a_dump_taken_while_a_writer_runs_holds_whole_transactions() {
    let env = Env::new();
    env.ok(&["create-store", "db", "s", "--auto-increment"]);
    env.ok(&["create-store", "db", "t", "--auto-increment"]);
    // Each writer transaction adds 25 records to each of two stores.
    let batch: String = (0..25)
        .flat_map(|i| {
            ["s", "t"].map(|s| format!("{{\"op\":\"add\",\"store\":\"{s}\",\"value\":{i}}}\n"))
        })
        .collect();
    let writer = Writer::start(&env, "db", batch);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let text = env.ok(&["dump", "db"]);
    writer.stop();
    let lines: Vec<&str> = text.lines().collect();
    let t_line = lines
        .iter()
        .position(|l| l.starts_with("{\"store\":\"t\""))
        .unwrap();
    let in_s = t_line - 2;
    let in_t = lines.len() - t_line - 2;
    assert_eq!(in_s, in_t, "both stores hold the same whole transactions");
    assert_eq!(in_s % 25, 0, "{in_s}");
    assert_eq!(
        lines[1],
        format!(
            "{{\"store\":\"s\",\"keyPath\":null,\"autoIncrement\":true,\"currentNumber\":{}}}",
            in_s + 1
        )
    );
}

#[test]
fn compound_and_empty_key_paths_and_an_exhausted_generator_round_trip() {
    let env = Env::new();
    let (_, code) = env.batch(
        "db",
        &["--version", "1"],
        &script(&[
            r#"{"op":"createObjectStore","name":"c","keyPath":["a","b"]}"#,
            r#"{"op":"createObjectStore","name":"e","keyPath":""}"#,
            r#"{"op":"createObjectStore","name":"x","autoIncrement":true}"#,
            r#"{"op":"put","store":"x","value":1,"key":9007199254740992}"#,
            r#"{"op":"createIndex","store":"c","name":"one","keyPath":["a"]}"#,
            r#"{"op":"put","store":"c","value":{"a":1,"b":"z"}}"#,
            r#"{"op":"put","store":"e","value":"str"}"#,
        ]),
    );
    assert_eq!(code, 0);
    let text = env.ok(&["dump", "db"]);
    assert_eq!(
        text,
        "{\"indexaDump\":1,\"name\":\"db\",\"version\":1}\n\
         {\"store\":\"c\",\"keyPath\":[\"a\",\"b\"],\"autoIncrement\":false}\n\
         {\"index\":\"one\",\"keyPath\":[\"a\"],\"unique\":false,\"multiEntry\":false}\n\
         {\"key\":[1,\"z\"],\"value\":{\"a\":1,\"b\":\"z\"}}\n\
         {\"store\":\"e\",\"keyPath\":\"\",\"autoIncrement\":false}\n\
         {\"key\":\"str\",\"value\":\"str\"}\n\
         {\"store\":\"x\",\"keyPath\":null,\"autoIncrement\":true,\"keyGeneratorExhausted\":true}\n\
         {\"key\":9007199254740992,\"value\":1}\n\
         {\"end\":{\"stores\":3,\"indexes\":1,\"records\":3}}\n"
    );
    let file = env.file("db.dump", &text);
    // Restore writes SQLite files: a dump taken on PostgreSQL restores there.
    let other = Env::sqlite();
    other.ok(&["restore", "copy", file.to_str().unwrap()]);
    assert_eq!(
        other.ok(&["dump", "copy"]),
        text.replace("\"name\":\"db\"", "\"name\":\"copy\"")
    );
    let run = other.run(&["add", "copy", "x", "5"]);
    assert_eq!(run.stderr, "indexa: ConstraintError: the key generator is exhausted (its current number is above 2^53)\n");
}

#[test]
fn restore_reads_standard_input() {
    // SQLite-only: restore writes a database file into place (a URL is refused).
    let env = Env::sqlite();
    let run = env.run_with_input(&["restore", "piped", "-"], SMALL_DUMP);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    assert_eq!(
        env.ok(&["dump", "piped"]),
        SMALL_DUMP.replace("\"name\":\"db\"", "\"name\":\"piped\"")
    );
}

/// The batch protocol takes only valid Unicode names, but IndexedDB names are UTF-16 strings
/// (the Node.js package stores lone surrogates exactly), so the database is made through the
/// engine.
#[test]
fn lone_surrogate_store_and_index_names_survive_dump_and_restore() {
    let env = Env::new();
    let unit = |u: u16| indexa::Utf16String::from_units(vec![u]);
    {
        let factory = env.factory();
        let db = factory
            .open("odd", Some(1), |tx, _, _| {
                let store = tx.create_object_store(unit(0xD800), None, false)?;
                store.create_index(unit(0xDFFF), KeyPath::parse("a")?, false, false)?;
                store.add(indexa::parse_value(r#"{"a":1}"#)?, Some(Key::Number(1.0)))?;
                tx.create_object_store(unit(0xDC00), None, false)?;
                Ok(())
            })
            .unwrap();
        db.close();
    }
    let first = env.ok(&["dump", "odd"]);
    assert!(first.contains(r#"{"store":"\uD800","#), "{first}");
    assert!(first.contains(r#"{"store":"\uDC00","#), "{first}");
    assert!(first.contains(r#"{"index":"\uDFFF","#), "{first}");
    let file = env.file("odd.dump", &first);
    // Restore writes SQLite files: a dump taken on PostgreSQL restores there.
    let other = Env::sqlite();
    assert_eq!(other.ok(&["restore", "odd", file.to_str().unwrap()]), "");
    assert_eq!(other.ok(&["dump", "odd"]), first);
}
