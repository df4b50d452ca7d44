'use strict';
// Runs bench/workload.js once against one system in this process and prints its results as
// one line of JSON: `node bench/system.js indexa|fake-indexeddb N CITIES_JSON`.
//
// indexa runs on a fresh data directory under INDEXA_BENCH_DIR (default: the operating
// system's temporary directory), which must be on disk, not tmpfs (bench/run.js checks).
// For indexa with INDEXA_BENCH_TASKS=1, each step's `observed.longestTaskMs` is the longest
// task the package ran on Node's thread during the step: a batch of replies from the engine
// (turning results into JavaScript values, up to 256 records per cursor batch) or a
// setImmediate callback, with the ticks and promise reactions that follow it before the
// event loop takes its next callback (dispatching events, the benchmark's own trivial event
// handlers), timed through async_hooks (see `taskTimer`). Those hooks run for every promise
// and make the package's steps 1.4–2.3× slower, so a timed run's step times are not
// comparable (bench.js makes one such run apart from the others).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { makeRecords, runWorkload } = require('./workload.js');

/**
 * Times the package's tasks as the event loop sees them: a task starts with a callback of an
 * async resource of `types` (a batch of replies, a `setImmediate`) and lasts until the last
 * tick or promise reaction that follows it before the next such callback — the process
 * ticks and microtasks a callback queues run before the event loop takes its next callback,
 * so they are part of the task. `observe(step)` (as runWorkload takes it) keeps the longest
 * task of each step, in milliseconds, as `longestTaskMs`; the benchmark's own code that
 * starts a step (placing its requests) is not part of a task.
 */
function taskTimer(types) {
  const asyncHooks = require('node:async_hooks');
  // Resource id → whether it is an Immediate.
  const tracked = new Map();
  let depth = 0;
  let start = -1;
  let lastEnd = 0;
  let longest = 0;
  const close = () => {
    if (start >= 0) longest = Math.max(longest, lastEnd - start);
    start = -1;
  };
  const hook = asyncHooks.createHook({
    // No destroy hook: one makes Node watch every promise for its collection, which made the
    // young generation's collections take about twice as long. A thread-safe function is one
    // resource for its connection's life; an Immediate runs once, so it is forgotten then.
    init(id, type) { if (types.has(type)) tracked.set(id, type === 'Immediate'); },
    before(id) {
      if (depth++ === 0 && tracked.has(id)) {
        if (tracked.get(id)) tracked.delete(id);
        close();
        start = performance.now();
      }
    },
    after() {
      depth--;
      lastEnd = performance.now();
    },
  });
  hook.enable();
  return () => {
    lastEnd = performance.now();
    close();
    longest = 0;
    return () => {
      close();
      return { longestTaskMs: longest };
    };
  };
}

async function main() {
  const [system, nText, citiesPath] = process.argv.slice(2);
  const n = Number(nText);
  const records = makeRecords(JSON.parse(fs.readFileSync(citiesPath, 'utf8')), n);
  let factory;
  let KeyRange;
  let dir = null;
  let timer = null;
  if (system === 'indexa') {
    const indexa = require('..');
    dir = fs.mkdtempSync(path.join(process.env.INDEXA_BENCH_DIR || os.tmpdir(), 'indexa-bench-'));
    factory = new indexa.IDBFactory({ dir });
    KeyRange = indexa.IDBKeyRange;
    // The addon's reply batches arrive through a thread-safe function (async resource type
    // 'napi_rs_threadsafe_function'); the package's own deferred work runs in setImmediate.
    if (process.env.INDEXA_BENCH_TASKS === '1') timer = taskTimer(new Set(['napi_rs_threadsafe_function', 'Immediate']));
  } else if (system === 'fake-indexeddb') {
    const fake = require('fake-indexeddb');
    factory = fake.indexedDB;
    KeyRange = fake.IDBKeyRange;
  } else {
    throw new Error(`unknown system ${system}`);
  }
  const steps = await runWorkload(factory, KeyRange, records, () => performance.now(), timer);
  if (dir !== null) fs.rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ system, n, steps })}\n`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
