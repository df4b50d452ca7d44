//! A plain object's own properties: names and values in insertion order.
//!
//! Records are read back far more often than they are looked into by name, and most objects
//! have a handful of properties, so an [`Object`] is a list of `(name, value)` pairs, searched
//! in place while it has at most [`INDEXED_FROM`]` - 1` properties; from [`INDEXED_FROM`] on
//! it also keeps a hash table from names to positions. (A hash map for every object, as
//! `IndexMap`, which this type replaced, cost a record read about a seventh of its
//! instructions: hashing each name and filling the table; see BENCHMARKS.md, "Objects without
//! a hash table".)

use std::fmt;
use std::hash::BuildHasher;

use hashbrown::HashTable;

use crate::utf16::Utf16String;
use crate::value::Value;

/// The number of properties from which an [`Object`] keeps a hash table of its names; below
/// it, names are compared one by one.
pub const INDEXED_FROM: usize = 9;

/// The hasher of an [`Object`]'s property names, once it has [`INDEXED_FROM`] properties:
/// foldhash. foldhash resists hash flooding less than SipHash (the standard library's): its
/// seeds (random per process, varied per map) keep property names from colliding on purpose
/// unless someone studies a long-running process to recover them.
pub type PropertyHasher = foldhash::fast::RandomState;

/// An object's own properties, in insertion order (the order JavaScript enumerates a plain
/// object's string-named properties in, and the order they are stored in).
///
/// Names are [`Utf16String`]s, as JavaScript's are. Lookups by name take time proportional
/// to the number of properties below [`INDEXED_FROM`] and constant time from there; removing
/// a property keeps the others' order and takes time proportional to their number.
///
/// Two objects are equal when they have the same names with equal values, in any order.
#[derive(Clone, Default)]
pub struct Object {
    entries: Vec<(Utf16String, Value)>,
    /// Positions in `entries`, by name: only while there are [`INDEXED_FROM`] or more.
    index: Option<Box<NameIndex>>,
}

#[derive(Clone)]
struct NameIndex {
    positions: HashTable<usize>,
    hasher: PropertyHasher,
}

impl NameIndex {
    fn of(entries: &Vec<(Utf16String, Value)>) -> Box<NameIndex> {
        // Sized for the room the list has, so that a decoded object's table is made once.
        let mut index = Box::new(NameIndex {
            positions: HashTable::with_capacity(entries.capacity()),
            hasher: PropertyHasher::default(),
        });
        for (at, (name, _)) in entries.iter().enumerate() {
            let hash = hash_of(&index.hasher, name.units());
            index
                .positions
                .insert_unique(hash, at, |&i| hash_of(&index.hasher, entries[i].0.units()));
        }
        index
    }
}

/// The hash of a property name's code units in a [`NameIndex`].
fn hash_of(hasher: &PropertyHasher, name: &[u16]) -> u64 {
    hasher.hash_one(name)
}

impl Object {
    /// An empty object.
    pub fn new() -> Object {
        Object::default()
    }

    /// An empty object with room for `n` properties before it reallocates.
    pub fn with_capacity(n: usize) -> Object {
        Object {
            entries: Vec::with_capacity(n),
            index: None,
        }
    }

    /// The number of properties.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when the object has no properties.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The position of property `name`, if the object has it.
    fn position(&self, name: &[u16]) -> Option<usize> {
        match &self.index {
            None => self.entries.iter().position(|(n, _)| n.units() == name),
            Some(index) => {
                let hash = hash_of(&index.hasher, name);
                index
                    .positions
                    .find(hash, |&i| self.entries[i].0.units() == name)
                    .copied()
            }
        }
    }

    /// The value of property `name` (its UTF-16 code units, e.g. a `&Utf16String`).
    pub fn get(&self, name: &(impl AsRef<[u16]> + ?Sized)) -> Option<&Value> {
        self.position(name.as_ref()).map(|i| &self.entries[i].1)
    }

