'use strict';
// IDBFactory (IndexedDB 3.0, "The IDBFactory interface"): open(), deleteDatabase(),
// databases() and cmp(), with each database's connection queue ("open a database connection",
// "delete a database") and the versionchange and blocked events between connections.

const fs = require('node:fs');
const native = require('./native.js');
const { rethrow, named } = require('./errors.js');
const { IDBEvent, IDBVersionChangeEvent } = require('./events.js');
const { fire } = require('./tasks.js');
const { defineInterface, enforceRangeUnsigned } = require('./webidl.js');
const { cmp } = require('./IDBKeyRange.js');
const { Connection } = require('./connection.js');
const { internal } = require('./internal.js');
const { IDBOpenDBRequest, newRequest } = require('./IDBRequest.js');
const { closeConnection } = require('./closeConnection.js');
const { activate, activation, abortTransaction } = require('./transactionLifecycle.js');
const { newTransaction, newTransactionId } = require('./IDBTransaction.js');
const { newDatabase } = require('./IDBDatabase.js');

// The databases' connection queues and open connections, by data directory (its real path)
// or PostgreSQL URL: every factory of this thread on one place shares them, so their
// connections get each other's versionchange and blocked events as connections from one
// origin do.
const entriesByPlace = new Map();

function entriesOfPlace(key) {
  let entries = entriesByPlace.get(key);
  if (!entries) {
    entries = new Map();
    entriesByPlace.set(key, entries);
  }
  return entries;
}

/** Whether `s` is a PostgreSQL URL rather than a directory. */
function isPostgresUrl(s) {
  return typeof s === 'string' && /^postgres(ql)?:\/\//.test(s);
}

/**
 * `IDBFactory`. `new IDBFactory({ dir })` keeps databases in `dir` (created if missing);
 * `new IDBFactory({ url: 'postgres://user@host:port/dbname' })` keeps them in an existing
 * PostgreSQL database, shared by every process and host using the URL (a `dir` or
 * `$INDEXA_DATA_DIR` holding such a URL means the same, as for the CLI's `--data-dir`).
 * Without either it uses `$INDEXA_DATA_DIR` when set, else a private temporary directory
 * removed at exit (the in-memory mode). `{ memory: true }` forces the latter.
 * `{ lockTimeout }`: milliseconds a deleteDatabase or an upgrade waits for other processes
 * to close the database before failing with InvalidStateError (default 30000).
 */
