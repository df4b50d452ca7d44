'use strict';
// Runs bench/workload.js once against one system in this process and prints its results as
// one line of JSON: `node bench/system.js indexa|fake-indexeddb N CITIES_JSON`.
//
// indexa runs on a fresh data directory under INDEXA_BENCH_DIR (default: the operating
// system's temporary directory), which must be on disk, not tmpfs (bench/run.js checks).
// For indexa with INDEXA_BENCH_TASKS=1, each step's `observed.longestTaskMs` is the longest
// single callback the package ran on Node's thread during the step: each batch of replies
// from the engine (turning results into JavaScript values, up to 256 records per cursor
// batch, and dispatching their events, with the benchmark's own trivial event handlers) and
// each setImmediate callback, timed through async_hooks. Those hooks run for every promise
// and make the package's steps 1.4–2.3× slower, so a timed run's step times are not
// comparable (bench.js makes one such run apart from the others).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { makeRecords, runWorkload } = require('./workload.js');

/**
 * Times every callback of the async resources of `types`: `observe(step)` (as runWorkload
 * takes it) keeps the longest callback of each step, in milliseconds, as `longestTaskMs`.
 */
function taskTimer(types) {
  const asyncHooks = require('node:async_hooks');
  const tracked = new Set();
  const begun = new Map();
  let longest = 0;
  const hook = asyncHooks.createHook({
    init(id, type) { if (types.has(type)) tracked.add(id); },
    before(id) { if (tracked.has(id)) begun.set(id, performance.now()); },
    after(id) {
      const t = begun.get(id);
      if (t === undefined) return;
      begun.delete(id);
      longest = Math.max(longest, performance.now() - t);
    },
    destroy(id) { tracked.delete(id); },
  });
  hook.enable();
  return () => {
    longest = 0;
    return () => ({ longestTaskMs: longest });
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
