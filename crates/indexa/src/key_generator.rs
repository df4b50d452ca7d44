//! The key generator of an object store.
//!
//! Source: seed 000 ("2.11. Key Generators") and
//! <https://www.w3.org/TR/IndexedDB-3/#key-generator-construct>.

use crate::error::{Error, Result};
use crate::key::Key;

/// 2^53: the largest key a generator hands out.
pub const MAX_GENERATED_KEY: u64 = 1 << 53;

/// A key generator: its current number, an integer from 1 to 2^53 + 1.
///
/// The type is `Copy`: to revert an operation or a transaction, keep the value from before and
/// put it back. The current number never decreases otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyGenerator {
    current_number: u64,
}

impl Default for KeyGenerator {
    fn default() -> Self {
        KeyGenerator::new()
    }
}

impl KeyGenerator {
    /// A new generator; its current number is 1.
    pub fn new() -> Self {
        KeyGenerator { current_number: 1 }
    }

    /// A generator with the given current number (as stored).
    ///
    /// # Errors
    /// [`Error::Unknown`] unless `1 <= current_number <= 2^53 + 1` (a corrupt stored value).
    pub fn with_current_number(current_number: u64) -> Result<Self> {
        if (1..=MAX_GENERATED_KEY + 1).contains(&current_number) {
            Ok(KeyGenerator { current_number })
        } else {
            Err(Error::Unknown(format!(
                "key generator current number {current_number} is out of range"
            )))
        }
    }

    /// The current number: the key the next [`generate_key`](Self::generate_key) returns.
    pub fn current_number(&self) -> u64 {
        self.current_number
    }

    /// Generates a key: <https://www.w3.org/TR/IndexedDB-3/#generate-a-key>.
    ///
    /// # Errors
    /// [`Error::Constraint`] once the current number is above 2^53 (the generator is
    /// exhausted for good; explicit keys can still be stored).
    pub fn generate_key(&mut self) -> Result<Key> {
        // Step 2-3.
        let key = self.current_number;
        if key > MAX_GENERATED_KEY {
            return Err(Error::Constraint(
                "the key generator is exhausted (its current number is above 2^53)".into(),
            ));
        }
        // Step 4.
        self.current_number += 1;
        Ok(Key::Number(key as f64))
    }

    /// Possibly updates the key generator with an explicit key:
    /// <https://www.w3.org/TR/IndexedDB-3/#possibly-update-the-key-generator>.
    ///
    /// Only number keys count: `floor(min(key, 2^53))`, and if that is at least the current
    /// number, the current number becomes it plus one.
    pub fn possibly_update_key_generator(&mut self, key: &Key) {
        // Step 1.
        let Key::Number(n) = key else {
            return;
        };
        // Steps 2-4.
        let value = n.min(MAX_GENERATED_KEY as f64).floor();
        // Step 6 (keys below 1 never reach the current number, which is at least 1).
        if value >= self.current_number as f64 {
            self.current_number = value as u64 + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_000_explicit_key_sequence() {
        // store.put("a") → 1; put("b", 3) → 3; put("c") → 4; put("d", -10); put("e") → 5;
        // put("f", 6.00001); put("g") → 7; put("f", 8.9999); put("g") → 9; put("h", "foo");
        // put("i") → 10; put("j", [1000]); put("k") → 11.
        let mut g = KeyGenerator::new();
        let mut seen = Vec::new();
        let explicit = |g: &mut KeyGenerator, k: Key| g.possibly_update_key_generator(&k);
        seen.push(g.generate_key().unwrap());
        explicit(&mut g, Key::from(3));
        seen.push(g.generate_key().unwrap());
        explicit(&mut g, Key::from(-10));
        seen.push(g.generate_key().unwrap());
        explicit(&mut g, Key::Number(6.00001));
        seen.push(g.generate_key().unwrap());
        explicit(&mut g, Key::Number(8.9999));
        seen.push(g.generate_key().unwrap());
        explicit(&mut g, Key::from("foo"));
        seen.push(g.generate_key().unwrap());
        explicit(&mut g, Key::Array(vec![Key::from(1000)]));
        seen.push(g.generate_key().unwrap());
        let expected: Vec<Key> = [1, 4, 5, 7, 9, 10, 11].into_iter().map(Key::from).collect();
        assert_eq!(seen, expected);
    }

    #[test]
    fn dates_do_not_update() {
        let mut g = KeyGenerator::new();
        g.possibly_update_key_generator(&Key::Date(5000.0));
        assert_eq!(g.current_number(), 1);
    }

    #[test]
    fn limit_of_2_pow_53() {
        let mut g = KeyGenerator::with_current_number(MAX_GENERATED_KEY).unwrap();
        assert_eq!(g.generate_key().unwrap(), Key::Number(9007199254740992.0));
        assert_eq!(g.current_number(), MAX_GENERATED_KEY + 1);
        assert_eq!(g.generate_key().unwrap_err().name(), "ConstraintError");
        // A failed generation changes nothing.
        assert_eq!(g.current_number(), MAX_GENERATED_KEY + 1);
    }

    #[test]
    fn explicit_keys_above_the_limit_exhaust_the_generator() {
        let mut g = KeyGenerator::new();
        g.possibly_update_key_generator(&Key::Number(2f64.powi(60)));
        assert_eq!(g.current_number(), MAX_GENERATED_KEY + 1);
        assert_eq!(g.generate_key().unwrap_err().name(), "ConstraintError");
        g.possibly_update_key_generator(&Key::Number(f64::INFINITY));
        assert_eq!(g.current_number(), MAX_GENERATED_KEY + 1);
    }

    #[test]
    fn stored_current_number_is_validated() {
        assert!(KeyGenerator::with_current_number(0).is_err());
        assert!(KeyGenerator::with_current_number(MAX_GENERATED_KEY + 2).is_err());
    }
}
