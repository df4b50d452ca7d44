'use strict';
// Values only structured clone carries (Maps, Sets, typed arrays, BigInts, shared
// references) survive `indexa dump` and `indexa restore`, read back through this package.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IDBFactory } = require('..');
const { freshFactory, done, open, finished } = require('./helpers.js');

/** The `indexa` binary of this build (scripts/test.sh builds it). */
const indexa = path.join(
  process.env.CARGO_TARGET_DIR || path.join(__dirname, '..', '..', '..', 'target'),
  'debug',
  'indexa',
);

function run(args, input) {
  const out = spawnSync(indexa, args, { encoding: 'utf8', input });
  assert.equal(out.status, 0, `${args.join(' ')}: ${out.stderr}`);
  return out.stdout;
}

test('structured-clone values survive indexa dump and restore', async () => {
  const { factory, dir } = freshFactory();
  const shared = { n: 1 };
  const value = {
    map: new Map([['k', [1, 2]], [3, new Set(['x'])]]),
    bytes: new Uint8Array([0, 255, 7]),
    big: 12345678901234567890n,
    twice: [shared, shared],
    date: new Date(5),
  };
  const db = await open(factory, 'clone', 1, (db) => {
    db.createObjectStore('s', { autoIncrement: true }).createIndex('by_date', 'date');
  });
  const tx = db.transaction('s', 'readwrite');
  tx.objectStore('s').put(value);
  tx.objectStore('s').put('plain');
  await finished(tx);
  db.close();

  const dumped = run(['--data-dir', dir, 'dump', 'clone']);
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'indexa-dump-')), 'clone.dump');
  fs.writeFileSync(file, dumped);
  const other = fs.mkdtempSync(path.join(os.tmpdir(), 'indexa-restore-'));
  run(['--data-dir', other, 'restore', 'clone', file]);
  assert.equal(run(['--data-dir', other, 'dump', 'clone']), dumped);

  const restored = await open(new IDBFactory({ dir: other }), 'clone');
  const store = restored.transaction('s').objectStore('s');
  const [back, plain] = await done(store.getAll());
  assert.equal(plain, 'plain');
  assert.deepEqual(back.map, value.map);
  assert.ok(back.map.get(3) instanceof Set);
  assert.ok(back.bytes instanceof Uint8Array);
  assert.deepEqual([...back.bytes], [0, 255, 7]);
  assert.equal(back.big, 12345678901234567890n);
  assert.equal(back.twice[0], back.twice[1]);
  assert.equal(back.date.getTime(), 5);
  assert.deepEqual(await done(store.index('by_date').getAllKeys()), [1]);
  restored.close();
});

test('Blob and File values: indexa export shows a $structuredClone tag, import reads it back', async () => {
  const { factory, dir } = freshFactory();
  const db = await open(factory, 'files', 1, (db) => {
    db.createObjectStore('s', { keyPath: 'id', autoIncrement: true });
  });
  const tx = db.transaction('s', 'readwrite');
  tx.objectStore('s').put({ file: new File(['hi'], 'h.txt', { type: 'text/plain', lastModified: 9 }), list: [new Blob(['x'])] });
  await finished(tx);
  db.close();

  const exported = run(['--data-dir', dir, 'export', 'files', 's']);
  // The generated key comes after the serialization in the stored object; no internal
  // member name shows.
  assert.doesNotMatch(exported, /\\u0000/);
  const line = JSON.parse(exported);
  assert.equal(line.key, 1);
  assert.deepEqual(line.value.$structuredClone.value, {
    file: { size: 2, type: 'text/plain', name: 'h.txt', lastModified: 9 },
    list: [{ size: 1, type: '' }],
    id: 1,
  });
  assert.match(line.value.$structuredClone.serialized.$binary, /^[A-Za-z0-9+/]+=*$/);

  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'indexa-export-')), 's.ndjson');
  fs.writeFileSync(file, exported);
  run(['--data-dir', dir, 'import', 'copy', 's', file, '--format', 'export', '--key-path', 'id', '--auto-increment']);
  const copy = await open(new IDBFactory({ dir }), 'copy');
  const back = await done(copy.transaction('s').objectStore('s').get(1));
  assert.ok(back.file instanceof File);
  assert.equal(back.file.name, 'h.txt');
  assert.equal(await back.file.text(), 'hi');
  assert.equal(await back.list[0].text(), 'x');
  assert.equal(back.id, 1);
  copy.close();
});
