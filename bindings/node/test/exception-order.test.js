'use strict';
// Which error wins when a call breaks several rules at once, in the order the spec's steps
// check them; and [SameObject] key paths.
const test = require('node:test');
const assert = require('node:assert/strict');
const { freshFactory, open } = require('./helpers.js');

test('transaction() checks the store names before the mode', async () => {
  const { factory } = freshFactory();
  const db = await open(factory, 'db', 1, (db) => db.createObjectStore('s'));
  assert.throws(() => db.transaction('missing', 'not-a-mode'), { name: 'NotFoundError' });
  assert.throws(() => db.transaction('s', 'not-a-mode'), TypeError);
  db.close();
});

test('an inactive transaction is reported before a bad query', async () => {
  const { factory } = freshFactory();
  const db = await open(factory, 'db', 1, (db) => db.createObjectStore('s').createIndex('i', 'k'));
  const tx = db.transaction('s');
  const store = tx.objectStore('s');
  const index = store.index('i');
  await new Promise((resolve) => setImmediate(resolve));
  for (const source of [store, index]) {
    assert.throws(() => source.get({}), { name: 'TransactionInactiveError' });
    assert.throws(() => source.count({}), { name: 'TransactionInactiveError' });
    assert.throws(() => source.getAll({ query: {} }), { name: 'TransactionInactiveError' });
  }
  db.close();
});

test('after abort() in an upgrade, schema calls throw TransactionInactiveError until the abort event', async () => {
  const { factory } = freshFactory();
  const request = factory.open('db', 1);
  const seen = [];
  request.onupgradeneeded = () => {
    const db = request.result;
    const tx = request.transaction;
    db.createObjectStore('s');
    tx.abort();
    const attempt = () => {
      try { db.createObjectStore('t', { keyPath: '-invalid-' }); } catch (e) { return e.name; }
      return 'none';
    };
    seen.push(attempt());
    Promise.resolve().then(() => seen.push(attempt()));
    tx.onabort = () => seen.push(attempt());
  };
  await new Promise((resolve) => { request.onerror = (e) => { e.preventDefault(); resolve(); }; });
  assert.deepEqual(seen, ['TransactionInactiveError', 'TransactionInactiveError', 'InvalidStateError']);
});

test('keyPath returns the same object on every read', async () => {
  const { factory } = freshFactory();
  const db = await open(factory, 'db', 1, (db) => db.createObjectStore('s', { keyPath: ['a', 'b'] }).createIndex('i', ['c', 'd']));
  const store = db.transaction('s').objectStore('s');
  assert.equal(store.keyPath, store.keyPath);
  assert.deepEqual(store.keyPath, ['a', 'b']);
  assert.equal(store.index('i').keyPath, store.index('i').keyPath);
  assert.deepEqual(store.index('i').keyPath, ['c', 'd']);
  db.close();
});
