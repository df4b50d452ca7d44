'use strict';
// Why subtests of the suite do not pass, by cause: `reasonFor(file, name, status, message)`
// gives the one-line reason `run.js --update` records for a new entry of expectations.json.
const CAUSES = [];

function reasonFor(file, name, status, message) {
  for (const [test, reason] of CAUSES) {
    if (test(file, name, status, message)) return reason;
  }
  return '';
}

module.exports = { reasonFor };
