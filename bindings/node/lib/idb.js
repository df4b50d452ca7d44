'use strict';
// The IndexedDB interfaces (https://www.w3.org/TR/IndexedDB-3/) over the native layer.

const fs = require('node:fs');
const native = require('./native.js');
const { rethrow, named } = require('./errors.js');
const { IDBEvent, IDBVersionChangeEvent, defineEventTarget, initEventTarget, defineHandlers, dispatch } = require('./events.js');
const { defineInterface } = require('./webidl.js');
const { IDBKeyRange, toRange, cmp } = require('./IDBKeyRange.js');
const { cloneForStorage, withBlobBytes, revive } = require('./values.js');
const { Connection } = require('./connection.js');
const { DOMStringList, stringList, compareStrings } = require('./DOMStringList.js');
const { internal, illegal } = require('./internal.js');
const { IDBRequest, IDBOpenDBRequest, newRequest } = require('./IDBRequest.js');
const { IDBRecord, recordsOf } = require('./IDBRecord.js');

let nextTxId = 1;
let nextCursorId = 1;

function enforceRangeUnsigned(value, max, what) {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > max) throw new TypeError(`${what} is out of range`);
  return Math.trunc(n);
}

function keyPathOf(kp) {
  if (kp === null || kp === undefined) return null;
  if (Array.isArray(kp)) return kp.map(String);
  return String(kp);
}

function copyKeyPath(kp) {
  return Array.isArray(kp) ? kp.slice() : kp;
}

// ---- IDBFactory ----

// The databases' connection queues and open connections, by data directory (its real path):
// every factory of this thread on one directory shares them, so their connections get each
// other's versionchange and blocked events as connections from one origin do.
const entriesByDirectory = new Map();

function entriesOfDirectory(dir) {
  const key = fs.realpathSync(dir);
  let entries = entriesByDirectory.get(key);
  if (!entries) {
    entries = new Map();
    entriesByDirectory.set(key, entries);
  }
  return entries;
}

/**
 * `IDBFactory`. `new IDBFactory({ dir })` keeps databases in `dir` (created if missing);
 * without `dir` it uses `$INDEXA_DATA_DIR` when set, else a private temporary directory
 * removed at exit (the in-memory mode). `{ memory: true }` forces the latter.
 * `{ lockTimeout }`: milliseconds a deleteDatabase or an upgrade waits for other processes
 * to close the database before failing with InvalidStateError (default 30000).
 */
class IDBFactory {
  constructor(options = {}) {
    const dir = options.memory ? undefined : (options.dir || process.env.INDEXA_DATA_DIR || undefined);
    let lockTimeout;
    if (options.lockTimeout !== undefined) {
      lockTimeout = Number(options.lockTimeout);
      if (!Number.isFinite(lockTimeout) || lockTimeout < 0) {
        throw new TypeError('lockTimeout must be a finite number of milliseconds, at least 0');
      }
    }
    const nf = new native.NativeFactory(dir, lockTimeout);
    if (dir === undefined) {
      const tmp = nf.dir;
      process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
    }
    this[internal] = { native: nf, entries: entriesOfDirectory(nf.dir) };
  }

  open(name, version) {
    name = String(name);
    if (version !== undefined) {
      version = enforceRangeUnsigned(version, Number.MAX_SAFE_INTEGER, 'version');
      if (version === 0) throw new TypeError('the version must be at least 1');
    }
    const request = newRequest(IDBOpenDBRequest, null, null);
    const entry = this._entry(name);
    enqueue(entry, () => runOpen(this, entry, name, version, request));
    return request;
  }

  deleteDatabase(name) {
    name = String(name);
    const request = newRequest(IDBOpenDBRequest, null, null);
    const entry = this._entry(name);
    enqueue(entry, () => runDelete(this, entry, name, request));
    return request;
  }

  databases() {
    return this[internal].native.databases();
  }

  cmp(first, second) {
    return cmp(first, second);
  }

  _entry(name) {
    const entries = this[internal].entries;
    let e = entries.get(name);
    if (!e) {
      e = { name, queue: [], running: false, connections: new Set(), txs: [] };
      entries.set(name, e);
    }
    return e;
  }
}
defineInterface(IDBFactory, 'IDBFactory', {
  operations: { open: 1, deleteDatabase: 1, databases: 0, cmp: 2 },
  promises: ['databases'],
});

function enqueue(entry, job) {
  entry.queue.push(job);
  if (!entry.running) next(entry);
}

function next(entry) {
  const job = entry.queue.shift();
  if (!job) {
    entry.running = false;
    return;
  }
  entry.running = true;
  setImmediate(() => {
    job().catch((e) => process.nextTick(() => { throw e; })).finally(() => next(entry));
  });
}

