'use strict';
// One step of the package's work, COUNT times, for counting instructions under callgrind
// (bench/callgrind.sh): `node bench/instructions.js STEP COUNT` on a fresh store of 2,000
// records {name, country, lat, lng, pop} in a data directory under INDEXA_BENCH_DIR (default
// the temporary directory). INDEXA_PACKAGE names another build of the package to run.
//   gets    COUNT gets in one readonly transaction
//   cursor  a cursor stepped with continue() over COUNT records (a store of 2,000 + COUNT)
//   puts    COUNT puts in one relaxed readwrite transaction
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { req, done, sumOverCursor } = require('./workload.js');

const indexa = require(process.env.INDEXA_PACKAGE ? path.resolve(process.env.INDEXA_PACKAGE) : '..');

const STORE = 2000;

async function main() {
  const [step, countText] = process.argv.slice(2);
  const count = Number(countText);
  const size = step === 'cursor' ? STORE + count : STORE;
  const records = Array.from({ length: Math.max(size, count) }, (_, i) => (
    { name: `city ${i}`, country: `C${i % 50}`, lat: i / 7, lng: i / 3, pop: i }));
  const dir = fs.mkdtempSync(path.join(process.env.INDEXA_BENCH_DIR || os.tmpdir(), 'indexa-instructions-'));
  const factory = new indexa.IDBFactory({ dir });
  const open = factory.open('instructions', 1);
  open.onupgradeneeded = () => open.result.createObjectStore('s');
  const db = await req(open);
  let tx = db.transaction('s', 'readwrite', { durability: 'relaxed' });
  if (step !== 'puts') for (let i = 0; i < size; i++) tx.objectStore('s').put(records[i], i);
  await done(tx);
  let sum = 0;
  if (step === 'gets') {
    tx = db.transaction('s', 'readonly');
    const s = tx.objectStore('s');
    for (let i = 0; i < count; i++) s.get(i % STORE).onsuccess = (e) => { sum += e.target.result.pop; };
    await done(tx);
  } else if (step === 'cursor') {
    tx = db.transaction('s', 'readonly');
    sum = await sumOverCursor(tx, tx.objectStore('s').openCursor(indexa.IDBKeyRange.upperBound(count - 1)));
  } else if (step === 'puts') {
    tx = db.transaction('s', 'readwrite', { durability: 'relaxed' });
    for (let i = 0; i < count; i++) tx.objectStore('s').put(records[i], i);
    await done(tx);
  } else {
    throw new Error(`unknown step ${step}`);
  }
  db.close();
  fs.rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${sum}\n`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
