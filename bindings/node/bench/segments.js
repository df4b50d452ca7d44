'use strict';
// Where a small transaction's time goes, and how much of it is a process's first run of the
// package's code. First, OPENS databases opened and upgraded one after the other (a store and
// an index, as the workload's), each timed in milliseconds: the first is the process's first
// run of that code. Then ROUNDS rounds of COUNT transactions, one after the other, of one
// `get` (readonly, on a store of 1,000 records) and of one relaxed `put` (readwrite), each
// timed in four segments, mean microseconds per transaction:
//   tx        db.transaction() (a transaction's begin may run in it, on Node's thread)
//   request   objectStore().get() or put() (the value's clone, the request placed)
//   success   from the request placed to its success event
//   complete  from the success event to `complete` and the program's await resuming
// The gets' values are summed into `check`.
//
//   node bindings/node/bench/segments.js [COUNT] [ROUNDS] [OPENS]    # default 2000 4 4
//
// INDEXA_PACKAGE names another build of the package; INDEXA_BENCH_DIR the data directory's
// parent (default the temporary directory).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { req, done, openFilled } = require('./workload.js');

const indexa = require(process.env.INDEXA_PACKAGE ? path.resolve(process.env.INDEXA_PACKAGE) : '..');

/** Records in the store before the rounds; the puts write keys from here on. */
const STORE = 1000;

/**
 * One round of `count` transactions of `mode` (the puts' keys from `firstKey` on); the mean
 * µs per transaction of each segment.
 */
async function round(db, mode, count, firstKey, check) {
  const sum = { tx: 0, request: 0, success: 0, complete: 0 };
  for (let j = 0; j < count; j++) {
    const t0 = performance.now();
    const tx = mode === 'readonly'
      ? db.transaction('s', 'readonly')
      : db.transaction('s', 'readwrite', { durability: 'relaxed' });
    const t1 = performance.now();
    const s = tx.objectStore('s');
    const r = mode === 'readonly' ? s.get(j % STORE) : s.put({ name: `city ${j}`, pop: j }, firstKey + j);
    const t2 = performance.now();
    let t3 = NaN;
    r.onsuccess = () => {
      t3 = performance.now();
      if (mode === 'readonly') check.sum += r.result.pop;
    };
    await done(tx);
    const t4 = performance.now();
    if (Number.isNaN(t3)) throw new Error(`a ${mode} transaction completed without its request's success event`);
    sum.tx += t1 - t0;
    sum.request += t2 - t1;
    sum.success += t3 - t2;
    sum.complete += t4 - t3;
  }
  const out = {};
  for (const [k, v] of Object.entries(sum)) out[k] = Number(((v * 1000) / count).toFixed(1));
  return out;
}

/** `count` databases opened and upgraded one after the other; milliseconds each. */
async function opens(factory, count) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    const open = factory.open(`opened ${i}`, 1);
    open.onupgradeneeded = () => open.result.createObjectStore('cities').createIndex('country', 'country');
    const db = await req(open);
    out.push(Number((performance.now() - t).toFixed(2)));
    db.close();
  }
  return out;
}

async function measure(dir, count, rounds, openCount) {
  const factory = new indexa.IDBFactory({ dir });
  // The opens first: the first of them is the process's first run of the package's code.
  const opened = await opens(factory, openCount);
  const db = await openFilled(factory, 'segments', STORE);
  const out = { count, opens: opened, readonly: [], readwrite: [] };
  const check = { sum: 0 };
  for (const mode of ['readonly', 'readwrite']) {
    for (let i = 0; i < rounds; i++) out[mode].push(await round(db, mode, count, STORE + i * count, check));
  }
  db.close();
  out.check = check.sum;
  return out;
}

async function main() {
  const [count, rounds, openCount] = [2000, 4, 4].map((d, i) => Number(process.argv[2 + i] || d));
  if (![count, rounds, openCount].every((n) => Number.isInteger(n) && n >= 1)) {
    throw new Error('COUNT, ROUNDS and OPENS must be positive integers');
  }
  const dir = fs.mkdtempSync(path.join(process.env.INDEXA_BENCH_DIR || os.tmpdir(), 'indexa-segments-'));
  try {
    process.stdout.write(`${JSON.stringify(await measure(dir, count, rounds, openCount))}\n`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
