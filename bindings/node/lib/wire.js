'use strict';
// Decodes the buffers in which the addon sends its replies, one per batch (src/wire.rs
// documents the layout): a `get`'s value, a `getAll`'s values, a `getAllRecords`' records, a
// cursor step's rows, a key, a count or an error, each in the shape the rest of the package
// takes from a reply (connection.js reads the op ids and lengths). Values
// are built as structured clone would build them: own data properties (no setter runs, a
// property named `__proto__` is an own property), dense arrays, Dates, ArrayBuffers; a value
// stored with V8's serialization comes as a Buffer of it, with the injected key as
// `indexaKey` (values.js `revive`).
//
// Objects with the same property names as recent ones (a store's records, most often) are made
// by shape: their values read first, then the object copied from a template with those names,
// in its final layout at once, and its values set (`shapedObject`).
//
// Values to store go the other way in the same form: values.js walks the value once with a
// `Writer` (its clone, or the clone's projection), and the addon reads the buffer
// (src/wire.rs `read_value`). When the walk meets what the engine's value model does not
// hold, it writes that part as held (an index in a list of JavaScript values) and a repeated
// object as shared (its ordinal among the objects written so far); `decodeCopy` makes the
// copy of the value from such bytes, for V8's serializer.

const types = require('node:util').types;

const KIND_VALUE = 0;
const KIND_VALUES = 1;
const KIND_RECORDS = 2;
const KIND_ROWS = 3;
const KIND_PLAIN = 4;
const KIND_ERROR = 5;

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
// Only in a walk's bytes, never sent to the addon: a JavaScript value kept as it is (an
// object among them counts as an object for TAG_SHARED), and a repeated object.
const TAG_HELD = 13;
const TAG_HELD_OBJECT = 14;
const TAG_SHARED = 15;

/** Longer ASCII strings are sliced out by Buffer's Latin-1 decoder; shorter ones built here. */
const SHORT_ASCII = 24;
/** Longer property names are not kept in `names`. */
const SHORT_NAME = 32;

// The buffer being decoded and the position in it.
let b = null;
let p = 0;
// While `decodeCopy` runs: the held values, and the objects made so far, by ordinal.
let held = null;
let copies = null;

const f64 = new Float64Array(1);
const f64Bytes = new Uint8Array(f64.buffer);

/** How many recent short ASCII property names are kept, so records reuse the same strings. */
const NAME_SLOTS = 1024;
const names = new Array(NAME_SLOTS).fill(null);
// The slot in `names` of the name `propertyName` returned last, or -1 when it is not kept.
let nameSlot = -1;

/**
 * Objects of up to this many properties, all with short ASCII names (up to SHORT_NAME
 * characters), may get a shape.
 */
const SHAPE_NAMES = 32;
/** A shape's `make` is made when this many objects in a row in its slot had its names. */
const MAKE_AT = 8;
// The shapes of recent objects, by their count and first name's slot (`shapeSlot`): an
// object's property names in order (`propertyNames`), how many objects in a row had them, and
// from the MAKE_AT'th on `make`, which makes such an object from its values at once
// (`shapedObject`).
const shapes = new Array(NAME_SLOTS).fill(null);
// False, and objects built property by property, once making a shape's `make` failed: the
// process allows no code made from strings.
let byShape = true;
// The values (or, while an object is built property by property, the names) of the objects
// being read, from `top` on free; those up to `high` may still hold the values of objects
// already made, until `decodeReply` ends. Its elements are its own from the start, so writing
// them consults no prototype.
const shapeValues = new Array(256).fill(undefined);
let top = 0;
let high = 0;

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
  nameSlot = -1;
  if (tag !== TAG_ASCII) return utf16(length);
  if (length > SHORT_NAME) return ascii(length);
  let h = length;
  for (let i = p; i < p + length; i++) h = (Math.imul(h, 31) + b[i]) | 0;
  const slot = h & (NAME_SLOTS - 1);
  nameSlot = slot;
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

/** The slot in `shapes` of objects of `count` properties whose first name is in `names[slot]`. */
function shapeSlot(slot, count) {
  return (slot + 31 * count) & (NAME_SLOTS - 1);
}

/** Room for `count` more entries in `shapeValues` from `top` on; the first one's index. */
function reserve(count) {
  const base = top;
  top += count;
  if (top > high) {
    high = top;
    while (shapeValues.length < top) shapeValues.push(undefined);
  }
  return base;
}

