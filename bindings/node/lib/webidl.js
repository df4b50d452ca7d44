'use strict';
// The WebIDL shape of an interface (WebIDL §3.7 "Interface objects", §3.7.6 "Attributes",
// §3.7.7 "Operations"): attributes and operations are enumerable members of the interface
// prototype object (static operations of the interface object); an operation's `length` is
// its number of required arguments, and a call with fewer throws a TypeError before anything
// else happens; the class string is the interface's name (`Symbol.toStringTag`). Also the
// [EnforceRange] conversion of the interfaces' integer arguments.

/**
 * Gives `cls` the WebIDL shape of the interface `name`. `operations` and `statics` map each
 * operation name to its number of required arguments (the IDL's non-optional ones). Members
 * whose name starts with `_` are the package's own helpers and stay non-enumerable.
 */
function defineInterface(cls, name, { operations = {}, statics = {}, promises = [] } = {}) {
  defineMembers(cls.prototype, name, operations, cls.prototype, promises);
  defineMembers(cls, name, statics, null, []);
  Object.defineProperty(cls.prototype, Symbol.toStringTag, { value: name, configurable: true });
}

function defineMembers(target, interfaceName, operations, brand, promises) {
  for (const key of Object.getOwnPropertyNames(target)) {
    if (key === 'constructor' || key === 'prototype' || (typeof target === 'function' && (key === 'length' || key === 'name')) || key.startsWith('_')) continue;
    const desc = Object.getOwnPropertyDescriptor(target, key);
    if (typeof desc.value === 'function') {
      if (!(key in operations)) continue;
      desc.value = operation(desc.value, operations[key], `${interfaceName}.${key}`, brand, promises.includes(key));
    }
    desc.enumerable = true;
    Object.defineProperty(target, key, desc);
  }
}

/**
 * `fn` as a WebIDL operation (§3.7.7 "Operations"): for a regular operation, `this` must
 * implement the interface (`brand` in its prototype chain), else a TypeError; then fewer than
 * `required` arguments is a TypeError. A promise-returning operation (`promise`) gives those
 * TypeErrors as a rejected promise.
 */
function operation(fn, required, where, brand, promise) {
  const check = (self, count) => {
    if (brand !== null && !brand.isPrototypeOf(self)) {
      return new TypeError(`${where}: 'this' does not implement the interface`);
    }
    if (count < required) {
      return new TypeError(`${where}: ${required} argument${required > 1 ? 's' : ''} required, but only ${count} present`);
    }
    return null;
  };
  const wrapped = {
    [fn.name](...args) {
      const error = check(this, args.length);
      if (error !== null) {
        if (promise) return Promise.reject(error);
        throw error;
      }
      return fn.apply(this, args);
    },
  }[fn.name];
  Object.defineProperty(wrapped, 'length', { value: required, configurable: true });
  return wrapped;
}

/**
 * WebIDL's [EnforceRange] conversion to an unsigned integer type whose largest value is `max`
 * (§3.2.4 "Integer types"): a value that is not finite or out of range is a TypeError naming
 * `what`; others are truncated.
 */
function enforceRangeUnsigned(value, max, what) {
  const n = Number(value);
  if (!Number.isFinite(n) || n < 0 || n > max) throw new TypeError(`${what} is out of range`);
  return Math.trunc(n);
}

module.exports = { defineInterface, enforceRangeUnsigned };
