//! The in-memory description of a database's object stores and indexes.

use std::collections::BTreeMap;

use crate::backend::{IndexRow, StorageConnection, StoreRow};
use crate::error::{Error, Result};
use crate::key_path::KeyPath;
use crate::utf16::Utf16String;

/// An object store's definition.
#[derive(Debug, Clone)]
pub(crate) struct StoreMeta {
    pub id: i64,
    pub name: Utf16String,
    pub key_path: Option<KeyPath>,
    pub auto_increment: bool,
    /// Indexes by name. Change them only through [`StoreMeta::insert_index`],
    /// [`StoreMeta::remove_index`] and [`StoreMeta::rename_index`], which keep
    /// `index_names` in step.
    pub indexes: BTreeMap<Utf16String, IndexMeta>,
    /// The name of each index, by id, so a handle finds its index in logarithmic time
    /// rather than by a scan of all indexes.
    index_names: BTreeMap<i64, Utf16String>,
}

/// An index's definition.
#[derive(Debug, Clone)]
pub(crate) struct IndexMeta {
    pub id: i64,
    pub name: Utf16String,
    pub key_path: KeyPath,
    pub unique: bool,
    pub multi_entry: bool,
}

/// A database's schema at one version.
#[derive(Debug, Clone, Default)]
pub(crate) struct Schema {
    pub version: u64,
    /// Object stores by name (so names list in sorted order, as `objectStoreNames` does).
    /// Change them only through [`Schema::insert_store`], [`Schema::remove_store`],
    /// [`Schema::rename_store`] and [`Schema::store_mut`], which keep `store_names` in step.
    pub stores: BTreeMap<Utf16String, StoreMeta>,
    /// The name of each object store, by id (a few integer comparisons: a hash of the id cost
    /// more on every request).
    store_names: BTreeMap<i64, Utf16String>,
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
    pub fn load(conn: &dyn StorageConnection, version: u64) -> Result<Schema> {
        let mut by_id: BTreeMap<i64, StoreMeta> = BTreeMap::new();
        for StoreRow {
            id,
            name,
            key_path,
            auto_increment,
        } in conn.load_stores()?
        {
            let key_path = key_path.as_ref().map(key_path_from_stored).transpose()?;
            by_id.insert(id, StoreMeta::new(id, name, key_path, auto_increment));
        }
        for row in conn.load_indexes()? {
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
            store.insert_index(IndexMeta {
                id,
                name,
                key_path: key_path_from_stored(&key_path)?,
                unique,
                multi_entry,
            });
        }
        let mut schema = Schema {
            version,
            ..Schema::default()
        };
        for store in by_id.into_values() {
            schema.insert_store(store);
        }
        Ok(schema)
    }

    /// The object store called `name`.
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is none.
    pub fn store(&self, name: &Utf16String) -> Result<&StoreMeta> {
        self.stores
            .get(name)
            .ok_or_else(|| Error::NotFound(format!("no object store named {name:?}")))
    }

    /// The object store whose id is `id`, if it still exists.
    pub fn store_by_id(&self, id: i64) -> Option<&StoreMeta> {
        self.stores.get(self.store_names.get(&id)?)
    }

    /// True while the object store whose id is `id` exists: [`Schema::store_by_id`] without
    /// finding the store by its name.
    pub fn has_store(&self, id: i64) -> bool {
        self.store_names.contains_key(&id)
    }

    /// The object store called `name`, to change its indexes.
    pub fn store_mut(&mut self, name: &Utf16String) -> Option<&mut StoreMeta> {
        self.stores.get_mut(name)
    }

    /// Adds an object store (replacing one of the same name).
    pub fn insert_store(&mut self, store: StoreMeta) {
        self.store_names.insert(store.id, store.name.clone());
        if let Some(old) = self.stores.insert(store.name.clone(), store) {
            self.store_names.remove(&old.id);
        }
    }

    /// Removes the object store called `name`.
    pub fn remove_store(&mut self, name: &Utf16String) -> Option<StoreMeta> {
        let store = self.stores.remove(name)?;
        self.store_names.remove(&store.id);
        Some(store)
    }

