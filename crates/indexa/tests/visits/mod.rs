//! A value visitor for the tests of `visit_value`, `Cursor::visit_value`, `get_with`,
//! `get_all_with` and `get_all_records_with`.

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
