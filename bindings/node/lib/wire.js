'use strict';
// Decodes the buffers in which the addon sends the results that carry records (src/wire.rs
// documents the layout): a `get`'s value, a `getAll`'s values, a `getAllRecords`' records and
// a cursor step's rows, each in the shape the rest of the package takes from a reply. Values
// are built as structured clone would build them: own data properties (no setter runs, a
// property named `__proto__` is an own property), dense arrays, Dates, ArrayBuffers; a value
// stored with V8's serialization comes as a Buffer of it, with the injected key as
// `indexaKey` (values.js `revive`).

const KIND_VALUE = 0;
const KIND_VALUES = 1;
const KIND_RECORDS = 2;
const KIND_ROWS = 3;

// The tags of values and keys (src/wire.rs).
const TAG_UNDEFINED = 0;
const TAG_NULL = 1;
const TAG_FALSE = 2;
const TAG_TRUE = 3;
const TAG_NUMBER = 4;
const TAG_INT = 5;
const TAG_ASCII = 6;
const TAG_UTF16 = 7;
const TAG_DATE = 8;
const TAG_BINARY = 9;
const TAG_ARRAY = 10;
const TAG_OBJECT = 11;
const TAG_CLONE = 12;

/** Longer ASCII strings are sliced out by Buffer's Latin-1 decoder; shorter ones built here. */
const SHORT_ASCII = 24;
/** Longer property names are not kept in `names`. */
const SHORT_NAME = 32;

// The buffer being decoded and the position in it.
let b = null;
let p = 0;

const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);

/** How many recent short ASCII property names are kept, so records reuse the same strings. */
const NAME_SLOTS = 1024;
const names = new Array(NAME_SLOTS).fill(null);

function varint() {
  let c = b[p++];
  if (c < 0x80) return c;
  let n = c & 0x7f;
  let scale = 0x80;
  for (;;) {
    c = b[p++];
    n += (c & 0x7f) * scale;
    if (c < 0x80) return n;
    scale *= 0x80;
  }
}

function float() {
  for (let i = 0; i < 8; i++) f64Bytes[i] = b[p + i];
  p += 8;
  return f64[0];
}

function ascii(length) {
  const end = p + length;
  let s;
  if (length > SHORT_ASCII) {
    s = b.toString('latin1', p, end);
  } else {
    s = '';
    for (let i = p; i < end; i++) s += String.fromCharCode(b[i]);
  }
  p = end;
  return s;
}

function utf16(length) {
  const s = b.toString('utf16le', p, p + 2 * length);
  p += 2 * length;
  return s;
}

/** A property name: a short ASCII one from `names` when the same bytes were seen last in its slot. */
function propertyName() {
  const tag = b[p++];
  const length = varint();
  if (tag !== TAG_ASCII) return utf16(length);
  if (length > SHORT_NAME) return ascii(length);
  let h = length;
  for (let i = p; i < p + length; i++) h = (Math.imul(h, 31) + b[i]) | 0;
  const slot = h & (NAME_SLOTS - 1);
  const seen = names[slot];
  if (seen !== null && seen.length === length) {
    let i = 0;
    while (i < length && seen.charCodeAt(i) === b[p + i]) i++;
    if (i === length) {
      p += length;
      return seen;
    }
  }
  const s = ascii(length);
  names[slot] = s;
  return s;
}

/**
 * CreateDataProperty on a fresh `object` whose prototype is `prototype`: assignment, unless
 * the prototype has the name, where assignment could run a setter (or `__proto__`'s).
 */
function createDataProperty(object, prototype, name, value) {
  if (name in prototype) {
    Object.defineProperty(object, name, { value, writable: true, enumerable: true, configurable: true });
  } else {
    object[name] = value;
  }
}

function value() {
  switch (b[p++]) {
    case TAG_UNDEFINED: return undefined;
    case TAG_NULL: return null;
    case TAG_FALSE: return false;
    case TAG_TRUE: return true;
    case TAG_NUMBER: return float();
    case TAG_INT: {
      const z = varint();
      return (z >>> 1) ^ -(z & 1);
    }
    case TAG_ASCII: return ascii(varint());
    case TAG_UTF16: return utf16(varint());
    case TAG_DATE: return new Date(float());
    case TAG_BINARY: {
      const length = varint();
      const start = b.byteOffset + p;
      p += length;
      return b.buffer.slice(start, start + length);
    }
    case TAG_ARRAY: {
      const length = varint();
      const array = new Array(length);
      for (let i = 0; i < length; i++) createDataProperty(array, Array.prototype, i, value());
      return array;
    }
    case TAG_OBJECT: {
      const count = varint();
      const object = {};
      for (let i = 0; i < count; i++) {
        const name = propertyName();
        createDataProperty(object, Object.prototype, name, value());
      }
      return object;
    }
    case TAG_CLONE: {
      const length = varint();
      const clone = b.subarray(p, p + length);
      p += length;
      const key = value();
      if (key !== undefined) clone.indexaKey = key;
      return clone;
    }
    default:
      throw new DOMException(`unknown tag ${b[p - 1]} in a reply`, 'UnknownError');
  }
}

/** The result at `at` in a batch's buffer, in the shape the request's conversion takes. */
function decodeReply(buffer, at) {
  // A getter or proxy that the checks for setters meet may run code that decodes another.
  const outer = b;
  const outerAt = p;
  b = buffer;
  p = at;
  try {
    const kind = b[p++];
    const count = varint();
    if (kind === KIND_VALUE) return count === 0 ? undefined : value();
    if (kind === KIND_VALUES) {
      const values = new Array(count);
      for (let i = 0; i < count; i++) values[i] = value();
      return values;
    }
    const rows = kind === KIND_ROWS;
    const out = new Array(3 * count + (rows ? 1 : 0));
    let at = 0;
    if (rows) out[at++] = b[p++] === 1;
    else if (kind !== KIND_RECORDS) throw new DOMException(`unknown reply kind ${kind}`, 'UnknownError');
    for (let i = 0; i < count; i++) {
      out[at++] = value();
      out[at++] = value();
      out[at++] = value();
    }
    return rows && count === 0 ? null : out;
  } finally {
    b = outer;
    p = outerAt;
  }
}

module.exports = { decodeReply };
