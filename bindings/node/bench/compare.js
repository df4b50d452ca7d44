'use strict';
// Runs a set of steps on this package and fake-indexeddb (and, with INDEXA_PACKAGE, a second
// build of this package), each system in a process of its own, RUNS times interleaved
// (default 3); checks that every system's check values agree and prints the medians as a
// Markdown table. Used by bursts.js and cursors.js:
//
//   compareSystems(__filename, 'prefix', runSteps)
//
// where `runSteps(factory)` resolves to `{ step: { ms, check } }`. The data directory of this
// package is a fresh one under INDEXA_BENCH_DIR (default the temporary directory).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { spawnSync } = require('node:child_process');

async function child(system, pkg, prefix, runSteps) {
  let factory;
  let dir = null;
  if (system === 'fake-indexeddb') {
    factory = require('fake-indexeddb').indexedDB;
  } else {
    const indexa = require(pkg);
    dir = fs.mkdtempSync(path.join(process.env.INDEXA_BENCH_DIR || os.tmpdir(), `indexa-${prefix}-`));
    factory = new indexa.IDBFactory({ dir });
  }
  const steps = await runSteps(factory);
  if (dir !== null) fs.rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify(steps)}\n`);
}

/** The median of `xs` (of an even count, the mean of the two middle values). */
function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

function main(script) {
  const runs = Number(process.env.RUNS || 3);
  const systems = [['indexa', path.join(__dirname, '..')], ['fake-indexeddb', null]];
  if (process.env.INDEXA_PACKAGE) systems.push(['indexa (other)', path.resolve(process.env.INDEXA_PACKAGE)]);
  const results = new Map(systems.map(([name]) => [name, []]));
  for (let run = 0; run < runs; run++) {
    for (const [name, pkg] of systems) {
      const kind = name === 'fake-indexeddb' ? 'fake-indexeddb' : 'indexa';
      const r = spawnSync(process.execPath, [script, '--child', kind, pkg || ''], { encoding: 'utf8' });
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

/**
 * The whole script: as a child (`--child SYSTEM PACKAGE`), runs the steps once and prints
 * them as JSON; else runs the children and prints the table.
 */
function compareSystems(script, prefix, runSteps) {
  if (process.argv[2] === '--child') {
    child(process.argv[3], process.argv[4], prefix, runSteps).catch((e) => {
      console.error(e);
      process.exit(1);
    });
  } else {
    main(script);
  }
}

module.exports = { compareSystems, median };
