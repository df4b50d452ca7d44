'use strict';
// Structured clone of record values (HTML "StructuredSerializeForStorage").
//
// The value is read once, as structured clone reads it (getters run once), and written as
// it is read in the form the addon takes (wire.js). A value the engine's value model holds
// exactly (primitives, plain objects, dense arrays, Dates, ArrayBuffers, no shared or cyclic
// references) is stored as engine values, readable by every Indexa tool. Anything else
// structured clone carries (Maps, Sets, typed arrays, BigInts, RegExps, Errors, boxed
// primitives, sparse arrays, shared references, cycles, Blobs and Files …) is copied from
// what was read, serialized with V8's value serializer (what `structuredClone` uses, without
// Node's Buffer special case, so a Buffer comes back as a plain Uint8Array) and deserialized
// once: key paths are evaluated on that clone, never on the live value. It is stored as its serialization beside a projection of
// the clone: the projection carries what key paths can reach (own properties, Dates, binary
// data, arrays, a Blob's size and type, a File's name and lastModified), so the engine
// computes keys and index keys as usual.
//
// The serialization starts with a format byte:
// - FORMAT_V8: V8's serialization follows;
// - FORMAT_BLOBS: a little-endian u32 length, that many bytes of JSON describing the Blobs
//   (`[{size, type, name?, lastModified?}]`), their bytes one after the other, then V8's
//   serialization, in which each Blob or File is a host object holding its index;
// - 0xFF (V8's own version tag): written by `v8.serialize` before these formats existed, read
//   with `v8.deserialize`.

const v8 = require('node:v8');
const types = require('node:util').types;
const { Writer, decodeCopy, timeValue } = require('./wire.js');

const CLONE_FIELD = '\u0000v8';
const FORMAT_V8 = 0x01;
const FORMAT_BLOBS = 0x02;

function dataCloneError(message) {
  return new DOMException(`the value cannot be cloned: ${message}`, 'DataCloneError');
}

/** V8's serializer; a Blob or File is written as its index in `blobs`, other host objects fail. */
class StorageSerializer extends v8.Serializer {
  constructor(blobs) {
    super();
    this.blobs = blobs;
  }

  _writeHostObject(object) {
    if (!(object instanceof Blob)) throw dataCloneError(`${Object.prototype.toString.call(object)} is a platform object`);
    this.writeUint32(this.blobs.length);
    this.blobs.push(object);
  }

  _getDataCloneError(message) {
    return dataCloneError(message);
  }
}

class StorageDeserializer extends v8.Deserializer {
  constructor(bytes, blobs) {
    super(bytes);
    this.blobs = blobs;
  }

  _readHostObject() {
    const blob = this.blobs[this.readUint32()];
    if (blob === undefined) throw new DOMException('a stored value refers to a Blob it does not hold', 'UnknownError');
    return blob;
  }
}

function serialize(value, blobs) {
  const s = new StorageSerializer(blobs);
  s.writeHeader();
  s.writeValue(value);
  return s.releaseBuffer();
}

function deserialize(bytes, blobs) {
  const d = new StorageDeserializer(bytes, blobs);
  d.readHeader();
  return d.readValue();
}

function isPlainObject(o) {
  const proto = Object.getPrototypeOf(o);
  return proto === Object.prototype || proto === null;
}

/**
 * Writes `value` to `w` reading each property once, as structured clone does (`walk`:
 * `{ seen, held, plain, cycle }`, `top` for the value itself): primitives, plain objects,
 * dense arrays, Dates without own properties and ArrayBuffers in the engine's form;
 * everything else as held (kept as it is for V8's serializer) and each object met again as
 * shared. `walk.plain` ends false when the value is not held exactly by the engine's value
 * model (something held, a shared reference, or a top-level property named like
 * `CLONE_FIELD`), `walk.cycle` true when a plain object or array refers back to one of its
 * ancestors (a copy then cannot stand for the value). `walk.seen` maps each object met to its
 * ordinal (its complement while its members are being written).
 */
