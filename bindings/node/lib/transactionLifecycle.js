'use strict';
// The life of a transaction (IndexedDB 3.0, "Transactions" and its lifecycle): scheduling (when
// a created transaction starts in the engine), activation (active while the task that created
// it, or that dispatches one of its events, runs), auto-commit, "commit a transaction" and
// "abort a transaction".

const { internal } = require('./internal.js');
const { named } = require('./errors.js');
const { IDBEvent } = require('./events.js');
const { fire, queueTask, afterMicrotasks } = require('./tasks.js');
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

/**
 * Starts every transaction of the database that the spec's scheduling rules allow: a
 * readonly one when no readwrite or versionchange transaction created before it overlaps its
 * scope, a readwrite one when no transaction created before it overlaps and no other
 * readwrite one runs. It compares a readonly transaction with the earlier writers only, so
 * thousands of readonly transactions created at once cost time linear in their number here.
 */
function schedule(entry) {
  const txs = entry.txs;
  let runningReadonly = 0;
  let writerRunning = false;
  let waitingWriters = 0;
  for (const u of txs) {
    const ui = u[internal];
    if (ui.mode === 'readonly') {
      if (ui.started) runningReadonly++;
    } else if (ui.started) {
      writerRunning = true;
    } else {
      waitingWriters++;
    }
  }
  // The readwrite and versionchange transactions before the one looked at.
  const earlierWriters = [];
  for (let i = 0; i < txs.length; i++) {
    // Past this point nothing more could start.
    if (runningReadonly >= MAX_RUNNING_READONLY && (writerRunning || waitingWriters === 0)) return;
    const t = txs[i];
    const ti = t[internal];
    const readonly = ti.mode === 'readonly';
    let ok = false;
    if (!ti.started) {
      if (readonly) {
        ok = runningReadonly < MAX_RUNNING_READONLY;
        for (let j = 0; j < earlierWriters.length && ok; j++) if (scopeOverlaps(earlierWriters[j], t)) ok = false;
      } else {
        ok = !writerRunning;
        for (let j = 0; j < i && ok; j++) if (scopeOverlaps(txs[j], t)) ok = false;
      }
    }
    if (!readonly) earlierWriters.push(t);
    if (!ok) continue;
    ti.started = true;
    if (readonly) {
      runningReadonly++;
    } else {
      writerRunning = true;
      waitingWriters--;
    }
    const di = ti.db[internal];
    di.conn.submit('begin', [ti.id, ti.scope, ti.mode, ti.durability], (err, message) => {
      if (err === null) return;
      queueTask(() => {
        if (ti.state !== 'finished') abortTransaction(t, named(err, message));
      });
    });
  }
}

/**
 * Makes `tx` active until the current task and its microtasks have run ("when control returns
 * to the event loop"), then inactive, and commits it if nothing is pending. While one of its
 * events is being dispatched (`dispatching`) it stays active: the end of that dispatch
 * activates it again.
 */
function activate(tx) {
  const deactivate = activation(tx);
  if (deactivate !== null) afterMicrotasks(deactivate);
}

/**
 * Makes `tx` active and returns the function that makes it inactive again (and commits it if
 * nothing is pending), for the caller to run once the current task's microtasks have run; null
 * when such a function is already waiting for that point.
 */
function activation(tx) {
  const ti = tx[internal];
  if (ti.state === 'inactive') ti.state = 'active';
  if (ti.deactivation) return null;
  ti.deactivation = true;
  return () => {
    ti.deactivation = false;
    if (ti.dispatching > 0) return;
    if (ti.state === 'active') ti.state = 'inactive';
    maybeCommit(tx);
  };
}

/**
 * Auto-commit of an inactive transaction with no request pending; and the engine commit of
 * a committing one once its last request's event has been dispatched (none is being
 * dispatched).
 */
function maybeCommit(tx) {
  const ti = tx[internal];
  if (ti.pending !== 0 || ti.dispatching > 0) return;
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
    fire(new IDBEvent('complete'), [tx], { done: () => { if (ti.onFinish) ti.onFinish(true); } });
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
    setImmediate(() => {
      // Transactions waiting for this one start only now, so that its events are queued
      // before any of theirs: a start on Node's thread has its replies queued at once.
      finished(tx);
      ti.aborting = false;
      for (const r of ti.requests) {
        const ri = r[internal];
        if (ri.readyState === 'done' && !ri.again) continue;
        const begin = () => {
          ri.readyState = 'done';
          ri.result = undefined;
          ri.error = new DOMException('the transaction was aborted', 'AbortError');
        };
        fire(new IDBEvent('error', { bubbles: true, cancelable: true }), [r, tx, db], { begin });
      }
      fire(new IDBEvent('abort', { bubbles: true }), [tx, db], { done: () => { if (ti.onFinish) ti.onFinish(false); } });
    });
  };
  if (engineDone) afterEngine();
  else db[internal].conn.submit('abort', [ti.id], () => afterEngine());
}

/**
 * The reply to a call of `tx` that places no request (a schema change, a cursor catching up),
 * taken in a task of its own so that it acts after the events fired before it: a failure
 * aborts the transaction.
 */
function settleCall(tx, err, message) {
  const ti = tx[internal];
  queueTask(() => {
    ti.pending--;
    if (ti.state === 'finished') return;
    if (err !== null) abortTransaction(tx, named(err, message));
    else maybeCommit(tx);
  });
}

/** TransactionInactiveError unless `tx` is active. */
function checkActive(tx) {
  const s = tx[internal].state;
  if (s !== 'active') throw new DOMException(`the transaction is ${s === 'finished' ? 'finished' : 'not active'}`, 'TransactionInactiveError');
}

module.exports = {
  schedule, activate, activation, maybeCommit, commitTransaction, abortTransaction, settleCall, checkActive,
};
