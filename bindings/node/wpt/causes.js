'use strict';
// Why subtests of the suite do not pass, one reason per cause: `reasonFor(file, name, status,
// message)` gives the one-line reason `run.js --update` records for a new entry of
// expectations.json (the first cause that matches; '' when none does, which the runner then
// reports as an entry without a reason).

/** `[test(file, name, message), reason]`, most specific first. */
const CAUSES = [
  // ---- WebIDL conformance of the interfaces ----
  [(f, n, m) => /interface object didn't throw TypeError when called as a constructor/.test(m),
    'kept on purpose: new IDBFactory(options) makes a factory on a chosen data directory (documented; fake-indexeddb users reset between tests this way), where the IDL has no constructor'],

  // ---- the environment ----
  [(f, n, m) => /Float16Array/.test(n + m),
    'Node.js 20 has no Float16Array, so the view type cannot be constructed'],
  [(f, n) => /^(DOMMatrix|DOMMatrixReadOnly|DOMPoint|DOMPointReadOnly|DOMRect|DOMRectReadOnly|ImageData): /.test(n),
    'a browser geometry/ImageData interface Node.js lacks: the runner gives a placeholder class, which the package clones as a plain object'],
];

function reasonFor(file, name, status, message) {
  for (const [matches, reason] of CAUSES) {
    if (matches(file, name, message)) return reason;
  }
  return '';
}

module.exports = { reasonFor };
