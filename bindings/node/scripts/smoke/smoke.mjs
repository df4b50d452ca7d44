// Smoke test of an installed indexa-indexeddb through `import`, after smoke.cjs ran in the
// same folder: `import` and `require` give the same objects, and the record smoke.cjs wrote
// is there beside this one.
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { indexedDB, IDBKeyRange, IDBFactory } from 'indexa-indexeddb';
import 'indexa-indexeddb/auto';

const required = createRequire(import.meta.url)('indexa-indexeddb');
assert.equal(indexedDB, required.indexedDB);
assert.equal(globalThis.indexedDB, indexedDB);
assert.equal(IDBKeyRange, required.IDBKeyRange);
assert.equal(IDBFactory, required.IDBFactory);
const open = new IDBFactory({ dir: 'data' }).open('app', 1);
open.onsuccess = () => {
  const db = open.result;
  const tx = db.transaction('notes', 'readwrite');
  tx.objectStore('notes').put({ id: 2, text: 'from import' });
  tx.oncomplete = () => {
    const get = db.transaction('notes').objectStore('notes').getAll(IDBKeyRange.bound(1, 2));
    get.onsuccess = () => {
      assert.deepEqual(get.result, [{ id: 1, text: 'from require' }, { id: 2, text: 'from import' }]);
      db.close();
      console.log('ok');
    };
  };
};
