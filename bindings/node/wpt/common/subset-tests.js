// The runner's own version of the suite's /common/subset-tests.js, which the suite's copy does
// not include: a `?from-to` (1-based, inclusive; `last` for the end) variant runs only the
// subtests with those numbers, counted over the calls to subsetTest in the order they come.
var subsetTestCount = 0;

function shouldRunSubTest() {
  subsetTestCount++;
  var m = /^\?(\d+)-(\d+|last)$/.exec(location.search);
  if (!m) return true;
  var from = Number(m[1]);
  var to = m[2] === 'last' ? Infinity : Number(m[2]);
  return subsetTestCount >= from && subsetTestCount <= to;
}

function subsetTest(testFunc) {
  if (!shouldRunSubTest()) return undefined;
  return testFunc.apply(this, Array.prototype.slice.call(arguments, 1));
}
