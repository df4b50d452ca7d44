//! Robustness of the batch protocol on arbitrary lines (the CI counterpart of the
//! `batch_lines` fuzz target): valid operations, operations cut or spliced at random places,
//! and garbage, mixed. A batch never panics, answers every line with a `result` or `error`
//! line, ends with its transaction line, and a batch that ends in `abort` leaves the database
//! exactly as it was.

mod common;

use common::Env;
use indexa::Factory;
use indexa_cli::batch::{self, BatchArgs, DurabilityArg, Mode, Outcome};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

/// Store `s` (key path `id`, unique index `u` on `u`, multiEntry index `tags`) and store `t`
/// (key generator), with a few records.
const SETUP: &[&str] = &[
    r#"{"op":"createObjectStore","name":"s","keyPath":"id"}"#,
    r#"{"op":"createIndex","store":"s","name":"u","keyPath":"u","unique":true}"#,
    r#"{"op":"createIndex","store":"s","name":"tags","keyPath":"tags","multiEntry":true}"#,
    r#"{"op":"createObjectStore","name":"t","autoIncrement":true}"#,
    r#"{"op":"add","store":"s","value":{"id":1,"u":"a","tags":["x","y"]}}"#,
    r#"{"op":"add","store":"s","value":{"id":2,"u":"b","tags":["y"]}}"#,
    r#"{"op":"add","store":"t","value":"first"}"#,
];

/// Operations that do something on the setup's stores, or fail in an interesting way.
const TEMPLATES: &[&str] = &[
    r#"{"op":"add","store":"s","value":{"id":3,"u":"c","tags":["z"]}}"#,
    r#"{"op":"add","store":"s","value":{"id":4,"u":"a"}}"#,
    r#"{"op":"put","store":"s","value":{"id":1,"u":"b"}}"#,
    r#"{"op":"put","store":"s","value":{"id":[1,"x",{"$date":5}],"u":"d"}}"#,
    r#"{"op":"add","store":"t","value":{"n":1}}"#,
    r#"{"op":"add","store":"t","value":"x","key":10}"#,
    r#"{"op":"put","store":"t","value":"y","key":{"$binary":"AAE="}}"#,
    r#"{"op":"get","store":"s","query":1}"#,
    r#"{"op":"get","store":"s","index":"u","query":"a"}"#,
    r#"{"op":"getKey","store":"s","index":"tags","query":{"lower":"x","upper":"y"}}"#,
    r#"{"op":"getAll","store":"s","direction":"prev","count":1}"#,
    r#"{"op":"getAllKeys","store":"s","index":"tags","direction":"nextunique"}"#,
    r#"{"op":"count","store":"t","query":{"lower":1,"lowerOpen":true}}"#,
    r#"{"op":"delete","store":"s","query":{"lower":2,"upper":3}}"#,
    r#"{"op":"delete","store":"t","query":1}"#,
    r#"{"op":"clear","store":"t"}"#,
    r#"{"op":"openCursor","store":"s","index":"tags","direction":"prev"}"#,
    r#"{"op":"openCursor","store":"s","steps":[{"continue":null},{"update":{"id":2,"u":"e"}},{"delete":null},{"advance":2}]}"#,
    r#"{"op":"openKeyCursor","store":"s","index":"u","steps":[{"continuePrimaryKey":["b",2]}]}"#,
    r#"{"op":"createObjectStore","name":"n"}"#,
    r#"{"op":"get","store":"nope","query":1}"#,
    r#"{"op":"add","store":"s","value":{"id":{"$number":"NaN"}}}"#,
    r#"{"op":"add","store":"s","value":{"id":5},"preventDefault":true}"#,
    r#"{"op":"getAll","store":"s","count":4294967296}"#,
    "",
    "   \t",
    "\r",
];

/// A line: a template, a template cut or spliced with bytes at a random place, or garbage.
fn line() -> impl Strategy<Value = String> {
    let template = prop::sample::select(TEMPLATES);
    prop_oneof![
        4 => template.clone().prop_map(str::to_owned),
        2 => (template.clone(), any::<prop::sample::Index>(), ".{0,4}").prop_map(|(t, at, s)| {
            let mut cut = at.index(t.len() + 1);
            while !t.is_char_boundary(cut) {
                cut -= 1;
            }
            format!("{}{}{}", &t[..cut], s, &t[cut..])
        }),
        1 => (template, any::<prop::sample::Index>()).prop_map(|(t, at)| {
            t[..at.index(t.len() + 1)].to_owned()
        }),
        1 => "[ -~]{0,40}",
        1 => "\\PC{0,20}",
    ]
}

fn args(version: Option<u64>) -> BatchArgs {
    BatchArgs {
        db: "db".into(),
        version,
        mode: Mode::ReadWrite,
        durability: DurabilityArg::Relaxed,
    }
}

