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
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { spawnSync } = require('node:child_process');
const { req, done } = require('./workload.js');

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

async function child(system, pkg) {
  let factory;
  let dir = null;
  if (system === 'fake-indexeddb') {
    factory = require('fake-indexeddb').indexedDB;
  } else {
    const indexa = require(pkg);
    dir = fs.mkdtempSync(path.join(process.env.INDEXA_BENCH_DIR || os.tmpdir(), 'indexa-bursts-'));
    factory = new indexa.IDBFactory({ dir });
  }
  const steps = await runSteps(factory);
  if (dir !== null) fs.rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify(steps)}\n`);
}

function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function main() {
  const runs = Number(process.env.RUNS || 3);
  const systems = [['indexa', path.join(__dirname, '..')], ['fake-indexeddb', null]];
  if (process.env.INDEXA_PACKAGE) systems.push(['indexa (other)', path.resolve(process.env.INDEXA_PACKAGE)]);
  const results = new Map(systems.map(([name]) => [name, []]));
  for (let run = 0; run < runs; run++) {
    for (const [name, pkg] of systems) {
      const kind = name === 'fake-indexeddb' ? 'fake-indexeddb' : 'indexa';
      const r = spawnSync(process.execPath, [__filename, '--child', kind, pkg || ''], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${name} failed (${r.status}): ${r.stderr}`);
      results.get(name).push(JSON.parse(r.stdout.trim().split('\n').pop()));
      process.stderr.write(`run ${run + 1}/${runs}: ${name} done\n`);
    }
  }
  const steps = Object.keys(results.get('indexa')[0]);
  for (const s of steps) {
    const checks = new Set(systems.flatMap(([name]) => results.get(name).map((o) => o[s].check)));
    if (checks.size !== 1) throw new Error(`${s}: the systems disagree: ${[...checks].join(', ')}`);
  }
  const names = systems.map(([name]) => name);
  console.log(`node ${process.version}, medians of ${runs} interleaved runs`);
  console.log(`\n| step | ${names.join(' | ')} |\n|---|${names.map(() => '---|').join('')}`);
  for (const s of steps) {
    const cells = names.map((name) => `${median(results.get(name).map((o) => o[s].ms)).toFixed(1)} ms`);
    console.log(`| ${s} | ${cells.join(' | ')} |`);
  }
}

if (process.argv[2] === '--child') {
  child(process.argv[3], process.argv[4]).catch((e) => {
    console.error(e);
    process.exit(1);
  });
} else {
  main();
}
