'use strict';
// Record values: structured clone exactly as structuredClone does it, Blob and File values,
// key paths evaluated on the clone, results built with CreateDataProperty.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { freshFactory, done, open, finished } = require('./helpers.js');

async function store(options) {
  const { factory, dir } = freshFactory();
  const db = await open(factory, 'db', 1, (db) => {
    const s = db.createObjectStore('s', options);
    if (options && options.keyPath) s.createIndex('by_type', 'file.type');
  });
  return { factory, dir, db };
}

/** Writes `value` under key 1 and reads it back in a later transaction. */
async function roundTrip(db, value) {
  const tx = db.transaction('s', 'readwrite');
  tx.objectStore('s').put(value, 1);
  await finished(tx);
  return done(db.transaction('s').objectStore('s').get(1));
}

test('a Buffer comes back as a plain Uint8Array, as structuredClone gives it', async () => {
  const { db } = await store();
  const buffer = Buffer.from('héllo');
  const back = await roundTrip(db, { buffer });
  assert.equal(Object.getPrototypeOf(back.buffer), Uint8Array.prototype);
  assert.equal(Buffer.isBuffer(back.buffer), false);
  assert.equal(Buffer.from(back.buffer).toString(), 'héllo');
  assert.equal(back.buffer.byteOffset, structuredClone(buffer).byteOffset);
  db.close();
});