    /// The value of property `name`, to change in place.
    pub fn get_mut(&mut self, name: &(impl AsRef<[u16]> + ?Sized)) -> Option<&mut Value> {
        self.position(name.as_ref()).map(|i| &mut self.entries[i].1)
    }

    /// True when the object has property `name`.
    pub fn contains_key(&self, name: &(impl AsRef<[u16]> + ?Sized)) -> bool {
        self.position(name.as_ref()).is_some()
    }

    /// The property at position `i` of the insertion order.
    pub fn get_index(&self, i: usize) -> Option<(&Utf16String, &Value)> {
        self.entries.get(i).map(|(n, v)| (n, v))
    }

    /// Sets property `name` to `value`: a new name goes last; a name the object has keeps its
    /// place, and its old value is returned.
    pub fn insert(&mut self, name: Utf16String, value: Value) -> Option<Value> {
        match self.position(name.units()) {
            Some(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            None => {
                self.push_distinct(name, value);
                None
            }
        }
    }

    /// Appends property `name`, which the caller knows the object does not have (the decoder,
    /// when no earlier name shares its sketch); with a name the object has, the object would
    /// hold it twice.
    pub(crate) fn push_distinct(&mut self, name: Utf16String, value: Value) {
        debug_assert!(self.position(name.units()).is_none());
        let at = self.entries.len();
        match &mut self.index {
            Some(index) => {
                let hash = hash_of(&index.hasher, name.units());
                let entries = &self.entries;
                index
                    .positions
                    .insert_unique(hash, at, |&i| hash_of(&index.hasher, entries[i].0.units()));
                self.entries.push((name, value));
            }
            None => {
                self.entries.push((name, value));
                if self.entries.len() >= INDEXED_FROM {
                    self.index = Some(NameIndex::of(&self.entries));
                }
            }
        }
    }

    /// The value of property `name`, set first to `make()` (a new last property) when the
    /// object does not have it.
    pub fn get_or_insert_with(
        &mut self,
        name: &Utf16String,
        make: impl FnOnce() -> Value,
    ) -> &mut Value {
        let i = match self.position(name.units()) {
            Some(i) => i,
            None => {
                self.push_distinct(name.clone(), make());
                self.entries.len() - 1
            }
        };
        &mut self.entries[i].1
    }

    /// Removes property `name` and returns its value; the properties after it move up one
    /// place, keeping their order (JavaScript's `delete`). Takes time proportional to the
    /// number of properties; no name is hashed again.
    pub fn shift_remove(&mut self, name: &(impl AsRef<[u16]> + ?Sized)) -> Option<Value> {
        let name = name.as_ref();
        let i = self.position(name)?;
        let (_, value) = self.entries.remove(i);
        if self.entries.len() < INDEXED_FROM {
            self.index = None;
        } else if let Some(index) = &mut self.index {
            let hash = hash_of(&index.hasher, name);
            if let Ok(slot) = index.positions.find_entry(hash, |&at| at == i) {
                slot.remove();
            }
            for at in index.positions.iter_mut() {
                if *at > i {
                    *at -= 1;
                }
            }
        }
        Some(value)
    }

    /// Removes every property.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.index = None;
    }

    /// Keeps the properties for which `keep(name, value)` is true, in their order.
    pub fn retain(&mut self, mut keep: impl FnMut(&Utf16String, &mut Value) -> bool) {
        let before = self.entries.len();
        self.entries.retain_mut(|(name, value)| keep(name, value));
        if self.entries.len() != before {
            self.index = (self.entries.len() >= INDEXED_FROM).then(|| NameIndex::of(&self.entries));
        }
    }