class IDBFactory {
  constructor(options = {}) {
    let dir = options.memory ? undefined : (options.dir || process.env.INDEXA_DATA_DIR || undefined);
    let url = options.memory ? undefined : options.url;
    if (url !== undefined && !isPostgresUrl(url)) {
      throw new TypeError('url must be a postgres:// or postgresql:// URL');
    }
    if (url === undefined && isPostgresUrl(dir)) url = dir;
    if (url !== undefined) dir = undefined;
    let lockTimeout;
    if (options.lockTimeout !== undefined) {
      lockTimeout = Number(options.lockTimeout);
      if (!Number.isFinite(lockTimeout) || lockTimeout < 0) {
        throw new TypeError('lockTimeout must be a finite number of milliseconds, at least 0');
      }
    }
    let nf;
    try {
      nf = new native.NativeFactory(dir, lockTimeout, url);
    } catch (e) {
      throw rethrow(e);
    }
    if (url === undefined && dir === undefined) {
      const tmp = nf.dir;
      process.once('exit', () => fs.rmSync(tmp, { recursive: true, force: true }));
    }
    const place = url === undefined ? fs.realpathSync(nf.dir) : nf.url;
    this[internal] = { native: nf, entries: entriesOfPlace(place) };
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

/** Fires the request's error event with `error`, in a task of its own. */
function fireRequestError(request, error) {
  const ri = request[internal];
  const begin = () => {
    ri.readyState = 'done';
    ri.result = undefined;
    ri.error = error;
  };
  fire(new IDBEvent('error', { bubbles: true, cancelable: true }), [request], { begin });
}

/** Fires the request's success event, in a task of its own, with `result` as its result. */
function fireRequestSuccess(request, result, event = new IDBEvent('success')) {
  const ri = request[internal];
  const begin = () => {
    ri.readyState = 'done';
    ri.result = result;
  };
  fire(event, [request], { begin });
}

/**
 * Fires versionchange at the other open connections of this thread and waits until every other
 * connection is closed, those whose close was already pending too (they close when their
 * transactions end); returns whether it fired blocked.
 */
async function closeOthers(entry, oldVersion, newVersion, request, except) {
  const open = [...entry.connections].filter((c) => c !== except);
  const others = open.filter((c) => !c[internal].closePending);
  // Each versionchange in a task of its own, skipped for a connection an earlier one closed.
  await new Promise((resolve) => {
    let left = others.length;
    const fired = () => { if (--left === 0) resolve(); };
    if (left === 0) resolve();
    for (const c of others) {
      const begin = () => {
        if (!c[internal].closePending) return true;
        fired();
        return false;
      };
      fire(new IDBVersionChangeEvent('versionchange', { oldVersion, newVersion }), [c], { begin, done: fired });
    }
  });
  // blocked comes in a task of its own, after the versionchange handlers and their promise
  // continuations ran: a connection they closed no longer blocks.
  let blocked = false;
  if (others.some((c) => !c[internal].closePending)) {
    await new Promise((resolve) => setImmediate(resolve));
    if (others.some((c) => !c[internal].closePending)) {
      fire(new IDBVersionChangeEvent('blocked', { oldVersion, newVersion }), [request]);
      blocked = true;
    }
  }
  await Promise.all(open.map((c) => c[internal].closed));
  return blocked;
}

/**
 * Fires versionchange at `db` for a deletion or an upgrade by another factory or process
 * (unless its close is pending), then tells the engine it was dispatched: the engine waits for
 * that, and for a close a handler asked for, before it reports the requester blocked.
 */
function versionChangeFromElsewhere(db, oldVersion, newVersion) {
  const di = db[internal];
  const acknowledge = () => di.conn.native.acknowledge();
  const begin = () => {
    if (!di.closePending) return true;
    acknowledge();
    return false;
  };
  fire(new IDBVersionChangeEvent('versionchange', { oldVersion, newVersion }), [db], { begin, done: acknowledge });
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
  let blocked = version > current && await closeOthers(entry, current, version, request, null);
  const conn = new Connection(fi.native);
  // Until the connection exists, a versionchange from elsewhere waits for it.
  let db = null;
  const waiting = [];
  conn.listen((kind, oldVersion, newVersion) => {
    if (kind === 'blocked') {
      // Fired once per request, here or by closeOthers, and only while the open waits.
      if (!blocked && request[internal].readyState === 'pending') {
        blocked = true;
        fire(new IDBVersionChangeEvent('blocked', { oldVersion, newVersion }), [request]);
      }
    } else if (db === null) {
      waiting.push([oldVersion, newVersion]);
    } else {
      versionChangeFromElsewhere(db, oldVersion, newVersion);
    }
  });
  const txId = newTransactionId();
  const opened = await new Promise((resolve) => {
    conn.submit('open', [txId, name, version], (err, result) => resolve([err, result]));
  });
  if (opened[0] !== null) {
    conn.native.close();
    return fireRequestError(request, named(opened[0], opened[1]));
  }
  const info = opened[1];
  db = newDatabase(factory, entry, conn, name, info);
  entry.connections.add(db);
  const ri = request[internal];
  // Each in a task of its own, after the open's success.
  const deliverWaiting = () => {
    for (const [o, n] of waiting.splice(0)) versionChangeFromElsewhere(db, o, n);
  };
  if (info.oldVersion === null) {
    fireRequestSuccess(request, db);
    deliverWaiting();
    return;
  }
  // The upgrade transaction: already begun in the engine.
  const tx = newTransaction(db, null, 'versionchange', 'default', txId);
  tx[internal].started = true;
  tx[internal].oldVersion = info.oldVersion;
  db[internal].upgrade = tx;
  db[internal].version = version;
  tx[internal].openRequest = request;
  const done = new Promise((resolve) => { tx[internal].onFinish = resolve; });
  const ev = new IDBVersionChangeEvent('upgradeneeded', { oldVersion: info.oldVersion, newVersion: version });
  // The upgrade transaction is active while upgradeneeded is dispatched (and its listeners'
  // microtasks run), then until the end of the task.
  fire(ev, [request], {
    begin: () => {
      ri.readyState = 'done';
      ri.result = db;
      ri.transaction = tx;
      tx[internal].dispatching++;
      activate(tx);
    },
    done: ({ threw }) => {
      tx[internal].dispatching--;
      if (threw) {
        abortTransaction(tx, new DOMException('an upgradeneeded handler threw', 'AbortError'));
        return null;
      }
      return activation(tx);
    },
  });
  const committed = await done;
  db[internal].upgrade = null;
  ri.transaction = null;
  if (committed && !db[internal].closePending) {
    fireRequestSuccess(request, db);
    deliverWaiting();
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
    let blocked = await closeOthers(entry, current, null, request, null);
    old = await nativeCall(fi.native.deleteDatabase(name, (oldVersion) => {
      // Fired once per request, here or by closeOthers.
      if (blocked) return;
      blocked = true;
      fire(new IDBVersionChangeEvent('blocked', { oldVersion, newVersion: null }), [request]);
    }));
  } catch (e) {
    return fireRequestError(request, e);
  }
  fireRequestSuccess(request, undefined, new IDBVersionChangeEvent('success', { oldVersion: old, newVersion: null }));
}

module.exports = { IDBFactory };
