'use strict';
// The web-platform-tests runner's own harness (wpt/harness.js) against deliberately wrong
// tests (wpt/selftest/): each must fail, and the controls beside them must pass.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { runOne, outcomes } = require('../wpt/run.js');

const SELFTEST = path.join(__dirname, '..', 'wpt', 'selftest');

/** The statuses of a self-test file's subtests, by name, and the file's own status. */
async function statuses(file, timeout = 2000) {
  const result = await runOne(SELFTEST, { file, variant: '' }, timeout);
  const byName = {};
  for (const [name, o] of Object.entries(outcomes(result))) byName[name] = o.status;
  return { file: result.status, byName, message: result.message };
}

test('assert_throws_dom: a wrong name, or anything but the global DOMException, fails', async () => {
  const r = await statuses('wrong-domexception.any.js');
  assert.equal(r.file, 'OK');
  assert.deepEqual(r.byName, {
    'a DOMException of another name': 'FAIL',
    'an Error named like a DOMException': 'FAIL',
    'an instance of another class called DOMException': 'FAIL',
    'nothing thrown': 'FAIL',
    'assert_throws_js given a DOMException': 'FAIL',
    'control: the right DOMException passes': 'PASS',
  });
});

test('assert_equals and assert_array_equals tell -0 from 0', async () => {
  const r = await statuses('negative-zero.any.js');
  assert.equal(r.file, 'OK');
  assert.deepEqual(r.byName, {
    'assert_equals(-0, 0)': 'FAIL',
    'assert_equals(0, -0)': 'FAIL',
    'assert_array_equals([-0], [0])': 'FAIL',
    'assert_equals of a string and a number': 'FAIL',
    'assert_not_equals(NaN, NaN)': 'FAIL',
    'control: NaN equals NaN and -0 equals -0': 'PASS',
  });
});

test('a missing done() times the file out and fails all of its subtests', async () => {
  const r = await statuses('missing-done.any.js', 1500);
  assert.equal(r.file, 'TIMEOUT');
  assert.deepEqual(r.byName, {
    'control: a passing test in the same file': 'TIMEOUT',
    'an async test that never calls done()': 'TIMEOUT',
  });
});

test('an assertion in a late callback is a harness error that fails every subtest', async () => {
  const r = await statuses('late-callback.any.js');
  assert.equal(r.file, 'ERROR');
  assert.match(r.message, /asserted after done\(\)/);
  assert.deepEqual(r.byName, {
    'done() before its request has finished': 'ERROR',
    'control: a test still running when the late assertion fails': 'NOTRUN',
  });
});

test('right tests pass: sloppy global scripts, step functions, EventWatcher, explicit done', async () => {
  const r = await statuses('harness-passes.any.js');
  assert.equal(r.file, 'OK', r.message);
  assert.deepEqual(r.byName, {
    'helpers are globals of the same scope': 'PASS',
    'sloppy mode: assigning to a getter does not throw': 'PASS',
    'an async test with step functions': 'PASS',
    'a promise test with an EventWatcher': 'PASS',
  });
});

test('the runner fails on a result that differs from the expectations, in either direction', () => {
  const { spawnSync } = require('node:child_process');
  const fs = require('node:fs');
  const os = require('node:os');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'indexa-wpt-expectations-'));
  const file = path.join(dir, 'expectations.json');
  const run = (expectations) => {
    fs.writeFileSync(file, JSON.stringify(expectations));
    return spawnSync(process.execPath, [path.join(__dirname, '..', 'wpt', 'run.js'), '--wpt-dir', SELFTEST,
      '--expectations', file, 'negative-zero'], { encoding: 'utf8' });
  };
  const failing = ['assert_equals(-0, 0)', 'assert_equals(0, -0)', 'assert_array_equals([-0], [0])',
    'assert_equals of a string and a number', 'assert_not_equals(NaN, NaN)'];
  const exact = { 'negative-zero.any.js': Object.fromEntries(failing.map((n) => [n, { status: 'FAIL', reason: 'wrong on purpose' }])) };

  const same = run(exact);
  assert.equal(same.status, 0, same.stdout);
  assert.match(same.stdout, /WPT IndexedDB: 1 of 6 subtests pass/);

  const regression = structuredClone(exact);
  delete regression['negative-zero.any.js']['assert_equals(-0, 0)'];
  const r = run(regression);
  assert.equal(r.status, 1);
  assert.match(r.stdout, /^REGRESSION negative-zero\.any\.js :: assert_equals\(-0, 0\): FAIL/m);

  const fixed = structuredClone(exact);
  fixed['negative-zero.any.js']['control: NaN equals NaN and -0 equals -0'] = { status: 'FAIL', reason: 'wrong on purpose' };
  const f = run(fixed);
  assert.equal(f.status, 1);
  assert.match(f.stdout, /^FIXED negative-zero\.any\.js :: control: NaN equals NaN and -0 equals -0/m);

  const noReason = structuredClone(exact);
  noReason['negative-zero.any.js']['assert_equals(0, -0)'].reason = '';
  const n = run(noReason);
  assert.equal(n.status, 1);
  assert.match(n.stdout, /^NO REASON negative-zero\.any\.js :: assert_equals\(0, -0\)/m);
  fs.rmSync(dir, { recursive: true, force: true });
});

test('each variant runs its own subset of the subtests', async () => {
  const first = await runOne(SELFTEST, { file: 'variants.any.js', variant: '?1-2' }, 2000);
  const rest = await runOne(SELFTEST, { file: 'variants.any.js', variant: '?3-last' }, 2000);
  assert.deepEqual(first.tests.map((t) => [t.name, t.status]), [['subtest 1 of ?1-2', 'PASS'], ['subtest 2 of ?1-2', 'PASS']]);
  assert.deepEqual(rest.tests.map((t) => [t.name, t.status]), [['subtest 3 of ?3-last', 'PASS'], ['subtest 4 of ?3-last', 'PASS']]);
});
