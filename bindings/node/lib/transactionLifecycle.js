'use strict';
// The life of a transaction (IndexedDB 3.0, "Transactions" and its lifecycle): scheduling (when
// a created transaction starts in the engine), activation (active while the task that created
// it, or that dispatches one of its events, runs), auto-commit, "commit a transaction" and
// "abort a transaction".

const { internal } = require('./internal.js');
const { named } = require('./errors.js');
const { IDBEvent, dispatch } = require('./events.js');
const { restoreSchema } = require('./schema.js');
const { forgetReadAhead, runServedStep } = require('./readAhead.js');
const { maybeClosed } = require('./closeConnection.js');

/** Whether the scopes of transactions `a` and `b` share an object store (null: every store). */
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

/** Makes `tx` active until the end of the current task, then inactive (and commits it if nothing is pending). */
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

/** TransactionInactiveError unless `tx` is active. */
function checkActive(tx) {
  const s = tx[internal].state;
  if (s !== 'active') throw new DOMException(`the transaction is ${s === 'finished' ? 'finished' : 'not active'}`, 'TransactionInactiveError');
}

module.exports = {
  schedule, activate, maybeCommit, commitTransaction, abortTransaction, checkActive,
};
