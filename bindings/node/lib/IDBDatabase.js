'use strict';
// IDBDatabase (IndexedDB 3.0, "The IDBDatabase interface"): a connection's name, version and
// object store names, transaction(), close(), and the schema changes of its upgrade
// transaction.

const { internal, illegal } = require('./internal.js');
const { defineEventTarget, initEventTarget, defineHandlers } = require('./events.js');
const { defineInterface } = require('./webidl.js');
const { stringList, compareStrings } = require('./DOMStringList.js');
const { keyPathOf, validateKeyPath } = require('./keyPath.js');
const { closeConnection } = require('./closeConnection.js');
const { activate, schedule } = require('./transactionLifecycle.js');
const { schemaOp } = require('./requests.js');
const { newTransaction, newTransactionId } = require('./IDBTransaction.js');
const { storeFor } = require('./IDBObjectStore.js');

class IDBDatabase extends EventTarget {
  constructor() { illegal(); }
  get name() { return this[internal].name; }
  get version() { return this[internal].version; }
  get objectStoreNames() { return stringList(this[internal].schema.keys()); }

  transaction(storeNames, mode = 'readonly', options = {}) {
    const di = this[internal];
    const durability = options && options.durability !== undefined ? String(options.durability) : 'default';
    if (!['default', 'strict', 'relaxed'].includes(durability)) {
      throw new TypeError(`${JSON.stringify(durability)} is not a transaction durability`);
    }
    if (di.closePending) throw new DOMException('the connection is closed', 'InvalidStateError');
    if (di.upgrade && di.upgrade[internal].state !== 'finished') {
      throw new DOMException('an upgrade transaction is running on this connection', 'InvalidStateError');
    }
    // The store names are checked before the mode (IDBDatabase.transaction() steps 3-6).
    const names = typeof storeNames === 'string' ? [storeNames] : [...storeNames].map(String);
    const scope = [...new Set(names)].sort(compareStrings);
    for (const n of scope) {
      if (!di.schema.has(n)) throw new DOMException(`no object store named ${JSON.stringify(n)}`, 'NotFoundError');
    }
    if (scope.length === 0) throw new DOMException('a transaction needs at least one object store', 'InvalidAccessError');
    if (mode !== 'readonly' && mode !== 'readwrite') {
      throw new TypeError(`${JSON.stringify(mode)} is not a transaction mode`);
    }
    const tx = newTransaction(this, scope, mode, durability, newTransactionId());
    di.conn.native.declare(tx[internal].id);
    activate(tx);
    schedule(di.entry);
    return tx;
  }

  close() {
    closeConnection(this);
  }

  createObjectStore(name, options = {}) {
    const tx = upgradeTransaction(this);
    name = String(name);
    const keyPath = keyPathOf(options ? options.keyPath : null);
    const autoIncrement = !!(options && options.autoIncrement);
    if (keyPath !== null) validateKeyPath(keyPath);
    const di = this[internal];
    if (di.schema.has(name)) throw new DOMException(`an object store named ${JSON.stringify(name)} already exists`, 'ConstraintError');
    if (autoIncrement && (keyPath === '' || Array.isArray(keyPath))) {
      throw new DOMException('autoIncrement needs out-of-line keys or a non-empty string key path', 'InvalidAccessError');
    }
    schemaOp(tx, 'createStore', [name, keyPath === null ? undefined : keyPath, autoIncrement]);
    const meta = { name, keyPath, autoIncrement, indexes: new Map(), deleted: false };
    di.schema.set(name, meta);
    return storeFor(tx, meta);
  }

  deleteObjectStore(name) {
    const tx = upgradeTransaction(this);
    name = String(name);
    const di = this[internal];
    const meta = di.schema.get(name);
    if (!meta) throw new DOMException(`no object store named ${JSON.stringify(name)}`, 'NotFoundError');
    schemaOp(tx, 'deleteStore', [name]);
    di.schema.delete(name);
    meta.deleted = true;
    // A deleted store's index set is empty (its indexNames too) until an abort restores it.
    for (const ix of meta.indexes.values()) ix.deleted = true;
    meta.indexes = new Map();
  }
}
defineEventTarget(IDBDatabase);
defineHandlers(IDBDatabase, ['abort', 'close', 'error', 'versionchange']);
defineInterface(IDBDatabase, 'IDBDatabase', {
  operations: { transaction: 1, close: 0, createObjectStore: 1, deleteObjectStore: 1 },
});

/** A new connection from the engine's reply to an open (`info`: version, old version, stores). */
function newDatabase(factory, entry, conn, name, info) {
  const db = Object.create(IDBDatabase.prototype);
  initEventTarget(db);
  const schema = new Map();
  for (const s of info.stores) {
    const indexes = new Map();
    for (const ix of s.indexes) indexes.set(ix.name, { ...ix, deleted: false });
    schema.set(s.name, { name: s.name, keyPath: s.keyPath, autoIncrement: s.autoIncrement, indexes, deleted: false });
  }
  let resolveClosed;
  const closed = new Promise((r) => { resolveClosed = r; });
  db[internal] = {
    factory, entry, conn, name, version: info.oldVersion === null ? info.version : info.oldVersion,
    schema, closePending: false, closed, resolveClosed, txs: new Set(), upgrade: null, isClosed: false,
  };
  return db;
}

/** The running upgrade transaction of `db`, active; else InvalidStateError or TransactionInactiveError. */
function upgradeTransaction(db) {
  const tx = db[internal].upgrade;
  // Between abort() and the dispatch of its events the upgrade transaction is still running
  // (aborting): the check below then gives TransactionInactiveError, as the spec orders them.
  if (!tx || (tx[internal].state === 'finished' && !tx[internal].aborting)) {
    throw new DOMException('the schema can only change in an upgrade transaction', 'InvalidStateError');
  }
  if (tx[internal].state !== 'active') throw new DOMException('the upgrade transaction is not active', 'TransactionInactiveError');
  return tx;
}

module.exports = { IDBDatabase, newDatabase };
