// META: title=harness self-test: -0 against 0
'use strict';
// Every subtest here is wrong and must fail, except the controls.

test(() => { assert_equals(-0, 0); }, 'assert_equals(-0, 0)');
test(() => { assert_equals(0, -0); }, 'assert_equals(0, -0)');
test(() => { assert_array_equals([-0], [0]); }, 'assert_array_equals([-0], [0])');
test(() => { assert_equals('0', 0); }, 'assert_equals of a string and a number');
test(() => { assert_not_equals(NaN, NaN); }, 'assert_not_equals(NaN, NaN)');
test(() => {
  assert_equals(NaN, NaN);
  assert_equals(-0, -0);
  assert_array_equals([-0, NaN], [-0, NaN]);
}, 'control: NaN equals NaN and -0 equals -0');
