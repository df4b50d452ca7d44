//! Key ranges: the queries IndexedDB answers without a scan.
//!
//! Source: <https://www.w3.org/TR/IndexedDB-3/#range-construct> and seed 003 ("Rangos de
//! consulta"), plus an exact string-prefix range.

use std::ops::Bound;

use crate::error::{Error, Result};
use crate::key::Key;
use crate::key_encoding::{encode_key, encode_string_prefix};
use crate::utf16::Utf16String;

/// A continuous interval of keys, or all string keys with a given prefix.
///
/// Constructors mirror `IDBKeyRange`: [`KeyRange::only`], [`KeyRange::lower_bound`],
/// [`KeyRange::upper_bound`], [`KeyRange::bound`]; [`KeyRange::prefix`] is ours. A `Key`
/// converts into `KeyRange::only(key)`, so engine methods that take a range also take a key.
#[derive(Debug, Clone, PartialEq)]
pub struct KeyRange(Repr);

#[derive(Debug, Clone, PartialEq)]
enum Repr {
    Bounds {
        lower: Option<Key>,
        upper: Option<Key>,
        lower_open: bool,
        upper_open: bool,
    },
    Prefix(Utf16String),
}

/// A key range as bounds on encoded keys (see [`crate::encode_key`]); storage queries these.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct EncodedRange {
    pub lower: Bound<Vec<u8>>,
    pub upper: Bound<Vec<u8>>,
}

impl EncodedRange {
    /// The range of all keys.
    pub fn all() -> Self {
        EncodedRange {
            lower: Bound::Unbounded,
            upper: Bound::Unbounded,
        }
    }

    /// True when `encoded` (an encoded key) is inside the range.
    #[cfg(test)]
    pub fn contains(&self, encoded: &[u8]) -> bool {
        let above = match &self.lower {
            Bound::Unbounded => true,
            Bound::Included(l) => encoded >= l.as_slice(),
            Bound::Excluded(l) => encoded > l.as_slice(),
        };
        above
            && match &self.upper {
                Bound::Unbounded => true,
                Bound::Included(u) => encoded <= u.as_slice(),
                Bound::Excluded(u) => encoded < u.as_slice(),
            }
    }
}

impl KeyRange {
    /// The range holding exactly `key` (`IDBKeyRange.only`).
    pub fn only(key: Key) -> KeyRange {
        KeyRange(Repr::Bounds {
            lower: Some(key.clone()),
            upper: Some(key),
            lower_open: false,
            upper_open: false,
        })
    }

    /// All keys above `lower` (`IDBKeyRange.lowerBound`); `open` excludes `lower` itself.
    pub fn lower_bound(lower: Key, open: bool) -> KeyRange {
        KeyRange(Repr::Bounds {
            lower: Some(lower),
            upper: None,
            lower_open: open,
            upper_open: true,
        })
    }

    /// All keys below `upper` (`IDBKeyRange.upperBound`); `open` excludes `upper` itself.
    pub fn upper_bound(upper: Key, open: bool) -> KeyRange {
        KeyRange(Repr::Bounds {
            lower: None,
            upper: Some(upper),
            lower_open: true,
            upper_open: open,
        })
    }

    /// The keys between `lower` and `upper` (`IDBKeyRange.bound`).
    ///
    /// # Errors
    /// [`Error::Data`] if `lower > upper`, or if they are equal and either side is open.
    pub fn bound(lower: Key, upper: Key, lower_open: bool, upper_open: bool) -> Result<KeyRange> {
        if lower > upper {
            return Err(Error::Data(
                "the lower bound is greater than the upper bound".into(),
            ));
        }
        if lower == upper && (lower_open || upper_open) {
            return Err(Error::Data(
                "the bounds are equal and one of them is open".into(),
            ));
        }
        Ok(KeyRange(Repr::Bounds {
            lower: Some(lower),
            upper: Some(upper),
            lower_open,
            upper_open,
        }))
    }

    /// A range from optional bounds, as the text interfaces spell it.
    ///
    /// # Errors
    /// [`Error::Data`] when both bounds are `None`, or as for [`KeyRange::bound`].
    pub fn from_bounds(
        lower: Option<Key>,
        upper: Option<Key>,
        lower_open: bool,
        upper_open: bool,
    ) -> Result<KeyRange> {
        match (lower, upper) {
            (Some(l), Some(u)) => KeyRange::bound(l, u, lower_open, upper_open),
            (Some(l), None) => Ok(KeyRange::lower_bound(l, lower_open)),
            (None, Some(u)) => Ok(KeyRange::upper_bound(u, upper_open)),
            (None, None) => Err(Error::Data("a key range needs at least one bound".into())),
        }
    }

