// META: title=harness self-test: an assertion in a late callback
'use strict';
// The first test is done before an assertion of it runs in a callback outside any step; the
// uncaught failure is a harness error, which fails all subtests of the file.

async_test((t) => {
  const open = indexedDB.open('late-callback', 1);
  open.onsuccess = () => {
    open.result.close();
    setTimeout(() => assert_true(false, 'asserted after done()'), 0);
  };
  t.done();
}, 'done() before its request has finished');

async_test((t) => {
  t.step_timeout(() => t.done(), 200);
}, 'control: a test still running when the late assertion fails');