    /// The properties in insertion order.
    pub fn iter(&self) -> Iter<'_> {
        Iter(self.entries.iter())
    }

    /// The properties in insertion order, with their values to change in place.
    pub fn iter_mut(&mut self) -> IterMut<'_> {
        IterMut(self.entries.iter_mut())
    }

    /// The property names in insertion order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &Utf16String> + DoubleEndedIterator {
        self.entries.iter().map(|(n, _)| n)
    }

    /// The values in insertion order.
    pub fn values(&self) -> impl ExactSizeIterator<Item = &Value> + DoubleEndedIterator {
        self.entries.iter().map(|(_, v)| v)
    }

    /// The values in insertion order, to change in place.
    pub fn values_mut(
        &mut self,
    ) -> impl ExactSizeIterator<Item = &mut Value> + DoubleEndedIterator {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    /// Appends property `name` unless the object has it, in which case `Err` gives the pair
    /// back and nothing changes (where [`Object::insert`] would replace the value): decoding
    /// refuses a stored object with a repeated name.
    pub(crate) fn push_unique(
        &mut self,
        name: Utf16String,
        value: Value,
    ) -> std::result::Result<(), (Utf16String, Value)> {
        if self.position(name.units()).is_some() {
            return Err((name, value));
        }
        self.push_distinct(name, value);
        Ok(())
    }
}

impl PartialEq for Object {
    fn eq(&self, other: &Object) -> bool {
        self.len() == other.len()
            && self
                .iter()
                .all(|(name, value)| other.get(name).is_some_and(|v| v == value))
    }
}

impl fmt::Debug for Object {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl FromIterator<(Utf16String, Value)> for Object {
    /// Collects properties in order; a repeated name keeps its first place and its last value.
    fn from_iter<I: IntoIterator<Item = (Utf16String, Value)>>(iter: I) -> Object {
        let mut object = Object::new();
        object.extend(iter);
        object
    }
}

impl Extend<(Utf16String, Value)> for Object {
    fn extend<I: IntoIterator<Item = (Utf16String, Value)>>(&mut self, iter: I) {
        let iter = iter.into_iter();
        self.entries.reserve(iter.size_hint().0);
        for (name, value) in iter {
            self.insert(name, value);
        }
    }
}

impl<const N: usize> From<[(Utf16String, Value); N]> for Object {
    fn from(pairs: [(Utf16String, Value); N]) -> Object {
        pairs.into_iter().collect()
    }
}

/// The properties of an [`Object`], in insertion order ([`Object::iter`]).
pub struct Iter<'a>(std::slice::Iter<'a, (Utf16String, Value)>);

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a Utf16String, &'a Value);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(n, v)| (n, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for Iter<'_> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(|(n, v)| (n, v))
    }
}

impl ExactSizeIterator for Iter<'_> {}

/// The properties of an [`Object`] with their values to change ([`Object::iter_mut`]).
pub struct IterMut<'a>(std::slice::IterMut<'a, (Utf16String, Value)>);

impl<'a> Iterator for IterMut<'a> {
    type Item = (&'a Utf16String, &'a mut Value);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(|(n, v)| (&*n, v))
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl ExactSizeIterator for IterMut<'_> {}

/// The properties of an [`Object`], taken out of it in insertion order.
pub struct IntoIter(std::vec::IntoIter<(Utf16String, Value)>);

impl Iterator for IntoIter {
    type Item = (Utf16String, Value);
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next()
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}

impl DoubleEndedIterator for IntoIter {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back()
    }
}

impl ExactSizeIterator for IntoIter {}

impl IntoIterator for Object {
    type Item = (Utf16String, Value);
    type IntoIter = IntoIter;
    fn into_iter(self) -> IntoIter {
        IntoIter(self.entries.into_iter())
    }
}

