'use strict';
// IDBCursor and IDBCursorWithValue (IndexedDB 3.0, "The IDBCursor interface"): opening a
// cursor on an object store or index, its position, and its steps (continue, advance,
// continuePrimaryKey), served from rows read ahead where it can (see readAhead.js), and its
// update() and delete().

const { internal, illegal } = require('./internal.js');
const { defineInterface, enforceRangeUnsigned } = require('./webidl.js');
const { toRange, key: toKey, cmp, keyToValue } = require('./IDBKeyRange.js');
const { revive } = require('./values.js');
const { liveStore, liveIndex } = require('./schema.js');
const { checkActive } = require('./transactionLifecycle.js');
const { placeRequest, placeWrite, placeCloneWrite, cloneWhileInactive, settle } = require('./requests.js');
const { MAX_READ_AHEAD, forgetRows, scheduleServedStep } = require('./readAhead.js');

/** The IDBCursorDirection enumeration. */
const DIRECTIONS = ['next', 'nextunique', 'prev', 'prevunique'];

let nextCursorId = 1;

/**
 * Places the request that opens a cursor on `source`, an object store or (then also `index`)
 * an index; `keyOnly` for a key cursor (IDBCursor rather than IDBCursorWithValue).
 */
function openCursor(source, index, query, direction, keyOnly) {
  const isIndex = index !== null;
  const si = isIndex ? liveIndex(source).store[internal] : liveStore(source);
  const tx = si.tx;
  checkActive(tx);
  direction = String(direction);
  if (!DIRECTIONS.includes(direction)) throw new TypeError(`${JSON.stringify(direction)} is not a cursor direction`);
  const range = toRange(query, false);
  const cursor = Object.create((keyOnly ? IDBCursor : IDBCursorWithValue).prototype);
  const id = nextCursorId++;
  cursor[internal] = {
    // `index`: the source when it is an index, else null.
    // `key`, `primaryKey`: the cursor's own; `keyShown`, `primaryKeyShown`: the caller's copies.
    id, source, index, tx, direction, keyOnly, key: undefined, primaryKey: undefined, value: undefined,
    keyShown: undefined, primaryKeyShown: undefined,
    gotValue: false, request: null, storeMeta: si.meta,
    // Read ahead: the rows of the last step's result and the next one to step to
    // (`{ rows, at }`), how many of them were stepped through since the worker last heard,
    // how many rows the next step asks for, and the rows read on beyond them while these are
    // stepped through (`{ rows }`, undefined until they arrive).
    ahead: null, skipped: 0, nextBatch: 2, more: null,
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
  ci.keyShown = undefined;
  ci.primaryKeyShown = undefined;
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

/** Takes a cursor step's result from the worker: positions the cursor, keeps the rows read ahead. */
function takeRows(cursor, rows) {
  const ci = cursor[internal];
  if (rows !== null && (rows.length > 4 || rows[0])) {
    ci.ahead = { rows, at: 4 };
    ci.tx[internal].readAhead.add(cursor);
  }
  return positioned(cursor, rows, 1);
}

/** The first checks of every cursor step, in the spec's order: the transaction is active, the source is not deleted. */
function checkSource(cursor) {
  const ci = cursor[internal];
  checkActive(ci.tx);
  if (ci.storeMeta.deleted || (ci.index !== null && ci.index[internal].meta.deleted)) {
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
  let a = ci.ahead;
  const more = ci.more;
  if (a !== null && a.at === a.rows.length && more !== null) {
    // The rows are stepped through.
    if (more.rows !== undefined) {
      // Those read on beyond them have arrived.
      a = more.rows === null ? a : { rows: more.rows, at: 1 };
      ci.ahead = a;
      ci.more = null;
    } else if (count === 1 && ci.tx[internal].pending === 0) {
      // Those read on beyond them are on their way: the step takes the first of them when
      // they arrive (see `takeWaitedRow`) rather than asking the worker to read them again.
      more.waiting = true;
      ci.tx[internal].pending++;
      return;
    }
  }
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
    if (ci.more === null && !rows[0]) readMore(cursor);
  } else {
    forgetRows(cursor);
  }
  ti.pending++;
  const run = () => settle(tx, ci.request, () => positioned(cursor, rows, i), null, undefined);
  scheduleServedStep(ti, run);
}

/**
 * Asks the worker for the rows beyond those read ahead, so that they are read while these
 * are stepped through. They arrive in `ci.more` unless the rows are forgotten first.
 */
function readMore(cursor) {
  const ci = cursor[internal];
  // `waiting`: a step waits for these rows (nothing else of the transaction was pending).
  const more = { rows: undefined, waiting: false };
  ci.more = more;
  const batch = ci.nextBatch;
  ci.nextBatch = Math.min(batch * 2, MAX_READ_AHEAD);
  ci.tx[internal].db[internal].conn.submit('cursorReadAhead', [ci.id, batch], (err, rows) => {
    if (more.waiting) takeWaitedRow(cursor, more, err, rows);
    else if (ci.more === more) more.rows = err === null ? rows : null;
  });
}

/**
 * The step that waited for the rows read on (`more`) moves to the first of them, or past the
 * end when there are none (the worker reads none only at the end); it fails with the read's
 * error when the read failed before its first row (the row the step moves to). Replies come
 * in the order the calls were made, so the step settles after the requests placed before it
 * and before those placed after it. When a write was placed meanwhile (the rows were
 * dropped, and the worker's cursor was caught up over this step too: `dropReadAhead`), the
 * rest of the rows is not kept.
 */
function takeWaitedRow(cursor, more, err, rows) {
  const ci = cursor[internal];
  const kept = ci.more === more;
  if (err !== null) {
    if (kept) forgetRows(cursor);
    settle(ci.tx, ci.request, undefined, err, rows);
    return;
  }
  if (rows === null) {
    if (kept) forgetRows(cursor);
    settle(ci.tx, ci.request, () => positioned(cursor, null, 0), null, undefined);
    return;
  }
  if (kept) {
    ci.ahead = { rows, at: 4 };
    ci.more = null;
    ci.skipped++;
    // After abort() or commit() no further step can use more rows.
    const state = ci.tx[internal].state;
    if (!rows[0] && state !== 'finished' && state !== 'committing') readMore(cursor);
  }
  settle(ci.tx, ci.request, () => positioned(cursor, rows, 1), null, undefined);
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
  // The key and primary key as shown to the caller: one value per position ("the same object
  // instance every time it is inspected, until the cursor's key is changed"), converted from
  // the cursor's own key, so changing the object changes neither the steps' comparisons nor
  // update()'s key check.
  get key() {
    const ci = this[internal];
    if (ci.keyShown === undefined) ci.keyShown = keyToValue(ci.key);
    return ci.keyShown;
  }
  get primaryKey() {
    const ci = this[internal];
    if (ci.primaryKeyShown === undefined) ci.primaryKeyShown = keyToValue(ci.primaryKey);
    return ci.primaryKeyShown;
  }
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
    const k = toKey(key);
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
    if (ci.index === null) throw new DOMException('only index cursors have primary keys to continue to', 'InvalidAccessError');
    if (ci.direction.endsWith('unique')) throw new DOMException('continuePrimaryKey() needs a next or prev cursor', 'InvalidAccessError');
    checkPositioned(this);
    const k = toKey(key);
    const p = toKey(primaryKey);
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

module.exports = { IDBCursor, IDBCursorWithValue, DIRECTIONS, openCursor };