    /// All string keys that start with `prefix`, and nothing else.
    ///
    /// Exact, unlike seed 003's `bound("mar", "mar\uffff")` idiom, which misses `"mar\uffffz"`.
    /// An empty prefix gives all string keys.
    pub fn prefix(prefix: impl Into<Utf16String>) -> KeyRange {
        KeyRange(Repr::Prefix(prefix.into()))
    }

    /// The lower bound, if any (`None` for a prefix range, whose bounds are not keys).
    pub fn lower(&self) -> Option<&Key> {
        match &self.0 {
            Repr::Bounds { lower, .. } => lower.as_ref(),
            Repr::Prefix(_) => None,
        }
    }

    /// The upper bound, if any (a prefix range has none expressible as a key).
    pub fn upper(&self) -> Option<&Key> {
        match &self.0 {
            Repr::Bounds { upper, .. } => upper.as_ref(),
            Repr::Prefix(_) => None,
        }
    }

    /// True when the lower bound is excluded.
    pub fn lower_open(&self) -> bool {
        matches!(
            self.0,
            Repr::Bounds {
                lower_open: true,
                ..
            }
        )
    }

    /// True when the upper bound is excluded.
    pub fn upper_open(&self) -> bool {
        matches!(
            self.0,
            Repr::Bounds {
                upper_open: true,
                ..
            }
        )
    }

    /// The single key this range holds, if it is an `only` range.
    pub fn as_only(&self) -> Option<&Key> {
        match &self.0 {
            Repr::Bounds {
                lower: Some(l),
                upper: Some(u),
                ..
            } if l == u => Some(l),
            _ => None,
        }
    }

    /// True when `key` is in the range (`IDBKeyRange.includes`):
    /// <https://www.w3.org/TR/IndexedDB-3/#in>.
    pub fn includes(&self, key: &Key) -> bool {
        match &self.0 {
            Repr::Bounds {
                lower,
                upper,
                lower_open,
                upper_open,
            } => {
                let above = match lower {
                    None => true,
                    Some(l) if *lower_open => key > l,
                    Some(l) => key >= l,
                };
                let below = match upper {
                    None => true,
                    Some(u) if *upper_open => key < u,
                    Some(u) => key <= u,
                };
                above && below
            }
            Repr::Prefix(p) => matches!(key, Key::String(s) if s.starts_with(p)),
        }
    }

    /// The range over encoded keys.
    pub(crate) fn encoded(&self) -> EncodedRange {
        match &self.0 {
            Repr::Bounds {
                lower,
                upper,
                lower_open,
                upper_open,
            } => {
                let bound = |k: &Option<Key>, open: bool| match k {
                    None => Bound::Unbounded,
                    Some(k) if open => Bound::Excluded(encode_key(k)),
                    Some(k) => Bound::Included(encode_key(k)),
                };
                EncodedRange {
                    lower: bound(lower, *lower_open),
                    upper: bound(upper, *upper_open),
                }
            }
            Repr::Prefix(p) => {
                let start = encode_string_prefix(p);
                let end = prefix_successor(&start);
                EncodedRange {
                    lower: Bound::Included(start),
                    upper: Bound::Excluded(end),
                }
            }
        }
    }
}

/// The smallest byte string above every string that starts with `prefix`.
/// `prefix` starts with the string tag (`0x30`), so it never consists of `0xFF` bytes only.
fn prefix_successor(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while end.last() == Some(&0xFF) {
        end.pop();
    }
    if let Some(last) = end.last_mut() {
        *last += 1;
    }
    end
}

