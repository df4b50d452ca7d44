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
  if (length > 24) {
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
  if (tag !== 6) return utf16(length);
  if (length > 32) return ascii(length);
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
    case 0: return undefined;
    case 1: return null;
    case 2: return false;
    case 3: return true;
    case 4: return float();
    case 5: {
      const z = varint();
      return (z >>> 1) ^ -(z & 1);
    }
    case 6: return ascii(varint());
    case 7: return utf16(varint());
    case 8: return new Date(float());
    case 9: {
      const length = varint();
      const start = b.byteOffset + p;
      p += length;
      return b.buffer.slice(start, start + length);
    }
    case 10: {
      const length = varint();
      const array = new Array(length);
      for (let i = 0; i < length; i++) createDataProperty(array, Array.prototype, i, value());
      return array;
    }
    case 11: {
      const count = varint();
      const object = {};
      for (let i = 0; i < count; i++) {
        const name = propertyName();
        createDataProperty(object, Object.prototype, name, value());
      }
      return object;
    }
    case 12: {
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
