//! A model test: random sequences of writes, commits and aborts against a `BTreeMap`
//! reference with its own key generator and indexes. After every operation the engine and the
//! model agree on the result (key or error name); after every sequence they agree on every
//! record, every index entry and the generator's current number.

mod support;

use std::collections::BTreeMap;

use indexa::{Key, KeyGenerator, KeyPath, KeyRange, Object, Query, TransactionMode, Value};
use proptest::prelude::*;

#[derive(Debug, Clone)]
enum Op {
    /// put/add of `{v, u}` with an explicit key, or with a generated one (`None`).
    Store {
        key: Option<Key>,
        v: i32,
        u: Option<i32>,
        add: bool,
    },
    Delete(Key),
    DeleteRange(i32, i32),
    Clear,
    Commit,
    Abort,
}

fn arb_key() -> impl Strategy<Value = Key> {
    prop_oneof![
        (-3i32..12).prop_map(Key::from),
        (0i32..40).prop_map(|n| Key::Number(f64::from(n) / 4.0)),
        prop_oneof![Just("a"), Just("b")].prop_map(Key::from),
    ]
}

fn arb_op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (proptest::option::of(arb_key()), 0i32..3, proptest::option::of(0i32..6), any::<bool>())
            .prop_map(|(key, v, u, add)| Op::Store { key, v, u, add }),
        2 => arb_key().prop_map(Op::Delete),
        1 => (-2i32..12, -2i32..12).prop_map(|(a, b)| Op::DeleteRange(a.min(b), a.max(b))),
        1 => Just(Op::Clear),
        1 => Just(Op::Commit),
        1 => Just(Op::Abort),
    ]
}

/// The committed state and the state of the running transaction.
#[derive(Clone, Default)]
struct Model {
    records: BTreeMap<Key, (i32, Option<i32>)>,
    generator: KeyGenerator,
}

impl Model {
    /// The expected outcome of a store operation: the key, or the error name.
    fn store(
        &mut self,
        key: Option<Key>,
        v: i32,
        u: Option<i32>,
        add: bool,
    ) -> Result<Key, &'static str> {
        let mut generator = self.generator;
        let key = match key {
            Some(k) => {
                generator.possibly_update_key_generator(&k);
                k
            }
            None => generator.generate_key().map_err(|e| e.name())?,
        };
        if add && self.records.contains_key(&key) {
            return Err("ConstraintError");
        }
        if let Some(u) = u {
            if self
                .records
                .iter()
                .any(|(k, (_, uu))| *uu == Some(u) && *k != key)
            {
                return Err("ConstraintError");
            }
        }
        self.records.insert(key.clone(), (v, u));
        self.generator = generator;
        Ok(key)
    }
}

fn value(v: i32, u: Option<i32>) -> Value {
    let mut o = Object::default();
    o.insert("v".into(), Value::from(v));
    if let Some(u) = u {
        o.insert("u".into(), Value::from(u));
    }
    Value::Object(o)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn engine_matches_the_model(ops in proptest::collection::vec(arb_op(), 1..40)) {
        let factory = support::factory();
        let db = factory
            .open("db", Some(1), |tx, _, _| {
                let s = tx.create_object_store("s", None, true)?;
                s.create_index("v", KeyPath::parse("v")?, false, false)?;
                s.create_index("u", KeyPath::parse("u")?, true, false)?;
                Ok(())
            })
            .unwrap();
        let mut committed = Model::default();
        let mut current = committed.clone();
        let mut tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
        for op in ops {
            match op {
                Op::Store { key, v, u, add } => {
                    let store = tx.object_store("s").unwrap();
                    let got = if add {
                        store.add(value(v, u), key.clone())
                    } else {
                        store.put(value(v, u), key.clone())
                    };
                    let expected = current.store(key, v, u, add);
                    prop_assert_eq!(got.map_err(|e| e.name()), expected);
                }
                Op::Delete(key) => {
                    tx.object_store("s").unwrap().delete(key.clone()).unwrap();
                    current.records.remove(&key);
                }
                Op::DeleteRange(a, b) => {
                    let range = KeyRange::bound(Key::from(a), Key::from(b), false, false).unwrap();
                    tx.object_store("s").unwrap().delete(range.clone()).unwrap();
                    current.records.retain(|k, _| !range.includes(k));
                }
                Op::Clear => {
                    tx.object_store("s").unwrap().clear().unwrap();
                    current.records.clear();
                }
                Op::Commit => {
                    tx.commit().unwrap();
                    committed = current.clone();
                    tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
                }
                Op::Abort => {
                    tx.abort();
                    current = committed.clone();
                    tx = db.transaction(&["s"], TransactionMode::ReadWrite).unwrap();
                }
            }
        }
        tx.commit().unwrap();
        let tx = db.transaction(&["s"], TransactionMode::ReadOnly).unwrap();
        let s = tx.object_store("s").unwrap();
        let records: Vec<(Key, Value)> = s
            .get_all_records(Query::all())
            .unwrap()
            .into_iter()
            .map(|r| (r.primary_key, r.value))
            .collect();
        let expected: Vec<(Key, Value)> = current
            .records
            .iter()
            .map(|(k, (v, u))| (k.clone(), value(*v, *u)))
            .collect();
        prop_assert_eq!(records, expected);
        prop_assert_eq!(s.current_number().unwrap(), Some(current.generator.current_number()));
        // Index entries: (index key, primary key) in index order.
        let entries = |name: &str| -> Vec<(Key, Key)> {
            s.index(name)
                .unwrap()
                .get_all_records(Query::all())
                .unwrap()
                .into_iter()
                .map(|r| (r.key, r.primary_key))
                .collect()
        };
        let mut by_v: Vec<(Key, Key)> = current
            .records
            .iter()
            .map(|(k, (v, _))| (Key::from(*v), k.clone()))
            .collect();
        by_v.sort();
        prop_assert_eq!(entries("v"), by_v);
        let mut by_u: Vec<(Key, Key)> = current
            .records
            .iter()
            .filter_map(|(k, (_, u))| u.map(|u| (Key::from(u), k.clone())))
            .collect();
        by_u.sort();
        prop_assert_eq!(entries("u"), by_u);
    }
}
