// META: title=harness self-test: what must pass
// META: script=resources/helper.js
// Classic sloppy-mode scripts in one global scope: helper.js defines a global function and a
// var; this file uses them, writes to a read-only property without throwing, and needs done().
setup({ explicit_done: true, allow_uncaught_exception: true });

test(() => {
  assert_equals(helperValue, 42);
  assert_equals(helperTwice(21), 42);
  assert_true(self === this || typeof this === 'undefined' || this === globalThis);
}, 'helpers are globals of the same scope');

test(() => {
  const tx = {};
  Object.defineProperty(tx, 'mode', { get() { return 'readonly'; } });
  tx.mode = 'readwrite';
  assert_readonly(tx, 'mode');
  assert_equals(tx.mode, 'readonly');
}, 'sloppy mode: assigning to a getter does not throw');

async_test((t) => {
  const open = indexedDB.open('passes', 1);
  open.onupgradeneeded = t.step_func(() => {
    const store = open.result.createObjectStore('s');
    store.put('v', 1);
    assert_throws_dom('DataError', () => store.put('v', NaN));
  });
  open.onsuccess = t.step_func_done(() => {
    assert_array_equals(Array.from(open.result.objectStoreNames), ['s']);
    open.result.close();
  });
}, 'an async test with step functions');

promise_test(async (t) => {
  const open = indexedDB.open('passes-2', 1);
  const watcher = new EventWatcher(t, open, ['upgradeneeded', 'success']);
  await watcher.wait_for(['upgradeneeded', 'success']);
  open.result.close();
  await promise_rejects_dom(t, 'DataError', Promise.reject(new DOMException('x', 'DataError')), 'rejects');
}, 'a promise test with an EventWatcher');

// An uncaught exception, allowed by setup().
setTimeout(() => { throw new Error('allowed'); }, 0);
setTimeout(() => done(), 50);
