'use strict';
// Runs the W3C web-platform-tests IndexedDB suite against this package and compares every
// subtest's status with expectations.json.
//
//   node wpt/run.js [--wpt-dir DIR] [--jobs N] [--update] [--expectations FILE] [--results FILE] [FILTER…]
//
// DIR holds IndexedDB/, resources/ and interfaces/ (default $WPT_DIR). Each test file, and each
// `// META: variant=` of it, runs in a fresh Node.js process (run-file.js) with its databases
// in a fresh directory; N processes run at a time (default 2). A file that errors or times out
// fails all of its subtests. The runner prints per-file and total counts, then every result
// that differs from the expectations (a regression, or a fix not recorded), and exits 1 if
// there is any. FILTERs (substrings of file names) run only the matching files, and then only
// their expectations are compared. `--update` rewrites the expectations from this run, keeping
// the reasons of entries that stay and taking the reasons of new ones from causes.js.
// `--results FILE` writes every subtest's status and message as JSON.

const { fork } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { metaOf } = require('./meta.js');

/** Files of IndexedDB/ that need a browser, with the reason. */
const BROWSER_ONLY = [
  [/\.html?$/, 'an HTML page (iframes, workers, origins)'],
  [/\.window\.js$/, 'needs a browser window (bfcache, workers)'],
  [/^storage-buckets\.https\.any\.js$/, 'the Storage Buckets API belongs to the browser'],
  [/^blob-contenttype\.any\.js$/, 'fetches a blob: URL from the page\'s origin'],
];

const NORMAL_TIMEOUT = 10000;
const LONG_TIMEOUT = 60000;

function parseArgs(argv) {
  const args = { wptDir: process.env.WPT_DIR, jobs: 2, update: false, filters: [], expectations: path.join(__dirname, 'expectations.json') };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--wpt-dir') args.wptDir = argv[++i];
    else if (a === '--jobs') args.jobs = Number(argv[++i]);
    else if (a === '--update') args.update = true;
    else if (a === '--expectations') args.expectations = argv[++i];
    else if (a === '--results') args.results = argv[++i];
    else args.filters.push(a);
  }
  if (!args.wptDir) throw new Error('no suite: give --wpt-dir or set WPT_DIR');
  return args;
}

/** The runs of the suite: `{ file, variant, key, long }` per file and variant; and the skipped files. */
function plan(wptDir, filters) {
  const runs = [];
  const skipped = [];
  const dir = path.join(wptDir, 'IndexedDB');
  for (const file of fs.readdirSync(dir).sort()) {
    if (!/\.(js|html?)$/.test(file) || !fs.statSync(path.join(dir, file)).isFile()) continue;
    if (filters.length > 0 && !filters.some((f) => file.includes(f))) continue;
    const browser = BROWSER_ONLY.find(([re]) => re.test(file));
    if (browser) {
      skipped.push([file, browser[1]]);
      continue;
    }
    if (!file.endsWith('.any.js')) continue;
    const meta = metaOf(fs.readFileSync(path.join(dir, file), 'utf8'));
    for (const variant of meta.variants) runs.push({ file, variant, key: file + variant, long: meta.long });
  }
  return { runs, skipped };
}

/**
 * Runs one file in a fresh process; resolves with `{ status, message, tests }`. The harness
 * times out after `timeout` ms (by default 10 s, 60 s for `// META: timeout=long`).
 */
function runOne(wptDir, run, timeout = run.long ? LONG_TIMEOUT : NORMAL_TIMEOUT) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'indexa-wpt-'));
  return new Promise((resolve) => {
    let result = null;
    let output = '';
    const child = fork(path.join(__dirname, 'run-file.js'), [wptDir, run.file, run.variant, String(timeout)], {
      env: { ...process.env, INDEXA_DATA_DIR: dataDir },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
    });
    child.stdout.on('data', (d) => { output += d; });
    child.stderr.on('data', (d) => { output += d; });
    child.on('message', (m) => { result = m; });
    // The harness times out by itself; this bounds a process stuck in synchronous code.
    const kill = setTimeout(() => child.kill('SIGKILL'), timeout + 10000);
    child.on('exit', (code, signal) => {
      clearTimeout(kill);
      fs.rmSync(dataDir, { recursive: true, force: true });
      if (result === null) {
        result = { status: signal === 'SIGKILL' ? 'TIMEOUT' : 'ERROR', message: `the process ended (${signal || code}) without results: ${output.trim().split('\n').slice(-3).join(' | ')}`, tests: [] };
      }
      resolve(result);
    });
  });
}

/**
 * The subtests' outcomes of a file's result: `{ name: { status, message } }`. In a file that
 * errored or timed out every subtest fails with the file's status; one without any subtest
 * reports the file itself as `(file)`.
 */
function outcomes(result) {
  const out = {};
  for (const t of result.tests) {
    const failedFile = result.status !== 'OK' && t.status === 'PASS';
    out[t.name] = failedFile ? { status: result.status, message: result.message } : { status: t.status, message: t.message };
  }
  if (result.status !== 'OK' && result.tests.length === 0) out['(file)'] = { status: result.status, message: result.message };
  return out;
}

