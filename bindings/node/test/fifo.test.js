'use strict';
// The package's first-in, first-out queue (lib/fifo.js), which holds its tasks and the calls
// held behind a write waiting for Blob bytes; and many requests of a transaction that waits
// for another, whose replies then come all at once and queue as tasks.

const test = require('node:test');
const assert = require('node:assert/strict');
const { Fifo } = require('../lib/fifo.js');
const { freshFactory, open, finished } = require('./helpers.js');

test('a Fifo gives its items back in the order pushed, across its compactions', () => {
  const q = new Fifo();
  assert.equal(q.shift(), undefined);
  assert.equal(q.peek(), undefined);
  let next = 0;
  let expected = 0;
  // Pushes outpace shifts, then the queue drains: the taken slots are dropped several times.
  for (let round = 0; round < 5000; round++) {
    q.push(next++);
    q.push(next++);
    assert.equal(q.peek(), expected);
    assert.equal(q.shift(), expected++);
    assert.equal(q.length, next - expected);
  }
  while (q.length > 0) assert.equal(q.shift(), expected++);
  assert.equal(expected, 10000);
  assert.equal(q.shift(), undefined);
  q.push('again');
  assert.equal(q.length, 1);
  assert.equal(q.shift(), 'again');
});

test('20,000 gets of a transaction waiting behind a write all succeed, in order', async () => {
  const { factory } = freshFactory();
  const db = await open(factory, 'queued', 1, (d) => d.createObjectStore('s'));
  const n = 20000;
  const fill = db.transaction('s', 'readwrite');
  for (let i = 0; i < n; i++) fill.objectStore('s').put(i * 2, i);
  await finished(fill);
  const writer = db.transaction('s', 'readwrite');
  writer.objectStore('s').put('changed', 0);
  // Starts once the writer is done: every get is held until then.
  const reader = db.transaction('s', 'readwrite');
  const s = reader.objectStore('s');
  const seen = [];
  for (let i = 0; i < n; i++) s.get(i).onsuccess = (e) => seen.push(e.target.result);
  await finished(reader);
  assert.equal(seen.length, n);
  assert.equal(seen[0], 'changed');
  for (let i = 1; i < n; i++) assert.equal(seen[i], i * 2);
  db.close();
});