function fireRequestError(request, error) {
  const ri = request[internal];
  ri.readyState = 'done';
  ri.result = undefined;
  ri.error = error;
  dispatch(new IDBEvent('error', { bubbles: true, cancelable: true }), [request]);
}

/** Fires versionchange at the other open connections and waits until they are closed. */
async function closeOthers(entry, oldVersion, newVersion, request, except) {
  const others = [...entry.connections].filter((c) => c !== except && !c[internal].closePending);
  for (const c of others) {
    if (c[internal].closePending) continue;
    dispatch(new IDBVersionChangeEvent('versionchange', { oldVersion, newVersion }), [c]);
  }
  // blocked comes in a task of its own, after the versionchange handlers and their promise
  // continuations ran: a connection they closed no longer blocks.
  if (others.some((c) => !c[internal].closePending)) {
    await new Promise((resolve) => setImmediate(resolve));
    if (others.some((c) => !c[internal].closePending)) {
      dispatch(new IDBVersionChangeEvent('blocked', { oldVersion, newVersion }), [request]);
    }
  }
  await Promise.all(others.map((c) => c[internal].closed));
}

function nativeCall(promise) {
  return promise.catch((e) => { throw rethrow(e); });
}

async function runOpen(factory, entry, name, version, request) {
  const fi = factory[internal];
  let current;
  try {
    current = await nativeCall(fi.native.version(name));
  } catch (e) {
    return fireRequestError(request, e);
  }
  if (version === undefined) version = Math.max(current, 1);
  if (version < current) {
    return fireRequestError(request, new DOMException(`database ${JSON.stringify(name)} is at version ${current}, above the requested ${version}`, 'VersionError'));
  }
  if (version > current) await closeOthers(entry, current, version, request, null);
  const conn = new Connection(fi.native);
  const txId = nextTxId++;
  const opened = await new Promise((resolve) => {
    conn.submit('open', [txId, name, version], (err, result) => resolve([err, result]));
  });
  if (opened[0] !== null) {
    conn.native.close();
    return fireRequestError(request, named(opened[0], opened[1]));
  }
  const info = opened[1];
  const db = newDatabase(factory, entry, conn, name, info);
  entry.connections.add(db);
  const ri = request[internal];
  if (info.oldVersion === null) {
    ri.readyState = 'done';
    ri.result = db;
    dispatch(new IDBEvent('success'), [request]);
    return;
  }
  // The upgrade transaction: already begun in the engine.
  const tx = newTransaction(db, null, 'versionchange', 'default', txId);
  tx[internal].started = true;
  tx[internal].oldVersion = info.oldVersion;
  db[internal].upgrade = tx;
  db[internal].version = version;
  ri.readyState = 'done';
  ri.result = db;
  ri.transaction = tx;
  tx[internal].openRequest = request;
  const done = new Promise((resolve) => { tx[internal].onFinish = resolve; });
  activate(tx);
  const ev = new IDBVersionChangeEvent('upgradeneeded', { oldVersion: info.oldVersion, newVersion: version });
  const { threw } = dispatch(ev, [request]);
  if (threw) abortTransaction(tx, new DOMException('an upgradeneeded handler threw', 'AbortError'));
  const committed = await done;
  db[internal].upgrade = null;
  ri.transaction = null;
  if (committed && !db[internal].closePending) {
    dispatch(new IDBEvent('success'), [request]);
  } else {
    // Aborted, or committed on a connection closed during the upgrade: the open fails
    // ("open a database connection", the step after the upgrade: connection closed → AbortError).
    ri.result = undefined;
    closeConnection(db);
    const why = committed ? 'the connection was closed during the upgrade' : 'the upgrade transaction was aborted';
    fireRequestError(request, new DOMException(why, 'AbortError'));
  }
}

async function runDelete(factory, entry, name, request) {
  const fi = factory[internal];
  let old;
  try {
    const current = await nativeCall(fi.native.version(name));
    await closeOthers(entry, current, null, request, null);
    old = await nativeCall(fi.native.deleteDatabase(name));
  } catch (e) {
    return fireRequestError(request, e);
  }
  const ri = request[internal];
  ri.readyState = 'done';
  ri.result = undefined;
  dispatch(new IDBVersionChangeEvent('success', { oldVersion: old, newVersion: null }), [request]);
}

// ---- IDBDatabase ----

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
    const tx = newTransaction(this, scope, mode, durability, nextTxId++);
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

function validateKeyPath(kp) {
  try {
    native.validateKeyPath(kp);
  } catch (e) {
    throw rethrow(e);
  }
}

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

