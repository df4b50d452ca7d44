'use strict';
// A connection's view of its schema (object stores and their indexes, by name, as metadata
// objects shared by every IDBObjectStore and IDBIndex of them): the snapshot an upgrade
// transaction takes and restores on abort, and the checks that a store or index still exists.

const { internal } = require('./internal.js');

/** The schema's names and metadata objects before an upgrade, to restore on abort. */
function snapshotSchema(schema) {
  const copy = new Map();
  for (const [n, s] of schema) {
    copy.set(n, { meta: s, name: s.name, indexes: new Map([...s.indexes].map(([k, v]) => [k, { meta: v, name: v.name }])) });
  }
  return copy;
}

/** Puts the schema of the connection `db` back as `snapshot` recorded it. */
function restoreSchema(db, snapshot) {
  // What the upgrade created goes at once: its indexes are marked deleted, and a store it
  // created keeps no index (IndexedDB 3.0, "abort an upgrade transaction").
  const before = new Set();
  for (const s of snapshot.values()) for (const v of s.indexes.values()) before.add(v.meta);
  for (const meta of db[internal].schema.values()) {
    for (const ix of meta.indexes.values()) if (!before.has(ix)) ix.deleted = true;
  }
  const schema = new Map();
  for (const [n, s] of snapshot) {
    const meta = s.meta;
    meta.name = s.name;
    meta.deleted = false;
    meta.indexes = new Map();
    for (const [k, v] of s.indexes) {
      v.meta.name = v.name;
      v.meta.deleted = false;
      meta.indexes.set(k, v.meta);
    }
    schema.set(n, meta);
  }
  for (const meta of db[internal].schema.values()) {
    if (!schema.has(meta.name) || schema.get(meta.name) !== meta) {
      meta.deleted = true;
      meta.indexes = new Map();
    }
  }
  db[internal].schema = schema;
}

/** The internal slots of `store`; InvalidStateError if the object store has been deleted. */
function liveStore(store) {
  const si = store[internal];
  if (si.meta.deleted) throw new DOMException('the object store has been deleted', 'InvalidStateError');
  return si;
}

/** The internal slots of `index`; InvalidStateError if it or its object store has been deleted. */
function liveIndex(index) {
  const xi = index[internal];
  if (xi.meta.deleted || xi.store[internal].meta.deleted) throw new DOMException('the index has been deleted', 'InvalidStateError');
  return xi;
}

module.exports = { snapshotSchema, restoreSchema, liveStore, liveIndex };
