'use strict';
// Every distinct IndexedDB name (a string of UTF-16 code units, lone surrogates included) is
// its own database, listed and deleted exactly; and hostile files in the data directory never
// block databases() or open().
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { onPostgres, freshFactory, open, done } = require('./helpers.js');

test('lone-surrogate database names do not collide', async () => {
  const { factory } = freshFactory();
  const names = ['\ud800', '\udc00', '\ufffd', '\udc00\ud800', '\ud834\udd1e'];
  for (const [i, name] of names.entries()) {
    const db = await open(factory, name, 1, (d) => d.createObjectStore(`store${i}`));
    assert.equal(db.name, name);
    assert.deepEqual([...db.objectStoreNames], [`store${i}`]);
    db.close();
  }
  for (const [i, name] of names.entries()) {
    const db = await open(factory, name);
    assert.deepEqual([...db.objectStoreNames], [`store${i}`], `database ${JSON.stringify(name)}`);
    db.close();
  }
  const listed = await factory.databases();
  assert.deepEqual(
    listed.map((d) => [d.name, d.version]),
    // Code-unit order.
    [['\ud800', 1], ['\ud834\udd1e', 1], ['\udc00', 1], ['\udc00\ud800', 1], ['\ufffd', 1]],
  );
  await done(factory.deleteDatabase('\udc00'));
  const left = (await factory.databases()).map((d) => d.name);
  assert.deepEqual(left, ['\ud800', '\ud834\udd1e', '\udc00\ud800', '\ufffd']);
  const db = await open(factory, '\ufffd');
  assert.deepEqual([...db.objectStoreNames], ['store2']);
  db.close();
});

test('a FIFO in the data directory blocks neither databases() nor open()', { skip: onPostgres && 'SQLite only: a FIFO in a directory is what it tests' }, async () => {
  const { factory, dir } = freshFactory();
  const db = await open(factory, 'good', 1, (d) => d.createObjectStore('s'));
  db.close();
  execFileSync('mkfifo', [path.join(dir, 'db-f.indexa')]);
  assert.deepEqual((await factory.databases()).map((d) => d.name), ['good']);
  const err = await open(factory, 'f', 1).then(() => null, (e) => e);
  assert.equal(err.name, 'UnknownError');
  assert.equal(
    err.message,
    `${path.join(path.resolve(dir), 'db-f.indexa')} is a FIFO, not a regular file, so it is not an Indexa database; it was left as it is`,
  );
  const again = await open(factory, 'good');
  assert.deepEqual([...again.objectStoreNames], ['s']);
  again.close();
});

test('object store and index names with lone surrogates are kept exactly', async () => {
  const { factory } = freshFactory();
  const stores = ['\ud800', '\udc00', '\ufffd', 'a\udbff'];
  let db = await open(factory, 'db', 1, (d) => {
    for (const name of stores) d.createObjectStore(name);
    const s = d.createObjectStore('indexed', { keyPath: 'id' });
    s.createIndex('\ud800', 'x');
    s.createIndex('\ufffd', 'y');
  });
  const tx = db.transaction(stores, 'readwrite');
  stores.forEach((name, i) => tx.objectStore(name).put(i, 1));
  await new Promise((resolve, reject) => { tx.oncomplete = resolve; tx.onabort = () => reject(tx.error); });
  db.close();
  db = await open(factory, 'db', 2, (d, t) => {
    t.objectStore('\udc00').name = '\udfff';
    t.objectStore('indexed').index('\ufffd').name = '\udc01';
  });
  const expected = ['\ud800', '\udfff', '\ufffd', 'a\udbff', 'indexed'].sort();
  assert.deepEqual([...db.objectStoreNames], expected);
  const read = db.transaction(['\ud800', '\udfff', '\ufffd', 'a\udbff', 'indexed']);
  const values = await Promise.all(
    ['\ud800', '\udfff', '\ufffd', 'a\udbff'].map((name) => done(read.objectStore(name).get(1))),
  );
  assert.deepEqual(values, [0, 1, 2, 3]);
  assert.deepEqual([...read.objectStore('indexed').indexNames], ['\ud800', '\udc01']);
  assert.equal(read.objectStore('indexed').index('\udc01').name, '\udc01');
  db.close();
});
