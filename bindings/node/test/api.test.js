'use strict';
// The interfaces: factory, database, transaction lifecycle and events, stores, indexes,
// key ranges, cursors, keys and values across the boundary, persistence, connections.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const lib = require('..');
const { IDBKeyRange, IDBFactory, IDBCursorWithValue, IDBVersionChangeEvent } = lib;
const { onPostgres, freshFactory, done, open, finished } = require('./helpers.js');

async function withStore(options, records) {
  const { factory, dir } = freshFactory();
  const db = await open(factory, 'db', 1, (db) => {
    const s = db.createObjectStore('s', options);
    s.createIndex('by_tag', 'tag');
    for (const r of records) s.put(...r);
  });
  return { factory, dir, db };
}

test('IDBFactory: open, version, databases, deleteDatabase, cmp', async () => {
  const { factory } = freshFactory();
  const db = await open(factory, 'a', 3, (db, tx, e) => {
    assert.ok(e instanceof IDBVersionChangeEvent);
    assert.equal(e.oldVersion, 0);
    assert.equal(e.newVersion, 3);
    assert.equal(tx.mode, 'versionchange');
  });
  assert.equal(db.version, 3);
  assert.equal(db.name, 'a');
  assert.deepEqual(await factory.databases(), [{ name: 'a', version: 3 }]);
  await assert.rejects(open(factory, 'a', 2), { name: 'VersionError' });
  db.close();
  const del = factory.deleteDatabase('a');
  const ev = await new Promise((resolve) => { del.onsuccess = resolve; });
  assert.equal(ev.oldVersion, 3);
  assert.equal(ev.newVersion, null);
  assert.deepEqual(await factory.databases(), []);
  assert.equal(factory.cmp(1, 'a'), -1);
  assert.equal(factory.cmp([1], [1]), 0);
  assert.equal(factory.cmp(new Date(5), 4), 1);
  assert.throws(() => factory.cmp(null, 1), (e) => e instanceof DOMException && e.name === 'DataError'
    && Object.getPrototypeOf(e) === DOMException.prototype);
  assert.throws(() => factory.open('x', 0), TypeError);
});

test('request and transaction event order; complete after the last request', async () => {
  const { db } = await withStore({ keyPath: 'id' }, []);
  const log = [];
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  const r1 = s.add({ id: 1 });
  const r2 = s.get(1);
  assert.equal(r1.readyState, 'pending');
  assert.throws(() => r1.result, { name: 'InvalidStateError' });
  r1.onsuccess = (e) => { log.push(['r1', e.target.result, e.type]); s.put({ id: 2 }).onsuccess = () => log.push(['nested']); };
  r2.onsuccess = () => log.push(['r2', r2.result]);
  tx.oncomplete = () => log.push(['complete']);
  await finished(tx);
  assert.deepEqual(log, [['r1', 1, 'success'], ['r2', { id: 1 }], ['nested'], ['complete']]);
  assert.equal(r1.source, s);
  assert.equal(r1.transaction, tx);
  assert.equal(r1.error, undefined);
  // The transaction is inactive in a later task.
  await new Promise((r) => setTimeout(r, 5));
  assert.throws(() => s.get(1), { name: 'TransactionInactiveError' });
});

