//! Value visitors for the tests of `visit_value`, `Cursor::visit_value`, `get_with`,
//! `get_all_with` and `get_all_records_with`.
#![allow(dead_code)] // Each test file uses one of them.

/// Logs each call a visit makes, in order: strings and names as their `StoredText`'s debug
/// form, numbers and Booleans as text, the rest by kind.
#[derive(Default)]
pub struct Visits(pub Vec<String>);

impl indexa::ValueVisitor for Visits {
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

impl indexa::RecordVisitor for Visits {
    fn record(&mut self, key: &indexa::Key, primary_key: &indexa::Key) {
        self.0.push(format!("record {key:?} {primary_key:?}"));
    }
}

/// Runs `change` when the visited value is a number, keeping its result: a change made from
/// inside a read's visitor, while SQLite is still reading the visited record.
pub struct ChangeInside<R, F: FnMut() -> R> {
    pub change: F,
    pub result: Option<R>,
}

impl<R, F: FnMut() -> R> ChangeInside<R, F> {
    pub fn new(change: F) -> Self {
        ChangeInside {
            change,
            result: None,
        }
    }
}

impl<R, F: FnMut() -> R> indexa::ValueVisitor for ChangeInside<R, F> {
    fn undefined(&mut self) {}
    fn null(&mut self) {}
    fn boolean(&mut self, _: bool) {}
    fn number(&mut self, _: f64) {
        self.result = Some((self.change)());
    }
    fn date(&mut self, _: f64) {}
    fn string(&mut self, _: indexa::StoredText<'_>) {}
    fn binary(&mut self, _: &[u8]) {}
    fn array(&mut self, _: usize) {}
    fn object(&mut self, _: usize) {}
    fn name(&mut self, _: indexa::StoredText<'_>) {}
}