test('typed arrays and DataViews keep their offsets; sparse arrays, boxed primitives, Errors', async () => {
  const { db } = await store();
  const bytes = new ArrayBuffer(16);
  new Uint8Array(bytes).set([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);
  const sparse = [];
  sparse[5] = 'five';
  const value = {
    view: new Uint16Array(bytes, 4, 3),
    dv: new DataView(bytes, 3, 5),
    sparse,
    boxed: [new Number(-0), new String('s'), new Boolean(false), Object(7n)],
    error: new RangeError('out'),
  };
  const back = await roundTrip(db, value);
  assert.ok(back.view instanceof Uint16Array);
  assert.equal(back.view.byteOffset, 4);
  assert.equal(back.view.length, 3);
  assert.equal(back.view.buffer, back.dv.buffer); // shared buffer stays shared
  assert.deepEqual([...new Uint8Array(back.view.buffer)], [...new Uint8Array(bytes)]);
  assert.equal(back.dv.byteOffset, 3);
  assert.equal(back.dv.byteLength, 5);
  assert.equal(back.sparse.length, 6);
  assert.equal(Object.keys(back.sparse).length, 1);
  assert.equal(4 in back.sparse, false);
  assert.equal(back.sparse[5], 'five');
  assert.ok(back.boxed[0] instanceof Number);
  assert.ok(Object.is(back.boxed[0].valueOf(), -0));
  assert.equal(back.boxed[1].valueOf(), 's');
  assert.equal(back.boxed[2].valueOf(), false);
  assert.equal(back.boxed[3].valueOf(), 7n);
  assert.ok(back.error instanceof RangeError);
  assert.equal(back.error.message, 'out');
  db.close();
});

test('DataCloneError for functions, symbols, Events, WeakMaps; nothing is stored', async () => {
  const { db } = await store();
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  for (const bad of [() => 1, { f() {} }, Symbol('x'), [Symbol('y')], new Event('e'), { nested: [new Event('e')] }, new EventTarget(), new WeakMap(), { w: new WeakSet() }]) {
    assert.throws(() => s.put(bad, 1), { name: 'DataCloneError' });
  }
  assert.equal(await done(s.count()), 0);
  await finished(tx);
  db.close();
});

test('DataError for a value nested deeper than the engine stores (511 levels); nothing is stored', async () => {
  const { db } = await store();
  const nest = (levels) => {
    let v = 'leaf';
    for (let i = 0; i < levels; i++) v = i % 2 === 0 ? { v } : [v];
    return v;
  };
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  assert.throws(() => s.put(nest(512), 1), { name: 'DataError', message: /deeper than 511 levels/ });
  assert.throws(() => s.put({ ok: 1, m: new Map(), deep: nest(512) }, 2), { name: 'DataError' });
  s.put(nest(511), 3);
  assert.deepEqual(await done(s.getAllKeys()), [3]);
  await finished(tx);
  db.close();
});

test('key paths are evaluated on the clone: a getter runs once, with the transaction inactive', async () => {
  const { db } = await store({ keyPath: 'id' });
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  let calls = 0;
  let inactive = null;
  const value = {
    get id() {
      calls++;
      try { s.get(1); inactive = false; } catch (e) { inactive = e.name; }
      return 100 + calls;
    },
  };
  assert.equal(await done(s.put(value)), 101);
  assert.equal(calls, 1);
  assert.equal(inactive, 'TransactionInactiveError');
  assert.deepEqual(await done(s.get(101)), { id: 101 });
  await finished(tx);
  db.close();
});

test('a value with parts the engine does not hold is read once: getters, shared references, a put from a getter', async () => {
  const { factory } = freshFactory();
  const db2 = await open(factory, 'db', 1, (d) => {
    d.createObjectStore('s', { keyPath: 'id' });
    d.createObjectStore('t');
  });
  const other = db2.transaction('t', 'readwrite');
  const otherDone = finished(other);
  const tx = db2.transaction('s', 'readwrite');
  let calls = 0;
  const shared = { n: 1 };
  const when = new Date(5);
  const value = {
    id: 7,
    first: shared,
    list: [shared, when, when],
    nested: {
      get late() {
        calls++;
        // A clone made while this one is being made: another transaction's put.
        other.objectStore('t').put({ name: 'from a getter', n: 'ü'.repeat(70) }, 1);
        return { map: new Map([[1, 'one']]) };
      },
    },
    bytes: new Uint8Array([3, 4]),
  };
  tx.objectStore('s').put(value);
  assert.equal(calls, 1);
  await finished(tx);
  await otherDone;
  const back = await done(db2.transaction('s').objectStore('s').get(7));
  assert.equal(calls, 1);
  assert.equal(back.first, back.list[0]);
  assert.deepEqual(back.first, { n: 1 });
  assert.equal(back.list[1], back.list[2]);
  assert.equal(back.list[1].getTime(), 5);
  assert.ok(back.nested.late.map instanceof Map);
  assert.equal(back.nested.late.map.get(1), 'one');
  assert.ok(back.bytes instanceof Uint8Array);
  assert.deepEqual([...back.bytes], [3, 4]);
  assert.deepEqual(await done(db2.transaction('t').objectStore('t').get(1)), { name: 'from a getter', n: 'ü'.repeat(70) });
  db2.close();
});

test('in-line keys and index keys from a value held with its serialization: a typed array is a binary key', async () => {
  const { factory } = freshFactory();
  const db = await open(factory, 'db', 1, (d) => {
    d.createObjectStore('s', { keyPath: 'k' }).createIndex('by_tag', 'meta.tag');
  });
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  assert.deepEqual(new Uint8Array(await done(s.put({ k: new Uint8Array([1, 2]), meta: { tag: 'x' }, m: new Set([1]) }))), new Uint8Array([1, 2]));
  await finished(tx);
  const back = await done(db.transaction('s').objectStore('s').index('by_tag').get('x'));
  assert.ok(back.k instanceof Uint8Array);
  assert.ok(back.m instanceof Set);
  db.close();
});

test('results are built with CreateDataProperty: prototype setters do not run', async () => {
  const { db } = await store({ keyPath: 'id', autoIncrement: true });
  let called = 0;
  for (const name of ['id', 'x']) {
    Object.defineProperty(Object.prototype, name, { configurable: true, set() { called++; } });
  }
  try {
    const tx = db.transaction('s', 'readwrite');
    tx.objectStore('s').put({ x: ['a'] });
    tx.objectStore('s').put({ m: new Map(), x: 1 });
    const all = await done(tx.objectStore('s').getAll());
    assert.equal(called, 0);
    assert.ok(Object.prototype.hasOwnProperty.call(all[0], 'x'));
    assert.ok(Object.prototype.hasOwnProperty.call(all[1], 'id'));
    assert.equal(all[1].id, 2);
  } finally {
    for (const name of ['id', 'x']) delete Object.prototype[name];
  }
  db.close();
});

test('Blob and File values: bytes, type, name, lastModified, inside arrays, objects and Maps', async () => {
  const { db } = await store({ keyPath: 'id' });
  const file = new File(['file body'], 'a.txt', { type: 'text/plain', lastModified: 1234 });
  const blob = new Blob([new Uint8Array([0, 1, 255])], { type: 'application/x-test' });
  const value = { id: 1, file, list: [blob, file], map: new Map([['b', blob], [file, 'by file']]) };
  const tx = db.transaction('s', 'readwrite');
  tx.objectStore('s').put(value);
  await finished(tx);
  const rtx = db.transaction('s');
  const back = await done(rtx.objectStore('s').get(1));
  await finished(rtx);
  // Readable after the transaction ended.
  assert.ok(back.file instanceof File);
  assert.equal(back.file.name, 'a.txt');
  assert.equal(back.file.type, 'text/plain');
  assert.equal(back.file.lastModified, 1234);
  assert.equal(await back.file.text(), 'file body');
  assert.ok(back.list[0] instanceof Blob);
  assert.equal(back.list[0] instanceof File, false);
  assert.equal(back.list[0].type, 'application/x-test');
  assert.deepEqual([...new Uint8Array(await back.list[0].arrayBuffer())], [0, 1, 255]);
  // The same Blob or File twice is one object again, as with structuredClone.
  assert.equal(back.list[1], back.file);
  assert.equal(back.map.get('b'), back.list[0]);
  assert.equal(back.map.get(back.file), 'by file');
  // Key paths reach a File's attributes.
  const ix = db.transaction('s').objectStore('s').index('by_type');
  assert.deepEqual(await done(ix.getAllKeys('text/plain')), [1]);
  db.close();
});

test('a 10 MB Blob round-trips', async () => {
  const { db } = await store();
  const bytes = new Uint8Array(10 * 1024 * 1024);
  for (let i = 0; i < bytes.length; i += 4096) bytes[i] = (i / 4096) % 251;
  bytes[bytes.length - 1] = 7;
  const back = await roundTrip(db, new Blob([bytes]));
  assert.equal(back.size, bytes.length);
  assert.ok(Buffer.from(await back.arrayBuffer()).equals(Buffer.from(bytes)));
  db.close();
});

test('a write holding a Blob keeps its place in request order, and the commit waits for it', async () => {
  const { db } = await store();
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  const order = [];
  const first = s.put({ blob: new Blob(['x'.repeat(100000)]) }, 1);
  const second = s.put('plain', 1);
  const third = s.count();
  first.onsuccess = () => order.push('first');
  second.onsuccess = () => order.push('second');
  third.onsuccess = () => order.push(`count ${third.result}`);
  // A value holding a Blob is still checked when placed.
  assert.throws(() => s.put({ blob: new Blob(['y']) }), { name: 'DataError' });
  await finished(tx);
  assert.deepEqual(order, ['first', 'second', 'count 1']);
  assert.equal(await done(db.transaction('s').objectStore('s').get(1)), 'plain');
  db.close();
});

test('cursor update() with a Blob value', async () => {
  const { db } = await store({ keyPath: 'id' });
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  s.put({ id: 1 });
  const request = s.openCursor();
  request.onsuccess = () => {
    const cursor = request.result;
    if (!cursor) return;
    cursor.update({ id: 1, blob: new Blob(['updated'], { type: 't/u' }) });
    // The key path must still yield the cursor's primary key: checked at once.
    assert.throws(() => cursor.update({ id: 2, blob: new Blob(['x']) }), { name: 'DataError' });
  };
  await finished(tx);
  const back = await done(db.transaction('s').objectStore('s').get(1));
  assert.equal(back.blob.type, 't/u');
  assert.equal(await back.blob.text(), 'updated');
  db.close();
});

test('Blob and File values survive a process restart', () => {
  const { dir } = freshFactory();
  const script = (body) => `
    const { IDBFactory } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const factory = new IDBFactory({ dir: ${JSON.stringify(dir)} });
    ${body}`;
  const write = spawnSync(process.execPath, ['-e', script(`
    const r = factory.open('p', 1);
    r.onupgradeneeded = () => r.result.createObjectStore('s');
    r.onsuccess = () => {
      const tx = r.result.transaction('s', 'readwrite');
      tx.objectStore('s').put({
        file: new File(['persisted'], 'p.txt', { type: 'text/plain', lastModified: 42 }),
        blobs: [new Blob(['one']), new Blob(['two'], { type: 'a/b' })],
      }, 'k');
      tx.oncomplete = () => console.log('written');
    };`)], { encoding: 'utf8' });
  assert.equal(write.stdout.trim(), 'written', write.stderr);
  const read = spawnSync(process.execPath, ['-e', script(`
    const r = factory.open('p');
    r.onsuccess = () => {
      const q = r.result.transaction('s').objectStore('s').get('k');
      q.onsuccess = async () => {
        const v = q.result;
        console.log(JSON.stringify([v.file instanceof File, v.file.name, v.file.type, v.file.lastModified,
          await v.file.text(), await v.blobs[0].text(), await v.blobs[1].text(), v.blobs[1].type]));
      };
    };`)], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(read.stdout), [true, 'p.txt', 'text/plain', 42, 'persisted', 'one', 'two', 'a/b'], read.stderr);
});

test('read results get the key of the store they were read from, through an index and across schema changes', async () => {
  // IndexedDB 3.0, "retrieve a value from an object store" / "... from an index": a value read
  // from a store with a key generator and an in-line key gets its key injected through the
  // store's key path, whichever source (store or index) read it, and whatever the upgrade does
  // to the schema between the request and its reply.
  const { factory } = freshFactory();
  const db = await open(factory, 'reads', 1, (d) => {
    const s = d.createObjectStore('s', { keyPath: 'id.x', autoIncrement: true });
    s.createIndex('byV', 'v');
    s.put({ v: 1 });
    s.put({ v: 2 });
  });
  const tx = db.transaction('s');
  const ix = tx.objectStore('s').index('byV');
  const reads = [done(ix.get(1)), done(ix.getAll()), done(ix.getAllRecords()), done(ix.count())];
  assert.equal(ix.keyPath, 'v');
  const [one, all, records, count] = await Promise.all(reads);
  assert.deepEqual(one, { v: 1, id: { x: 1 } });
  assert.deepEqual(all, [{ v: 1, id: { x: 1 } }, { v: 2, id: { x: 2 } }]);
  assert.deepEqual(records.map((r) => [r.key, r.primaryKey, r.value]), [[1, 1, all[0]], [2, 2, all[1]]]);
  assert.equal(count, 2);
  await finished(tx);
  db.close();

  // Reads placed in an upgrade, then the index and the store renamed before their replies; a
  // read placed after that, then the store deleted and made again with another key path before
  // its reply; then the upgrade aborts.
  const results = [];
  const request = factory.open('reads', 2);
  request.onupgradeneeded = () => {
    const upgrade = request.transaction;
    const store = upgrade.objectStore('s');
    const index = store.index('byV');
    const got = store.get(1);
    const gotAll = index.getAll();
    got.onsuccess = () => results.push(['get', got.result]);
    gotAll.onsuccess = () => results.push(['index getAll', gotAll.result]);
    index.name = 'byV2';
    store.name = 's2';
    const late = index.get(2);
    late.onsuccess = () => {
      results.push(['index get', late.result]);
      upgrade.abort();
    };
    upgrade.db.deleteObjectStore('s2');
    upgrade.db.createObjectStore('s2', { keyPath: 'other' });
  };
  await assert.rejects(done(request), { name: 'AbortError' });
  assert.deepEqual(results, [
    ['get', { v: 1, id: { x: 1 } }],
    ['index getAll', [{ v: 1, id: { x: 1 } }, { v: 2, id: { x: 2 } }]],
    ['index get', { v: 2, id: { x: 2 } }],
  ]);
});