test('errors bubble request → transaction → database; not prevented, they abort', async () => {
  const { db } = await withStore({ keyPath: 'id' }, [[{ id: 1 }]]);
  const log = [];
  db.onerror = (e) => log.push(['db', e.target === req, e.currentTarget === db]);
  // The abort event reaches the connection after the transaction's listeners and their
  // microtasks (where `finished(tx)` settles) have run.
  const dbAborted = new Promise((resolve) => {
    db.onabort = () => {
      log.push(['db abort']);
      resolve();
    };
  });
  const tx = db.transaction('s', 'readwrite');
  const req = tx.objectStore('s').add({ id: 1 });
  const other = tx.objectStore('s').put({ id: 9 });
  req.onerror = (e) => log.push(['req', e.target.error.name, e.bubbles, e.cancelable]);
  tx.onerror = (e) => log.push(['tx', e.eventPhase]);
  other.onerror = () => log.push(['other', other.error.name]);
  await assert.rejects(finished(tx), { name: 'ConstraintError' });
  await dbAborted;
  assert.deepEqual(log, [
    ['req', 'ConstraintError', true, true], ['tx', 3], ['db', true, true],
    ['other', 'AbortError'], ['tx', 3], ['db', false, true], ['db abort'],
  ]);
  assert.equal(tx.error.name, 'ConstraintError');
  assert.equal(await done(db.transaction('s').objectStore('s').count()), 1);
});

test('abort() reverts; commit() commits early; scope and mode errors', async () => {
  const { db } = await withStore({ keyPath: 'id' }, [[{ id: 1 }]]);
  const tx = db.transaction('s', 'readwrite');
  tx.objectStore('s').put({ id: 2 });
  tx.abort();
  assert.throws(() => tx.abort(), { name: 'InvalidStateError' });
  await assert.rejects(finished(tx), (e) => e === null);
  const t2 = db.transaction('s', 'readwrite', { durability: 'relaxed' });
  assert.equal(t2.durability, 'relaxed');
  t2.objectStore('s').put({ id: 3 });
  t2.commit();
  assert.throws(() => t2.objectStore('s').put({ id: 4 }), { name: 'TransactionInactiveError' });
  await finished(t2);
  const ro = db.transaction(['s']);
  assert.deepEqual(await done(ro.objectStore('s').getAllKeys()), [1, 3]);
  assert.throws(() => ro.objectStore('s').put({ id: 5 }), { name: 'ReadOnlyError' });
  assert.throws(() => ro.objectStore('nope'), { name: 'NotFoundError' });
  assert.throws(() => db.transaction('nope'), { name: 'NotFoundError' });
  assert.throws(() => db.transaction([]), { name: 'InvalidAccessError' });
  assert.throws(() => db.transaction('s', 'versionchange'), TypeError);
  assert.throws(() => db.createObjectStore('x'), { name: 'InvalidStateError' });
});

test('readwrite transactions queue in creation order across connections', async () => {
  const { factory } = freshFactory();
  const db1 = await open(factory, 'q', 1, (db) => db.createObjectStore('s'));
  const db2 = await open(factory, 'q', 1);
  const order = [];
  const t1 = db1.transaction('s', 'readwrite');
  const t2 = db2.transaction('s', 'readwrite');
  const t3 = db1.transaction('s', 'readonly');
  t1.objectStore('s').put('one', 'k');
  t2.objectStore('s').put('two', 'k');
  const seen = t3.objectStore('s').get('k');
  t1.oncomplete = () => order.push(1);
  t2.oncomplete = () => order.push(2);
  t3.oncomplete = () => order.push(3);
  await Promise.all([finished(t1), finished(t2), finished(t3)]);
  assert.deepEqual(order, [1, 2, 3]);
  assert.equal(seen.result, 'two');
  db1.close();
  db2.close();
});