function closeConnection(db) {
  const di = db[internal];
  if (di.closePending) return;
  di.closePending = true;
  maybeClosed(db);
}

function maybeClosed(db) {
  const di = db[internal];
  if (!di.closePending || di.isClosed || di.txs.size > 0) return;
  di.isClosed = true;
  di.entry.connections.delete(db);
  di.conn.native.close();
  di.resolveClosed();
}

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

/** A schema change in the upgrade transaction; its failure aborts the transaction. */
function schemaOp(tx, method, args) {
  const ti = tx[internal];
  dropReadAhead(tx);
  ti.pending++;
  ti.db[internal].conn.submit(method, [ti.id, ...args], (err, message) => {
    runServedStep(ti);
    ti.pending--;
    if (ti.state === 'finished') return;
    if (err !== null) abortTransaction(tx, named(err, message));
    else maybeCommit(tx);
  });
}

// ---- IDBTransaction ----

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

function snapshotSchema(schema) {
  const copy = new Map();
  for (const [n, s] of schema) {
    copy.set(n, { meta: s, name: s.name, indexes: new Map([...s.indexes].map(([k, v]) => [k, { meta: v, name: v.name }])) });
  }
  return copy;
}

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

function scopeOverlaps(a, b) {
  const sa = a[internal].scope;
  const sb = b[internal].scope;
  if (sa === null || sb === null) return true;
  return sa.some((n) => sb.includes(n));
}

/**
 * How many readonly transactions of one database (per factory) run at once. Each running one
 * has a SQLite connection of its own (two file descriptors); the others wait for a free one
 * in creation order, rather than failing once the process runs out of descriptors. The spec
 * lets an implementation start a transaction later than its rules allow.
 */
const MAX_RUNNING_READONLY = 64;

/** Starts every transaction of the database that the spec's scheduling rules allow. */
function schedule(entry) {
  const txs = entry.txs;
  let runningReadonly = 0;
  for (const u of txs) {
    if (u[internal].started && u[internal].mode === 'readonly') runningReadonly++;
  }
  for (let i = 0; i < txs.length; i++) {
    const t = txs[i];
    const ti = t[internal];
    if (ti.started) continue;
    let ok = ti.mode !== 'readonly' || runningReadonly < MAX_RUNNING_READONLY;
    for (let j = 0; j < i && ok; j++) {
      const u = txs[j];
      if (scopeOverlaps(u, t) && (u[internal].mode !== 'readonly' || ti.mode !== 'readonly')) ok = false;
    }
    if (ok && ti.mode !== 'readonly') {
      ok = !txs.some((u) => u !== t && u[internal].started && u[internal].mode !== 'readonly');
    }
    if (!ok) continue;
    ti.started = true;
    if (ti.mode === 'readonly') runningReadonly++;
    const di = ti.db[internal];
    di.conn.submit('begin', [ti.id, ti.scope, ti.mode, ti.durability], (err, message) => {
      if (err !== null && ti.state !== 'finished') abortTransaction(t, named(err, message));
    });
  }
}

function activate(tx) {
  const ti = tx[internal];
  if (ti.state === 'inactive') ti.state = 'active';
  if (!ti.deactivation) {
    ti.deactivation = true;
    setImmediate(() => {
      ti.deactivation = false;
      if (ti.state === 'active') ti.state = 'inactive';
      maybeCommit(tx);
    });
  }
}

/**
 * Auto-commit of an inactive transaction with no request pending; and the engine commit of
 * a committing one once its last request's event has been dispatched.
 */
function maybeCommit(tx) {
  const ti = tx[internal];
  if (ti.pending !== 0) return;
  if (ti.state === 'inactive') commitTransaction(tx);
  else if (ti.state === 'committing') commitInEngine(tx);
}

/**
 * "Commit a transaction" (IndexedDB 3.0 §5.4): the transaction stops taking requests at once,
 * but the engine commits only when every request is processed and its event dispatched, since
 * a request error not prevented, or an exception in an event handler, still aborts it.
 */
function commitTransaction(tx) {
  const ti = tx[internal];
  ti.state = 'committing';
  maybeCommit(tx);
}

/** Sends the commit to the engine; `complete` fires when it is durable, `abort` when it failed. */
function commitInEngine(tx) {
  const ti = tx[internal];
  if (ti.commitSent) return;
  ti.commitSent = true;
  ti.db[internal].conn.submit('commit', [ti.id], (err, message) => {
    runServedStep(ti);
    if (ti.state === 'finished') return;
    if (err !== null) {
      abortTransaction(tx, named(err, message), true);
      return;
    }
    ti.state = 'finished';
    if (ti.mode === 'versionchange') ti.db[internal].version = ti.db[internal].version;
    finished(tx);
    dispatch(new IDBEvent('complete'), [tx]);
    if (ti.onFinish) ti.onFinish(true);
  });
}

