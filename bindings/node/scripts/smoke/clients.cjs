'use strict';
// Dexie and idb over an installed indexa-indexeddb (scripts/runtimes.sh runs it under Node,
// Bun and Deno): unique and multiEntry indexes, a failed add, a rolled-back transaction,
// index reads and a cursor that updates.
const assert = require('node:assert/strict');
require('indexa-indexeddb/auto');
const Dexie = require('dexie');

async function dexie() {
  const db = new Dexie('shop');
  db.version(1).stores({ items: '++id, &sku, *tags' });
  const ids = await db.items.bulkAdd([
    { sku: 'A1', tags: ['fruit', 'red'] },
    { sku: 'B2', tags: ['fruit'] },
    { sku: 'C3', tags: ['tech'] },
  ], { allKeys: true });
  assert.deepEqual(ids, [1, 2, 3]);
  await assert.rejects(db.items.add({ sku: 'A1' }), { name: 'ConstraintError' });
  assert.deepEqual(await db.items.where('tags').equals('fruit').primaryKeys(), [1, 2]);
  await assert.rejects(db.transaction('rw', db.items, async () => {
    await db.items.put({ sku: 'D4', tags: [] });
    throw new Error('rolled back');
  }), { message: 'rolled back' });
  assert.equal(await db.items.count(), 3);
  db.close();
}

async function idb() {
  const { openDB } = await import('idb');
  const db = await openDB('notes', 1, {
    upgrade(d) {
      d.createObjectStore('notes', { keyPath: 'id', autoIncrement: true }).createIndex('by_tag', 'tags', { multiEntry: true });
    },
  });
  await db.add('notes', { text: 'a', tags: ['x', 'y'] });
  await db.add('notes', { text: 'b', tags: ['y'] });
  assert.deepEqual((await db.getAllFromIndex('notes', 'by_tag', 'y')).map((n) => n.text), ['a', 'b']);
  const tx = db.transaction('notes', 'readwrite');
  for (let c = await tx.store.openCursor(); c; c = await c.continue()) await c.update({ ...c.value, seen: true });
  await tx.done;
  assert.deepEqual((await db.getAll('notes')).map((n) => n.seen), [true, true]);
  db.close();
}

dexie().then(idb).then(() => {
  console.log('ok');
  // Dexie's BroadcastChannel keeps a Deno process alive (Deno's has no unref()), whatever the
  // IndexedDB underneath; exiting here lets the script end under every runtime.
  process.exit(0);
}, (err) => {
  console.error(err);
  process.exit(1);
});