/**
 * A function that makes an object with the data properties `propertyNames`, in order, from the
 * values `values[at]`, `values[at + 1]`, …: a copy of a template object that has those
 * properties (`{ ...template }`, which defines each, as structured clone does, and makes the
 * object in its final layout at once), its properties then set by name (its own, so no setter
 * runs, and `__proto__` is a property like any other). Not an object literal: V8 may learn to
 * make a literal's objects in the old generation, which holds the records of a burst of reads
 * until a full collection (see BENCHMARKS.md, "Objects made by shape"). The template holds no
 * value of its own. Null when the process does not allow code made from strings.
 */
function shapeMaker(propertyNames) {
  const template = {};
  let sets = '';
  for (let i = 0; i < propertyNames.length; i++) {
    createDataProperty(template, Object.prototype, propertyNames[i], undefined);
    sets += `object[${JSON.stringify(propertyNames[i])}] = values[at + ${i}]; `;
  }
  const body = `return (values, at) => { const object = { ...template }; ${sets}return object; };`;
  try {
    return new Function('template', body)(template);
  } catch (e) {
    if (e instanceof EvalError) return null;
    throw e;
  }
}

/** `object` with its properties `from` … `count - 1` read (name, then value) and defined. */
function restOfObject(object, from, count) {
  for (let i = from; i < count; i++) {
    const name = propertyName();
    createDataProperty(object, Object.prototype, name, value());
  }
  return object;
}

/**
 * An object of the first `count` of `propertyNames` with the values in `shapeValues` from
 * `base` on, built property by property.
 */
function objectFromValues(propertyNames, base, count) {
  const object = {};
  for (let i = 0; i < count; i++) createDataProperty(object, Object.prototype, propertyNames[i], shapeValues[base + i]);
  return object;
}

/**
 * An object of `count` properties (1 … SHAPE_NAMES) whose tag and count were just read. When
 * the objects before it in its slot had the same names, its values are read into
 * `shapeValues` and the object made by that shape's `make` (made first when this is the
 * MAKE_AT'th such object in a row); otherwise it is built property by property, and its names
 * kept as its slot's shape when they can be one. From a name that differs from the shape's on,
 * it is built property by property; the slot keeps a shape whose `make` was made, else is
 * left empty for the next object's names.
 */
function shapedObject(count) {
  const first = propertyName();
  const slot = nameSlot < 0 ? -1 : shapeSlot(nameSlot, count);
  const shape = slot < 0 ? null : shapes[slot];
  if (shape === null || shape.propertyNames.length !== count || shape.propertyNames[0] !== first) {
    return objectByProperties(count, first, slot);
  }
  const base = reserve(count);
  shapeValues[base] = value();
  for (let i = 1; i < count; i++) {
    const name = propertyName();
    if (name !== shape.propertyNames[i]) {
      // Another object with the same first name and count: the names read so far, then the rest.
      const object = objectFromValues(shape.propertyNames, base, i);
      top = base;
      if (shape.make === null) shapes[slot] = null;
      createDataProperty(object, Object.prototype, name, value());
      return restOfObject(object, i + 1, count);
    }
    shapeValues[base + i] = value();
  }
  if (shape.make === null && ++shape.times === MAKE_AT) {
    shape.make = shapeMaker(shape.propertyNames);
    if (shape.make === null) byShape = false;
  }
  const object = shape.make === null
    ? objectFromValues(shape.propertyNames, base, count)
    : shape.make(shapeValues, base);
  top = base;
  return object;
}

/**
 * An object of `count` properties whose first name, `first`, was just read, built property by
 * property; its names become the shape in `slot` (when not -1) if they are all short ASCII
 * names. The names are kept in `shapeValues` while the object is read.
 */
