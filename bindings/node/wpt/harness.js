'use strict';
// The testharness.js API of the W3C web-platform-tests, with its semantics, for one test
// file in one Node.js process: `install(globalThis, options)` defines test, async_test,
// promise_test, the step functions, the assert_* functions, EventWatcher, setup/done,
// step_timeout and the completion callbacks as globals; the harness reports every subtest's
// status and the file's own status (OK, ERROR, TIMEOUT) to `options.report` when it completes.
//
// Semantics kept from testharness.js: a step that throws fails its test and the exception is
// not rethrown; steps of a finished test do not run; promise tests run one after another; an
// uncaught exception or unhandled rejection while tests run is a harness error unless
// `setup({ allow_uncaught_exception: true })`; the harness times out after `timeout` ms,
// leaving unfinished tests TIMEOUT; `assert_throws_dom` requires an instance of the global
// DOMException of the expected name and legacy code.

const STATUS = ['PASS', 'FAIL', 'TIMEOUT', 'NOTRUN'];
const PASS = 0;
const FAIL = 1;
const TIMEOUT = 2;
const NOTRUN = 3;

// A test's phases, in order.
const INITIAL = 0;
const STARTED = 1;
const HAS_RESULT = 2;
const CLEANING = 3;
const COMPLETE = 4;

class AssertionError extends Error {
  get name() { return 'AssertionError'; }
}

// ---- format_value ----

