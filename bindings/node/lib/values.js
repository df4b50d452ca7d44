'use strict';
// Structured clone of record values (HTML "StructuredSerializeForStorage").
//
// A value the engine's value model holds exactly (primitives, plain objects, dense arrays,
// Dates, ArrayBuffers, no shared or cyclic references) is stored as engine values, readable
// by every Indexa tool. Anything else structured clone carries (Maps, Sets, typed arrays,
// BigInts, RegExps, Errors, boxed primitives, sparse arrays, shared references, cycles …) is
// stored as V8's own serialization (`v8.serialize`, what `structuredClone` uses) beside a
// projection of the value: the projection carries what key paths can reach (own properties,
// Dates, binary data, arrays), so the engine computes keys and index keys as usual.

const v8 = require('node:v8');
const types = require('node:util').types;

const CLONE_FIELD = '\u0000v8';

function isPlainObject(o) {
  const proto = Object.getPrototypeOf(o);
  return proto === Object.prototype || proto === null;
}

/** True when `value` is held exactly by the engine's value model. */
function isPlain(value) {
  const seen = new Set();
  const stack = [value];
  let top = true;
  while (stack.length > 0) {
    const v = stack.pop();
    const t = typeof v;
    if (t === 'bigint' || t === 'symbol' || t === 'function') return false;
    if (v === null || t !== 'object') continue;
    if (seen.has(v)) return false;
    seen.add(v);
    if (types.isDate(v)) {
      if (Object.keys(v).length > 0) return false;
      continue;
    }
    if (types.isArrayBuffer(v)) continue;
    if (Array.isArray(v)) {
      if (Object.getPrototypeOf(v) !== Array.prototype) return false;
      const keys = Object.keys(v);
      if (keys.length !== v.length) return false;
      for (let i = 0; i < v.length; i++) stack.push(v[i]);
      top = false;
      continue;
    }
    if (types.isProxy(v) || !isPlainObject(v)) return false;
    for (const k of Object.keys(v)) {
      if (top && k === CLONE_FIELD) return false;
      stack.push(v[k]);
    }
    top = false;
  }
  return true;
}

/** What key paths can reach in `value`: own enumerable properties, Dates, binary data. */
function project(value, ancestors) {
  const t = typeof value;
  if (t === 'bigint' || t === 'symbol' || t === 'function') return undefined;
  if (value === null || t !== 'object') return value;
  if (types.isDate(value) || types.isArrayBuffer(value) || ArrayBuffer.isView(value)) return value;
  if (ancestors.has(value)) return undefined;
  ancestors.add(value);
  let out;
  if (Array.isArray(value)) {
    out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = project(value[i], ancestors);
  } else if (types.isMap(value) || types.isSet(value) || types.isRegExp(value)
    || types.isBoxedPrimitive(value) || types.isNativeError(value)) {
    out = {};
  } else {
    out = {};
    for (const k of Object.keys(value)) {
      if (k !== CLONE_FIELD) out[k] = project(value[k], ancestors);
    }
  }
  ancestors.delete(value);
  return out;
}

/**
 * Clones `value` for storage: `[engineValue, undefined]` or `[projection, v8Bytes]`.
 * Throws a `DataCloneError` DOMException for what structured clone rejects.
 */
function cloneForStorage(value) {
  if (isPlain(value)) return [value, undefined];
  let bytes;
  try {
    bytes = v8.serialize(value);
  } catch (e) {
    throw new DOMException(`the value cannot be cloned: ${e.message}`, 'DataCloneError');
  }
  return [project(value, new Set()), bytes];
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

function injectKey(value, keyPath, key) {
  const ids = keyPath.split('.');
  let v = value;
  for (let i = 0; i < ids.length - 1; i++) {
    if (!Object.prototype.hasOwnProperty.call(v, ids[i])) v[ids[i]] = {};
    v = v[ids[i]];
  }
  v[ids[ids.length - 1]] = key;
}

/**
 * A stored value as JavaScript: values stored with V8's serialization arrive as a Buffer
 * (with the generated key, when one was injected, as `indexaKey`).
 */
function revive(stored, keyPath) {
  if (!Buffer.isBuffer(stored)) return stored;
  const value = v8.deserialize(stored);
  if (stored.indexaKey !== undefined && typeof keyPath === 'string'
    && evaluateKeyPath(value, keyPath) === undefined) {
    injectKey(value, keyPath, stored.indexaKey);
  }
  return value;
}

module.exports = { cloneForStorage, revive, isPlain };
