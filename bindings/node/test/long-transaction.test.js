'use strict';
// A long transaction keeps only its pending requests: a settled request is released (it can be
// garbage-collected while the transaction goes on), and an abort still fails every pending
// request with AbortError, in the order they were placed.
const test = require('node:test');
const assert = require('node:assert/strict');
const v8 = require('node:v8');
const vm = require('node:vm');
const { freshFactory, open, finished } = require('./helpers.js');

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

async function store() {
  const { factory } = freshFactory();
  return open(factory, 'db', 1, (db) => db.createObjectStore('s'));
}

test('settled requests of a running transaction are released', async () => {
  const db = await store();
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  const total = 2000;
  const refs = [];
  let alive = -1;
  await new Promise((resolve, reject) => {
    const place = (i) => {
      const r = s.put({ n: i, pad: 'x'.repeat(100) }, i);
      refs.push(new WeakRef(r));
      r.onerror = () => reject(r.error);
      r.onsuccess = () => {
        if (i + 1 < total) return place(i + 1);
        // One more request, so the collection runs in a later turn than any request's creation.
        s.count().onsuccess = () => {
          gc();
          alive = refs.slice(0, total - 10).filter((w) => w.deref() !== undefined).length;
          resolve();
        };
      };
    };
    place(0);
  });
  await finished(tx);
  // Kept until the transaction ends, all 1,990 would be alive. The engine itself may hold on
  // to a few objects it met while optimising code, so a handful is allowed.
  assert.ok(alive < 20, `${alive} of ${total - 10} settled requests still alive`);
  const check = db.transaction('s').objectStore('s').count();
  await new Promise((resolve) => { check.onsuccess = resolve; });
  assert.equal(check.result, total);
  db.close();
});

test('a cursor walked through a long transaction is released at its end', async () => {
  const db = await store();
  const fill = db.transaction('s', 'readwrite');
  for (let i = 0; i < 300; i++) fill.objectStore('s').put(i, i);
  await finished(fill);
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  let cursorRequest = s.openCursor();
  const ref = new WeakRef(cursorRequest);
  let seen = 0;
  let alive = null;
  await new Promise((resolve) => {
    cursorRequest.onsuccess = (e) => {
      const c = e.target.result;
      if (c) {
        seen++;
        c.continue();
        return;
      }
      cursorRequest = null;
      // The transaction goes on with more requests; the finished cursor's request is gone
      // while it runs. (A native callback may hold it for a moment after its last event, so
      // the probe looks again over a few more requests.)
      let probes = 0;
      const probe = () => {
        gc();
        alive = ref.deref() !== undefined;
        if (alive && ++probes < 10) {
          s.count().onsuccess = probe;
          return;
        }
        resolve();
      };
      s.count().onsuccess = probe;
    };
  });
  await finished(tx);
  assert.equal(seen, 300);
  assert.equal(alive, false);
  db.close();
});

test('an abort still fails the pending requests, in order', async () => {
  const db = await store();
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  const order = [];
  const first = s.put(1, 1);
  first.onsuccess = () => order.push('first success');
  const pending = [s.put(2, 2), s.put(3, 3), s.get(2)];
  pending.forEach((r, i) => {
    r.onsuccess = () => order.push(`success ${i}`);
    r.onerror = (e) => { e.preventDefault(); order.push(`${r.error.name} ${i}`); };
  });
  tx.abort();
  await assert.rejects(finished(tx), (e) => e === null || e.name === 'AbortError');
  assert.deepEqual(order, ['AbortError 0', 'AbortError 1', 'AbortError 2']);
  db.close();
});