function writeClone(w, value, walk, top) {
  if (typeof value !== 'object' || value === null) {
    if (!w.primitive(value)) hold(w, value, walk, false);
    return;
  }
  const seen = walk.seen;
  const known = seen.get(value);
  if (known !== undefined) {
    walk.plain = false;
    if (known < 0) walk.cycle = true;
    w.shared(known < 0 ? ~known : known);
    return;
  }
  const ordinal = seen.size;
  if (types.isDate(value)) {
    seen.set(value, ordinal);
    if (Object.keys(value).length > 0) hold(w, value, walk, true);
    else w.date(timeValue.call(value));
  } else if (types.isArrayBuffer(value)) {
    seen.set(value, ordinal);
    w.binary(value);
  } else if (Array.isArray(value)) {
    if (types.isProxy(value) || Object.getPrototypeOf(value) !== Array.prototype
      || Object.keys(value).length !== value.length) {
      seen.set(value, ordinal);
      hold(w, value, walk, true);
    } else {
      seen.set(value, ~ordinal);
      const length = value.length;
      w.array(length);
      for (let i = 0; i < length; i++) writeClone(w, value[i], walk, false);
      seen.set(value, ordinal);
    }
  } else if (types.isProxy(value) || !isPlainObject(value)) {
    if (value instanceof Event || value instanceof EventTarget) {
      throw dataCloneError(`${Object.prototype.toString.call(value)} is a platform object`);
    }
    seen.set(value, ordinal);
    hold(w, value, walk, true);
  } else {
    seen.set(value, ~ordinal);
    const keys = Object.keys(value);
    w.object(keys.length);
    for (let i = 0; i < keys.length; i++) {
      const name = keys[i];
      if (top && name === CLONE_FIELD) walk.plain = false;
      w.string(name);
      writeClone(w, value[name], walk, false);
    }
    seen.set(value, ordinal);
  }
}

/** Writes `value` as held: the engine's value model does not hold it. */
function hold(w, value, walk, object) {
  walk.plain = false;
  w.held(walk.held.push(value) - 1, object);
}

/**
 * Writes a projection (`project`'s result: primitives, Dates, binary data, dense arrays and
 * objects of data properties) to `w`; typed arrays and DataViews as their bytes.
 */
function writeProjection(w, value) {
  if (w.primitive(value)) return;
  if (types.isDate(value)) {
    w.date(timeValue.call(value));
  } else if (types.isArrayBuffer(value) || ArrayBuffer.isView(value)) {
    w.binary(value);
  } else if (Array.isArray(value)) {
    w.array(value.length);
    for (let i = 0; i < value.length; i++) writeProjection(w, value[i]);
  } else {
    const keys = Object.keys(value);
    w.object(keys.length);
    for (const name of keys) {
      w.string(name);
      writeProjection(w, value[name]);
    }
  }
}

/**
 * What key paths can reach in a clone: own enumerable properties, Dates, binary data, and
 * the attributes the spec lets key paths name on a Blob (size, type) and a File (also name,
 * lastModified).
 */
function project(value, ancestors) {
  const t = typeof value;
  if (t === 'bigint' || t === 'symbol' || t === 'function') return undefined;
  if (value === null || t !== 'object') return value;
  if (types.isDate(value) || types.isArrayBuffer(value) || ArrayBuffer.isView(value)) return value;
  if (value instanceof Blob) {
    const out = { size: value.size, type: value.type };
    if (value instanceof File) {
      out.name = value.name;
      out.lastModified = value.lastModified;
    }
    return out;
  }
  if (ancestors.has(value)) return undefined;
  ancestors.add(value);
  let out;
  if (Array.isArray(value)) {
    // Own elements only: a hole becomes undefined (reading it would run prototype getters).
    out = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      defineData(out, i, Object.prototype.hasOwnProperty.call(value, i) ? project(value[i], ancestors) : undefined);
    }
  } else if (types.isMap(value) || types.isSet(value) || types.isRegExp(value)
    || types.isBoxedPrimitive(value) || types.isNativeError(value)) {
    out = {};
  } else {
    out = {};
    for (const k of Object.keys(value)) {
      if (k !== CLONE_FIELD) defineData(out, k, project(value[k], ancestors));
    }
  }
  ancestors.delete(value);
  return out;
}

/** The writer of `cloneForStorage`; a clone made while one is being made uses its own. */
const writer = new Writer();
let writerInUse = false;

/**
 * Clones `value` for storage (structured clone, then the storage form):
 * `{ value, bytes, blobs }` — `value` the engine value as the addon reads it (wire.js: the
 * clone itself, or the projection when `bytes` holds the serialization), `blobs` the Blobs
 * and Files in the value, whose bytes `withBlobBytes` adds to `bytes` once read. Throws a
 * `DataCloneError` DOMException for what structured clone rejects (functions, symbols,
 * WeakMaps, Events, other platform objects).
 */
