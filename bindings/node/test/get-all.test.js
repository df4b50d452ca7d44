'use strict';
// getAllRecords(), IDBRecord and the IDBGetAllOptions form of getAll()/getAllKeys()
// (IndexedDB 3.0, "create a request to retrieve multiple items").
const test = require('node:test');
const assert = require('node:assert/strict');
const { IDBKeyRange, IDBRecord } = require('..');
const { freshFactory, done, open } = require('./helpers.js');

/** Records `[primaryKey, tags]` in store `s` with a multiEntry index `by_tag` on `tags`. */
async function tagged() {
  const { factory } = freshFactory();
  const db = await open(factory, 'db', 1, (db) => {
    const s = db.createObjectStore('s');
    s.createIndex('by_tag', 'tags', { multiEntry: true });
    s.put({ tags: ['x', 'y'] }, 1);
    s.put({ tags: ['y'] }, 2);
    s.put({ tags: ['x', 'z'] }, 3);
  });
  return db;
}

function plain(records) {
  return records.map((r) => [r.key, r.primaryKey, r.value.tags.join('')]);
}

test('getAllRecords on a multiEntry index, in each direction', async () => {
  const db = await tagged();
  const ix = db.transaction('s').objectStore('s').index('by_tag');
  const next = await done(ix.getAllRecords());
  assert.ok(next[0] instanceof IDBRecord);
  assert.equal(Object.prototype.toString.call(next[0]), '[object IDBRecord]');
  assert.deepEqual(plain(next), [['x', 1, 'xy'], ['x', 3, 'xz'], ['y', 1, 'xy'], ['y', 2, 'y'], ['z', 3, 'xz']]);
  assert.deepEqual(plain(await done(ix.getAllRecords({ direction: 'prev' }))),
    [['z', 3, 'xz'], ['y', 2, 'y'], ['y', 1, 'xy'], ['x', 3, 'xz'], ['x', 1, 'xy']]);
  assert.deepEqual(plain(await done(ix.getAllRecords({ direction: 'nextunique' }))),
    [['x', 1, 'xy'], ['y', 1, 'xy'], ['z', 3, 'xz']]);
  assert.deepEqual(plain(await done(ix.getAllRecords({ direction: 'prevunique' }))),
    [['z', 3, 'xz'], ['y', 1, 'xy'], ['x', 1, 'xy']]);
  assert.deepEqual(plain(await done(ix.getAllRecords({ query: IDBKeyRange.bound('x', 'y'), count: 3, direction: 'prev' }))),
    [['y', 2, 'y'], ['y', 1, 'xy'], ['x', 3, 'xz']]);
  assert.throws(() => ix.getAllRecords({ direction: 'sideways' }), { name: 'TypeError' });
  assert.throws(() => ix.getAllRecords({ count: -1 }), { name: 'TypeError' });
  assert.throws(() => ix.getAllRecords({ query: {} }), { name: 'DataError' });
  db.close();
});

test('getAll and getAllKeys: a key is a query, a plain object an IDBGetAllOptions dictionary', async () => {
  const { factory } = freshFactory();
  const d1 = new Date(1000);
  const d2 = new Date(2000);
  const db = await open(factory, 'db', 1, (db) => {
    const s = db.createObjectStore('s');
    s.put('one', d1);
    s.put('two', d2);
    s.put('three', 3);
  });
  const s = db.transaction('s').objectStore('s');
  // A Date is a key: the query, not a dictionary.
  assert.deepEqual(await done(s.getAll(d2)), ['two']);
  assert.deepEqual(await done(s.getAllKeys(d1)), [d1]);
  // A plain object is a dictionary; the count argument is then ignored.
  assert.deepEqual(await done(s.getAll({ direction: 'prev', count: 2 }, 3)), ['two', 'one']);
  assert.deepEqual(await done(s.getAllKeys({ query: IDBKeyRange.lowerBound(d1, true) })), [d2]);
  // undefined with a count: the count applies.
  assert.deepEqual(await done(s.getAllKeys(undefined, 1)), [3]);
  db.close();
});

test('a detached ArrayBuffer or view is not a key: DataError', async () => {
  const db = await tagged();
  const s = db.transaction('s').objectStore('s');
  const view = new Uint8Array(4);
  const dataView = new DataView(view.buffer);
  structuredClone(view.buffer, { transfer: [view.buffer] });
  assert.throws(() => s.get(view), { name: 'DataError' });
  assert.throws(() => s.getAll(view.buffer), { name: 'DataError' });
  assert.throws(() => IDBKeyRange.only(dataView), { name: 'DataError' });
  db.close();
});