function objectByProperties(count, first, slot) {
  const object = {};
  let keep = slot >= 0;
  const base = keep ? reserve(count) : 0;
  if (keep) shapeValues[base] = first;
  createDataProperty(object, Object.prototype, first, value());
  for (let i = 1; i < count; i++) {
    const name = propertyName();
    if (keep) {
      if (nameSlot < 0) keep = false;
      else shapeValues[base + i] = name;
    }
    createDataProperty(object, Object.prototype, name, value());
  }
  if (slot >= 0) {
    if (keep) shapes[slot] = { propertyNames: shapeValues.slice(base, base + count), times: 1, make: null };
    top = base;
  }
  return object;
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
    case TAG_DATE: return copied(new Date(float()));
    case TAG_BINARY: {
      const length = varint();
      const start = b.byteOffset + p;
      p += length;
      return copied(b.buffer.slice(start, start + length));
    }
    case TAG_ARRAY: {
      const length = varint();
      const array = copied(new Array(length));
      for (let i = 0; i < length; i++) createDataProperty(array, Array.prototype, i, value());
      return array;
    }
    case TAG_OBJECT: {
      const count = varint();
      // A copy numbers its objects as they are made, before their properties are read.
      if (copies === null && byShape && count > 0 && count <= SHAPE_NAMES) return shapedObject(count);
      return restOfObject(copied({}), 0, count);
    }
    case TAG_CLONE: {
      const length = varint();
      const clone = b.subarray(p, p + length);
      p += length;
      const key = value();
      if (key !== undefined) clone.indexaKey = key;
      return clone;
    }
    case TAG_HELD:
      if (held === null) break;
      return held[varint()];
    case TAG_HELD_OBJECT:
      if (held === null) break;
      return copied(held[varint()]);
    case TAG_SHARED:
      if (held === null) break;
      return copies[varint()];
    default:
      break;
  }
  throw new DOMException(`unknown tag ${b[p - 1]} in a reply`, 'UnknownError');
}

/** `object`, counted among the objects of the copy that `decodeCopy` makes. */
function copied(object) {
  if (copies !== null) copies.push(object);
  return object;
}

/** The result at `at` in a batch's buffer, in the shape the request's conversion takes. */
function decodeReply(buffer, at) {
  // A getter or proxy that the checks for setters meet may run code that decodes another.
  const outer = b;
  const outerAt = p;
  const outerHeld = held;
  const outerCopies = copies;
  const outerTop = top;
  b = buffer;
  p = at;
  held = null;
  copies = null;
  try {
    const kind = b[p++];
    if (kind === KIND_PLAIN) return value();
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
    held = outerHeld;
    copies = outerCopies;
    // The values of the objects made are theirs now: not kept alive here.
    for (let i = outerTop; i < high; i++) shapeValues[i] = undefined;
    top = outerTop;
    high = outerTop;
  }
}

/** The error's name and message when the reply at `at` is an error, else null. */
function replyError(buffer, at) {
  if (buffer[at] !== KIND_ERROR) return null;
  const outer = b;
  const outerAt = p;
  b = buffer;
  p = at + 1;
  try {
    const name = value();
    return [name, value()];
  } finally {
    b = outer;
    p = outerAt;
  }
}

/**
 * The copy of the value a walk wrote as `bytes` (from a `Writer`'s `bytes()`), with `heldValues`
 * for its held parts: plain objects and arrays made afresh with their data properties, held
 * parts as they are, each shared object the same copy wherever it recurs.
 */
function decodeCopy(bytes, heldValues) {
  const outer = b;
  const outerAt = p;
  const outerHeld = held;
  const outerCopies = copies;
  b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  p = 0;
  held = heldValues;
  copies = [];
  try {
    return value();
  } finally {
    b = outer;
    p = outerAt;
    held = outerHeld;
    copies = outerCopies;
  }
}

/** Reads a Date's time value whatever its own or prototype's properties say. */
const timeValue = Date.prototype.getTime;

/** Up to this length a string is written unit by unit; longer ones by Buffer's encoders. */
const SHORT_WRITE = 64;
const NOT_ASCII = /[^\x00-\x7f]/;
/** The size of the buffers a `Writer` writes into and hands out views of. */
const SLAB = 64 * 1024;

/**
 * Writes values in the addon's form. It writes into a buffer of `SLAB` bytes (a larger one
 * when a value needs it) and hands out what was written as views of it (`bytes()`), so a
 * value costs no copy; each view keeps its buffer alive.
 */
class Writer {
  constructor() {
    this.buf = Buffer.allocUnsafeSlow(SLAB);
    this.start = 0;
    this.at = 0;
  }

  /** Drops what was written since the last `bytes()`. */
  reset() { this.at = this.start; }

  /** Room for `n` more bytes. */
  room(n) {
    if (this.at + n <= this.buf.length) return;
    const used = this.at - this.start;
    const grown = Buffer.allocUnsafeSlow(Math.max(SLAB, 2 * (used + n)));
    this.buf.copy(grown, 0, this.start, this.at);
    this.buf = grown;
    this.start = 0;
    this.at = used;
  }

