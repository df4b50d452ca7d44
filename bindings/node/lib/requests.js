'use strict';
// Requests inside a transaction (IndexedDB 3.0, "asynchronously execute a request"): placing
// them with the engine in request order, the writes' clones and their read-ahead drop, schema
// changes of the upgrade transaction, and settling each request with its success or error
// event and what that event means for the transaction.

const { internal } = require('./internal.js');
const { named } = require('./errors.js');
const { IDBEvent } = require('./events.js');
const { fire } = require('./tasks.js');
const { cloneForStorage, withBlobBytes } = require('./values.js');
const { IDBRequest, newRequest } = require('./IDBRequest.js');
const { activation, maybeCommit, abortTransaction, settleCall } = require('./transactionLifecycle.js');
const { runServedStep } = require('./readAhead.js');

/** A schema change in the upgrade transaction; its failure aborts the transaction. */
function schemaOp(tx, method, args) {
  const ti = tx[internal];
  dropReadAhead(tx);
  ti.pending++;
  ti.db[internal].conn.submit(method, [ti.id, ...args], (err, message) => {
    runServedStep(ti);
    settleCall(tx, err, message);
  });
}

/**
 * Places a request; `convert(result, ri)` maps the native result to the request's result
 * (`ri`: the request's internal state);
 * `ready`, a promise of the arguments, delays the native call (see `Connection.submit`).
 */
function placeRequest(tx, source, method, args, convert, request, ready) {
  const ti = tx[internal];
  const r = request || newRequest(IDBRequest, source, tx);
  const ri = r[internal];
  const conn = ti.db[internal].conn;
  // Behind a held write, a value's synchronous checks still throw here.
  if (ready === undefined && conn.held.length > 0 && CHECKED_WRITES.has(method)) conn.check(method, args);
  ri.convert = convert;
  ri.reply = requestReplied;
  conn.submit(method, args, ri, ready);
  ti.pending++;
  ti.requests.add(r);
  return r;
}

/**
 * The engine's reply to a request placed by `placeRequest`; `this` is the request's internal
 * state (a method of it, so that a reply needs no closure of its own; a cursor step through
 * the engine still makes one, for its conversion).
 */
function requestReplied(err, result) {
  const tx = this.transaction;
  runServedStep(tx[internal]);
  settle(tx, this.request, this.convert, err, result);
}

/** Places a request that writes: cursors of the transaction first drop their read-ahead rows. */
function placeWrite(tx, source, method, args) {
  dropReadAhead(tx);
  return placeRequest(tx, source, method, args);
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
    // A step waiting for the rows read on (IDBCursor.js) takes one of them, before this write.
    const skipped = ci.skipped + (ci.more !== null && ci.more.waiting ? 1 : 0);
    if (skipped > 0) {
      ti.pending++;
      ti.db[internal].conn.submit('cursorSync', [ci.id, skipped], (err, message) => settleCall(tx, err, message));
    }
    ci.ahead = null;
    ci.skipped = 0;
    ci.more = null;
  }
  ti.readAhead.clear();
}

// IDBCursor.js requires this module, so the IDBCursor interface is looked up on first use.
let IDBCursor = null;

/** Whether `value` is an IDBCursor (a cursor request's result while the cursor has a position). */
function isCursor(value) {
  if (IDBCursor === null) IDBCursor = require('./IDBCursor.js').IDBCursor;
  return value instanceof IDBCursor;
}

/**
 * Forgets a settled request so a long transaction does not keep every request it ever made:
 * the transaction only needs its pending requests (to fail them if it aborts). A cursor's
 * request stays while the cursor has a position (a step makes it pending again; in the
 * request list it keeps the place of its first placement), and goes with the cursor's end.
 */
function release(ti, r) {
  if (!isCursor(r[internal].result)) ti.requests.delete(r);
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

/**
 * A request of `tx` is done: in a task of its own, its result (or error) is set and its event
 * fired; while the event is dispatched the transaction stays active and does not commit.
 */
function settle(tx, r, convert, err, result) {
  const ti = tx[internal];
  const ri = r[internal];
  let wasCommitting = false;
  const begin = () => {
    ti.pending--;
    if (ti.state === 'finished') return false;
    ri.readyState = 'done';
    ri.again = false;
    wasCommitting = ti.state === 'committing';
    if (!wasCommitting) ti.state = 'active';
    if (err === null) {
      ri.result = convert ? convert(result, ri) : result;
      ri.error = undefined;
    } else {
      ri.result = undefined;
      ri.error = named(err, result);
    }
    release(ti, r);
    ti.dispatching++;
    return true;
  };
  const done = ({ canceled, threw }) => {
    ti.dispatching--;
    if (err === null) {
      // After commit() the state is committing, not active: an exception no longer aborts.
      if (threw && !wasCommitting && ti.state !== 'finished') {
        abortTransaction(tx, new DOMException('a success handler threw', 'AbortError'));
        return null;
      }
    } else {
      // An error not prevented aborts even a committing transaction (its commit waits for
      // this event); an exception in a handler aborts only an active one, as for success.
      const handlerAborts = threw && !wasCommitting;
      if (ti.state !== 'finished' && (handlerAborts || !canceled)) {
        abortTransaction(tx, handlerAborts ? new DOMException('an error handler threw', 'AbortError') : ri.error);
        return null;
      }
    }
    if (ti.state === 'finished') return null;
    if (wasCommitting) {
      maybeCommit(tx);
      return null;
    }
    // Inactive again once this task's microtasks have run (at the wait before the next task).
    return activation(tx);
  };
  // success does not bubble, but its path is request → transaction → connection, so
  // capture listeners on the transaction and the connection see it.
  const event = err === null ? new IDBEvent('success') : new IDBEvent('error', { bubbles: true, cancelable: true });
  fire(event, [r, tx, ti.db], { begin, done });
}

module.exports = {
  schemaOp, placeRequest, placeWrite, placeCloneWrite, cloneWhileInactive, settle,
};