/** Removes a finished transaction from scheduling and lets its connection close. */
function finished(tx) {
  const ti = tx[internal];
  forgetReadAhead(ti);
  const di = ti.db[internal];
  di.txs.delete(tx);
  const i = di.entry.txs.indexOf(tx);
  if (i >= 0) di.entry.txs.splice(i, 1);
  schedule(di.entry);
  maybeClosed(ti.db);
}

/**
 * "Abort a transaction": every pending request fails with AbortError, then `abort` fires
 * (bubbling to the connection). `engineDone` when the engine already rolled back.
 */
function abortTransaction(tx, error, engineDone = false) {
  const ti = tx[internal];
  if (ti.state === 'finished') return;
  ti.state = 'finished';
  ti.aborting = true;
  ti.error = error;
  const db = ti.db;
  if (ti.mode === 'versionchange') {
    restoreSchema(db, ti.schemaBefore);
    db[internal].version = ti.oldVersion;
  }
  const afterEngine = () => {
    finished(tx);
    setImmediate(() => {
      ti.aborting = false;
      for (const r of ti.requests) {
        const ri = r[internal];
        if (ri.readyState === 'done' && !ri.again) continue;
        ri.readyState = 'done';
        ri.result = undefined;
        ri.error = new DOMException('the transaction was aborted', 'AbortError');
        dispatch(new IDBEvent('error', { bubbles: true, cancelable: true }), [r, tx, db]);
      }
      dispatch(new IDBEvent('abort', { bubbles: true }), [tx, db]);
      if (ti.onFinish) ti.onFinish(false);
    });
  };
  if (engineDone) afterEngine();
  else db[internal].conn.submit('abort', [ti.id], () => afterEngine());
}

// ---- requests inside a transaction ----

function checkActive(tx) {
  const s = tx[internal].state;
  if (s !== 'active') throw new DOMException(`the transaction is ${s === 'finished' ? 'finished' : 'not active'}`, 'TransactionInactiveError');
}

/**
 * Places a request; `convert(result)` maps the native result to the request's result;
 * `ready`, a promise of the arguments, delays the native call (see `Connection.submit`).
 */
function placeRequest(tx, source, method, args, convert, request, ready) {
  const ti = tx[internal];
  const r = request || newRequest(IDBRequest, source, tx);
  const conn = ti.db[internal].conn;
  // Behind a held write, a value's synchronous checks still throw here.
  if (ready === undefined && conn.held.length > 0 && CHECKED_WRITES.has(method)) conn.check(method, args);
  conn.submit(method, args, (err, result) => {
    runServedStep(ti);
    settle(tx, r, convert, err, result);
  }, ready);
  ti.pending++;
  ti.requests.add(r);
  return r;
}

/** Places a request that writes: cursors of the transaction first drop their read-ahead rows. */
function placeWrite(tx, source, method, args) {
  dropReadAhead(tx);
  return placeRequest(tx, source, method, args);
}

/**
 * Forgets a settled request so a long transaction does not keep every request it ever made:
 * the transaction only needs its pending requests (to fail them if it aborts). A cursor's
 * request stays while the cursor has a position (a step makes it pending again; in the
 * request list it keeps the place of its first placement), and goes with the cursor's end.
 */
function release(ti, r) {
  if (!(r[internal].result instanceof IDBCursor)) ti.requests.delete(r);
}

/** Writes whose native call checks the value (and takes a last "check only" argument). */
const CHECKED_WRITES = new Set(['put', 'cursorUpdate']);

/**
 * The clone of a value to write (StructuredSerializeForStorage), made while the transaction
 * is inactive, so that getters the clone runs cannot place requests.
 */
function cloneWhileInactive(tx, value) {
  const ti = tx[internal];
  ti.state = 'inactive';
  try {
    return cloneForStorage(value);
  } finally {
    if (ti.state === 'inactive') ti.state = 'active';
  }
}

/**
 * Places a write of the clone `c`, whose serialization sits at `args[bytesAt]`. A clone
 * holding Blobs is checked now, then waits for the Blobs' bytes (Node gives them only
 * asynchronously) before its native call; later calls wait behind it, so the write keeps
 * its place in request order and the commit waits for it.
 */