const CHAR_ESCAPES = { '\\': '\\\\', '"': '\\"', '\0': '\\0', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\v': '\\v' };

/** A readable rendering of any value, as testharness.js gives in test names and messages. */
function formatValue(val, seen = []) {
  if (typeof val === 'object' && val !== null) {
    if (seen.includes(val)) return '[...]';
    seen = seen.concat([val]);
  }
  if (Array.isArray(val)) return `[${val.map((x) => formatValue(x, seen)).join(', ')}]`;
  switch (typeof val) {
    case 'string': {
      let out = '';
      for (const ch of val) {
        const code = ch.codePointAt(0);
        if (CHAR_ESCAPES[ch]) out += CHAR_ESCAPES[ch];
        else if (code < 0x20 || (code >= 0xd800 && code <= 0xdfff)) out += `\\u${code.toString(16).padStart(4, '0').toUpperCase()}`;
        else out += ch;
      }
      return `"${out}"`;
    }
    case 'boolean':
    case 'undefined':
      return String(val);
    case 'number':
      return Object.is(val, -0) ? '-0' : String(val);
    case 'bigint':
      return `${val}n`;
    case 'symbol':
      return val.toString();
    case 'function':
      return `function "${val.name}"`;
    case 'object': {
      if (val === null) return 'null';
      try {
        return String(val);
      } catch (e) {
        return `[${Object.prototype.toString.call(val).slice(8, -1)}]`;
      }
    }
    default:
      return String(val);
  }
}

/** `template` with each `${name}` replaced by `formatValue(substitutions[name])`. */
function substitute(template, substitutions) {
  return template.replace(/\$\{(\w+)\}/g, (_, name) => formatValue(substitutions[name]));
}

/** Fails with AssertionError unless `expected_true`; the message names the assertion. */
function assert(expectedTrue, functionName, description, template, substitutions) {
  if (expectedTrue !== true) {
    const prefix = description ? `${functionName}: ${description} ` : `${functionName}: `;
    throw new AssertionError(prefix + substitute(template, substitutions || {}));
  }
}

function sameValue(x, y) {
  if (typeof x === 'number' && typeof y === 'number') return Object.is(x, y);
  return x === y;
}

// ---- the assertions ----

function assert_true(actual, description) {
  assert(actual === true, 'assert_true', description, 'expected true got ${actual}', { actual });
}

function assert_false(actual, description) {
  assert(actual === false, 'assert_false', description, 'expected false got ${actual}', { actual });
}

function assert_equals(actual, expected, description) {
  if (typeof actual !== typeof expected) {
    assert(false, 'assert_equals', description, 'expected (' + typeof expected + ') ${expected} but got (' + typeof actual + ') ${actual}', { expected, actual });
  }
  assert(sameValue(actual, expected), 'assert_equals', description, 'expected ${expected} but got ${actual}', { expected, actual });
}

function assert_not_equals(actual, expected, description) {
  assert(!sameValue(actual, expected), 'assert_not_equals', description, 'got disallowed value ${actual}', { actual });
}

function assert_in_array(actual, expected, description) {
  assert(expected.indexOf(actual) !== -1, 'assert_in_array', description, 'value ${actual} not in array ${expected}', { actual, expected });
}

function assert_array_equals(actual, expected, description) {
  assert(typeof actual === 'object' && actual !== null && 'length' in actual, 'assert_array_equals', description,
    'value is ${actual}, expected array', { actual });
  assert(actual.length === expected.length, 'assert_array_equals', description,
    'lengths differ, expected array ${expected} length ${el}, got ${actual} length ${al}',
    { expected, actual, el: expected.length, al: actual.length });
  for (let i = 0; i < actual.length; i++) {
    assert(Object.prototype.hasOwnProperty.call(actual, i) === Object.prototype.hasOwnProperty.call(expected, i),
      'assert_array_equals', description, 'expected property ${i} to be ${e} but was ${a} (expected array ${expected} got ${actual})',
      { i, e: Object.prototype.hasOwnProperty.call(expected, i) ? 'present' : 'missing', a: Object.prototype.hasOwnProperty.call(actual, i) ? 'present' : 'missing', expected, actual });
    assert(sameValue(expected[i], actual[i]), 'assert_array_equals', description,
      'expected property ${i} to be ${e} but got ${a} (expected array ${expected} got ${actual})',
      { i, e: expected[i], a: actual[i], expected, actual });
  }
}

function assert_object_equals(actual, expected, description) {
  assert(typeof actual === 'object' && actual !== null, 'assert_object_equals', description, 'value is ${actual}, expected object', { actual });
  const check = (a, e, stack) => {
    for (const p of Object.keys(a)) {
      assert(Object.prototype.hasOwnProperty.call(e, p), 'assert_object_equals', description, 'unexpected property ${p}', { p });
      if (typeof a[p] === 'object' && a[p] !== null) {
        if (!stack.includes(a[p])) check(a[p], e[p], stack.concat([a[p]]));
      } else {
        assert(sameValue(a[p], e[p]), 'assert_object_equals', description, 'property ${p} expected ${e} got ${a}', { p, e: e[p], a: a[p] });
      }
    }
    for (const p of Object.keys(e)) {
      assert(Object.prototype.hasOwnProperty.call(a, p), 'assert_object_equals', description, 'expected property ${p} missing', { p });
    }
  };
  check(actual, expected, [actual]);
}

function assert_regexp_match(actual, expected, description) {
  assert(expected.test(actual), 'assert_regexp_match', description, 'expected ${expected} but got ${actual}', { expected, actual });
}

function assert_class_string(object, className, description) {
  const actual = Object.prototype.toString.call(object);
  const expected = `[object ${className}]`;
  assert(actual === expected, 'assert_class_string', description, 'expected ${expected} but got ${actual}', { expected, actual });
}

function assert_own_property(object, name, description) {
  assert(Object.prototype.hasOwnProperty.call(object, name), 'assert_own_property', description, 'expected property ${name} missing', { name });
}

/** The property is on the prototype chain but not the object itself. */
function inherited(functionName) {
  return (object, name, description) => {
    assert(typeof object === 'object' || typeof object === 'function', functionName, description, 'provided value is not an object', {});
    assert('hasOwnProperty' in object, functionName, description, 'provided value is an object but has no hasOwnProperty method', {});
    assert(!Object.prototype.hasOwnProperty.call(object, name), functionName, description, 'property ${name} found on object expected in prototype chain', { name });
    assert(name in object, functionName, description, 'property ${name} not found in prototype chain', { name });
  };
}
const assert_inherits = inherited('assert_inherits');
const assert_idl_attribute = inherited('assert_idl_attribute');

/** Assigning to the property, as sloppy-mode code would (no TypeError), leaves it unchanged. */
function assert_readonly(object, name, description) {
  const initial = object[name];
  try {
    Reflect.set(object, name, `${initial}a`);
    assert(sameValue(object[name], initial), 'assert_readonly', description, 'changing property ${name} succeeded', { name });
  } finally {
    Reflect.set(object, name, initial);
  }
}

function assert_unreached(description) {
  assert(false, 'assert_unreached', description, 'Reached unreachable code', {});
}

/** Legacy DOMException codes by name (WebIDL §DOMException names); others have code 0. */
const DOM_CODES = {
  IndexSizeError: 1, HierarchyRequestError: 3, WrongDocumentError: 4, InvalidCharacterError: 5,
  NoModificationAllowedError: 7, NotFoundError: 8, NotSupportedError: 9, InUseAttributeError: 10,
  InvalidStateError: 11, SyntaxError: 12, InvalidModificationError: 13, NamespaceError: 14,
  InvalidAccessError: 15, TypeMismatchError: 17, SecurityError: 18, NetworkError: 19,
  AbortError: 20, URLMismatchError: 21, QuotaExceededError: 22, TimeoutError: 23,
  InvalidNodeTypeError: 24, DataCloneError: 25,
};
const OTHER_DOM_NAMES = ['EncodingError', 'NotReadableError', 'UnknownError', 'ConstraintError', 'DataError',
  'TransactionInactiveError', 'ReadOnlyError', 'VersionError', 'OperationError', 'NotAllowedError', 'OptOutError'];
// The legacy constant names (e.g. "DATA_CLONE_ERR") by the name they stand for.
const LEGACY_NAMES = {};
for (const [name, code] of Object.entries(DOM_CODES)) {
  const legacy = name === 'SyntaxError' ? 'SYNTAX_ERR' : name.replace(/Error$/, '').replace(/([a-z])([A-Z])/g, '$1_$2').toUpperCase() + '_ERR';
  LEGACY_NAMES[legacy] = name;
  LEGACY_NAMES[code] = name;
}
LEGACY_NAMES.DOMSTRING_SIZE_ERR = null;

function assert_throws_dom(type, funcOrConstructor, descriptionOrFunc, maybeDescription) {
  let constructor = globalThis.DOMException;
  let func = funcOrConstructor;
  let description = descriptionOrFunc;
  if (typeof descriptionOrFunc === 'function') {
    constructor = funcOrConstructor;
    func = descriptionOrFunc;
    description = maybeDescription;
  }
  let name = type;
  if (typeof type === 'number' || Object.prototype.hasOwnProperty.call(LEGACY_NAMES, type)) name = LEGACY_NAMES[type];
  assert(typeof name === 'string' && (name in DOM_CODES || OTHER_DOM_NAMES.includes(name)), 'assert_throws_dom', description,
    'test bug: unrecognized DOMException type ${type}', { type });
  try {
    func.call(this);
  } catch (e) {
    if (e instanceof AssertionError) throw e;
    assert(typeof e === 'object' && e !== null, 'assert_throws_dom', description, '${func} threw ${e} with type ${t}, not an object', { func, e, t: typeof e });
    assert(e instanceof constructor, 'assert_throws_dom', description, '${func} threw an exception that is not a DOMException: ${e}', { func, e });
    assert(e.name === name, 'assert_throws_dom', description, '${func} threw ${e} that is not a DOMException ${name}: property name is ${actual}', { func, e, name, actual: e.name });
    const code = DOM_CODES[name] || 0;
    assert(e.code === code, 'assert_throws_dom', description, '${func} threw ${e} with code ${actual}, expected ${code}', { func, e, actual: e.code, code });
    return;
  }
  assert(false, 'assert_throws_dom', description, '${func} did not throw', { func });
}

function assert_throws_js(constructor, func, description) {
  try {
    func.call(this);
  } catch (e) {
    if (e instanceof AssertionError) throw e;
    assert(typeof e === 'object' && e !== null, 'assert_throws_js', description, '${func} threw ${e} with type ${t}, not an object', { func, e, t: typeof e });
    assert(!(e instanceof globalThis.DOMException), 'assert_throws_js', description, '${func} threw a DOMException ${e}, expected ${name}', { func, e, name: constructor.name });
    assert(e.name === constructor.name, 'assert_throws_js', description, '${func} threw ${e} (${actual}), expected ${expected}', { func, e, actual: e.name, expected: constructor.name });
    assert(e.constructor === constructor, 'assert_throws_js', description, '${func} threw ${e} whose constructor is not ${expected}', { func, e, expected: constructor.name });
    return;
  }
  assert(false, 'assert_throws_js', description, '${func} did not throw', { func });
}

function assert_throws_exactly(exception, func, description) {
  try {
    func.call(this);
  } catch (e) {
    if (e instanceof AssertionError) throw e;
    assert(sameValue(e, exception), 'assert_throws_exactly', description, '${func} threw ${e} but we expected it to throw ${exception}', { func, e, exception });
    return;
  }
  assert(false, 'assert_throws_exactly', description, '${func} did not throw', { func });
}

/** The promise rejection counterparts: `test` fails unless `promise` rejects as described. */
function rejects(check) {
  return function (test, ...args) {
    const promise = args[args.length - 2];
    const description = args[args.length - 1];
    return Promise.resolve(promise).then(
      test.unreached_func(`Should have rejected: ${description}`),
      (e) => check(args, e, description),
    );
  };
}
const promise_rejects_js = rejects(([constructor], e, description) => assert_throws_js(constructor, () => { throw e; }, description));
const promise_rejects_dom = function (test, type, ctorOrPromise, promiseOrDescription, maybeDescription) {
  let constructor = globalThis.DOMException;
  let promise = ctorOrPromise;
  let description = promiseOrDescription;
  if (typeof ctorOrPromise === 'function' && maybeDescription !== undefined) {
    constructor = ctorOrPromise;
    promise = promiseOrDescription;
    description = maybeDescription;
  }
  return Promise.resolve(promise).then(
    test.unreached_func(`Should have rejected: ${description}`),
    (e) => assert_throws_dom(type, constructor, () => { throw e; }, description),
  );
};

// ---- tests ----

/** The harness of this process: its tests, settings and status. */
const harness = {
  tests: [],
  names: new Set(),
  promiseChain: Promise.resolve(),
  allowUncaught: false,
  explicitDone: false,
  doneCalled: false,
  loaded: false,
  complete: false,
  status: 'OK',
  message: null,
  completionCallbacks: [],
  timer: null,
  report: null,
  title: '',
  defaultNames: 0,
};

/**
 * A test's name when none is given: the body of an arrow function without arguments, else the
 * file's title (`// META: title=`, else its file name) numbered from the second on.
 */
function testName(func, name) {
  if (name) return String(name);
  if (typeof func === 'function') {
    const arrow = /^\(\)\s*=>\s*(?:\{([\s\S]*)\}\s*|([\s\S]*))$/.exec(func.toString());
    if (arrow !== null) return (arrow[1] !== undefined ? arrow[1] : arrow[2]).trim();
  }
  const suffix = harness.defaultNames > 0 ? ` ${harness.defaultNames}` : '';
  harness.defaultNames++;
  return harness.title + suffix;
}

/** A subtest. A name used before gets " (2)", " (3)" …, so results stay apart by name. */
class Test {
  constructor(name) {
    let unique = String(name);
    for (let n = 2; harness.names.has(unique); n++) unique = `${name} (${n})`;
    harness.names.add(unique);
    this.name = unique;
    this.phase = INITIAL;
    this.status = NOTRUN;
    this.message = null;
    this.cleanups = [];
    this.completeWaiters = [];
    this.isPromiseTest = false;
    harness.tests.push(this);
  }

  /** Runs `func` as a step of this test: an exception fails the test and is not rethrown. */
  step(func, thisObj, ...args) {
    if (this.phase > STARTED) return undefined;
    if (arguments.length === 1) thisObj = this;
    this.phase = STARTED;
    try {
      return func.apply(thisObj, args);
    } catch (e) {
      if (this.phase >= HAS_RESULT) return undefined;
      this.fail(e);
      this.done();
      return undefined;
    }
  }

  fail(e, status) {
    this.status = status === undefined ? FAIL : status;
    this.message = String(typeof e === 'object' && e !== null ? e.message : e);
    this.phase = HAS_RESULT;
  }

  step_func(func, thisObj) {
    const test = this;
    const bound = arguments.length > 1;
    return function (...args) {
      return test.step(func, bound ? thisObj : this, ...args);
    };
  }

  step_func_done(func, thisObj) {
    const test = this;
    const bound = arguments.length > 1;
    return function (...args) {
      if (func) test.step(func, bound ? thisObj : this, ...args);
      test.done();
    };
  }

  unreached_func(description) {
    return this.step_func(() => assert_unreached(description));
  }

  step_timeout(func, timeout, ...args) {
    const test = this;
    return setTimeout(this.step_func(() => func.apply(test, args)), timeout);
  }

  add_cleanup(func) {
    this.cleanups.push(func);
  }

  /** The test is finished: it passes unless it already failed; its cleanups run. */
  done() {
    if (this.phase >= CLEANING) return;
    if (this.phase <= STARTED) {
      this.status = PASS;
      this.phase = HAS_RESULT;
    }
    this.phase = CLEANING;
    const results = [];
    for (const cleanup of this.cleanups) {
      try {
        results.push(cleanup());
      } catch (e) {
        harnessError(`Cleanup function for test "${this.name}" threw: ${e && e.message}`);
      }
    }
    const pending = results.filter((r) => r && typeof r.then === 'function');
    if (pending.length > 0 && this.isPromiseTest) {
      Promise.all(pending).then(() => this.finish(), (e) => {
        harnessError(`Cleanup promise for test "${this.name}" rejected: ${e && e.message}`);
        this.finish();
      });
    } else {
      this.finish();
    }
  }

  finish() {
    this.phase = COMPLETE;
    for (const w of this.completeWaiters) w();
    checkComplete();
  }
}

function test(func, name) {
  const t = new Test(testName(func, name));
  t.step(func, t, t);
  if (t.phase === STARTED) t.done();
  return t;
}

function async_test(func, name) {
  if (typeof func !== 'function') {
    name = func;
    func = null;
  }
  const t = new Test(testName(func, name));
  if (func) t.step(func, t, t);
  return t;
}

function promise_test(func, name) {
  const t = new Test(testName(func, name));
  t.isPromiseTest = true;
  harness.promiseChain = harness.promiseChain.then(() => new Promise((resolve) => {
    if (harness.complete) {
      resolve();
      return;
    }
    t.completeWaiters.push(resolve);
    const promise = t.step(func, t, t);
    if (t.phase >= HAS_RESULT) return;
    t.step(() => assert(!!promise && typeof promise.then === 'function', 'promise_test', null,
      'test body must return a \'thenable\' object (received ${promise})', { promise }));
    if (t.phase >= HAS_RESULT) return;
    promise.then(
      () => t.done(),
      (value) => {
        t.step(() => {
          if (value instanceof AssertionError) throw value;
          assert(false, 'promise_test', null, 'Unhandled rejection with value: ${value}', { value });
        });
      },
    );
  }));
  return t;
}

/** `setTimeout` by another name, as testharness.js gives it. */
function step_timeout(func, timeout, ...args) {
  return setTimeout(() => func(...args), timeout);
}

function setup(funcOrProperties, maybeProperties) {
  let func = null;
  let properties = funcOrProperties;
  if (typeof funcOrProperties === 'function') {
    func = funcOrProperties;
    properties = maybeProperties;
  }
  properties = properties || {};
  if (properties.allow_uncaught_exception) harness.allowUncaught = true;
  if (properties.explicit_done) harness.explicitDone = true;
  if (func) {
    try {
      func();
    } catch (e) {
      harnessError(`setup failed: ${e && e.message}`);
    }
  }
}

/** The file has added all its tests (with `explicit_done`, the harness waits for this). */
function done() {
  harness.doneCalled = true;
  checkComplete();
}

function add_completion_callback(callback) {
  harness.completionCallbacks.push(callback);
}

/** EventWatcher: `wait_for(types)` resolves on those events in order; any other event fails the test. */
function EventWatcher(test, watchedNode, eventTypes, timeoutPromise) {
  if (typeof eventTypes === 'string') eventTypes = [eventTypes];
  let waitingFor = null;
  let recordEvents = false;
  let recorded = [];
  const handler = test.step_func((evt) => {
    assert_true(!!waitingFor, `Not expecting event, but got ${evt.type} event`);
    assert_equals(evt.type, waitingFor.types[0], `Expected ${waitingFor.types[0]} event, but got ${evt.type} event instead`);
    if (recordEvents) recorded.push(evt);
    if (waitingFor.types.length > 1) {
      waitingFor.types.shift();
      return;
    }
    const { resolve } = waitingFor;
    waitingFor = null;
    const result = recordEvents ? recorded : evt;
    recordEvents = false;
    recorded = [];
    resolve(result);
  });
  for (const type of eventTypes) watchedNode.addEventListener(type, handler, false);
  this.wait_for = function (types, options) {
    if (waitingFor) return Promise.reject(new Error('Already waiting for an event or events'));
    if (typeof types === 'string') types = [types];
    if (options && options.record && options.record === 'all') recordEvents = true;
    return new Promise((resolve, reject) => {
      const timeout = test.step_func(() => {
        if (waitingFor && waitingFor.resolve === resolve) {
          waitingFor = null;
          reject(new Error(`Timed out waiting for ${types.join(', ')}`));
        }
      });
      if (timeoutPromise) timeoutPromise().then(timeout);
      waitingFor = { types: types.slice(), resolve, reject };
    });
  };
  const stop = () => {
    for (const type of eventTypes) watchedNode.removeEventListener(type, handler, false);
  };
  this.stop_watching = stop;
  test.add_cleanup(stop);
}

// ---- the harness's own status ----

function harnessError(message) {
  if (harness.complete) return;
  if (harness.status === 'OK') {
    harness.status = 'ERROR';
    harness.message = message;
  }
  completeNow();
}

function onUncaught(e) {
  if (harness.allowUncaught || harness.complete) return;
  const what = e && typeof e === 'object' && 'message' in e ? `${e.name}: ${e.message}` : String(e);
  harnessError(`Uncaught exception: ${what}`);
}

function checkComplete() {
  if (harness.complete || !harness.loaded) return;
  if (harness.explicitDone && !harness.doneCalled) return;
  if (harness.tests.some((t) => t.phase !== COMPLETE)) return;
  completeNow();
}

function completeNow() {
  if (harness.complete) return;
  harness.complete = true;
  clearTimeout(harness.timer);
  for (const callback of harness.completionCallbacks) {
    try {
      callback(harness.tests, { status: harness.status, message: harness.message });
    } catch (e) {
      // A completion callback's failure does not change results already given.
    }
  }
  harness.report({
    status: harness.status,
    message: harness.message,
    tests: harness.tests.map((t) => ({
      name: t.name,
      status: t.phase >= HAS_RESULT ? STATUS[t.status] : (harness.status === 'TIMEOUT' ? 'TIMEOUT' : 'NOTRUN'),
      message: t.message,
    })),
  });
}

/** The file's scripts were all evaluated: the harness completes when its tests do. */
function loaded() {
  harness.loaded = true;
  setImmediate(checkComplete);
}

/**
 * Defines the API as globals of `global`; `options.timeout` (ms) bounds the whole file,
 * `options.title` names tests given no name, `options.report(result)` receives the results once.
 */
function install(global, options) {
  harness.report = options.report;
  harness.title = options.title;
  harness.timer = setTimeout(() => {
    if (harness.complete) return;
    harness.status = 'TIMEOUT';
    harness.message = `the file did not finish within ${options.timeout} ms`;
    for (const t of harness.tests) {
      if (t.phase < HAS_RESULT) t.fail('Test timed out', TIMEOUT);
    }
    completeNow();
  }, options.timeout);
  process.on('uncaughtException', onUncaught);
  process.on('unhandledRejection', onUncaught);
  const api = {
    test, async_test, promise_test, setup, done, step_timeout, EventWatcher,
    add_completion_callback, format_value: formatValue,
    assert_true, assert_false, assert_equals, assert_not_equals, assert_in_array, assert_array_equals,
    assert_object_equals, assert_regexp_match, assert_class_string, assert_own_property,
    assert_inherits, assert_idl_attribute, assert_readonly, assert_unreached, assert_throws_dom,
    assert_throws_js, assert_throws_exactly, promise_rejects_js, promise_rejects_dom, AssertionError,
  };
  for (const [name, value] of Object.entries(api)) {
    Object.defineProperty(global, name, { value, writable: true, configurable: true, enumerable: false });
  }
  return { loaded, harnessError };
}

module.exports = { install };
