//! Shard router.
