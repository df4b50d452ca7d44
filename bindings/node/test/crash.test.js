'use strict';
// The crash test at the JavaScript level (RELIABILITY.md): a child Node process commits
// readwrite transactions through this package and prints each transaction's id on `complete`;
// the parent kills it with SIGKILL at random moments (a fixed seed), 50 times per durability,
// on one database. Afterwards every printed id is on disk and no transaction is half there:
// each one's records are all present, and the running count in a second object store equals
// the number of records. INDEXA_NODE_CRASH_KILLS=N sets another number of kills.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const { IDBFactory } = require('..');
const { freshPlace, open, done } = require('./helpers.js');

const kills = Number(process.env.INDEXA_NODE_CRASH_KILLS || 50);

// Transaction id = run × 1,000,000 + sequence; each writes 1 to 3 records [id, part] and adds
// their number to `count` in the same transaction. Two chains of transactions are in flight.
const child = `
const fs = require('node:fs');
const { IDBFactory } = require(${JSON.stringify(path.join(__dirname, '..'))});
const [dir, durability, run] = process.argv.slice(1);
const request = new IDBFactory({ dir }).open('crash', 1);
request.onupgradeneeded = () => {
  request.result.createObjectStore('parts', { keyPath: ['tx', 'part'] });
  request.result.createObjectStore('totals');
};
request.onsuccess = () => {
  const db = request.result;
  fs.writeSync(1, 'ready\\n');
  let seq = 0;
  const next = () => {
    const id = Number(run) * 1e6 + seq++;
    const tx = db.transaction(['parts', 'totals'], 'readwrite', { durability });
    const n = 1 + (id % 3);
    for (let part = 0; part < n; part++) {
      tx.objectStore('parts').put({ tx: id, part, of: n, pad: 'x'.repeat(100 * part) });
    }
    const totals = tx.objectStore('totals');
    const get = totals.get('count');
    get.onsuccess = () => totals.put((get.result || 0) + n, 'count');
    tx.oncomplete = () => { fs.writeSync(1, id + '\\n'); next(); };
  };
  next();
  next();
};
`;

/** A small seeded generator (mulberry32): the same kill moments on every run. */
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t ^= t + Math.imul(t ^ (t >>> 7), 61 | t);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/**
 * Runs the child once and kills it: one time in five at a random moment from its start
 * (opening and the first upgrade included), otherwise at a random moment up to 150 ms after
 * it opened the database. Resolves with the ids it printed.
 */
function runAndKill(dir, durability, run, rand) {
  return new Promise((resolve, reject) => {
    const proc = spawn(process.execPath, ['-e', child, dir, durability, String(run)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    let timer = null;
    const kill = () => proc.kill('SIGKILL');
    const anywhere = rand() < 0.2;
    if (anywhere) timer = setTimeout(kill, rand() * 300);
    const delay = rand() * 150;
    proc.stdout.on('data', (chunk) => {
      if (!anywhere && timer === null && (out + chunk).includes('ready\n')) timer = setTimeout(kill, delay);
      out += chunk;
    });
    proc.stderr.on('data', (chunk) => { err += chunk; });
    proc.on('error', reject);
    proc.on('close', (code, signal) => {
      clearTimeout(timer);
      if (signal !== 'SIGKILL') return reject(new Error(`the child ended with ${code} before the kill: ${err}`));
      // Only whole lines were printed before the kill; a last partial line is dropped.
      const lines = out.split('\n').slice(0, -1).filter((line) => line !== 'ready');
      resolve(lines.map(Number));
    });
  });
}

for (const durability of ['strict', 'relaxed']) {
  test(`a killed child loses no acknowledged transaction and leaves none half there (${durability})`, { timeout: 10 * 60 * 1000 }, async () => {
    const dir = freshPlace();
    try {
      const rand = random(durability === 'strict' ? 16 : 61);
      const printed = [];
      for (let run = 1; run <= kills; run++) printed.push(...await runAndKill(dir, durability, run, rand));
      assert.ok(printed.length > kills, `only ${printed.length} transactions acknowledged in ${kills} runs`);

      const db = await open(new IDBFactory({ dir }), 'crash', 1);
      const tx = db.transaction(['parts', 'totals'], 'readonly');
      const [parts, count] = await Promise.all([
        done(tx.objectStore('parts').getAll()),
        done(tx.objectStore('totals').get('count')),
      ]);
      db.close();

      const byTx = new Map();
      for (const record of parts) {
        if (!byTx.has(record.tx)) byTx.set(record.tx, []);
        byTx.get(record.tx).push(record);
      }
      for (const id of printed) assert.ok(byTx.has(id), `acknowledged transaction ${id} is missing`);
      for (const [id, records] of byTx) {
        const n = 1 + (id % 3);
        assert.deepEqual(records.map((r) => [r.part, r.of, r.pad.length]),
          Array.from({ length: n }, (_, part) => [part, n, 100 * part]), `transaction ${id}`);
      }
      assert.equal(count, parts.length);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
}
