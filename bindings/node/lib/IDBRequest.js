'use strict';
// IDBRequest and IDBOpenDBRequest (IndexedDB 3.0, "The IDBRequest interface"): a request's
// state, result or error, source and transaction; its events are fired by the code that
// settles it.

const { defineEventTarget, initEventTarget, defineHandlers } = require('./events.js');
const { defineInterface } = require('./webidl.js');
const { internal, illegal } = require('./internal.js');

class IDBRequest extends EventTarget {
  constructor() { illegal(); }
  get result() {
    if (this[internal].readyState !== 'done') throw new DOMException('the request is pending', 'InvalidStateError');
    return this[internal].result;
  }
  get error() {
    if (this[internal].readyState !== 'done') throw new DOMException('the request is pending', 'InvalidStateError');
    return this[internal].error;
  }
  get source() { return this[internal].source; }
  get transaction() { return this[internal].transaction; }
  get readyState() { return this[internal].readyState; }
}
defineEventTarget(IDBRequest);
defineHandlers(IDBRequest, ['success', 'error']);
defineInterface(IDBRequest, 'IDBRequest');

class IDBOpenDBRequest extends IDBRequest {}
defineHandlers(IDBOpenDBRequest, ['blocked', 'upgradeneeded']);
defineInterface(IDBOpenDBRequest, 'IDBOpenDBRequest');

/**
 * A new request of interface `cls`. Its internal state also carries what its reply needs
 * (requests.js): the request itself, the conversion of its result, and the function that
 * receives the reply.
 */
function newRequest(cls, source, transaction) {
  const r = Object.create(cls.prototype);
  initEventTarget(r);
  r[internal] = {
    readyState: 'pending', result: undefined, error: null, source, transaction,
    request: r, convert: undefined, reply: null,
  };
  return r;
}

module.exports = { IDBRequest, IDBOpenDBRequest, newRequest };
