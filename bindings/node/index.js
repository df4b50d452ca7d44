'use strict';
// IndexedDB for Node.js on the Indexa engine: the W3C interfaces, durable on disk.
//
//   const { indexedDB, IDBKeyRange } = require('indexa-indexeddb');
//   // or: require('indexa-indexeddb/auto') to install them as globals.
//
// `indexedDB` keeps its databases in $INDEXA_DATA_DIR when set, else in a private temporary
// directory removed at exit; `new IDBFactory({ dir })` picks a directory explicitly.

const { IDBFactory } = require('./lib/IDBFactory.js');
const { IDBDatabase } = require('./lib/IDBDatabase.js');
const { IDBTransaction } = require('./lib/IDBTransaction.js');
const { IDBObjectStore } = require('./lib/IDBObjectStore.js');
const { IDBIndex } = require('./lib/IDBIndex.js');
const { IDBCursor, IDBCursorWithValue } = require('./lib/IDBCursor.js');
const { IDBRequest, IDBOpenDBRequest } = require('./lib/IDBRequest.js');
const { IDBVersionChangeEvent } = require('./lib/events.js');
const { IDBKeyRange } = require('./lib/IDBKeyRange.js');
const { IDBRecord } = require('./lib/IDBRecord.js');
const { DOMStringList } = require('./lib/DOMStringList.js');

let defaultFactory = null;

module.exports = {
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
  get indexedDB() {
    if (defaultFactory === null) defaultFactory = new IDBFactory();
    return defaultFactory;
  },
};