function placeCloneWrite(tx, source, method, args, c, bytesAt) {
  if (c.blobs.length === 0) return placeWrite(tx, source, method, args);
  const conn = tx[internal].db[internal].conn;
  conn.check(method, args);
  dropReadAhead(tx);
  const ready = Promise.all(c.blobs.map((b) => b.arrayBuffer())).then((contents) => {
    const full = args.slice();
    full[bytesAt] = withBlobBytes(c.bytes, c.blobs, contents);
    return full;
  });
  return placeRequest(tx, source, method, args, undefined, undefined, ready);
}

/** A request of `tx` is done: its result (or error) is set and its event fired. */
function settle(tx, r, convert, err, result) {
  const ti = tx[internal];
  ti.pending--;
  if (ti.state === 'finished') return;
  const ri = r[internal];
  ri.readyState = 'done';
  ri.again = false;
  const wasCommitting = ti.state === 'committing';
  if (!wasCommitting) ti.state = 'active';
  if (err === null) {
    ri.result = convert ? convert(result) : result;
    ri.error = undefined;
    release(ti, r);
    // success does not bubble, but its path is request → transaction → connection, so
    // capture listeners on the transaction and the connection see it.
    const { threw } = dispatch(new IDBEvent('success'), [r, tx, ti.db]);
    // After commit() the state is committing, not active: an exception no longer aborts.
    if (threw && !wasCommitting && ti.state !== 'finished') {
      abortTransaction(tx, new DOMException('a success handler threw', 'AbortError'));
      return;
    }
  } else {
    ri.result = undefined;
    ri.error = named(err, result);
    release(ti, r);
    const { canceled, threw } = dispatch(new IDBEvent('error', { bubbles: true, cancelable: true }), [r, tx, ti.db]);
    // An error not prevented aborts even a committing transaction (its commit waits for
    // this event); an exception in a handler aborts only an active one, as for success.
    const handlerAborts = threw && !wasCommitting;
    if (ti.state !== 'finished' && (handlerAborts || !canceled)) {
      abortTransaction(tx, handlerAborts ? new DOMException('an error handler threw', 'AbortError') : ri.error);
      return;
    }
  }
  if (ti.state === 'finished') return;
  if (wasCommitting) maybeCommit(tx);
  else activate(tx);
}

// ---- IDBObjectStore ----

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

function liveStore(store) {
  const si = store[internal];
  if (si.meta.deleted) throw new DOMException('the object store has been deleted', 'InvalidStateError');
  return si;
}

