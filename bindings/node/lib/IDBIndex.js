'use strict';
// IDBIndex (IndexedDB 3.0, "The IDBIndex interface"): one object per index and
// IDBObjectStore, its name (renamed in an upgrade), key path, unique and multiEntry flags, and
// its reads and cursors.

const { internal, illegal } = require('./internal.js');
const { defineInterface } = require('./webidl.js');
const { toRange } = require('./IDBKeyRange.js');
const { copyKeyPath } = require('./keyPath.js');
const { liveIndex } = require('./schema.js');
const { checkActive } = require('./transactionLifecycle.js');
const { schemaOp } = require('./requests.js');
const { read, getAllArgs, getAllOptions } = require('./reads.js');
const { openCursor } = require('./IDBCursor.js');

/** The IDBIndex of index `meta` for `store` (one per pair, as [SameObject] needs). */
function indexFor(store, meta) {
  const si = store[internal];
  let ix = si.indexes.get(meta);
  if (!ix) {
    ix = Object.create(IDBIndex.prototype);
    ix[internal] = { store, meta };
    si.indexes.set(meta, ix);
  }
  return ix;
}

class IDBIndex {
  constructor() { illegal(); }
  get name() { return this[internal].meta.name; }
  set name(value) {
    const xi = liveIndex(this);
    const tx = xi.store[internal].tx;
    if (tx[internal].mode !== 'versionchange') throw new DOMException('not in an upgrade transaction', 'InvalidStateError');
    checkActive(tx);
    value = String(value);
    if (value === xi.meta.name) return;
    const indexes = xi.store[internal].meta.indexes;
    if (indexes.has(value)) throw new DOMException(`an index named ${JSON.stringify(value)} already exists`, 'ConstraintError');
    schemaOp(tx, 'renameIndex', [xi.store[internal].meta.name, xi.meta.name, value]);
    indexes.delete(xi.meta.name);
    xi.meta.name = value;
    indexes.set(value, xi.meta);
  }
  get objectStore() { return this[internal].store; }
  get keyPath() {
    // [SameObject]: an array key path is one array for the life of this object.
    const o = this[internal];
    if (!('keyPath' in o)) o.keyPath = copyKeyPath(o.meta.keyPath);
    return o.keyPath;
  }
  get multiEntry() { return this[internal].meta.multiEntry; }
  get unique() { return this[internal].meta.unique; }

  get(query) { return read(this, this, 'get', () => [toRange(query, true)]); }
  getKey(query) { return read(this, this, 'getKey', () => [toRange(query, true)]); }
  getAll(queryOrOptions, count) { return read(this, this, 'getAll', () => getAllArgs(queryOrOptions, count)); }
  getAllKeys(queryOrOptions, count) { return read(this, this, 'getAllKeys', () => getAllArgs(queryOrOptions, count)); }
  getAllRecords(options) { return read(this, this, 'getAllRecords', () => getAllOptions(options)); }
  count(query) { return read(this, this, 'count', () => [toRange(query, false)]); }
  openCursor(query, direction = 'next') { return openCursor(this, this, query, direction, false); }
  openKeyCursor(query, direction = 'next') { return openCursor(this, this, query, direction, true); }
}
defineInterface(IDBIndex, 'IDBIndex', {
  operations: {
    get: 1, getKey: 1, getAll: 0, getAllKeys: 0, getAllRecords: 0, count: 0, openCursor: 0,
    openKeyCursor: 0,
  },
});

module.exports = { IDBIndex, indexFor };
