'use strict';
// Smoke test of an installed indexa-indexeddb through `require` (run in a project that
// installed the tarballs; used by test/package.test.js and scripts/runtimes.sh): writes a
// record into ./data, reads it back, checks that the auto entry installs the same indexedDB.
const assert = require('node:assert/strict');
const { indexedDB, IDBKeyRange, IDBFactory } = require('indexa-indexeddb');
require('indexa-indexeddb/auto');

assert.equal(globalThis.indexedDB, indexedDB);
const open = new IDBFactory({ dir: 'data' }).open('app', 1);
open.onupgradeneeded = () => open.result.createObjectStore('notes', { keyPath: 'id' });
open.onsuccess = () => {
  const db = open.result;
  const tx = db.transaction('notes', 'readwrite');
  tx.objectStore('notes').put({ id: 1, text: 'from require' });
  tx.oncomplete = () => {
    const get = db.transaction('notes').objectStore('notes').getAll(IDBKeyRange.lowerBound(1));
    get.onsuccess = () => {
      assert.deepEqual(get.result.slice(0, 1), [{ id: 1, text: 'from require' }]);
      db.close();
      console.log('ok');
    };
  };
};
