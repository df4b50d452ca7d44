'use strict';
// The WebIDL shape of the interfaces (WebIDL §3.7): prototype chains, enumerable members with
// the IDL's lengths and names, class strings, interfaces without a constructor, the argument
// count and `this` checks, and `indexedDB` as an accessor on the global (auto.js).
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const lib = require('..');
const { freshFactory, open } = require('./helpers.js');

test('prototype chains are the IDL\'s: no class of the package in between', () => {
  for (const name of ['IDBRequest', 'IDBDatabase', 'IDBTransaction']) {
    assert.equal(Object.getPrototypeOf(lib[name]), EventTarget, name);
    assert.equal(Object.getPrototypeOf(lib[name].prototype), EventTarget.prototype, name);
  }
  assert.equal(Object.getPrototypeOf(lib.IDBOpenDBRequest.prototype), lib.IDBRequest.prototype);
  assert.equal(Object.getPrototypeOf(lib.IDBVersionChangeEvent), Event);
  assert.equal(Object.getPrototypeOf(lib.IDBVersionChangeEvent.prototype), Event.prototype);
  assert.equal(Object.getPrototypeOf(lib.IDBCursorWithValue.prototype), lib.IDBCursor.prototype);
});

test('members are enumerable, with the IDL\'s lengths and accessor names', () => {
  const d = (o, k) => Object.getOwnPropertyDescriptor(o, k);
  const store = lib.IDBObjectStore.prototype;
  assert.deepEqual(
    Object.keys(store),
    ['name', 'keyPath', 'indexNames', 'transaction', 'autoIncrement', 'put', 'add', 'delete', 'clear', 'get',
      'getKey', 'getAll', 'getAllKeys', 'getAllRecords', 'count', 'openCursor', 'openKeyCursor', 'index',
      'createIndex', 'deleteIndex'],
  );
  assert.equal(store.put.length, 1);
  assert.equal(store.put.name, 'put');
  assert.equal(store.openCursor.length, 0);
  assert.equal(store.createIndex.length, 2);
  assert.equal(lib.IDBFactory.prototype.open.length, 1);
  assert.equal(lib.IDBFactory.prototype.cmp.length, 2);
  assert.equal(lib.IDBCursor.prototype.continuePrimaryKey.length, 2);
  assert.equal(lib.IDBKeyRange.bound.length, 2);
  assert.equal(d(lib.IDBKeyRange, 'only').enumerable, true);
  const onsuccess = d(lib.IDBRequest.prototype, 'onsuccess');
  assert.equal(onsuccess.enumerable, true);
  assert.equal(onsuccess.get.name, 'get onsuccess');
  assert.equal(onsuccess.set.name, 'set onsuccess');
  assert.equal(d(lib.IDBVersionChangeEvent.prototype, 'oldVersion').enumerable, true);
  // The package's EventTarget members are not IDL members of these interfaces.
  assert.equal(d(lib.IDBRequest.prototype, 'addEventListener').enumerable, false);
});

test('class strings are the interfaces\' names', async () => {
  const { factory } = freshFactory();
  const s = (o) => Object.prototype.toString.call(o);
  assert.equal(s(factory), '[object IDBFactory]');
  assert.equal(s(lib.IDBKeyRange.only(1)), '[object IDBKeyRange]');
  assert.equal(s(new lib.IDBVersionChangeEvent('x')), '[object IDBVersionChangeEvent]');
  const request = factory.open('db', 1);
  assert.equal(s(request), '[object IDBOpenDBRequest]');
  const db = await open(factory, 'db', 1, () => {});
  assert.equal(s(db), '[object IDBDatabase]');
  db.close();
});

test('interfaces without a constructor in the IDL throw TypeError; IDBFactory keeps its own', () => {
  for (const name of ['IDBRequest', 'IDBOpenDBRequest', 'IDBDatabase', 'IDBTransaction', 'IDBObjectStore',
    'IDBIndex', 'IDBCursor', 'IDBCursorWithValue', 'IDBKeyRange', 'IDBRecord']) {
    assert.throws(() => new lib[name](), TypeError, name);
  }
  assert.equal(Object.prototype.toString.call(new lib.IDBFactory({ memory: true })), '[object IDBFactory]');
});

test('too few arguments and a wrong `this` throw TypeError before anything else', async () => {
  const { factory } = freshFactory();
  assert.throws(() => factory.open(), { name: 'TypeError', message: 'IDBFactory.open: 1 argument required, but only 0 present' });
  assert.throws(() => factory.cmp(1), { name: 'TypeError', message: 'IDBFactory.cmp: 2 arguments required, but only 1 present' });
  assert.throws(() => lib.IDBKeyRange.only(), TypeError);
  assert.throws(() => lib.IDBKeyRange.only(1).includes(), TypeError);
  assert.throws(() => lib.IDBObjectStore.prototype.get.call(null, 1), { name: 'TypeError', message: "IDBObjectStore.get: 'this' does not implement the interface" });
  await assert.rejects(lib.IDBFactory.prototype.databases.call({}), TypeError);
  // An explicit undefined is an argument: the operation's own checks run.
  assert.throws(() => factory.cmp(1, undefined), { name: 'DataError' });
});

test('auto.js makes indexedDB an accessor on the global, replaced by assignment', () => {
  const script = `
    require(${JSON.stringify(path.join(__dirname, '..', 'auto.js'))});
    const d = Object.getOwnPropertyDescriptor(globalThis, 'indexedDB');
    const first = indexedDB;
    const fresh = new IDBFactory({ memory: true });
    indexedDB = fresh;
    console.log(JSON.stringify([typeof d.get, d.get.name, d.enumerable, first === d.get(), indexedDB === fresh]));
  `;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), ['function', 'get indexedDB', true, true, true]);
});
