'use strict';
// Threads and file descriptors stay bounded however many connections and transactions run
// (RELIABILITY.md, "Threads and descriptors in the Node.js package"). Each test runs in a
// child process, so that its thread count and descriptor limit are its own.
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { freshFactory } = require('./helpers');

/** Runs `body` in a child node process under `ulimit -n fds`; returns its stdout, trimmed. */
function inChild(dir, fds, body) {
  const code = `
    const { IDBFactory } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const fs = require('node:fs');
    const factory = new IDBFactory({ dir: ${JSON.stringify(dir)} });
    const done = (r) => new Promise((resolve, reject) => {
      r.onsuccess = () => resolve(r.result);
      r.onerror = (e) => { e.preventDefault(); reject(r.error); };
    });
    const threads = () => Number(/Threads:\\s+(\\d+)/.exec(fs.readFileSync('/proc/self/status', 'utf8'))[1]);
    (async () => { ${body} })().then(() => process.exit(0), (e) => { console.log('failed', e.name, e.message); process.exit(1); });`;
  const out = spawnSync('bash', ['-c', `ulimit -n ${fds} && exec "$0" -e "$1"`, process.execPath, code], {
    encoding: 'utf8',
    timeout: 600000,
  });
  assert.equal(out.status, 0, out.stdout + out.stderr);
  return out.stdout.trim();
}

test('10 000 open connections share a bounded pool of threads', { skip: process.platform !== 'linux' }, () => {
  const { dir } = freshFactory();
  const out = inChild(dir, 4096, `
    const first = await (async () => {
      const r = factory.open('c', 1);
      r.onupgradeneeded = () => r.result.createObjectStore('s');
      return done(r);
    })();
    const before = threads();
    const conns = [first];
    for (let i = 1; i < 10000; i++) conns.push(await done(factory.open('c')));
    // Every connection works: one readonly transaction each, all at once.
    const counts = await Promise.all(conns.map((db) => done(db.transaction('s').objectStore('s').count())));
    const after = threads();
    for (const db of conns) db.close();
    console.log(JSON.stringify({ counts: counts.length, zeros: counts.every((c) => c === 0), grew: after - before }));`);
  const result = JSON.parse(out);
  assert.equal(result.counts, 10000);
  assert.equal(result.zeros, true);
  // At most the pool's 32 threads beyond those running after the first open.
  assert.ok(result.grew <= 32, `the process grew by ${result.grew} threads`);
});

test('600 concurrent readonly transactions under a 1,024-descriptor limit all complete', { skip: process.platform !== 'linux' }, () => {
  const { dir } = freshFactory();
  const out = inChild(dir, 1024, `
    const db = await (async () => {
      const r = factory.open('r', 1);
      r.onupgradeneeded = () => {
        const s = r.result.createObjectStore('s');
        for (let i = 0; i < 100; i++) s.put('v' + i, i);
      };
      return done(r);
    })();
    const outcomes = await Promise.all(Array.from({ length: 600 }, (_, i) => new Promise((resolve) => {
      const tx = db.transaction('s');
      let value;
      tx.objectStore('s').get(i % 100).onsuccess = (e) => { value = e.target.result; };
      tx.oncomplete = () => resolve(value === 'v' + (i % 100) ? 'complete' : 'wrong ' + value);
      tx.onabort = () => resolve('abort ' + (tx.error && tx.error.name));
    })));
    const tally = {};
    for (const o of outcomes) tally[o] = (tally[o] || 0) + 1;
    console.log(JSON.stringify(tally));`);
  assert.deepEqual(JSON.parse(out), { complete: 600 });
});