test('schema: createObjectStore/createIndex errors, rename, delete, abort reverts names', async () => {
  const { factory } = freshFactory();
  const db = await open(factory, 'sch', 1, (db) => {
    const s = db.createObjectStore('s', { keyPath: 'a.b' });
    assert.throws(() => db.createObjectStore('s'), { name: 'ConstraintError' });
    assert.throws(() => db.createObjectStore('t', { keyPath: 'a b' }), { name: 'SyntaxError' });
    assert.throws(() => db.createObjectStore('t', { keyPath: '', autoIncrement: true }), { name: 'InvalidAccessError' });
    assert.throws(() => s.createIndex('i', ['x', 'y'], { multiEntry: true }), { name: 'InvalidAccessError' });
    const i = s.createIndex('i', 'x');
    assert.throws(() => s.createIndex('i', 'y'), { name: 'ConstraintError' });
    i.name = 'j';
    assert.deepEqual([...s.indexNames], ['j']);
    const t = db.createObjectStore('t');
    t.name = 'u';
    db.deleteObjectStore('u');
    assert.deepEqual([...db.objectStoreNames], ['s']);
    assert.equal(s.keyPath, 'a.b');
    assert.equal(s.autoIncrement, false);
  });
  db.close();
  const r = factory.open('sch', 2);
  r.onupgradeneeded = () => {
    const d = r.result;
    d.createObjectStore('later');
    assert.ok(d.objectStoreNames.contains('later'));
    r.transaction.abort();
    assert.equal(d.objectStoreNames.contains('later'), false);
    assert.equal(d.version, 1);
  };
  await assert.rejects(done(r), { name: 'AbortError' });
  const again = await open(factory, 'sch');
  assert.equal(again.version, 1);
  assert.deepEqual([...again.objectStoreNames], ['s']);
  assert.deepEqual([...again.transaction('s').objectStore('s').indexNames], ['j']);
  again.close();
});

test('object store and index reads with ranges, counts and limits', async () => {
  const records = [];
  for (let i = 1; i <= 10; i++) records.push([{ id: i, tag: i % 2 ? 'odd' : 'even' }]);
  const { db } = await withStore({ keyPath: 'id' }, records);
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  const ix = s.index('by_tag');
  const reqs = [
    s.get(3), s.get(IDBKeyRange.bound(4, 6, true)), s.getKey(IDBKeyRange.lowerBound(9, true)),
    s.getAll(IDBKeyRange.upperBound(3)), s.getAll(null, 2), s.getAllKeys(IDBKeyRange.bound(2, 4)),
    s.count(), s.count(IDBKeyRange.lowerBound(8)), ix.get('even'), ix.getKey('odd'),
    ix.getAllKeys('odd', 3), ix.count('even'), s.get(99), s.delete(IDBKeyRange.bound(1, 5)), s.count(),
    s.clear(), s.count(),
  ].map(done);
  const out = await Promise.all(reqs);
  assert.deepEqual(out, [
    { id: 3, tag: 'odd' }, { id: 5, tag: 'odd' }, 10,
    [{ id: 1, tag: 'odd' }, { id: 2, tag: 'even' }, { id: 3, tag: 'odd' }], [{ id: 1, tag: 'odd' }, { id: 2, tag: 'even' }],
    [2, 3, 4], 10, 3, { id: 2, tag: 'even' }, 1, [1, 3, 5], 5, undefined, undefined, 5, undefined, 0,
  ]);
  assert.throws(() => s.get(), TypeError);
  assert.throws(() => s.get(undefined), { name: 'DataError' });
  assert.throws(() => s.get({}), { name: 'DataError' });
  assert.throws(() => s.getAll(null, -1), TypeError);
  assert.throws(() => s.put({ noid: 1 }), { name: 'DataError' });
  assert.throws(() => s.put({ id: 1 }, 1), { name: 'DataError' });
  assert.throws(() => s.put({ id: 1, f() {} }), { name: 'DataCloneError' });
  await finished(tx);
});

