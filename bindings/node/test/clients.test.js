'use strict';
// Real clients, unmodified, on this package: Dexie and idb, each through a realistic app flow,
// reopened in a new process to prove persistence.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { freshFactory } = require('./helpers.js');

const pkg = path.join(__dirname, '..');

function run(dir, body) {
  const out = spawnSync(process.execPath, ['-e', `
    process.env.INDEXA_DATA_DIR = ${JSON.stringify(dir)};
    require(${JSON.stringify(path.join(pkg, 'auto.js'))});
    (async () => { ${body} })().then(
      (r) => { console.log(JSON.stringify(r)); },
      (e) => { console.error(e); process.exit(1); });`], { encoding: 'utf8', cwd: pkg });
  assert.equal(out.status, 0, out.stderr);
  return JSON.parse(out.stdout.trim().split('\n').pop());
}

test('Dexie: ++id, &unique, *multiEntry, [a+b], bulk ops, where-clauses, transactions, reopen', () => {
  const { dir } = freshFactory();
  const schema = `
    const Dexie = require('dexie');
    const db = new Dexie('shop');
    db.version(1).stores({ items: '++id, &sku, *tags, [category+price], name' });`;
  const first = run(dir, `${schema}
    const ids = await db.items.bulkAdd([
      { sku: 'A1', name: 'apple', tags: ['fruit', 'red'], category: 'food', price: 3 },
      { sku: 'B2', name: 'banana', tags: ['fruit'], category: 'food', price: 1 },
      { sku: 'C3', name: 'cable', tags: ['tech'], category: 'tech', price: 10 },
      { sku: 'D4', name: 'dates', tags: ['fruit', 'dry'], category: 'food', price: 7 },
    ], { allKeys: true });
    let dup = null;
    try { await db.items.add({ sku: 'A1', name: 'again' }); } catch (e) { dup = e.name; }
    const fruit = await db.items.where('tags').equals('fruit').primaryKeys();
    const cheapFood = await db.items.where('[category+price]').between(['food', 0], ['food', 5]).toArray();
    const byName = await db.items.where('name').startsWith('ba').first();
    await db.transaction('rw', db.items, async () => {
      await db.items.where('sku').equals('C3').modify({ price: 12 });
      await db.items.delete(ids[3]);
    });
    let rolledBack = null;
    try {
      await db.transaction('rw', db.items, async () => {
        await db.items.put({ sku: 'E5', name: 'egg', tags: [], category: 'food', price: 2 });
        throw new Error('no');
      });
    } catch (e) { rolledBack = e.message; }
    const count = await db.items.count();
    db.close();
    return { ids, dup, fruit, cheap: cheapFood.map((i) => i.sku), byName: byName.sku, rolledBack, count };`);
  assert.deepEqual(first, {
    ids: [1, 2, 3, 4], dup: 'ConstraintError', fruit: [1, 2, 4], cheap: ['B2', 'A1'],
    byName: 'B2', rolledBack: 'no', count: 3,
  });
  const second = run(dir, `${schema}
    const all = await db.items.orderBy('sku').toArray();
    const cable = await db.items.get({ sku: 'C3' });
    const next = await db.items.add({ sku: 'F6', name: 'fig', tags: ['fruit'], category: 'food', price: 4 });
    await db.items.bulkDelete([1]);
    const left = await db.items.toCollection().primaryKeys();
    db.close();
    return { skus: all.map((i) => i.sku), price: cable.price, next, left };`);
  assert.deepEqual(second, { skus: ['A1', 'B2', 'C3'], price: 12, next: 5, left: [2, 3, 5] });
});

test('idb: openDB with upgrade, indexes, cursors, transactions, reopen', () => {
  const { dir } = freshFactory();
  const first = run(dir, `
    const { openDB } = await import('idb');
    const db = await openDB('notes', 1, {
      upgrade(db) {
        const s = db.createObjectStore('notes', { keyPath: 'id', autoIncrement: true });
        s.createIndex('by_book', 'book');
        s.createIndex('by_tag', 'tags', { multiEntry: true });
        s.createIndex('by_uuid', 'uuid', { unique: true });
      },
    });
    const tx = db.transaction('notes', 'readwrite');
    await Promise.all([
      tx.store.add({ book: 'work', tags: ['a'], uuid: 'u1', at: new Date(1) }),
      tx.store.add({ book: 'home', tags: ['a', 'b'], uuid: 'u2', at: new Date(2) }),
      tx.store.add({ book: 'work', tags: [], uuid: 'u3', at: new Date(3) }),
      tx.done,
    ]);
    let dup = null;
    try { await db.add('notes', { uuid: 'u1' }); } catch (e) { dup = e.name; }
    const work = await db.getAllKeysFromIndex('notes', 'by_book', 'work');
    const tagged = await db.countFromIndex('notes', 'by_tag', 'a');
    const walked = [];
    let cursor = await db.transaction('notes').store.openCursor(null, 'prev');
    while (cursor) { walked.push(cursor.key); cursor = await cursor.continue(); }
    db.close();
    return { dup, work, tagged, walked };`);
  assert.deepEqual(first, { dup: 'ConstraintError', work: [1, 3], tagged: 2, walked: [3, 2, 1] });
  const second = run(dir, `
    const { openDB } = await import('idb');
    const db = await openDB('notes', 1);
    const note = await db.getFromIndex('notes', 'by_uuid', 'u2');
    const id = await db.put('notes', { book: 'home', tags: [], uuid: 'u4' });
    db.close();
    return { book: note.book, date: note.at instanceof Date && note.at.getTime(), id };`);
  assert.deepEqual(second, { book: 'home', date: 2, id: 4 });
});
