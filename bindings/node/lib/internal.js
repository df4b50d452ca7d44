'use strict';
// What the interface modules share: the key of every object's internal slots, and the
// constructor of an interface the IDL gives none.

/** The key under which each object of this package keeps its internal state. */
const internal = Symbol('internal');

/** The constructor of an interface without one in the IDL: `new` throws a TypeError. */
function illegal() {
  throw new TypeError('Illegal constructor');
}

module.exports = { internal, illegal };
