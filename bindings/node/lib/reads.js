'use strict';
// The reads of object stores and indexes (IndexedDB 3.0, "retrieve a value/key from an object
// store or index", "create a request to retrieve multiple items"): get, getKey, getAll,
// getAllKeys, getAllRecords and count, and the IDBGetAllOptions dictionary.

const { internal } = require('./internal.js');
const { enforceRangeUnsigned } = require('./webidl.js');
const { IDBKeyRange, toRange } = require('./IDBKeyRange.js');
const { revive } = require('./values.js');
const { recordsOf } = require('./IDBRecord.js');
const { liveStore, liveIndex } = require('./schema.js');
const { checkActive } = require('./transactionLifecycle.js');
const { placeRequest } = require('./requests.js');
const { DIRECTIONS } = require('./IDBCursor.js');

/**
 * Places a read of `kind` on `source`, an object store or (then also `index`) an index;
 * `convertArgs()` gives its `[range, count, direction]` once the transaction is known active.
 */
function read(source, index, kind, convertArgs) {
  const si = index !== null ? liveIndex(index).store[internal] : liveStore(source);
  const tx = si.tx;
  checkActive(tx);
  // The query is converted only once the transaction is known to be active (the spec's order).
  const [range, count, direction] = convertArgs();
  const indexName = index !== null ? index[internal].meta.name : undefined;
  return placeRequest(tx, source, 'read',
    [tx[internal].id, si.meta.name, indexName, kind, range, count, direction], CONVERSIONS[kind]);
}

/** The key path of the object store that `ri`'s source (a store or an index) reads. */
function keyPathOf(ri) {
  const si = ri.source[internal];
  return (si.store !== undefined ? si.store[internal] : si).meta.keyPath;
}

/**
 * The conversion of each kind of read's result that has one (`ri`: the request's internal
 * state): values revived (their key injected, see values.js), records made. The other kinds
 * (`getKey`, `getAllKeys`, `count`) keep the native result.
 */
const CONVERSIONS = {
  get: (v, ri) => revive(v, keyPathOf(ri)),
  getAll: (vs, ri) => {
    const kp = keyPathOf(ri);
    for (let i = 0; i < vs.length; i++) vs[i] = revive(vs[i], kp);
    return vs;
  },
  getAllRecords: (rows, ri) => recordsOf(rows, keyPathOf(ri)),
};

/** The count argument of getAll()/getAllKeys() ([EnforceRange] unsigned long), or undefined. */
function countArg(count) {
  return count === undefined ? undefined : enforceRangeUnsigned(count, 0xffffffff, 'count');
}

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

module.exports = { read, getAllArgs, getAllOptions };
