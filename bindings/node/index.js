'use strict';
// IndexedDB for Node.js on the Indexa engine: the W3C interfaces, durable on disk.
//
//   const { indexedDB, IDBKeyRange } = require('indexa-indexeddb');
//   // or: require('indexa-indexeddb/auto') to install them as globals.
//
// `indexedDB` keeps its databases in $INDEXA_DATA_DIR when set, else in a private temporary
// directory removed at exit; `new IDBFactory({ dir })` picks a directory explicitly.

const idb = require('./lib/idb.js');

let defaultFactory = null;

module.exports = {
  ...idb,
  get indexedDB() {
    if (defaultFactory === null) defaultFactory = new idb.IDBFactory();
    return defaultFactory;
  },
};
