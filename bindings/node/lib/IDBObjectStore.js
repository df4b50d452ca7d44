'use strict';
// IDBObjectStore (IndexedDB 3.0, "The IDBObjectStore interface"): one object per object store
// and transaction, its name (renamed in an upgrade), key path and key generator flag, its
// writes, reads and cursors, and its indexes.

const { internal, illegal } = require('./internal.js');
const { defineInterface } = require('./webidl.js');
const { stringList } = require('./DOMStringList.js');
const { toRange } = require('./IDBKeyRange.js');
const { keyPathOf, copyKeyPath, validateKeyPath } = require('./keyPath.js');
const { liveStore } = require('./schema.js');
const { checkActive } = require('./transactionLifecycle.js');
const { schemaOp, placeWrite, placeCloneWrite, cloneWhileInactive } = require('./requests.js');
const { read, getAllArgs, getAllOptions } = require('./reads.js');
const { openCursor } = require('./IDBCursor.js');
const { indexFor } = require('./IDBIndex.js');

/** The IDBObjectStore of object store `meta` in `tx` (one per pair, as [SameObject] needs). */
function storeFor(tx, meta) {
  const ti = tx[internal];
  let s = ti.stores.get(meta);
  if (!s) {
    s = Object.create(IDBObjectStore.prototype);
    s[internal] = { tx, meta, indexes: new Map() };
    ti.stores.set(meta, s);
  }
  return s;
}

class IDBObjectStore {
  constructor() { illegal(); }
  get name() { return this[internal].meta.name; }
  set name(value) {
    const si = liveStore(this);
    const tx = si.tx;
    if (tx[internal].mode !== 'versionchange') throw new DOMException('not in an upgrade transaction', 'InvalidStateError');
    checkActive(tx);
    value = String(value);
    if (value === si.meta.name) return;
    const schema = tx[internal].db[internal].schema;
    if (schema.has(value)) throw new DOMException(`an object store named ${JSON.stringify(value)} already exists`, 'ConstraintError');
    schemaOp(tx, 'renameStore', [si.meta.name, value]);
    schema.delete(si.meta.name);
    si.meta.name = value;
    schema.set(value, si.meta);
  }
  get keyPath() {
    // [SameObject]: an array key path is one array for the life of this object.
    const o = this[internal];
    if (!('keyPath' in o)) o.keyPath = copyKeyPath(o.meta.keyPath);
    return o.keyPath;
  }
  get indexNames() { return stringList(this[internal].meta.indexes.keys()); }
  get transaction() { return this[internal].tx; }
  get autoIncrement() { return this[internal].meta.autoIncrement; }

  put(value, key) { return this._store(value, key, false); }
  add(value, key) { return this._store(value, key, true); }

  _store(value, key, noOverwrite) {
    const si = liveStore(this);
    const tx = si.tx;
    checkActive(tx);
    if (tx[internal].mode === 'readonly') throw new DOMException('the transaction is readonly', 'ReadOnlyError');
    const c = cloneWhileInactive(tx, value);
    checkActive(tx);
    const m = si.meta;
    return placeCloneWrite(tx, this, 'put',
      [tx[internal].id, m.name, c.value, c.bytes, key, noOverwrite, m.keyPath === null ? undefined : m.keyPath, m.autoIncrement], c, 3);
  }

  delete(query) {
    const si = liveStore(this);
    checkActive(si.tx);
    if (si.tx[internal].mode === 'readonly') throw new DOMException('the transaction is readonly', 'ReadOnlyError');
    return placeWrite(si.tx, this, 'delete', [si.tx[internal].id, si.meta.name, toRange(query, true)]);
  }

  clear() {
    const si = liveStore(this);
    checkActive(si.tx);
    if (si.tx[internal].mode === 'readonly') throw new DOMException('the transaction is readonly', 'ReadOnlyError');
    return placeWrite(si.tx, this, 'clear', [si.tx[internal].id, si.meta.name]);
  }

  get(query) { return read(this, null, 'get', () => [toRange(query, true)]); }
  getKey(query) { return read(this, null, 'getKey', () => [toRange(query, true)]); }
  getAll(queryOrOptions, count) { return read(this, null, 'getAll', () => getAllArgs(queryOrOptions, count)); }
  getAllKeys(queryOrOptions, count) { return read(this, null, 'getAllKeys', () => getAllArgs(queryOrOptions, count)); }
  getAllRecords(options) { return read(this, null, 'getAllRecords', () => getAllOptions(options)); }
  count(query) { return read(this, null, 'count', () => [toRange(query, false)]); }

  openCursor(query, direction = 'next') { return openCursor(this, null, query, direction, false); }
  openKeyCursor(query, direction = 'next') { return openCursor(this, null, query, direction, true); }

  index(name) {
    const si = liveStore(this);
    if (si.tx[internal].state === 'finished') throw new DOMException('the transaction has finished', 'InvalidStateError');
    const meta = si.meta.indexes.get(String(name));
    if (!meta) throw new DOMException(`no index named ${JSON.stringify(String(name))}`, 'NotFoundError');
    return indexFor(this, meta);
  }

  createIndex(name, keyPath, options = {}) {
    const si = liveStore(this);
    const tx = si.tx;
    if (tx[internal].mode !== 'versionchange') throw new DOMException('not in an upgrade transaction', 'InvalidStateError');
    checkActive(tx);
    name = String(name);
    keyPath = keyPathOf(keyPath);
    if (si.meta.indexes.has(name)) throw new DOMException(`an index named ${JSON.stringify(name)} already exists`, 'ConstraintError');
    validateKeyPath(keyPath);
    const unique = !!(options && options.unique);
    const multiEntry = !!(options && options.multiEntry);
    if (multiEntry && Array.isArray(keyPath)) throw new DOMException('a multiEntry index cannot have an array key path', 'InvalidAccessError');
    schemaOp(tx, 'createIndex', [si.meta.name, name, keyPath, unique, multiEntry]);
    const meta = { name, keyPath, unique, multiEntry, deleted: false };
    si.meta.indexes.set(name, meta);
    return indexFor(this, meta);
  }

  deleteIndex(name) {
    const si = liveStore(this);
    const tx = si.tx;
    if (tx[internal].mode !== 'versionchange') throw new DOMException('not in an upgrade transaction', 'InvalidStateError');
    checkActive(tx);
    name = String(name);
    const meta = si.meta.indexes.get(name);
    if (!meta) throw new DOMException(`no index named ${JSON.stringify(name)}`, 'NotFoundError');
    schemaOp(tx, 'deleteIndex', [si.meta.name, name]);
    si.meta.indexes.delete(name);
    meta.deleted = true;
  }
}
defineInterface(IDBObjectStore, 'IDBObjectStore', {
  operations: {
    put: 1, add: 1, delete: 1, clear: 0, get: 1, getKey: 1, getAll: 0, getAllKeys: 0,
    getAllRecords: 0, count: 0, openCursor: 0, openKeyCursor: 0, index: 1, createIndex: 2,
    deleteIndex: 1,
  },
});

module.exports = { IDBObjectStore, storeFor };
