// META: title=harness self-test: a missing done()
'use strict';
// The async test never calls done(): the file times out and fails all of its subtests.

test(() => {}, 'control: a passing test in the same file');

async_test((t) => {
  const open = indexedDB.open('missing-done', 1);
  open.onsuccess = t.step_func(() => {
    open.result.close();
    // t.done() forgotten
  });
}, 'an async test that never calls done()');
