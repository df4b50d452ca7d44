'use strict';
// Cursors that read a few records, and getAll with a small count: each step is a seek with
// new bounds, not served from rows read ahead; besides, getAll in bulk and whole scans. Each
// system runs in a process of its own, RUNS times interleaved; prints the medians as a
// Markdown table.
//
//   node bench/cursors.js                      # this package and fake-indexeddb, RUNS=3
//   INDEXA_PACKAGE=/other/checkout/bindings/node node bench/cursors.js   # another build too
//
// Steps, on a store of N = 20,000 records {g, name} under keys 0 … N-1 with an index on `g`
// (record number modulo 1,000), data directory under INDEXA_BENCH_DIR (default the temporary
// directory), each with a check value every system must agree on:
//   shortCursors  5,000 index cursors placed at once in one transaction, each on one index
//                 key (a key as the query), reading its first 3 records with continue()
//   jumps         a store cursor stepped with continue(key) to every second key (10,000 steps)
//   cursorEachTx  1,000 readonly transactions one after another, each opening an index
//                 cursor on one key and reading its first record
//   getAllEachTx  1,000 readonly transactions one after another, each an index getAll(key, 2)
//   getAllOneTx   2,000 index getAll(key) (each all 20 records of one key) placed at once in
//                 one readonly transaction
//   getAllRecordsOneTx  the same 2,000 queries as getAllOneTx, as index getAllRecords()
//   getAllArrays  5 getAll() in one readonly transaction of a second store of N records
//                 {g, data: Uint8Array} (values stored with their serialization)
//   scan          a store cursor over every record, stepped with continue() (the first scan
//                 of the process)
//   scanWarm      the same scan, the fourth of the process (after two more not timed)
const { performance } = require('node:perf_hooks');
const { req, done } = require('./workload.js');
const { compareSystems } = require('./compare.js');

const N = 20000;
const GROUPS = 1000;
const SHORT_CURSORS = 5000;
const READ_PER_CURSOR = 3;
const CURSOR_TXS = 1000;
const GET_ALLS = 2000;

/** Runs every step on `factory`; resolves to `{ step: { ms, check } }`. */
async function runSteps(factory) {
  const out = {};
  const step = async (name, f) => {
    const t = performance.now();
    const check = await f();
    out[name] = { ms: performance.now() - t, check };
  };
  await req(factory.deleteDatabase('cursors'));
  const open = factory.open('cursors', 1);
  open.onupgradeneeded = () => {
    open.result.createObjectStore('s').createIndex('g', 'g');
    open.result.createObjectStore('b');
  };
  const db = await req(open);
  const fill = db.transaction(['s', 'b'], 'readwrite', { durability: 'relaxed' });
  for (let i = 0; i < N; i++) {
    fill.objectStore('s').put({ g: i % GROUPS, name: `city ${i}` }, i);
    fill.objectStore('b').put({ g: i % GROUPS, data: new Uint8Array([i & 255, 1, 2, 3]) }, i);
  }
  await done(fill);
  await step('shortCursors', async () => {
    const tx = db.transaction('s', 'readonly');
    const index = tx.objectStore('s').index('g');
    let sum = 0;
    for (let i = 0; i < SHORT_CURSORS; i++) {
      let left = READ_PER_CURSOR;
      const r = index.openCursor(i % GROUPS);
      r.onsuccess = () => {
        const c = r.result;
        if (c === null || left === 0) return;
        left--;
        sum += c.primaryKey;
        if (left > 0) c.continue();
      };
    }
    await done(tx);
    return sum;
  });
  await step('jumps', async () => {
    const tx = db.transaction('s', 'readonly');
    const r = tx.objectStore('s').openCursor();
    let sum = 0;
    let jumps = 0;
    r.onsuccess = () => {
      const c = r.result;
      if (c === null) return;
      sum += c.primaryKey;
      jumps++;
      c.continue(jumps * 2);
    };
    await done(tx);
    return sum;
  });
  // Readonly transactions one after another, each placing one request on index `g` for
  // key `g` (from `place(index, g)`) whose result `add` turns into a number to sum.
  const eachTx = async (place, add) => {
    let sum = 0;
    for (let i = 0; i < CURSOR_TXS; i++) {
      const tx = db.transaction('s', 'readonly');
      const r = place(tx.objectStore('s').index('g'), (i * 7) % GROUPS);
      r.onsuccess = () => { sum += add(r.result); };
      await done(tx);
    }
    return sum;
  };
  await step('cursorEachTx', () => eachTx((index, g) => index.openCursor(g), (c) => c.primaryKey));
  await step('getAllEachTx', () => eachTx((index, g) => index.getAll(g, 2),
    (values) => values.reduce((a, v) => a + v.g + v.name.length, 0)));
  await step('getAllOneTx', async () => {
    const tx = db.transaction('s', 'readonly');
    const index = tx.objectStore('s').index('g');
    let sum = 0;
    for (let i = 0; i < GET_ALLS; i++) {
      const r = index.getAll((i * 7) % GROUPS);
      r.onsuccess = () => { for (const v of r.result) sum += v.g + v.name.length; };
    }
    await done(tx);
    return sum;
  });
  await step('getAllRecordsOneTx', async () => {
    const tx = db.transaction('s', 'readonly');
    const index = tx.objectStore('s').index('g');
    let sum = 0;
    for (let i = 0; i < GET_ALLS; i++) {
      const r = index.getAllRecords({ query: (i * 7) % GROUPS });
      r.onsuccess = () => {
        for (const { key, primaryKey, value } of r.result) sum += key + primaryKey + value.name.length;
      };
    }
    await done(tx);
    return sum;
  });
  await step('getAllArrays', async () => {
    const tx = db.transaction('b', 'readonly');
    let sum = 0;
    for (let i = 0; i < 5; i++) {
      const r = tx.objectStore('b').getAll();
      r.onsuccess = () => { for (const v of r.result) sum += v.g + v.data[0]; };
    }
    await done(tx);
    return sum;
  });
  const scan = async () => {
    const tx = db.transaction('s', 'readonly');
    const r = tx.objectStore('s').openCursor();
    let sum = 0;
    r.onsuccess = () => {
      const c = r.result;
      if (c === null) return;
      sum += c.value.g;
      c.continue();
    };
    await done(tx);
    return sum;
  };
  await step('scan', scan);
  await scan();
  await scan();
  await step('scanWarm', scan);
  db.close();
  return out;
}

compareSystems(__filename, 'cursors', runSteps);