test('IDBKeyRange', () => {
  const r = IDBKeyRange.bound(1, 5, true, false);
  assert.deepEqual([r.lower, r.upper, r.lowerOpen, r.upperOpen], [1, 5, true, false]);
  assert.equal(r.includes(1), false);
  assert.equal(r.includes(5), true);
  assert.equal(IDBKeyRange.only('a').includes('a'), true);
  assert.equal(IDBKeyRange.lowerBound(0).upper, undefined);
  assert.throws(() => IDBKeyRange.bound(5, 1), { name: 'DataError' });
  assert.throws(() => IDBKeyRange.bound(1, 1, true), { name: 'DataError' });
  assert.throws(() => IDBKeyRange.only(NaN), { name: 'DataError' });
  assert.throws(() => new IDBKeyRange(), TypeError);
  assert.ok(IDBKeyRange.only(new Uint8Array([1])).lower instanceof ArrayBuffer);
  assert.ok(Object.is(IDBKeyRange.only(-0).lower, 0));
  // The bounds are new values each time: changing one changes neither the range nor the next.
  const a = IDBKeyRange.only([1, new Date(3), new Uint8Array([4])]);
  const lower = a.lower;
  lower.push(9);
  lower[1].setTime(0);
  new Uint8Array(lower[2])[0] = 0;
  assert.notEqual(a.lower, a.upper);
  assert.equal(a.lower[1].getTime(), 3);
  assert.deepEqual(new Uint8Array(a.upper[2]), new Uint8Array([4]));
  assert.equal(a.lower.length, 3);
  assert.equal(a.includes([1, new Date(3), new Uint8Array([4])]), true);
});

test('cursors: directions, continue, continuePrimaryKey, advance, update, delete', async () => {
  const records = [];
  for (let i = 1; i <= 6; i++) records.push([{ id: i, tag: ['a', 'b', 'c'][i % 3] }]);
  const { db } = await withStore({ keyPath: 'id' }, records);
  const walk = (req, step = (c) => c.continue()) => new Promise((resolve) => {
    const seen = [];
    req.onsuccess = () => {
      const c = req.result;
      if (!c) return resolve(seen);
      seen.push([c.key, c.primaryKey]);
      step(c);
    };
  });
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  const ix = s.index('by_tag');
  const [next, prev, uniq, prevuniq, adv, keys, jump, cpk] = await Promise.all([
    walk(s.openCursor()),
    walk(s.openCursor(IDBKeyRange.bound(2, 4), 'prev')),
    walk(ix.openCursor(null, 'nextunique')),
    walk(ix.openKeyCursor(null, 'prevunique')),
    walk(s.openCursor(), (c) => c.advance(2)),
    walk(s.openKeyCursor(IDBKeyRange.lowerBound(5))),
    walk(s.openCursor(), (c) => (c.key === 1 ? c.continue(5) : c.continue())),
    walk(ix.openCursor(), (c) => (c.primaryKey === 3 ? c.continuePrimaryKey('b', 4) : c.continue())),
  ]);
  assert.deepEqual(next.map((x) => x[0]), [1, 2, 3, 4, 5, 6]);
  assert.deepEqual(prev.map((x) => x[0]), [4, 3, 2]);
  assert.deepEqual(uniq, [['a', 3], ['b', 1], ['c', 2]]);
  assert.deepEqual(prevuniq, [['c', 2], ['b', 1], ['a', 3]]);
  assert.deepEqual(adv.map((x) => x[0]), [1, 3, 5]);
  assert.deepEqual(keys, [[5, 5], [6, 6]]);
  assert.deepEqual(jump.map((x) => x[0]), [1, 5, 6]);
  assert.deepEqual(cpk, [['a', 3], ['b', 4], ['c', 2], ['c', 5]]);

  const upd = s.openCursor();
  await new Promise((resolve) => {
    upd.onsuccess = () => {
      const c = upd.result;
      if (!c) return resolve();
      assert.ok(c instanceof IDBCursorWithValue);
      assert.equal(c.request, upd);
      if (c.key % 2 === 0) c.delete();
      else c.update({ ...c.value, seen: true });
      assert.throws(() => c.update({ id: 999 }), { name: 'DataError' });
      c.continue();
      assert.throws(() => c.continue(), { name: 'InvalidStateError' });
    };
  });
  assert.deepEqual(await done(s.getAll()), [
    { id: 1, tag: 'b', seen: true }, { id: 3, tag: 'a', seen: true }, { id: 5, tag: 'c', seen: true },
  ]);
  await finished(tx);
});