function cloneForStorage(value) {
  const own = !writerInUse;
  const w = own ? writer : new Writer();
  writerInUse = true;
  try {
    w.reset();
    const walk = { seen: new Map(), held: [], plain: true, cycle: false };
    writeClone(w, value, walk, true);
    const blobs = [];
    if (walk.plain) return { value: w.bytes(), bytes: undefined, blobs };
    // A cyclic value is serialized as it is: its plain objects' getters then run a second time.
    const copy = walk.cycle ? value : decodeCopy(w.bytes(), walk.held);
    const v8Bytes = serialize(copy, blobs);
    const clone = deserialize(v8Bytes, blobs);
    const bytes = blobs.length === 0 ? Buffer.concat([Buffer.of(FORMAT_V8), v8Bytes]) : v8Bytes;
    w.reset();
    writeProjection(w, project(clone, new Set()));
    return { value: w.bytes(), bytes, blobs };
  } finally {
    if (own) writerInUse = false;
  }
}

/** The storage bytes of a clone holding Blobs, given each Blob's bytes (in `blobs` order). */
function withBlobBytes(v8Bytes, blobs, contents) {
  const described = blobs.map((b, i) => (b instanceof File
    ? { size: contents[i].byteLength, type: b.type, name: b.name, lastModified: b.lastModified }
    : { size: contents[i].byteLength, type: b.type }));
  const header = Buffer.from(JSON.stringify(described), 'utf8');
  const length = Buffer.alloc(4);
  length.writeUInt32LE(header.length);
  return Buffer.concat([Buffer.of(FORMAT_BLOBS), length, header, ...contents.map((c) => new Uint8Array(c)), v8Bytes]);
}

/** Reads the FORMAT_BLOBS form: the Blobs and Files, and where V8's serialization starts. */
function readBlobs(stored) {
  const headerLength = stored.readUInt32LE(1);
  let at = 5 + headerLength;
  const described = JSON.parse(stored.toString('utf8', 5, at));
  const blobs = described.map((d) => {
    const bytes = stored.subarray(at, at + d.size);
    at += d.size;
    return d.name === undefined
      ? new Blob([bytes], { type: d.type })
      : new File([bytes], d.name, { type: d.type, lastModified: d.lastModified });
  });
  return { blobs, at };
}

function evaluateKeyPath(value, keyPath) {
  if (keyPath === '') return value;
  let v = value;
  for (const id of keyPath.split('.')) {
    if (v === null || typeof v !== 'object' || !Object.prototype.hasOwnProperty.call(v, id)) {
      if (typeof v === 'string' && id === 'length') { v = v.length; continue; }
      return undefined;
    }
    v = v[id];
  }
  return v;
}

function defineData(object, name, value) {
  Object.defineProperty(object, name, { value, writable: true, enumerable: true, configurable: true });
}

/** Injects a generated key, defining properties (CreateDataProperty: no setter runs). */
function injectKey(value, keyPath, key) {
  const ids = keyPath.split('.');
  let v = value;
  for (let i = 0; i < ids.length - 1; i++) {
    if (!Object.prototype.hasOwnProperty.call(v, ids[i])) defineData(v, ids[i], {});
    v = v[ids[i]];
  }
  defineData(v, ids[ids.length - 1], key);
}

/**
 * A stored value as JavaScript: values stored with a serialization arrive as a Buffer (with
 * the generated key, when one was injected, as `indexaKey`).
 */
function revive(stored, keyPath) {
  if (!Buffer.isBuffer(stored)) return stored;
  let value;
  if (stored[0] === FORMAT_V8) {
    value = deserialize(stored.subarray(1), []);
  } else if (stored[0] === FORMAT_BLOBS) {
    const { blobs, at } = readBlobs(stored);
    value = deserialize(stored.subarray(at), blobs);
  } else {
    value = v8.deserialize(stored);
  }
  if (stored.indexaKey !== undefined && typeof keyPath === 'string'
    && evaluateKeyPath(value, keyPath) === undefined) {
    injectKey(value, keyPath, stored.indexaKey);
  }
  return value;
}

module.exports = { cloneForStorage, withBlobBytes, revive };
