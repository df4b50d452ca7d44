'use strict';
// The JavaScript heap a request holds while it waits for its reply, in bytes per request:
// COUNT gets (each with an `onsuccess` handler, as the workload's), then COUNT puts, placed at
// once in one transaction on a store of 2,000 records {name, pop}, with a full garbage
// collection before and after placing them; the median of 3 rounds. A program that places
// many requests at once (a bulk put, `Promise.all` over many gets) holds this much per request
// until the replies come, and the young-generation collections meanwhile copy it.
//
//   node --expose-gc bindings/node/bench/pending-memory.js [COUNT]     # default 10000
//
// INDEXA_PACKAGE names another build of the package; INDEXA_BENCH_DIR the data directory's
// parent (default the temporary directory).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { req, done } = require('./workload.js');

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
  const dir = fs.mkdtempSync(path.join(process.env.INDEXA_BENCH_DIR || os.tmpdir(), 'indexa-pending-'));
  const factory = new indexa.IDBFactory({ dir });
  const open = factory.open('pending', 1);
  open.onupgradeneeded = () => open.result.createObjectStore('s');
  const db = await req(open);
  let tx = db.transaction('s', 'readwrite', { durability: 'relaxed' });
  for (let i = 0; i < STORE; i++) tx.objectStore('s').put({ name: `city ${i}`, pop: i }, i);
  await done(tx);
  const gets = [];
  const puts = [];
  let sum = 0;
  for (let round = 0; round < ROUNDS; round++) {
    tx = db.transaction('s', 'readonly');
    const s = tx.objectStore('s');
    gets.push(heldPer(count, () => {
      for (let i = 0; i < count; i++) s.get(i % STORE).onsuccess = (e) => { sum += e.target.result.pop; };
    }));
    await done(tx);
    tx = db.transaction('s', 'readwrite', { durability: 'relaxed' });
    const w = tx.objectStore('s');
    puts.push(heldPer(count, () => {
      for (let i = 0; i < count; i++) w.put({ name: `new ${i}`, pop: i }, STORE + i);
    }));
    await done(tx);
  }
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ count, bytesPerGet: Math.round(median(gets)), bytesPerPut: Math.round(median(puts)), check: sum })}\n`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
