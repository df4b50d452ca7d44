//! The in-memory description of a database's object stores and indexes.

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::key_path::KeyPath;
use crate::storage::{self, IndexRow, StoreRow};

/// An object store's definition.
#[derive(Debug, Clone)]
pub(crate) struct StoreMeta {
    pub id: i64,
    pub name: String,
    pub key_path: Option<KeyPath>,
    pub auto_increment: bool,
    /// Indexes by name.
    pub indexes: BTreeMap<String, IndexMeta>,
}

/// An index's definition.
#[derive(Debug, Clone)]
pub(crate) struct IndexMeta {
    pub id: i64,
    pub name: String,
    pub key_path: KeyPath,
    pub unique: bool,
    pub multi_entry: bool,
}

/// A database's schema at one version.
#[derive(Debug, Clone, Default)]
pub(crate) struct Schema {
    pub version: u64,
    /// Object stores by name (so names list in sorted order, as `objectStoreNames` does).
    pub stores: BTreeMap<String, StoreMeta>,
}

/// Stored form of a key path: its strings joined by `,` (which no identifier contains) and
/// whether it is an array.
pub(crate) fn key_path_to_stored(key_path: &KeyPath) -> (String, bool) {
    (key_path.strings().join(","), key_path.is_compound())
}

fn key_path_from_stored((text, is_array): &(String, bool)) -> Result<KeyPath> {
    let parsed = if *is_array {
        KeyPath::compound(&text.split(',').collect::<Vec<_>>())
    } else {
        KeyPath::parse(text)
    };
    parsed.map_err(|e| Error::Unknown(format!("stored key path is corrupt: {e}")))
}

impl Schema {
    /// Reads the schema from storage.
    pub fn load(conn: &rusqlite::Connection, version: u64) -> Result<Schema> {
        let mut by_id: BTreeMap<i64, StoreMeta> = BTreeMap::new();
        for StoreRow {
            id,
            name,
            key_path,
            auto_increment,
        } in storage::load_stores(conn)?
        {
            let key_path = key_path.as_ref().map(key_path_from_stored).transpose()?;
            by_id.insert(
                id,
                StoreMeta {
                    id,
                    name,
                    key_path,
                    auto_increment,
                    indexes: BTreeMap::new(),
                },
            );
        }
        for row in storage::load_indexes(conn)? {
            let IndexRow {
                id,
                store_id,
                name,
                key_path,
                unique,
                multi_entry,
            } = row;
            let store = by_id
                .get_mut(&store_id)
                .ok_or_else(|| Error::Unknown(format!("index {name:?} has no object store")))?;
            store.indexes.insert(
                name.clone(),
                IndexMeta {
                    id,
                    name,
                    key_path: key_path_from_stored(&key_path)?,
                    unique,
                    multi_entry,
                },
            );
        }
        Ok(Schema {
            version,
            stores: by_id.into_values().map(|s| (s.name.clone(), s)).collect(),
        })
    }

    /// The object store called `name`.
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is none.
    pub fn store(&self, name: &str) -> Result<&StoreMeta> {
        self.stores
            .get(name)
            .ok_or_else(|| Error::NotFound(format!("no object store named {name:?}")))
    }

    /// The object store whose id is `id`, if it still exists.
    pub fn store_by_id(&self, id: i64) -> Option<&StoreMeta> {
        self.stores.values().find(|s| s.id == id)
    }
}

impl StoreMeta {
    /// The index called `name`.
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is none.
    pub fn index(&self, name: &str) -> Result<&IndexMeta> {
        self.indexes.get(name).ok_or_else(|| {
            Error::NotFound(format!(
                "object store {:?} has no index named {name:?}",
                self.name
            ))
        })
    }
}