async function runAll(wptDir, runs, jobs, onResult) {
  const results = new Map();
  let next = 0;
  async function worker() {
    while (next < runs.length) {
      const run = runs[next++];
      const result = await runOne(wptDir, run);
      results.set(run.key, result);
      onResult(run, result);
    }
  }
  await Promise.all(Array.from({ length: Math.max(1, jobs) }, worker));
  return results;
}

/** The differences between this run and the expectations, as lines to print. */
function compare(runs, results, expectations) {
  const lines = [];
  for (const run of runs) {
    const got = outcomes(results.get(run.key));
    const expected = expectations[run.key] || {};
    for (const [name, o] of Object.entries(got)) {
      const e = expected[name];
      if (o.status === 'PASS' && e) lines.push(`FIXED ${run.key} :: ${name} (expected ${e.status}, passes: remove it from expectations.json)`);
      else if (o.status !== 'PASS' && !e) lines.push(`REGRESSION ${run.key} :: ${name}: ${o.status} ${o.message || ''}`.trim());
      else if (o.status !== 'PASS' && e.status !== o.status) lines.push(`CHANGED ${run.key} :: ${name}: ${o.status} (expected ${e.status}) ${o.message || ''}`.trim());
    }
    for (const name of Object.keys(expected)) {
      if (!(name in got)) lines.push(`MISSING ${run.key} :: ${name} (expected ${expected[name].status}, not reported)`);
    }
  }
  for (const key of Object.keys(expectations)) {
    if (!runs.some((r) => r.key === key)) lines.push(`MISSING ${key} (in expectations.json, not run)`);
  }
  for (const [key, subtests] of Object.entries(expectations)) {
    for (const [name, e] of Object.entries(subtests)) {
      if (typeof e.reason !== 'string' || e.reason.trim() === '' || e.reason.includes('\n')) lines.push(`NO REASON ${key} :: ${name} (every entry needs a one-line reason)`);
    }
  }
  return lines;
}

/** New expectations from this run: reasons kept for entries that stay, else from causes.js. */
function updated(runs, results, old) {
  const { reasonFor } = require('./causes.js');
  const out = {};
  for (const run of runs) {
    const got = outcomes(results.get(run.key));
    for (const [name, o] of Object.entries(got)) {
      if (o.status === 'PASS') continue;
      const before = old[run.key] && old[run.key][name];
      const reason = before && before.status === o.status ? before.reason : reasonFor(run.file, name, o.status, o.message || '');
      (out[run.key] = out[run.key] || {})[name] = { status: o.status, reason };
    }
  }
  return out;
}

async function main() {
  const args = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const { runs, skipped } = plan(args.wptDir, args.filters);
  const filtered = args.filters.length > 0;
  for (const [file, reason] of skipped) console.log(`SKIP ${file}: ${reason}`);
  const results = await runAll(args.wptDir, runs, args.jobs, (run, result) => {
    const o = Object.values(outcomes(result));
    const pass = o.filter((x) => x.status === 'PASS').length;
    const file = result.status === 'OK' ? '' : ` [file ${result.status}: ${result.message}]`;
    console.log(`${String(pass).padStart(4)} / ${String(o.length).padEnd(4)} ${run.key}${file}`);
  });
  let pass = 0;
  let total = 0;
  for (const run of runs) {
    for (const o of Object.values(outcomes(results.get(run.key)))) {
      total++;
      if (o.status === 'PASS') pass++;
    }
  }
  if (args.results) {
    const all = Object.fromEntries(runs.map((r) => [r.key, outcomes(results.get(r.key))]));
    fs.writeFileSync(args.results, `${JSON.stringify(all, null, 1)}\n`);
  }
  const expectations = fs.existsSync(args.expectations) ? JSON.parse(fs.readFileSync(args.expectations, 'utf8')) : {};
  const scoped = filtered
    ? Object.fromEntries(Object.entries(expectations).filter(([k]) => runs.some((r) => r.key === k)))
    : expectations;
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.log(`WPT IndexedDB: ${pass} of ${total} subtests pass, in ${runs.length} runs of ${new Set(runs.map((r) => r.file)).size} files (${skipped.length} browser-only files skipped), ${seconds} s`);
  if (args.update) {
    const merged = filtered ? { ...expectations } : {};
    if (filtered) for (const r of runs) delete merged[r.key];
    Object.assign(merged, updated(runs, results, expectations));
    const sorted = Object.fromEntries(Object.keys(merged).sort().map((k) => [k, merged[k]]));
    fs.writeFileSync(args.expectations, `${JSON.stringify(sorted, null, 2)}\n`);
    console.log(`wrote ${args.expectations}`);
    return;
  }
  const diffs = compare(runs, results, scoped);
  for (const line of diffs) console.log(line);
  if (diffs.length > 0) {
    console.log(`${diffs.length} results differ from ${path.relative(process.cwd(), args.expectations)}`);
    process.exitCode = 1;
  } else {
    console.log(`every result matches ${path.relative(process.cwd(), args.expectations)}`);
  }
}

if (require.main === module) {
  main().catch((e) => {
    console.error(e.stack || String(e));
    process.exitCode = 2;
  });
}

module.exports = { runOne, outcomes };