function countArg(count) {
  return count === undefined ? undefined : enforceRangeUnsigned(count, 0xffffffff, 'count');
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

function read(source, index, kind, convertArgs) {
  const si = source instanceof IDBIndex ? liveIndex(source).store[internal] : liveStore(source);
  const tx = si.tx;
  checkActive(tx);
  // The query is converted only once the transaction is known to be active (the spec's order).
  const [range, count, direction] = convertArgs();
  const kp = si.meta.keyPath;
  let convert = null;
  if (kind === 'get') convert = (v) => revive(v, kp);
  else if (kind === 'getAll') convert = (vs) => { for (let i = 0; i < vs.length; i++) vs[i] = revive(vs[i], kp); return vs; };
  else if (kind === 'getAllRecords') convert = (rows) => recordsOf(rows, kp);
  const indexName = source instanceof IDBIndex ? source[internal].meta.name : undefined;
  return placeRequest(tx, source, 'read',
    [tx[internal].id, si.meta.name, indexName, kind, range, count, direction], convert);
}

// ---- getAll(), getAllKeys(), getAllRecords() and IDBGetAllOptions ----

/** The spec's "is a potentially valid key": a Number, String, Date, Array or BufferSource. */
function isPotentiallyValidKey(value) {
  return typeof value === 'number' || typeof value === 'string' || value instanceof Date
    || Array.isArray(value) || value instanceof ArrayBuffer || ArrayBuffer.isView(value);
}

/**
 * The IDBGetAllOptions dictionary (WebIDL conversion: members in lexicographic order, count
 * with [EnforceRange], direction an IDBCursorDirection, query converted to a key range).
 */
function getAllOptions(options) {
  if (options !== undefined && options !== null && typeof options !== 'object' && typeof options !== 'function') {
    throw new TypeError('the options are not an IDBGetAllOptions dictionary');
  }
  const o = options || {};
  const count = countArg(o.count);
  const d = o.direction;
  const direction = d === undefined ? 'next' : String(d);
  if (!DIRECTIONS.includes(direction)) throw new TypeError(`${JSON.stringify(direction)} is not a cursor direction`);
  return [toRange(o.query, false), count, direction];
}

/**
 * getAll()/getAllKeys() arguments (IndexedDB 3.0 "create a request to retrieve multiple
 * items"): null, undefined, a key range or a potentially valid key is the query, with
 * `count`; anything else
 * is an IDBGetAllOptions dictionary, and `count` is then ignored.
 */
function getAllArgs(queryOrOptions, count) {
  if (queryOrOptions === undefined || queryOrOptions === null
    || queryOrOptions instanceof IDBKeyRange || isPotentiallyValidKey(queryOrOptions)) {
    return [toRange(queryOrOptions, false), countArg(count), 'next'];
  }
  return getAllOptions(queryOrOptions);
}

// ---- IDBIndex ----

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

function liveIndex(index) {
  const xi = index[internal];
  if (xi.meta.deleted || xi.store[internal].meta.deleted) throw new DOMException('the index has been deleted', 'InvalidStateError');
  return xi;
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
  getAll(queryOrOptions, count) { return read(this, null, 'getAll', () => getAllArgs(queryOrOptions, count)); }
  getAllKeys(queryOrOptions, count) { return read(this, null, 'getAllKeys', () => getAllArgs(queryOrOptions, count)); }
  getAllRecords(options) { return read(this, null, 'getAllRecords', () => getAllOptions(options)); }
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

// ---- IDBCursor ----

const DIRECTIONS = ['next', 'nextunique', 'prev', 'prevunique'];

function openCursor(source, index, query, direction, keyOnly) {
  const isIndex = source instanceof IDBIndex;
  const si = isIndex ? liveIndex(source).store[internal] : liveStore(source);
  const tx = si.tx;
  checkActive(tx);
  direction = String(direction);
  if (!DIRECTIONS.includes(direction)) throw new TypeError(`${JSON.stringify(direction)} is not a cursor direction`);
  const range = toRange(query, false);
  const cursor = Object.create((keyOnly ? IDBCursor : IDBCursorWithValue).prototype);
  const id = nextCursorId++;
  cursor[internal] = {
    id, source, tx, direction, keyOnly, key: undefined, primaryKey: undefined, value: undefined,
    gotValue: false, request: null, storeMeta: si.meta,
    // Read ahead: the rows of the last step's result and the next one to step to
    // (`{ rows, at }`), how many of them were stepped through since the worker last heard,
    // and how many rows the next step asks for.
    ahead: null, skipped: 0, nextBatch: 2,
  };
  const indexName = isIndex ? source[internal].meta.name : undefined;
  const request = placeRequest(tx, source, 'openCursor',
    [tx[internal].id, id, si.meta.name, indexName, range, direction, keyOnly], (rows) => takeRows(cursor, rows));
  cursor[internal].request = request;
  return request;
}

/** Sets the cursor on record `i` of `rows` (`[atEnd, key, primaryKey, value, …]`), or past the end for `null`. */
function positioned(cursor, rows, i) {
  const ci = cursor[internal];
  if (rows === null) {
    ci.key = undefined;
    ci.primaryKey = undefined;
    ci.value = undefined;
    ci.gotValue = false;
    return null;
  }
  ci.key = rows[i];
  ci.primaryKey = rows[i + 1];
  ci.value = ci.keyOnly ? undefined : revive(rows[i + 2], ci.storeMeta.keyPath);
  ci.gotValue = true;
  return cursor;
}

// ---- read ahead ----
//
// A cursor step that goes to the worker returns the record it moved to and up to
// `batch - 1` records beyond it, each what one more plain step would reach. Plain steps
// (`continue()` without a key, `advance`) then take their record from those rows without a
// round trip, as long as nothing else of the transaction is pending, so the step still
// completes in request order; its success event fires in a later task, or as soon as a
// reply of a request placed after it arrives. Batches double from 1 up to MAX_READ_AHEAD
// while their rows get used, and start again from 1 when rows are dropped unused.
//
// The rows show the records as they were when read, so any write to the transaction drops
// every cursor's rows before it is sent (`dropReadAhead`). The worker's engine cursor stays
// on the record the worker last returned; steps taken through the rows are counted in
// `skipped` and sent with the cursor's next step, or ahead of the write in a `cursorSync`,
// so the engine cursor catches up while the records are still the ones that were read.

/** The most records a cursor step reads. */
const MAX_READ_AHEAD = 256;

/** Takes a cursor step's result from the worker: positions the cursor, keeps the rows read ahead. */
function takeRows(cursor, rows) {
  const ci = cursor[internal];
  if (rows !== null && (rows.length > 4 || rows[0])) {
    ci.ahead = { rows, at: 4 };
    ci.tx[internal].readAhead.add(cursor);
  }
  return positioned(cursor, rows, 1);
}

/** Forgets the cursor's rows read ahead (the worker's cursor needs no catching up). */
function forgetRows(cursor) {
  const ci = cursor[internal];
  ci.ahead = null;
  ci.skipped = 0;
  ci.tx[internal].readAhead.delete(cursor);
}

/**
 * Before a write to `tx`: every cursor drops its rows read ahead, and the worker's cursor
 * catches up over the steps taken through them, ahead of the write.
 */
function dropReadAhead(tx) {
  const ti = tx[internal];
  for (const cursor of ti.readAhead) {
    const ci = cursor[internal];
    if (ci.ahead.at < ci.ahead.rows.length) ci.nextBatch = 1;
    if (ci.skipped > 0) {
      ti.pending++;
      ti.db[internal].conn.submit('cursorSync', [ci.id, ci.skipped], (err, message) => {
        ti.pending--;
        if (ti.state === 'finished') return;
        if (err !== null) abortTransaction(tx, named(err, message));
        else maybeCommit(tx);
      });
    }
    ci.ahead = null;
    ci.skipped = 0;
  }
  ti.readAhead.clear();
}

/** A finished transaction's cursors let go of their rows. */
function forgetReadAhead(ti) {
  for (const cursor of ti.readAhead) {
    cursor[internal].ahead = null;
    cursor[internal].skipped = 0;
  }
  ti.readAhead.clear();
}

/** Fires the success event of the step served from read-ahead rows, if it has not fired yet. */
function runServedStep(ti) {
  const served = ti.servedStep;
  if (served === null) return;
  ti.servedStep = null;
  clearImmediate(served.immediate);
  served.run();
}

/** The first checks of every cursor step, in the spec's order: the transaction is active, the source is not deleted. */
function checkSource(cursor) {
  const ci = cursor[internal];
  checkActive(ci.tx);
  if (ci.storeMeta.deleted || (ci.source instanceof IDBIndex && ci.source[internal].meta.deleted)) {
    throw new DOMException('the cursor\'s source has been deleted', 'InvalidStateError');
  }
}

/** The cursor's got value flag is set (it is not being iterated, nor past the end). */
function checkPositioned(cursor) {
  if (!cursor[internal].gotValue) throw new DOMException('the cursor is not positioned on a record', 'InvalidStateError');
}

/** Checks a step may start, then marks the cursor and its request as iterating. */
function beginStep(cursor) {
  checkSource(cursor);
  checkPositioned(cursor);
  markStepping(cursor);
}

/** Marks the cursor as iterating and its request pending again. */
function markStepping(cursor) {
  const ci = cursor[internal];
  ci.gotValue = false;
  const ri = ci.request[internal];
  ri.readyState = 'pending';
  ri.again = true;
  // Placed again: it goes after the requests placed before this step (their order is the
  // order of the error events when the transaction aborts).
  const requests = ci.tx[internal].requests;
  requests.delete(ci.request);
  requests.add(ci.request);
}

/** `count` plain steps: from the rows read ahead when they reach far enough, else through the worker. */
function plainStep(cursor, count) {
  const ci = cursor[internal];
  beginStep(cursor);
  const a = ci.ahead;
  if (a !== null) {
    const left = (a.rows.length - a.at) / 3;
    if (ci.tx[internal].pending === 0 && (count <= left || a.rows[0])) {
      serveStep(cursor, count, left);
      return;
    }
    if (count > left) {
      // The rows are stepped through; the worker takes the remaining steps.
      ci.skipped += left;
      a.at = a.rows.length;
      count -= left;
    }
  }
  workerStep(cursor, 'cursorAdvance', [count]);
}

/** Serves `count` plain steps from the rows read ahead (`left` of them remain; past the end when fewer). */
function serveStep(cursor, count, left) {
  const ci = cursor[internal];
  const tx = ci.tx;
  const ti = tx[internal];
  const a = ci.ahead;
  let rows = null;
  let i = 0;
  if (count <= left) {
    rows = a.rows;
    i = a.at + 3 * (count - 1);
    a.at = i + 3;
    ci.skipped += count;
  } else {
    forgetRows(cursor);
  }
  ti.pending++;
  const run = () => settle(tx, ci.request, () => positioned(cursor, rows, i), null, undefined);
  ti.servedStep = { run, immediate: setImmediate(() => runServedStep(ti)) };
}

/** A cursor step through the worker, reading the next batch of rows ahead. */
function workerStep(cursor, method, args) {
  const ci = cursor[internal];
  const ti = ci.tx[internal];
  if (ci.ahead !== null && ci.ahead.at < ci.ahead.rows.length) ci.nextBatch = 1;
  const skipped = ci.skipped;
  forgetRows(cursor);
  // With other requests pending the next step would not be served from rows read ahead either.
  let batch = 1;
  if (ti.pending === 0) {
    batch = ci.nextBatch;
    ci.nextBatch = Math.min(batch * 2, MAX_READ_AHEAD);
  }
  placeRequest(ci.tx, ci.source, method, [ci.id, ...args, skipped, batch], (rows) => takeRows(cursor, rows), ci.request);
}

class IDBCursor {
  constructor() { illegal(); }
  get source() { return this[internal].source; }
  get direction() { return this[internal].direction; }
  get key() { return this[internal].key; }
  get primaryKey() { return this[internal].primaryKey; }
  get request() { return this[internal].request; }

  advance(count) {
    count = enforceRangeUnsigned(count, 0xffffffff, 'count');
    if (count === 0) throw new TypeError('advance() needs a count above 0');
    plainStep(this, count);
  }

  continue(key) {
    const ci = this[internal];
    if (key === undefined) {
      plainStep(this, 1);
      return;
    }
    // IDBCursor.continue(): the transaction, source and position are checked before the key.
    checkSource(this);
    checkPositioned(this);
    const k = toRange(key, true)[0];
    const c = cmp(k, ci.key);
    const reverse = ci.direction.startsWith('prev');
    if ((!reverse && c <= 0) || (reverse && c >= 0)) {
      throw new DOMException('the key is not beyond the cursor\'s position', 'DataError');
    }
    markStepping(this);
    workerStep(this, 'cursorContinue', [k, undefined]);
  }

  continuePrimaryKey(key, primaryKey) {
    const ci = this[internal];
    // IDBCursor.continuePrimaryKey(): transaction, source, kind of cursor, position, then keys.
    checkSource(this);
    if (!(ci.source instanceof IDBIndex)) throw new DOMException('only index cursors have primary keys to continue to', 'InvalidAccessError');
    if (ci.direction.endsWith('unique')) throw new DOMException('continuePrimaryKey() needs a next or prev cursor', 'InvalidAccessError');
    checkPositioned(this);
    const k = toRange(key, true)[0];
    const p = toRange(primaryKey, true)[0];
    const c = cmp(k, ci.key);
    const reverse = ci.direction === 'prev';
    const pc = cmp(p, ci.primaryKey);
    if ((!reverse && (c < 0 || (c === 0 && pc <= 0))) || (reverse && (c > 0 || (c === 0 && pc >= 0)))) {
      throw new DOMException('the key and primary key are not beyond the cursor\'s position', 'DataError');
    }
    markStepping(this);
    workerStep(this, 'cursorContinue', [k, p]);
  }

  update(value) {
    const ci = this[internal];
    checkActive(ci.tx);
    if (ci.tx[internal].mode === 'readonly') throw new DOMException('the transaction is readonly', 'ReadOnlyError');
    if (ci.storeMeta.deleted) throw new DOMException('the cursor\'s source has been deleted', 'InvalidStateError');
    if (!ci.gotValue || ci.keyOnly) throw new DOMException('the cursor is not positioned on a record with a value', 'InvalidStateError');
    const c = cloneWhileInactive(ci.tx, value);
    checkActive(ci.tx);
    const kp = ci.storeMeta.keyPath;
    return placeCloneWrite(ci.tx, this, 'cursorUpdate', [ci.id, c.value, c.bytes, kp === null ? undefined : kp, ci.primaryKey], c, 2);
  }

  delete() {
    const ci = this[internal];
    checkActive(ci.tx);
    if (ci.tx[internal].mode === 'readonly') throw new DOMException('the transaction is readonly', 'ReadOnlyError');
    if (ci.storeMeta.deleted) throw new DOMException('the cursor\'s source has been deleted', 'InvalidStateError');
    if (!ci.gotValue || ci.keyOnly) throw new DOMException('the cursor is not positioned on a record with a value', 'InvalidStateError');
    return placeWrite(ci.tx, this, 'cursorDelete', [ci.id]);
  }
}
defineInterface(IDBCursor, 'IDBCursor', {
  operations: { advance: 1, continue: 0, continuePrimaryKey: 2, update: 1, delete: 0 },
});

class IDBCursorWithValue extends IDBCursor {
  get value() { return this[internal].value; }
}
defineInterface(IDBCursorWithValue, 'IDBCursorWithValue');

module.exports = {
  IDBFactory,
  IDBDatabase,
  IDBTransaction,
  IDBObjectStore,
  IDBIndex,
  IDBCursor,
  IDBCursorWithValue,
  IDBRequest,
  IDBOpenDBRequest,
  IDBVersionChangeEvent,
  IDBKeyRange,
  IDBRecord,
  DOMStringList,
};
