'use strict';
// abort() in an upgrade reverts the schema metadata at once (IndexedDB 3.0, "abort an upgrade
// transaction"): what it created is marked deleted, what it deleted comes back.
const test = require('node:test');
const assert = require('node:assert/strict');
const { freshFactory, open } = require('./helpers.js');

test('after abort() in an upgrade, index metadata is reverted at once', async () => {
  const { factory } = freshFactory();
  const db1 = await open(factory, 'db', 1, (db) => db.createObjectStore('old').createIndex('by_a', 'a'));
  db1.close();
  const rq = factory.open('db', 2);
  const seen = {};
  rq.onupgradeneeded = () => {
    const db = rq.result;
    const tx = rq.transaction;
    const created = db.createObjectStore('new');
    const createdIndex = created.createIndex('by_b', 'b');
    const old = tx.objectStore('old');
    const addedIndex = old.createIndex('by_c', 'c');
    db.deleteObjectStore('old');
    seen.afterDelete = [...old.indexNames];
    tx.abort();
    seen.created = [...created.indexNames];
    seen.old = [...old.indexNames];
    seen.stores = [...db.objectStoreNames];
    for (const [key, index] of [['createdIndex', createdIndex], ['addedIndex', addedIndex]]) {
      try { index.get(1); seen[key] = 'none'; } catch (e) { seen[key] = e.name; }
    }
  };
  await new Promise((resolve) => { rq.onerror = (e) => { e.preventDefault(); resolve(); }; });
  assert.deepEqual(seen, {
    afterDelete: [],
    created: [],
    old: ['by_a'],
    stores: ['old'],
    createdIndex: 'InvalidStateError',
    addedIndex: 'InvalidStateError',
  });
});