test('a cursor shows one copy of its key per position: changing it changes no step or update', async () => {
  const records = [[{ id: [1], tag: new Date(10) }], [{ id: [2], tag: new Date(20) }], [{ id: [3], tag: new Date(30) }]];
  const { db } = await withStore({ keyPath: 'id' }, records);
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  const seen = [];
  const r = s.openCursor();
  await new Promise((resolve, reject) => {
    r.onsuccess = () => {
      const c = r.result;
      if (!c) return resolve();
      try {
        // The same object until the cursor moves.
        assert.equal(c.key, c.key);
        assert.equal(c.primaryKey, c.primaryKey);
        seen.push(c.key[0]);
        c.key.push(99);
        c.primaryKey[0] = 0;
        assert.deepEqual(c.key, [seen.at(-1), 99]);
        // The record's in-line key is still its own: update() accepts it.
        c.update({ ...c.value, id: [seen.at(-1)], updated: true });
        // [n, 1] is beyond [n] (it would not be beyond the changed [n, 99]).
        c.continue([seen.at(-1), 1]);
      } catch (e) { reject(e); }
    };
  });
  assert.deepEqual(seen, [1, 2, 3]);
  assert.deepEqual((await done(s.getAll())).map((v) => [v.id, v.updated]), [[[1], true], [[2], true], [[3], true]]);
  const ir = s.index('by_tag').openCursor();
  const dates = [];
  await new Promise((resolve) => {
    ir.onsuccess = () => {
      const c = ir.result;
      if (!c) return resolve();
      dates.push(c.key.getTime());
      c.key.setTime(1000);
      c.continue();
    };
  });
  assert.deepEqual(dates, [10, 20, 30]);
  await finished(tx);
});

test('cursor steps check the transaction, the source and the position before the key', async () => {
  const { db } = await withStore({ keyPath: 'id' }, [[{ id: 1, tag: 'a' }], [{ id: 2, tag: 'b' }]]);
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  let kept = null;
  const ir = s.index('by_tag').openCursor();
  ir.onsuccess = () => {
    const c = ir.result;
    if (!c || kept) return;
    kept = c;
    c.continue();
    // Iterating: InvalidStateError, although the key is not a valid key either.
    assert.throws(() => c.continue({}), { name: 'InvalidStateError' });
    assert.throws(() => c.continuePrimaryKey({}, {}), { name: 'InvalidStateError' });
  };
  const sr = s.openCursor();
  sr.onsuccess = () => {
    const c = sr.result;
    if (!c) return;
    // A store cursor has no primary key to continue to: InvalidAccessError comes before DataError.
    assert.throws(() => c.continuePrimaryKey({}, {}), { name: 'InvalidAccessError' });
    assert.throws(() => c.continue({}), { name: 'DataError' });
    // A key range is not a key.
    assert.throws(() => c.continue(IDBKeyRange.only(5)), { name: 'DataError' });
  };
  await finished(tx);
  // Finished: TransactionInactiveError before anything else.
  assert.throws(() => kept.continue({}), { name: 'TransactionInactiveError' });
  assert.throws(() => kept.continuePrimaryKey({}, {}), { name: 'TransactionInactiveError' });
  assert.throws(() => kept.advance(1), { name: 'TransactionInactiveError' });
});

