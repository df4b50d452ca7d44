// The ES module entry point: the CommonJS module's exports (index.js), so that `import` and
// `require` give the same objects, `indexedDB` included.
//
//   import { indexedDB, IDBKeyRange } from "indexa-indexeddb";
import lib from './index.js';

export const {
  IDBFactory,
  IDBDatabase,
  IDBTransaction,
  IDBObjectStore,
  IDBIndex,
  IDBCursor,
  IDBCursorWithValue,
  IDBRequest,
  IDBOpenDBRequest,
  IDBVersionChangeEvent,
  IDBKeyRange,
  IDBRecord,
  DOMStringList,
} = lib;
export const indexedDB = lib.indexedDB;
export default lib;
