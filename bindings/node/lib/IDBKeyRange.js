'use strict';
// IDBKeyRange (https://www.w3.org/TR/IndexedDB-3/#keyrange).

const native = require('./native.js');
const { rethrow } = require('./errors.js');
const { defineInterface } = require('./webidl.js');
const { Writer, timeValue } = require('./wire.js');

// A range's flags in its native form (src/wire.rs `read_range`).
const RANGE_LOWER = 1;
const RANGE_UPPER = 2;
const RANGE_LOWER_OPEN = 4;
const RANGE_UPPER_OPEN = 8;

function key(value) {
  // A number other than NaN is a key as it is (-0 becomes 0), without a native call.
  if (typeof value === 'number' && value === value) return value === 0 ? 0 : value;
  try {
    return native.normalizeKey(value);
  } catch (e) {
    throw rethrow(e);
  }
}

function cmp(a, b) {
  try {
    return native.cmp(a, b);
  } catch (e) {
    throw rethrow(e);
  }
}

const bounds = Symbol('bounds');
const written = Symbol('written');

class IDBKeyRange {
  constructor() {
    throw new TypeError('Illegal constructor');
  }

  static only(value) {
    const k = key(value);
    return make(k, k, false, false);
  }

  static lowerBound(lower, open = false) {
    return make(key(lower), undefined, !!open, true);
  }

  static upperBound(upper, open = false) {
    return make(undefined, key(upper), true, !!open);
  }

  static bound(lower, upper, lowerOpen = false, upperOpen = false) {
    const l = key(lower);
    const u = key(upper);
    const c = cmp(l, u);
    if (c > 0 || (c === 0 && (lowerOpen || upperOpen))) {
      throw new DOMException('the lower bound is above the upper bound, or they are equal and one is open', 'DataError');
    }
    return make(l, u, !!lowerOpen, !!upperOpen);
  }

  // "Convert a key to a value": a new Date, ArrayBuffer or array each time, so changing what a
  // getter returned changes neither the range nor what the getter returns next.
  get lower() { return keyToValue(this[bounds][0]); }
  get upper() { return keyToValue(this[bounds][1]); }
  get lowerOpen() { return this[bounds][2]; }
  get upperOpen() { return this[bounds][3]; }

  includes(value) {
    const k = key(value);
    const [l, u, lo, uo] = this[bounds];
    if (l !== undefined) {
      const c = cmp(l, k);
      if (c > 0 || (c === 0 && lo)) return false;
    }
    if (u !== undefined) {
      const c = cmp(u, k);
      if (c < 0 || (c === 0 && uo)) return false;
    }
    return true;
  }
}
defineInterface(IDBKeyRange, 'IDBKeyRange', {
  operations: { includes: 1 },
  statics: { only: 1, lowerBound: 1, upperBound: 1, bound: 2 },
});

/** "Convert a key to a value" (https://www.w3.org/TR/IndexedDB-3/#convert-a-key-to-a-value) of a key as `key` makes them, or undefined. */
function keyToValue(k) {
  if (typeof k !== 'object') return k;
  if (Array.isArray(k)) return k.map(keyToValue);
  if (k instanceof Date) return new Date(timeValue.call(k));
  return k.slice(0);
}

function make(lower, upper, lowerOpen, upperOpen) {
  const r = Object.create(IDBKeyRange.prototype);
  r[bounds] = [lower, upper, lowerOpen, upperOpen];
  r[written] = null;
  return r;
}

const writer = new Writer();

/** A range in the form the addon reads (src/wire.rs `read_range`): flags, then the bounds' keys. */
function write(lower, upper, lowerOpen, upperOpen) {
  writer.tag((lower !== undefined ? RANGE_LOWER : 0) | (upper !== undefined ? RANGE_UPPER : 0)
    | (lowerOpen ? RANGE_LOWER_OPEN : 0) | (upperOpen ? RANGE_UPPER_OPEN : 0));
  if (lower !== undefined) writer.key(lower);
  if (upper !== undefined) writer.key(upper);
  return writer.bytes();
}

/**
 * A query as the native layer takes it: a range as `write` makes it, or undefined for none.
 * A key becomes a one-key range; `required` makes a missing query a DataError.
 */
function toRange(query, required) {
  if (query instanceof IDBKeyRange) {
    if (query[written] === null) query[written] = write(...query[bounds]);
    return query[written];
  }
  if (query === undefined || query === null) {
    if (required) throw new DOMException('a key or key range is required', 'DataError');
    return undefined;
  }
  const k = key(query);
  return write(k, k, false, false);
}

module.exports = { IDBKeyRange, toRange, key, cmp, keyToValue };