    /// Renames the object store called `old` to `new`.
    pub fn rename_store(&mut self, old: &Utf16String, new: &Utf16String) {
        if let Some(mut store) = self.remove_store(old) {
            store.name = new.clone();
            self.insert_store(store);
        }
    }
}

impl StoreMeta {
    /// A store definition without indexes.
    pub fn new(
        id: i64,
        name: Utf16String,
        key_path: Option<KeyPath>,
        auto_increment: bool,
    ) -> StoreMeta {
        StoreMeta {
            id,
            name,
            key_path,
            auto_increment,
            indexes: BTreeMap::new(),
            index_names: BTreeMap::new(),
        }
    }

    /// The index whose id is `id`, if it still exists.
    pub fn index_by_id(&self, id: i64) -> Option<&IndexMeta> {
        self.indexes.get(self.index_names.get(&id)?)
    }

    /// True while the index whose id is `id` exists: [`StoreMeta::index_by_id`] without
    /// finding the index by its name.
    pub fn has_index(&self, id: i64) -> bool {
        self.index_names.contains_key(&id)
    }

    /// Adds an index (replacing one of the same name).
    pub fn insert_index(&mut self, index: IndexMeta) {
        self.index_names.insert(index.id, index.name.clone());
        if let Some(old) = self.indexes.insert(index.name.clone(), index) {
            self.index_names.remove(&old.id);
        }
    }

    /// Removes the index called `name`.
    pub fn remove_index(&mut self, name: &Utf16String) -> Option<IndexMeta> {
        let index = self.indexes.remove(name)?;
        self.index_names.remove(&index.id);
        Some(index)
    }

    /// Renames the index called `old` to `new`.
    pub fn rename_index(&mut self, old: &Utf16String, new: &Utf16String) {
        if let Some(mut index) = self.remove_index(old) {
            index.name = new.clone();
            self.insert_index(index);
        }
    }

    /// The index called `name`.
    ///
    /// # Errors
    /// [`Error::NotFound`] if there is none.
    pub fn index(&self, name: &Utf16String) -> Result<&IndexMeta> {
        self.indexes.get(name).ok_or_else(|| {
            Error::NotFound(format!(
                "object store {:?} has no index named {name:?}",
                self.name
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(id: i64, name: &str) -> IndexMeta {
        IndexMeta {
            id,
            name: name.into(),
            key_path: KeyPath::parse("a").unwrap(),
            unique: false,
            multi_entry: false,
        }
    }

    #[test]
    fn lookups_by_id_follow_renames_and_removals() {
        let mut schema = Schema::default();
        schema.insert_store(StoreMeta::new(7, "s".into(), None, false));
        schema.insert_store(StoreMeta::new(8, "t".into(), None, false));
        let store = schema.store_mut(&"s".into()).unwrap();
        store.insert_index(index(1, "a"));
        store.insert_index(index(2, "b"));
        store.rename_index(&"a".into(), &"c".into());
        assert_eq!(store.index_by_id(1).unwrap().name, *"c");
        assert!(store.has_index(1) && store.has_index(2));
        assert_eq!(store.remove_index(&"b".into()).unwrap().id, 2);
        assert!(store.index_by_id(2).is_none());
        assert!(store.has_index(1) && !store.has_index(2));
        schema.rename_store(&"s".into(), &"u".into());
        assert_eq!(schema.store_by_id(7).unwrap().name, *"u");
        assert!(schema.has_store(7) && schema.has_store(8));
        assert_eq!(
            schema.store_by_id(7).unwrap().index_by_id(1).unwrap().name,
            "c"
        );
        schema.remove_store(&"t".into());
        assert!(schema.store_by_id(8).is_none());
        assert!(schema.has_store(7) && !schema.has_store(8));
        assert_eq!(
            schema.stores.keys().cloned().collect::<Vec<_>>(),
            [Utf16String::from("u")]
        );
    }
}
