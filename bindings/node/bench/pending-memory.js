'use strict';
// The JavaScript heap a request holds while it waits for its reply, in bytes per request:
// COUNT gets (each with an `onsuccess` handler, as the workload's), then COUNT puts, each kind
// placed at once in a transaction of its own on a store of 2,000 records {name, pop}, with a
// full garbage collection before and after placing them; the median of 3 rounds. A program
// that places many requests at once (a bulk put, `Promise.all` over many gets) holds this much
// per request until the replies come. The figure includes each request's share of the
// connection's and the transaction's tables of pending requests, which grow in steps, so it
// moves a little with COUNT; compare builds at the same COUNT.
//
//   node --expose-gc bindings/node/bench/pending-memory.js [COUNT]     # default 10000
//
// INDEXA_PACKAGE names another build of the package; INDEXA_BENCH_DIR the data directory's
// parent (default the temporary directory).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { done, openFilled } = require('./workload.js');

const indexa = require(process.env.INDEXA_PACKAGE ? path.resolve(process.env.INDEXA_PACKAGE) : '..');

const STORE = 2000;
const ROUNDS = 3;

/** Heap bytes per request that `place()` leaves held, after full collections on both sides. */
function heldPer(count, place) {
  global.gc();
  const before = process.memoryUsage().heapUsed;
  place();
  global.gc();
  return (process.memoryUsage().heapUsed - before) / count;
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1];
}

async function main() {
  if (typeof global.gc !== 'function') throw new Error('run with node --expose-gc');
  const count = Number(process.argv[2] || 10000);
  if (!Number.isInteger(count) || count < 1) throw new Error('COUNT must be a positive integer');
  const dir = fs.mkdtempSync(path.join(process.env.INDEXA_BENCH_DIR || os.tmpdir(), 'indexa-pending-'));
  try {
    process.stdout.write(`${JSON.stringify(await measure(dir, count))}\n`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** The medians of the rounds, as `{ count, bytesPerGet, bytesPerPut, check }`. */
async function measure(dir, count) {
  const db = await openFilled(new indexa.IDBFactory({ dir }), 'pending', STORE);
  const gets = [];
  const puts = [];
  let sum = 0;
  for (let round = 0; round < ROUNDS; round++) {
    const reading = db.transaction('s', 'readonly');
    const s = reading.objectStore('s');
    gets.push(heldPer(count, () => {
      for (let i = 0; i < count; i++) s.get(i % STORE).onsuccess = (e) => { sum += e.target.result.pop; };
    }));
    await done(reading);
    const writing = db.transaction('s', 'readwrite', { durability: 'relaxed' });
    const w = writing.objectStore('s');
    puts.push(heldPer(count, () => {
      for (let i = 0; i < count; i++) w.put({ name: `new ${i}`, pop: i }, STORE + i);
    }));
    await done(writing);
  }
  db.close();
  return { count, bytesPerGet: Math.round(median(gets)), bytesPerPut: Math.round(median(puts)), check: sum };
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
