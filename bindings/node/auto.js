'use strict';
// Installs `indexedDB` and the IDB* interfaces as globals, like fake-indexeddb/auto.
const lib = require('./index.js');

const names = [
  'IDBFactory', 'IDBDatabase', 'IDBTransaction', 'IDBObjectStore', 'IDBIndex', 'IDBCursor',
  'IDBCursorWithValue', 'IDBRequest', 'IDBOpenDBRequest', 'IDBVersionChangeEvent', 'IDBKeyRange', 'IDBRecord',
];
for (const name of names) {
  Object.defineProperty(globalThis, name, { value: lib[name], writable: true, configurable: true, enumerable: false });
}
Object.defineProperty(globalThis, 'indexedDB', { value: lib.indexedDB, writable: true, configurable: true, enumerable: true });
