//! Arguments and results of the bulk reads (`getAll`, `getAllKeys`, `getAllRecords`).

use crate::cursor::CursorDirection;
use crate::key::Key;
use crate::key_range::KeyRange;
use crate::value::Value;

/// Which records a bulk read returns: a key range, a maximum count and a direction.
///
/// Build with [`Query::all`] or `Query::from(range)`/`Query::from(key)`, then
/// [`Query::count`] and [`Query::direction`]:
/// `Query::from(KeyRange::prefix("mar")).count(20)`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Query {
    /// Keys to return; `None` = all.
    pub range: Option<KeyRange>,
    /// Maximum number of results; `None` or `Some(0)` = all (as in the spec).
    pub count: Option<u32>,
    /// Order of the results; with the `*Unique` directions on an index, one result per index
    /// key (the one with the lowest primary key).
    pub direction: CursorDirection,
}

impl Query {
    /// Every record, in ascending order.
    pub fn all() -> Query {
        Query::default()
    }

    /// Limits the number of results (0 = all).
    pub fn count(mut self, count: u32) -> Query {
        self.count = Some(count);
        self
    }

    /// Sets the direction.
    pub fn direction(mut self, direction: CursorDirection) -> Query {
        self.direction = direction;
        self
    }

    pub(crate) fn limit(&self) -> u32 {
        self.count.unwrap_or(0)
    }
}

impl From<KeyRange> for Query {
    fn from(range: KeyRange) -> Query {
        Query {
            range: Some(range),
            ..Query::default()
        }
    }
}

impl From<Option<KeyRange>> for Query {
    fn from(range: Option<KeyRange>) -> Query {
        Query {
            range,
            ..Query::default()
        }
    }
}

impl From<Key> for Query {
    fn from(key: Key) -> Query {
        Query::from(KeyRange::only(key))
    }
}

/// One record as `getAllRecords` returns it: for an object store `key == primary_key`; for
/// an index, `key` is the index key and `primary_key` the record's key.
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    /// The index key (or, for an object store, the record's key).
    pub key: Key,
    /// The record's key in its object store.
    pub primary_key: Key,
    /// The record's value.
    pub value: Value,
}