test('keys cross exactly: lone surrogates, binary views, -0, dates, arrays', async () => {
  const { db } = await withStore(undefined, []);
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  const keys = ['\ud800', 'a\udc00b', new Uint8Array([1, 2]), new DataView(new ArrayBuffer(1)), -0, new Date(7), [1, ['x']]];
  keys.forEach((k, i) => s.put(i, k));
  const got = await done(s.getAllKeys());
  assert.equal(got.length, 7);
  assert.ok(Object.is(got[0], 0));
  assert.deepEqual(got[1] instanceof Date && got[1].getTime(), 7);
  assert.deepEqual(got.slice(2, 4), ['a\udc00b', '\ud800']);
  assert.deepEqual(new Uint8Array(got[4]), new Uint8Array([0]));
  assert.deepEqual(new Uint8Array(got[5]), new Uint8Array([1, 2]));
  assert.deepEqual(got[6], [1, ['x']]);
  assert.equal(await done(s.get('\ud800')), 0);
  assert.equal(await done(s.get(new Uint8Array([1, 2]).buffer)), 2);
  for (let i = 0; i < keys.length; i++) assert.equal(await done(s.get(keys[i])), i);
  // One range object serves many requests; its bounds are keys of two types.
  const range = IDBKeyRange.bound(new Date(0), [2], false, true);
  assert.deepEqual(await done(s.getAll(range)), [5, 1, 0, 3, 2, 6]);
  assert.deepEqual(await done(s.getAll(range, 2)), [5, 1]);
  assert.equal(await done(s.count(range)), 6);
  const last = s.openCursor(range, 'prev');
  assert.deepEqual(await new Promise((resolve) => { last.onsuccess = () => resolve(last.result.key); }), [1, ['x']]);
  const cyclic = [];
  cyclic.push(cyclic);
  assert.throws(() => s.put(1, cyclic), { name: 'DataError' });
  assert.throws(() => s.put(1, [1, , 2]), { name: 'DataError' }); // eslint-disable-line no-sparse-arrays
  await finished(tx);
});

test('values: structured clone without loss', async () => {
  const { db } = await withStore({ keyPath: 'id', autoIncrement: true }, []);
  const cyc = { name: 'c' };
  cyc.self = cyc;
  const shared = { x: 1 };
  class Point { constructor() { this.x = 1; } }
  const values = [
    { n: NaN, z: -0, u: undefined, nul: null, d: new Date(3), bad: new Date(NaN), s: 'é\ud800', ab: new Uint8Array([9]).buffer },
    { m: new Map([[1, { a: 1 }]]), set: new Set(['a']), big: 2n ** 70n, f32: new Float32Array([1.5]), re: /x/gi },
    cyc,
    { a: shared, b: shared, tag: 'shared' },
    { sparse: [1, , 3] }, // eslint-disable-line no-sparse-arrays
    new Point(),
  ];
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  for (const v of values) s.put(v);
  const all = await done(s.getAll());
  await finished(tx);
  assert.ok(Number.isNaN(all[0].n));
  assert.ok(Object.is(all[0].z, -0));
  assert.ok('u' in all[0] && all[0].u === undefined);
  assert.equal(all[0].d.getTime(), 3);
  assert.ok(Number.isNaN(all[0].bad.getTime()));
  assert.equal(all[0].s, 'é\ud800');
  assert.deepEqual(new Uint8Array(all[0].ab), new Uint8Array([9]));
  assert.deepEqual(all[1].m, new Map([[1, { a: 1 }]]));
  assert.deepEqual(all[1].set, new Set(['a']));
  assert.equal(all[1].big, 2n ** 70n);
  assert.ok(all[1].f32 instanceof Float32Array && all[1].f32[0] === 1.5);
  assert.ok(all[1].re instanceof RegExp && all[1].re.flags === 'gi');
  assert.equal(all[1].id, 2); // the generated key is injected into the deserialized value
  assert.equal(all[2].self, all[2]);
  assert.equal(all[3].a, all[3].b);
  assert.equal(all[3].tag, 'shared');
  assert.equal(all[4].sparse.length, 3);
  assert.equal(1 in all[4].sparse, false);
  assert.deepEqual(all[5], { x: 1, id: 6 });
  assert.equal(Object.getPrototypeOf(all[5]), Object.prototype);
  // Index keys still come from the projection of a value stored with V8's serialization.
  const t2 = db.transaction('s', 'readwrite');
  t2.objectStore('s').put({ tag: 'm', m: new Map() });
  assert.deepEqual((await done(t2.objectStore('s').index('by_tag').getAll('m'))).map((v) => v.m), [new Map()]);
});

