'use strict';
// Key paths as the interfaces take and give them (IndexedDB 3.0, "Key path construct"): the
// keyPath argument converted to a string or an array of strings, checked to be valid, and
// copied for the [SameObject] keyPath attributes.

const native = require('./native.js');
const { rethrow } = require('./errors.js');

/** The keyPath argument as a key path: null, a string, or an array of strings. */
function keyPathOf(kp) {
  if (kp === null || kp === undefined) return null;
  if (Array.isArray(kp)) return kp.map(String);
  return String(kp);
}

/** A copy of a key path, so an array key path given out is never the stored one. */
function copyKeyPath(kp) {
  return Array.isArray(kp) ? kp.slice() : kp;
}

/** Throws SyntaxError unless `kp` is a valid key path (the engine's check). */
function validateKeyPath(kp) {
  try {
    native.validateKeyPath(kp);
  } catch (e) {
    throw rethrow(e);
  }
}

module.exports = { keyPathOf, copyKeyPath, validateKeyPath };
