// META: title=harness self-test: variants
// META: script=/common/subset-tests.js
// META: variant=?1-2
// META: variant=?3-last
'use strict';
// Each variant defines only its subset of the subtests, counted over the subsetTest calls.

for (const n of [1, 2, 3, 4]) {
  subsetTest(test, () => {}, `subtest ${n} of ${location.search}`);
}
