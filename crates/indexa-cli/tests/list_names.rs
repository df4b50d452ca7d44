//! `indexa list` never lets a database name forge a line or a column: plain names print as
//! they are, others as JSON strings.

mod common;

use common::Env;

#[test]
fn list_quotes_names_that_could_forge_lines() {
    let env = Env::new();
    let names = [
        "plain",
        "with space é",
        "a\tb",
        "x\ny\tz 9",
        "\"quoted",
        "back\\slash",
        "bell\u{7}",
        "line\u{2028}sep",
    ];
    for name in names {
        env.expect_batch(
            name,
            &[],
            "{\"op\":\"createObjectStore\",\"name\":\"s\"}\n",
            &[r#"{"result":null}"#, r#"{"transaction":"committed"}"#],
            0,
        );
    }
    let run = env.run(&["list"]);
    assert_eq!((run.code, run.stderr.as_str()), (0, ""));
    assert_eq!(
        run.stdout,
        concat!(
            "\"\\\"quoted\"\t1\n",
            "\"a\\tb\"\t1\n",
            "\"back\\\\slash\"\t1\n",
            "\"bell\\u0007\"\t1\n",
            "\"line\u{2028}sep\"\t1\n",
            "plain\t1\n",
            "with space é\t1\n",
            "\"x\\ny\\tz 9\"\t1\n",
        )
    );
    // Every line has exactly one tab outside the quoted name, and quoted names read back.
    let mut read_back = Vec::new();
    for line in run.stdout.lines() {
        let (name, version) = line.rsplit_once('\t').unwrap();
        assert_eq!(version, "1");
        read_back.push(if name.starts_with('"') {
            serde_json::from_str::<String>(name).unwrap()
        } else {
            name.to_owned()
        });
    }
    read_back.sort();
    let mut expected: Vec<String> = names.iter().map(|n| n.to_string()).collect();
    expected.sort();
    assert_eq!(read_back, expected);
}