impl<'a> IntoIterator for &'a Object {
    type Item = (&'a Utf16String, &'a Value);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl<'a> IntoIterator for &'a mut Object {
    type Item = (&'a Utf16String, &'a mut Value);
    type IntoIter = IterMut<'a>;
    fn into_iter(self) -> IterMut<'a> {
        self.iter_mut()
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn name(s: &str) -> Utf16String {
        Utf16String::from(s)
    }

    /// An object of properties `p0` … `p{n-1}`, property `pi` holding `i`.
    fn numbered(n: usize) -> Object {
        (0..n)
            .map(|i| (name(&format!("p{i}")), Value::Number(i as f64)))
            .collect()
    }

    #[test]
    fn insert_keeps_order_and_replaces_in_place() {
        for n in [1, 3, INDEXED_FROM - 1, INDEXED_FROM, 40] {
            let mut o = numbered(n);
            assert_eq!(o.len(), n);
            assert_eq!(o.index.is_some(), n >= INDEXED_FROM, "{n}");
            assert_eq!(o.insert(name("p0"), Value::Null), Some(Value::Number(0.0)));
            assert_eq!(o.insert(name("new"), Value::Bool(true)), None);
            let names: Vec<String> = o.keys().map(|k| k.to_string_lossy()).collect();
            let mut expected: Vec<String> = (0..n).map(|i| format!("p{i}")).collect();
            expected.push("new".into());
            assert_eq!(names, expected);
            assert_eq!(o.get(&name("p0")), Some(&Value::Null));
            for i in 1..n {
                assert_eq!(
                    o.get(&name(&format!("p{i}"))),
                    Some(&Value::Number(i as f64))
                );
            }
            assert_eq!(o.get(&name("new")), Some(&Value::Bool(true)));
            assert_eq!(o.get(&name("absent")), None);
        }
    }

    #[test]
    fn the_hash_table_starts_at_its_size_and_goes_when_removals_shrink_the_object() {
        let mut o = numbered(INDEXED_FROM - 1);
        assert!(o.index.is_none());
        o.insert(name("last"), Value::Null);
        assert!(o.index.is_some());
        assert_eq!(o.shift_remove(&name("p3")), Some(Value::Number(3.0)));
        assert!(o.index.is_none());
        assert_eq!(o.get(&name("last")), Some(&Value::Null));
        assert_eq!(o.get(&name("p4")), Some(&Value::Number(4.0)));
        assert_eq!(o.get(&name("p3")), None);
    }

    #[test]
    fn shift_remove_keeps_the_order_of_the_others() {
        for n in [5, INDEXED_FROM + 1, 40] {
            let mut o = numbered(n);
            assert_eq!(o.shift_remove(&name("p1")), Some(Value::Number(1.0)));
            assert_eq!(o.shift_remove(&name("p1")), None);
            let names: Vec<String> = o.keys().map(|k| k.to_string_lossy()).collect();
            let expected: Vec<String> = (0..n)
                .filter(|&i| i != 1)
                .map(|i| format!("p{i}"))
                .collect();
            assert_eq!(names, expected);
            for i in (0..n).filter(|&i| i != 1) {
                assert_eq!(
                    o.get(&name(&format!("p{i}"))),
                    Some(&Value::Number(i as f64))
                );
            }
        }
    }

    #[test]
    fn push_unique_refuses_a_name_the_object_has() {
        for n in [2, INDEXED_FROM, 30] {
            let mut o = numbered(n);
            let back = o.push_unique(name("p1"), Value::Null).unwrap_err();
            assert_eq!(back, (name("p1"), Value::Null));
            assert_eq!(o.get(&name("p1")), Some(&Value::Number(1.0)));
            o.push_unique(name("q"), Value::Null).unwrap();
            assert_eq!(o.len(), n + 1);
            assert_eq!(o.get_index(n), Some((&name("q"), &Value::Null)));
        }
    }

    #[test]
    fn equality_ignores_order_and_debug_shows_a_map() {
        let a: Object = [(name("x"), Value::Null), (name("y"), Value::Bool(true))].into();
        let b: Object = [(name("y"), Value::Bool(true)), (name("x"), Value::Null)].into();
        assert_eq!(a, b);
        assert_ne!(a, numbered(2));
        assert_eq!(numbered(30), numbered(30));
        assert_eq!(format!("{a:?}"), r#"{"x": Null, "y": Bool(true)}"#);
    }

    /// One change to an object, on names from a small pool so that they repeat.
    #[derive(Debug, Clone)]
    enum Op {
        Insert(u8, i32),
        Remove(u8),
        GetOrInsert(u8, i32),
        Push(u8, i32),
        /// Keeps the properties whose name's number is not a multiple of this plus 2.
        Retain(u8),
        Clear,
    }

    fn op() -> impl Strategy<Value = Op> {
        let n = 0u8..24;
        prop_oneof![
            4 => (n.clone(), any::<i32>()).prop_map(|(k, v)| Op::Insert(k, v)),
            2 => n.clone().prop_map(Op::Remove),
            1 => (n.clone(), any::<i32>()).prop_map(|(k, v)| Op::GetOrInsert(k, v)),
            1 => (n, any::<i32>()).prop_map(|(k, v)| Op::Push(k, v)),
            // Clearing is rare, so that objects grow past the threshold between clears.
            1 => (0u8..20).prop_map(|x| if x == 0 { Op::Clear } else { Op::Retain(x % 4) }),
        ]
    }

    proptest! {
        /// An object holds what a list of (name, value) pairs in insertion order would, with
        /// JavaScript's assignment and `delete`, whichever side of [`INDEXED_FROM`] it is on.
        #[test]
        fn an_object_behaves_as_an_ordered_list_of_properties(
            ops in prop::collection::vec(op(), 0..120),
        ) {
            let mut object = Object::new();
            let mut model: Vec<(Utf16String, Value)> = Vec::new();
            for op in ops {
                let at = |model: &Vec<(Utf16String, Value)>, k: &Utf16String| {
                    model.iter().position(|(n, _)| n == k)
                };
                match op {
                    Op::Insert(k, v) => {
                        let k = name(&format!("k{k}"));
                        let v = Value::from(v);
                        let old = match at(&model, &k) {
                            Some(i) => Some(std::mem::replace(&mut model[i].1, v.clone())),
                            None => {
                                model.push((k.clone(), v.clone()));
                                None
                            }
                        };
                        prop_assert_eq!(object.insert(k, v), old);
                    }
                    Op::Remove(k) => {
                        let k = name(&format!("k{k}"));
                        let old = at(&model, &k).map(|i| model.remove(i).1);
                        prop_assert_eq!(object.shift_remove(&k), old);
                    }
                    Op::GetOrInsert(k, v) => {
                        let k = name(&format!("k{k}"));
                        let i = at(&model, &k).unwrap_or_else(|| {
                            model.push((k.clone(), Value::from(v)));
                            model.len() - 1
                        });
                        let got = object.get_or_insert_with(&k, || Value::from(v));
                        prop_assert_eq!(&*got, &model[i].1);
                        *got = Value::Null;
                        model[i].1 = Value::Null;
                    }
                    Op::Retain(m) => {
                        let drop = |n: &Utf16String| {
                            let k: u32 = n.to_string_lossy()[1..].parse().unwrap();
                            k % (u32::from(m) + 2) == 0
                        };
                        model.retain(|(n, _)| !drop(n));
                        object.retain(|n, _| !drop(n));
                    }
                    Op::Clear => {
                        model.clear();
                        object.clear();
                    }
                    Op::Push(k, v) => {
                        let k = name(&format!("k{k}"));
                        let taken = at(&model, &k).is_some();
                        if !taken {
                            model.push((k.clone(), Value::from(v)));
                        }
                        prop_assert_eq!(object.push_unique(k, Value::from(v)).is_err(), taken);
                    }
                }
                prop_assert_eq!(object.len(), model.len());
                prop_assert_eq!(object.index.is_some(), model.len() >= INDEXED_FROM);
            }
            let pairs: Vec<(Utf16String, Value)> = object.clone().into_iter().collect();
            prop_assert_eq!(&pairs, &model);
            for (k, v) in &model {
                prop_assert_eq!(object.get(k), Some(v));
            }
            for k in 0..24 {
                let k = name(&format!("k{k}"));
                prop_assert_eq!(object.contains_key(&k), model.iter().any(|(n, _)| *n == k));
            }
            let reversed: Object = model.iter().rev().cloned().collect();
            prop_assert_eq!(&reversed, &object);
        }
    }
}