test('versionchange and blocked across connections; deleteDatabase waits for close', async () => {
  const { factory } = freshFactory();
  const db1 = await open(factory, 'v', 1, (db) => db.createObjectStore('s'));
  const log = [];
  db1.onversionchange = (e) => log.push(['versionchange', e.oldVersion, e.newVersion]);
  const r = factory.open('v', 2);
  r.onblocked = (e) => {
    log.push(['blocked', e.oldVersion, e.newVersion]);
    setTimeout(() => db1.close(), 10);
  };
  r.onupgradeneeded = () => log.push(['upgradeneeded']);
  const db2 = await done(r);
  assert.deepEqual(log, [['versionchange', 1, 2], ['blocked', 1, 2], ['upgradeneeded']]);
  assert.throws(() => db1.transaction('s'), { name: 'InvalidStateError' });
  db2.onversionchange = () => db2.close();
  const del = factory.deleteDatabase('v');
  let blocked = false;
  del.onblocked = () => { blocked = true; };
  await done(del);
  assert.equal(blocked, false);
  assert.deepEqual(await factory.databases(), []);
});

test('data persists across processes', () => {
  const { dir } = freshFactory();
  const script = (body) => `
    const { IDBFactory } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const factory = new IDBFactory({ dir: ${JSON.stringify(dir)} });
    ${body}`;
  const write = spawnSync(process.execPath, ['-e', script(`
    const r = factory.open('p', 1);
    r.onupgradeneeded = () => r.result.createObjectStore('s', { autoIncrement: true });
    r.onsuccess = () => {
      const tx = r.result.transaction('s', 'readwrite');
      tx.objectStore('s').put({ m: new Map([['k', 1]]) });
      tx.objectStore('s').put('plain');
      tx.oncomplete = () => console.log('written');
    };`)], { encoding: 'utf8' });
  assert.equal(write.stdout.trim(), 'written', write.stderr);
  const read = spawnSync(process.execPath, ['-e', script(`
    const r = factory.open('p');
    r.onsuccess = () => {
      const q = r.result.transaction('s').objectStore('s').getAll();
      q.onsuccess = () => console.log(JSON.stringify([r.result.version, q.result[0].m.get('k'), q.result[1]]));
    };`)], { encoding: 'utf8' });
  assert.equal(read.stdout.trim(), '[1,1,"plain"]', read.stderr);
});

test('the auto entry installs the globals; INDEXA_DATA_DIR picks the directory', { skip: onPostgres && 'SQLite only: it reads the files of the directory' }, () => {
  const { dir } = freshFactory();
  const out = spawnSync(process.execPath, ['-e', `
    require(${JSON.stringify(path.join(__dirname, '..', 'auto.js'))});
    console.log([typeof indexedDB.open, typeof IDBKeyRange.only, typeof IDBCursorWithValue,
      indexedDB instanceof IDBFactory].join(','));
    const r = indexedDB.open('g', 1);
    r.onsuccess = () => r.result.close();`], { encoding: 'utf8', env: { ...process.env, INDEXA_DATA_DIR: dir } });
  assert.equal(out.stdout.trim(), 'function,function,function,true', out.stderr);
  assert.deepEqual(require('node:fs').readdirSync(dir).filter((f) => f.endsWith('.indexa')), ['db-g.indexa']);
});

test('in-memory factories are independent', async () => {
  const a = new IDBFactory({ memory: true });
  const b = new IDBFactory({ memory: true });
  (await open(a, 'm', 1)).close();
  assert.deepEqual(await a.databases(), [{ name: 'm', version: 1 }]);
  assert.deepEqual(await b.databases(), []);
  assert.ok(lib.indexedDB instanceof IDBFactory);
});
