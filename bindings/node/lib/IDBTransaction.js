'use strict';
// IDBTransaction (IndexedDB 3.0, "The IDBTransaction interface"): a transaction's scope, mode,
// durability and error, its object stores, commit() and abort(). Its scheduling, activation,
// commit and abort are in transactionLifecycle.js.

const { internal, illegal } = require('./internal.js');
const { defineEventTarget, initEventTarget, defineHandlers } = require('./events.js');
const { defineInterface } = require('./webidl.js');
const { stringList } = require('./DOMStringList.js');
const { snapshotSchema } = require('./schema.js');
const { commitTransaction, abortTransaction } = require('./transactionLifecycle.js');
const { storeFor } = require('./IDBObjectStore.js');

let nextTxId = 1;

/** A new transaction id: the engine knows each transaction of this process by one. */
function newTransactionId() {
  return nextTxId++;
}

class IDBTransaction extends EventTarget {
  constructor() { illegal(); }
  get objectStoreNames() {
    const ti = this[internal];
    return stringList(ti.scope === null ? ti.db[internal].schema.keys() : ti.scope);
  }
  get mode() { return this[internal].mode; }
  get durability() { return this[internal].durability; }
  get db() { return this[internal].db; }
  get error() { return this[internal].error; }

  objectStore(name) {
    const ti = this[internal];
    if (ti.state === 'finished') throw new DOMException('the transaction has finished', 'InvalidStateError');
    name = String(name);
    const meta = ti.db[internal].schema.get(name);
    if (!meta || (ti.scope !== null && !ti.scope.includes(name))) {
      throw new DOMException(`object store ${JSON.stringify(name)} is not in the transaction's scope`, 'NotFoundError');
    }
    return storeFor(this, meta);
  }

  abort() {
    const ti = this[internal];
    if (ti.state === 'committing' || ti.state === 'finished') {
      throw new DOMException('the transaction has finished', 'InvalidStateError');
    }
    abortTransaction(this, null);
  }

  commit() {
    const ti = this[internal];
    if (ti.state !== 'active') throw new DOMException('the transaction is not active', 'InvalidStateError');
    commitTransaction(this);
  }
}
defineEventTarget(IDBTransaction);
defineHandlers(IDBTransaction, ['abort', 'complete', 'error']);
defineInterface(IDBTransaction, 'IDBTransaction', {
  operations: { objectStore: 1, commit: 0, abort: 0 },
});

/**
 * A new transaction of connection `db` (scope null: every object store, for the upgrade
 * transaction), registered with the connection and its database's scheduling.
 */
function newTransaction(db, scope, mode, durability, id) {
  const tx = Object.create(IDBTransaction.prototype);
  initEventTarget(tx);
  const di = db[internal];
  tx[internal] = {
    id, db, scope, mode, durability, state: 'active', error: null, pending: 0, requests: new Set(),
    started: false, stores: new Map(), deactivation: false, oldVersion: 0, openRequest: null,
    commitSent: false, onFinish: null, schemaBefore: mode === 'versionchange' ? snapshotSchema(di.schema) : null,
    // Cursors holding rows read ahead or steps taken through them (see "read ahead" below),
    // and the cursor step served from such rows whose success event has yet to fire.
    readAhead: new Set(), servedStep: null,
  };
  di.txs.add(tx);
  di.entry.txs.push(tx);
  return tx;
}

module.exports = { IDBTransaction, newTransaction, newTransactionId };
