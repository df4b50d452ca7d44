'use strict';
// Bursts: work that an application places all at once, as `Promise.all` over many keys does.
// Each system runs in a process of its own, RUNS times interleaved; prints the medians as a
// Markdown table.
//
//   node bench/bursts.js                      # this package and fake-indexeddb, RUNS=3
//   INDEXA_PACKAGE=/other/checkout/bindings/node node bench/bursts.js   # another build too
//
// Steps, on a store of N = 20,000 records {name, country, lat, lng, pop} under keys 0 … N-1,
// data directory under INDEXA_BENCH_DIR (default the temporary directory), each with a check
// value every system must agree on:
//   readonlyBurst  2,000 readonly transactions created at once, one get each
//   queuedGets     20,000 gets placed on a readwrite transaction that waits behind another
//                  readwrite transaction (their replies then come all at once)
//   readwriteBurst 1,000 relaxed readwrite transactions created at once, one put each
// With INDEXA_PACKAGE, that package directory runs as a third system ("indexa (other)"), for
// comparing two builds in one run.
const { performance } = require('node:perf_hooks');
const { req, done } = require('./workload.js');
const { compareSystems } = require('./compare.js');

const N = 20000;
const READONLY_TXS = 2000;
const READWRITE_TXS = 1000;

function records() {
  const out = new Array(N);
  for (let i = 0; i < N; i++) {
    out[i] = { name: `city ${i}`, country: `C${i % 200}`, lat: i / 7, lng: i / 3, pop: (i * 7919) % 1000000 };
  }
  return out;
}

/** Runs every step on `factory`; resolves to `{ step: { ms, check } }`. */
async function runSteps(factory) {
  const recs = records();
  const out = {};
  const step = async (name, f) => {
    const t = performance.now();
    const check = await f();
    out[name] = { ms: performance.now() - t, check };
  };
  await req(factory.deleteDatabase('bursts'));
  const open = factory.open('bursts', 1);
  open.onupgradeneeded = () => open.result.createObjectStore('cities');
  const db = await req(open);
  const fill = db.transaction('cities', 'readwrite', { durability: 'relaxed' });
  for (let i = 0; i < N; i++) fill.objectStore('cities').put(recs[i], i);
  await done(fill);
  await step('readonlyBurst', async () => {
    const pops = await Promise.all(Array.from({ length: READONLY_TXS }, (_, i) => {
      const tx = db.transaction('cities', 'readonly');
      return req(tx.objectStore('cities').get((i * 7) % N)).then((v) => v.pop);
    }));
    return pops.reduce((a, b) => a + b, 0);
  });
  await step('queuedGets', async () => {
    const writer = db.transaction('cities', 'readwrite', { durability: 'relaxed' });
    writer.objectStore('cities').put(recs[0], 0);
    const tx = db.transaction('cities', 'readwrite', { durability: 'relaxed' });
    const s = tx.objectStore('cities');
    let sum = 0;
    for (let i = 0; i < N; i++) s.get(i).onsuccess = (e) => { sum += e.target.result.pop; };
    await done(tx);
    return sum;
  });
  await step('readwriteBurst', async () => {
    await Promise.all(Array.from({ length: READWRITE_TXS }, (_, i) => {
      const tx = db.transaction('cities', 'readwrite', { durability: 'relaxed' });
      tx.objectStore('cities').put(recs[i], N + i);
      return done(tx);
    }));
    const tx = db.transaction('cities', 'readonly');
    const count = await req(tx.objectStore('cities').count());
    return count;
  });
  db.close();
  return out;
}

compareSystems(__filename, 'bursts', runSteps);
