//! Placement strategies: which shard a new key goes to (issue 5, "Placement strategy").

use std::str::FromStr;

use crate::error::Error;

/// How the router places a key that has no mapping yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Strategy {
    /// `"hash"` (default): [`hash_shard_index`] of the key, compatible with CollegeDB's
    /// placements. `insert`, whose id does not exist yet, hashes a fresh random token.
    #[default]
    Hash,
    /// `"round-robin"`: a rotation counter kept in the catalog, so every process shares one
    /// rotation.
    RoundRobin,
    /// `"random"`: a uniformly random shard.
    Random,
}

impl FromStr for Strategy {
    type Err = Error;

    /// Parses `hash`, `round-robin` or `random`; anything else is [`Error::InvalidConfig`].
    fn from_str(name: &str) -> Result<Strategy, Error> {
        match name {
            "hash" => Ok(Strategy::Hash),
            "round-robin" => Ok(Strategy::RoundRobin),
            "random" => Ok(Strategy::Random),
            other => Err(Error::config(format!(
                "unknown strategy {other:?} (expected \"hash\", \"round-robin\" or \"random\")"
            ))),
        }
    }
}

/// CollegeDB's hash placement: h = 0; for each UTF-16 code unit c of `key`, h = h·31 + c
/// wrapped to a signed 32-bit integer; the shard index is |h| mod `shard_count`.
///
/// Returns `None` when `shard_count` is 0.
pub fn hash_shard_index(key: &str, shard_count: usize) -> Option<usize> {
    if shard_count == 0 {
        return None;
    }
    let h = key.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    });
    // |i32::MIN| is 2^31, which a u64 holds.
    let magnitude = u64::from(h.unsigned_abs());
    usize::try_from(magnitude % shard_count as u64).ok()
}

/// A random token for `insert`, whose key does not exist before the INSERT runs.
pub(crate) fn random_token() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// A uniformly random index below `shard_count` (which must be positive).
pub(crate) fn random_index(shard_count: usize) -> usize {
    rand::random_range(0..shard_count)
}
