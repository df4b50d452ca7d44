'use strict';
// Errors from the native layer carry the spec's name as a message prefix ("DataError: …").

/** The DOMException (or TypeError) a native error names; other errors pass through. */
function rethrow(e) {
  const m = e && typeof e.message === 'string' ? /^([A-Za-z]+Error): ([\s\S]*)$/.exec(e.message) : null;
  if (!m) return e;
  return named(m[1], m[2]);
}

/** An error of the spec's name: a TypeError, or a DOMException of that name. */
function named(name, message) {
  if (name === 'TypeError') return new TypeError(message);
  return new DOMException(message, name);
}

module.exports = { rethrow, named };