impl From<Key> for KeyRange {
    fn from(key: Key) -> KeyRange {
        KeyRange::only(key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::key_encoding::tests::arb_key;
    use proptest::prelude::*;

    fn k(n: i32) -> Key {
        Key::from(n)
    }

    #[test]
    fn table_of_bounds() {
        // (range, key, included?)
        let cases = [
            (KeyRange::only(k(5)), 5, true),
            (KeyRange::only(k(5)), 4, false),
            (KeyRange::lower_bound(k(5), false), 5, true),
            (KeyRange::lower_bound(k(5), true), 5, false),
            (KeyRange::lower_bound(k(5), true), 6, true),
            (KeyRange::upper_bound(k(5), false), 5, true),
            (KeyRange::upper_bound(k(5), true), 5, false),
            (KeyRange::upper_bound(k(5), true), 4, true),
            (KeyRange::bound(k(1), k(5), false, true).unwrap(), 1, true),
            (KeyRange::bound(k(1), k(5), false, true).unwrap(), 5, false),
            (KeyRange::bound(k(1), k(5), true, false).unwrap(), 1, false),
            (KeyRange::bound(k(1), k(5), true, false).unwrap(), 5, true),
        ];
        for (range, key, expected) in cases {
            assert_eq!(range.includes(&k(key)), expected, "{range:?} {key}");
            let encoded = range.encoded();
            assert_eq!(
                encoded.contains(&encode_key(&k(key))),
                expected,
                "{range:?} {key}"
            );
        }
    }

    #[test]
    fn invalid_bounds_are_data_errors() {
        assert_eq!(
            KeyRange::bound(k(2), k(1), false, false)
                .unwrap_err()
                .name(),
            "DataError"
        );
        assert_eq!(
            KeyRange::bound(k(1), k(1), true, false).unwrap_err().name(),
            "DataError"
        );
        assert_eq!(
            KeyRange::bound(k(1), k(1), false, true).unwrap_err().name(),
            "DataError"
        );
        assert!(KeyRange::bound(k(1), k(1), false, false).is_ok());
        assert_eq!(
            KeyRange::from_bounds(None, None, false, false)
                .unwrap_err()
                .name(),
            "DataError"
        );
    }

    #[test]
    fn seed_003_idioms() {
        let mar =
            KeyRange::bound(Key::from("mar"), Key::from("mar\u{FFFF}"), false, false).unwrap();
        assert!(mar.includes(&Key::from("marta")));
        // The idiom's blind spot, which our prefix range covers.
        assert!(!mar.includes(&Key::from("mar\u{FFFF}z")));
        let exact = KeyRange::prefix("mar");
        for (s, inside) in [
            ("mar", true),
            ("marta", true),
            ("mar\u{FFFF}z", true),
            ("ma", false),
            ("mas", false),
            ("Mar", false),
        ] {
            assert_eq!(exact.includes(&Key::from(s)), inside, "{s}");
            assert_eq!(
                exact.encoded().contains(&encode_key(&Key::from(s))),
                inside,
                "{s}"
            );
        }
        assert!(!exact.includes(&Key::Array(vec![Key::from("mar")])));
        assert!(!exact
            .encoded()
            .contains(&encode_key(&Key::Array(vec![Key::from("mar")]))));

        let libreta = KeyRange::bound(
            Key::Array(vec![Key::from("trabajo")]),
            Key::Array(vec![Key::from("trabajo"), Key::Array(vec![])]),
            false,
            false,
        )
        .unwrap();
        let entry = |a: &str, b: Key| Key::Array(vec![Key::from(a), b]);
        assert!(libreta.includes(&entry("trabajo", Key::Date(0.0))));
        assert!(libreta.includes(&entry("trabajo", Key::from("zzz"))));
        assert!(!libreta.includes(&entry("trabajoz", Key::from(1))));
        assert!(!libreta.includes(&entry("casa", Key::from(1))));
    }

    proptest! {
        #[test]
        fn encoded_range_agrees_with_includes(
            a in arb_key(), b in arb_key(), probe in arb_key(), lo in any::<bool>(), uo in any::<bool>()
        ) {
            let (l, u) = if a <= b { (a, b) } else { (b, a) };
            if let Ok(range) = KeyRange::bound(l, u, lo, uo) {
                prop_assert_eq!(range.encoded().contains(&encode_key(&probe)), range.includes(&probe));
            }
        }

        #[test]
        fn prefix_range_agrees_with_includes(units in proptest::collection::vec(prop_oneof![Just(0xFFFFu16), Just(0u16), 0x61u16..0x63], 0..4), probe in arb_key()) {
            let range = KeyRange::prefix(Utf16String::from_units(units));
            prop_assert_eq!(range.encoded().contains(&encode_key(&probe)), range.includes(&probe));
        }
    }
}
