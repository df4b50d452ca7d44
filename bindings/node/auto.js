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
// `indexedDB` is an accessor, as WindowOrWorkerGlobalScope's attribute is on a browser's global.
// Assigning to it replaces it with the value assigned (as WebIDL's [Replaceable] does), so
// `indexedDB = new IDBFactory()` still gives a test a fresh factory, as with fake-indexeddb.
const accessors = {
  get indexedDB() { return lib.indexedDB; },
  set indexedDB(value) {
    Object.defineProperty(globalThis, 'indexedDB', { value, writable: true, configurable: true, enumerable: true });
  },
};
Object.defineProperty(globalThis, 'indexedDB', { ...Object.getOwnPropertyDescriptor(accessors, 'indexedDB'), configurable: true, enumerable: true });