/// Runs a batch; returns its outcome and output lines.
fn run(factory: &Factory, version: Option<u64>, lines: &[String]) -> (Outcome, Vec<String>) {
    let mut input = String::new();
    for line in lines {
        input.push_str(line);
        input.push('\n');
    }
    let mut out = Vec::new();
    let outcome = batch::run(factory, "db", &args(version), input.as_bytes(), &mut out).unwrap();
    let text = String::from_utf8(out).unwrap();
    (outcome, text.lines().map(str::to_owned).collect())
}

/// Makes database `db` afresh: the setup's stores and records at version 1.
fn setup(factory: &Factory) {
    factory.delete_database("db").unwrap();
    let lines: Vec<String> = SETUP.iter().map(|l| (*l).to_owned()).collect();
    let (outcome, _) = run(factory, Some(1), &lines);
    assert_eq!(outcome, Outcome::Committed);
}

/// Everything in the database, as the protocol prints it.
fn dump(factory: &Factory) -> Vec<String> {
    let lines = [
        r#"{"op":"openCursor","store":"s"}"#,
        r#"{"op":"getAllKeys","store":"s","index":"u"}"#,
        r#"{"op":"getAllKeys","store":"s","index":"tags"}"#,
        r#"{"op":"openCursor","store":"t"}"#,
        r#"{"op":"abort"}"#,
    ]
    .map(str::to_owned);
    let (outcome, out) = run(factory, None, &lines);
    assert_eq!(outcome, Outcome::Aborted);
    out
}

fn is_answer(line: &str) -> bool {
    (line.starts_with(r#"{"result":"#) || line.starts_with(r#"{"error":{"name":""#))
        && serde_json::from_str::<serde_json::Value>(line).is_ok()
}

/// Runs `case` on 96 random scripts, each on database `db` made afresh in one factory on
/// the backend under test.
fn for_scripts(
    case: impl Fn(&Factory, Vec<String>) -> Result<(), proptest::test_runner::TestCaseError>,
) {
    let env = Env::new();
    let factory = env.factory();
    let mut runner = TestRunner::new(Config {
        cases: 96,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&prop::collection::vec(line(), 0..12), |lines| {
        setup(&factory);
        case(&factory, lines)
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn arbitrary_lines_get_answers() {
    for_scripts(|factory, lines| {
        let (outcome, out) = run(factory, None, &lines);
        let last = out.last().expect("a transaction line");
        match outcome {
            Outcome::Committed => prop_assert_eq!(last, r#"{"transaction":"committed"}"#),
            Outcome::Aborted => prop_assert_eq!(last, r#"{"transaction":"aborted"}"#),
            Outcome::OpenFailed => prop_assert!(false, "the database opens: {:?}", out),
        }
        for answer in &out[..out.len() - 1] {
            prop_assert!(is_answer(answer), "not an answer: {}", answer);
        }
        // The same lines as an upgrade of the database never panic either.
        let (outcome, _) = run(factory, Some(2), &lines);
        prop_assert_ne!(outcome, Outcome::OpenFailed);
        Ok(())
    });
}

#[test]
fn an_aborted_batch_changes_nothing() {
    for_scripts(|factory, lines| {
        let before = dump(factory);
        let mut lines: Vec<String> = lines
            .into_iter()
            .filter(|l| !l.contains("commit"))
            .collect();
        lines.push(r#"{"op":"abort"}"#.to_owned());
        let (outcome, out) = run(factory, None, &lines);
        prop_assert_eq!(outcome, Outcome::Aborted, "{:?}", out);
        prop_assert_eq!(dump(factory), before);
        // The key generator was rolled back too: the next generated key is still 2.
        let add = [r#"{"op":"add","store":"t","value":0}"#.to_owned()];
        let (_, out) = run(factory, None, &add);
        prop_assert_eq!(&out[0], r#"{"result":2}"#);
        Ok(())
    });
}

/// The same random scripts give the same answers, line for line, and leave the same
/// database on SQLite and on PostgreSQL (the server at `INDEXA_TEST_PG_URL`; said and
/// skipped when it is not set).
#[test]
fn the_same_lines_give_the_same_answers_on_sqlite_and_postgres() {
    let Some(db) = common::TestDatabase::new("differential") else {
        eprintln!("INDEXA_TEST_PG_URL is not set: PostgreSQL skipped (eval \"$(scripts/pg-test-cluster.sh start)\")");
        return;
    };
    let sqlite = Env::sqlite();
    let factories = [sqlite.factory(), Factory::open_url(&db.url).unwrap()];
    let mut runner = TestRunner::new(Config {
        cases: 96,
        failure_persistence: None,
        ..Config::default()
    });
    let result = runner.run(&prop::collection::vec(line(), 0..12), |lines| {
        let [on_sqlite, on_postgres] = factories.each_ref().map(|factory| {
            setup(factory);
            let answers = run(factory, None, &lines);
            let upgrade = run(factory, Some(2), &lines);
            (answers, upgrade, dump(factory))
        });
        prop_assert_eq!(on_postgres, on_sqlite);
        Ok(())
    });
    if let Err(e) = result {
        panic!("{e}");
    }
}
