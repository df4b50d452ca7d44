'use strict';
// Same workloads, same process: this package (on a temporary directory, durability as
// given) against fake-indexeddb (in memory). Prints one line per workload and engine.
//   N=20000 node bench/bench.js
const { performance } = require('node:perf_hooks');
const indexa = require('..');
const fake = require('fake-indexeddb');

const N = Number(process.env.N || 20000);

function req(r) {
  return new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
}

function txDone(tx) {
  return new Promise((resolve, reject) => { tx.oncomplete = resolve; tx.onabort = () => reject(tx.error); });
}

async function run(name, factory, KeyRange) {
  const open = factory.open('bench', 1);
  open.onupgradeneeded = () => {
    const s = open.result.createObjectStore('items', { keyPath: 'id' });
    s.createIndex('by_group', 'group');
  };
  const db = await req(open);
  const rows = [];
  const time = async (label, f) => {
    const t = performance.now();
    const detail = await f();
    rows.push(`${name.padEnd(14)} ${label.padEnd(34)} ${(performance.now() - t).toFixed(0).padStart(7)} ms ${detail || ''}`);
  };
  await time(`bulk put ${N} (one transaction)`, async () => {
    const tx = db.transaction('items', 'readwrite', { durability: 'relaxed' });
    const s = tx.objectStore('items');
    for (let i = 0; i < N; i++) s.put({ id: i, group: i % 100, name: `item ${i}`, tags: ['a', 'b'] });
    await txDone(tx);
  });
  await time(`get ${N} (one transaction)`, async () => {
    const tx = db.transaction('items');
    const s = tx.objectStore('items');
    const all = [];
    for (let i = 0; i < N; i++) all.push(req(s.get(i)));
    await Promise.all(all);
    await txDone(tx);
  });
  await time('index getAll x100 (count 50)', async () => {
    const tx = db.transaction('items');
    const ix = tx.objectStore('items').index('by_group');
    let total = 0;
    for (let g = 0; g < 100; g++) total += (await req(ix.getAll(g, 50))).length;
    await txDone(tx);
    return `(${total} records)`;
  });
  await time('index count x100', async () => {
    const tx = db.transaction('items');
    const ix = tx.objectStore('items').index('by_group');
    let total = 0;
    for (let g = 0; g < 100; g++) total += await req(ix.count(KeyRange.only(g)));
    await txDone(tx);
    return `(${total})`;
  });
  await time(`cursor scan ${N}`, async () => {
    const tx = db.transaction('items');
    let n = 0;
    await new Promise((resolve) => {
      const r = tx.objectStore('items').openCursor();
      r.onsuccess = () => { const c = r.result; if (!c) return resolve(); n++; c.continue(); };
    });
    await txDone(tx);
    return `(${n} records)`;
  });
  db.close();
  return rows;
}

(async () => {
  const rows = [
    ...(await run('indexa', new indexa.IDBFactory({ memory: true }), indexa.IDBKeyRange)),
    ...(await run('fake-indexeddb', fake.indexedDB, fake.IDBKeyRange)),
  ];
  console.log(`node ${process.version}, N=${N}`);
  for (const r of rows) console.log(r);
})();