  tag(t) {
    this.room(1);
    this.buf[this.at++] = t;
  }

  /** `v` when it is a string, number, boolean, `undefined` or `null`; false for anything else. */
  primitive(v) {
    switch (typeof v) {
      case 'string': this.string(v); return true;
      case 'number': this.number(v); return true;
      case 'boolean': this.tag(v ? TAG_TRUE : TAG_FALSE); return true;
      case 'undefined': this.tag(TAG_UNDEFINED); return true;
      default:
        if (v !== null) return false;
        this.tag(TAG_NULL);
        return true;
    }
  }

  /** `t` and the varint `n` (room for them already made). */
  header(t, n) {
    const buf = this.buf;
    let at = this.at;
    buf[at++] = t;
    while (n >= 0x80) {
      buf[at++] = (n & 0x7f) | 0x80;
      n = Math.floor(n / 0x80);
    }
    buf[at++] = n;
    this.at = at;
  }

  number(n) {
    this.room(10);
    if ((n | 0) === n && !(n === 0 && 1 / n < 0)) this.header(TAG_INT, ((n << 1) ^ (n >> 31)) >>> 0);
    else this.double(TAG_NUMBER, n);
  }

  date(ms) {
    this.room(9);
    this.double(TAG_DATE, ms);
  }

  /** `t` and the 8 bytes of `n` (room made already). */
  double(t, n) {
    const buf = this.buf;
    const at = this.at;
    buf[at] = t;
    f64[0] = n;
    for (let i = 0; i < 8; i++) buf[at + 1 + i] = f64Bytes[i];
    this.at = at + 9;
  }

  /** A string: ASCII one byte per unit, anything else as UTF-16 code units (lone surrogates kept). */
  string(s) {
    const n = s.length;
    this.room(6 + 2 * n);
    const start = this.at;
    this.header(TAG_ASCII, n);
    const buf = this.buf;
    const at = this.at;
    if (n <= SHORT_WRITE) {
      let i = 0;
      for (; i < n; i++) {
        const u = s.charCodeAt(i);
        if (u >= 0x80) break;
        buf[at + i] = u;
      }
      if (i === n) {
        this.at = at + n;
        return;
      }
    } else if (!NOT_ASCII.test(s)) {
      this.at = at + buf.write(s, at, n, 'latin1');
      return;
    }
    buf[start] = TAG_UTF16;
    this.at = at + buf.write(s, at, 2 * n, 'utf16le');
  }

  /** The bytes of an ArrayBuffer or a view of one (a detached one has none). */
  binary(source) {
    const n = source.byteLength;
    this.room(6 + n);
    this.header(TAG_BINARY, n);
    if (n === 0) return;
    const bytes = ArrayBuffer.isView(source)
      ? new Uint8Array(source.buffer, source.byteOffset, n)
      : new Uint8Array(source);
    this.buf.set(bytes, this.at);
    this.at += n;
  }

  array(length) {
    this.room(6);
    this.header(TAG_ARRAY, length);
  }

  /** A key as the addon makes them (IDBKeyRange.js `key`): a number, string, Date, ArrayBuffer or array of keys. */
  key(k) {
    if (typeof k === 'number') {
      this.number(k);
    } else if (typeof k === 'string') {
      this.string(k);
    } else if (Array.isArray(k)) {
      this.array(k.length);
      for (let i = 0; i < k.length; i++) this.key(k[i]);
    } else if (types.isDate(k)) {
      this.date(timeValue.call(k));
    } else {
      this.binary(k);
    }
  }

  object(count) {
    this.room(6);
    this.header(TAG_OBJECT, count);
  }

  /** The `i`th held value; `object`: it counts as an object for `shared`. */
  held(i, object) {
    this.room(6);
    this.header(object ? TAG_HELD_OBJECT : TAG_HELD, i);
  }

  /** The object of ordinal `i` again. */
  shared(i) {
    this.room(6);
    this.header(TAG_SHARED, i);
  }

  /** What was written since the last `bytes()` (or `reset()`), as a view. */
  bytes() {
    const out = new Uint8Array(this.buf.buffer, this.buf.byteOffset + this.start, this.at - this.start);
    this.start = this.at;
    return out;
  }
}

module.exports = { decodeReply, replyError, decodeCopy, Writer, timeValue };
