'use strict';
// Short ops (get, getKey, a readonly transaction's begin and commit, the relaxed commit of a
// transaction that wrote one record) may run at once on Node's thread instead of a pool thread
// (src/worker.rs). Whichever thread ran them, each request's event fires in a task after the
// one that placed it, in the order the requests were placed, and transactions keep their
// lifecycle.

const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { IDBFactory, IDBKeyRange } = require('..');
const { freshFactory, done, open, finished } = require('./helpers.js');

async function store(records) {
  const { factory } = freshFactory();
  const db = await open(factory, 'order', 1, (d) => d.createObjectStore('s'));
  const tx = db.transaction('s', 'readwrite');
  for (const [k, v] of records) tx.objectStore('s').put(v, k);
  await finished(tx);
  return db;
}

test('a get\'s success fires in a later task, not in the placing task\'s microtasks', async () => {
  const db = await store([[1, 'one']]);
  const tx = db.transaction('s');
  const r = tx.objectStore('s').get(1);
  for (let i = 0; i < 5; i++) await Promise.resolve();
  assert.equal(r.readyState, 'pending');
  assert.equal(await done(r), 'one');
  await finished(tx);
  db.close();
});

test('short and long requests of one transaction fire in placement order', async () => {
  const db = await store([[1, 'one'], [2, 'two'], [3, 'three']]);
  const tx = db.transaction('s');
  const s = tx.objectStore('s');
  const order = [];
  const requests = [s.get(1), s.getAll(), s.get(2), s.count(), s.getKey(3), s.get(4)];
  requests.forEach((r, i) => { r.onsuccess = () => order.push([i, r.result]); });
  await finished(tx);
  assert.deepEqual(order, [
    [0, 'one'], [1, ['one', 'two', 'three']], [2, 'two'], [3, 3], [4, 3], [5, undefined],
  ]);
  db.close();
});

test('gets placed from success handlers interleave with a cursor in order', async () => {
  const db = await store([[1, 'a'], [2, 'b'], [3, 'c']]);
  const tx = db.transaction('s');
  const s = tx.objectStore('s');
  const seen = [];
  const c = s.openCursor();
  c.onsuccess = () => {
    const cursor = c.result;
    if (!cursor) return;
    seen.push(`cursor ${cursor.key}`);
    const k = cursor.key;
    s.get(k).onsuccess = (e) => seen.push(`get ${k} ${e.target.result}`);
    cursor.continue();
  };
  await finished(tx);
  assert.deepEqual(seen, ['cursor 1', 'get 1 a', 'cursor 2', 'get 2 b', 'cursor 3', 'get 3 c']);
  db.close();
});

test('thousands of gets placed at once all succeed, in order', async () => {
  const n = 3000;
  const records = [];
  for (let i = 0; i < n; i++) records.push([i, { i }]);
  const db = await store(records);
  const tx = db.transaction('s');
  const s = tx.objectStore('s');
  const order = [];
  for (let i = n - 1; i >= 0; i--) s.get(i).onsuccess = (e) => order.push(e.target.result.i);
  await finished(tx);
  assert.equal(order.length, n);
  assert.deepEqual(order, records.map(([k]) => n - 1 - k));
  db.close();
});

test('a readonly transaction waiting behind a readwrite one sees its write', async () => {
  const db = await store([[1, 'old']]);
  const w = db.transaction('s', 'readwrite');
  w.objectStore('s').put('new', 1);
  const r = db.transaction('s');
  const got = r.objectStore('s').get(1);
  const order = [];
  w.oncomplete = () => order.push('write');
  r.oncomplete = () => order.push('read');
  await Promise.all([finished(w), finished(r)]);
  assert.deepEqual(order, ['write', 'read']);
  assert.equal(got.result, 'new');
  db.close();
});

test('a throwing success handler of a get aborts its transaction, readonly or readwrite', () => {
  // In a child process: the exception is reported as an uncaught exception, as a browser does.
  const script = `
    const { IDBFactory } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const reported = [];
    process.on('uncaughtException', (e) => reported.push(e.message));
    const outcomes = [];
    const rq = new IDBFactory({ memory: true }).open('db', 1);
    rq.onupgradeneeded = () => rq.result.createObjectStore('s').put('one', 1);
    rq.onsuccess = () => {
      const db = rq.result;
      const ro = db.transaction('s');
      ro.objectStore('s').get(1).onsuccess = () => { throw new Error('readonly handler'); };
      ro.oncomplete = () => outcomes.push('readonly complete');
      ro.onabort = () => {
        outcomes.push('readonly abort ' + ro.error.name);
        const rw = db.transaction('s', 'readwrite');
        const s = rw.objectStore('s');
        s.get(1).onsuccess = () => { s.put('changed', 1); throw new Error('readwrite handler'); };
        rw.oncomplete = () => outcomes.push('readwrite complete');
        rw.onabort = () => {
          outcomes.push('readwrite abort ' + rw.error.name);
          db.transaction('s').objectStore('s').get(1).onsuccess = (e) => {
            console.log(JSON.stringify([outcomes, e.target.result, reported]));
          };
        };
      };
    };
  `;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), [
    ['readonly abort AbortError', 'readwrite abort AbortError'], 'one', ['readonly handler', 'readwrite handler'],
  ]);
});

test('relaxed one-put transactions in a row each complete only once a new connection sees the put', async () => {
  const { factory, dir } = freshFactory();
  const db = await open(factory, 'relaxed', 1, (d) => d.createObjectStore('s'));
  const reader = await open(new IDBFactory({ dir }), 'relaxed', 1);
  // More than the 64 commits in a row that may run on Node's thread (DEFERRED_CHECKPOINTS).
  const seen = [];
  for (let i = 0; i < 150; i++) {
    const tx = db.transaction('s', 'readwrite', { durability: 'relaxed' });
    tx.objectStore('s').put(`v${i}`, i);
    await finished(tx);
    seen.push(await done(reader.transaction('s').objectStore('s').get(i)));
  }
  assert.deepEqual(seen, Array.from({ length: 150 }, (_, i) => `v${i}`));
  // Two puts: the commit goes to the pool; both land.
  const two = db.transaction('s', 'readwrite', { durability: 'relaxed' });
  two.objectStore('s').put('a', 'x');
  two.objectStore('s').put('b', 'y');
  await finished(two);
  assert.deepEqual(await done(reader.transaction('s').objectStore('s').getAll(IDBKeyRange.bound('x', 'y'))), ['a', 'b']);
  assert.equal(await done(reader.transaction('s').objectStore('s').count()), 152);
  reader.close();
  db.close();
});

test('a throwing success handler of a relaxed put aborts its transaction and leaves no write', () => {
  // In a child process: the exception is reported as an uncaught exception, as a browser does.
  const script = `
    const { IDBFactory } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const reported = [];
    process.on('uncaughtException', (e) => reported.push(e.message));
    const rq = new IDBFactory({ memory: true }).open('db', 1);
    rq.onupgradeneeded = () => rq.result.createObjectStore('s').put('one', 1);
    rq.onsuccess = () => {
      const db = rq.result;
      const tx = db.transaction('s', 'readwrite', { durability: 'relaxed' });
      tx.objectStore('s').put('changed', 1).onsuccess = () => { throw new Error('relaxed handler'); };
      tx.oncomplete = () => console.log('complete');
      tx.onabort = () => {
        db.transaction('s').objectStore('s').get(1).onsuccess = (e) => {
          console.log(JSON.stringify(['abort ' + tx.error.name, e.target.result, reported]));
        };
      };
    };
  `;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), ['abort AbortError', 'one', ['relaxed handler']]);
});
