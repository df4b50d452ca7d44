'use strict';
// Results that carry records reach JavaScript as one buffer per batch of replies, decoded by
// lib/wire.js: every kind of value and key comes back exactly, through every read that
// returns records, and property names are right however many there are. Values are written
// in the same form (values.js), so the same values test the way in.
const path = require('node:path');
const { spawnSync } = require('node:child_process');
const test = require('node:test');
const assert = require('node:assert/strict');
const { freshFactory, open, done, finished } = require('./helpers.js');
const { IDBKeyRange } = require('..');

const LONG_ASCII = 'a string of more than twenty-four ASCII characters';
const NON_ASCII = 'héllo wörld ✓ 𝄞';
const LONE = 'x\uD800y\uDC00';

/** A value with every kind the engine's model holds, nested. */
function everything(id) {
  const bytes = new Uint8Array([0, 1, 254, 255]).buffer;
  return {
    id,
    undef: undefined,
    nil: null,
    yes: true,
    no: false,
    zero: 0,
    negZero: -0,
    int: -123456,
    maxInt: 2147483647,
    minInt: -2147483648,
    big: 2 ** 53 - 1,
    frac: 0.1,
    nan: NaN,
    inf: -Infinity,
    empty: '',
    short: 'abc',
    long: LONG_ASCII,
    longer: LONG_ASCII.repeat(3),
    nonAscii: NON_ASCII,
    longNonAscii: NON_ASCII.repeat(8),
    lone: LONE,
    longLone: LONE.repeat(30),
    loneAtEnd: `${'a'.repeat(70)}\uD800`,
    date: new Date(Date.UTC(2020, 1, 29, 12, 0, 0, 5)),
    invalidDate: new Date(NaN),
    bytes,
    array: [1, 'two', [3, [4]], { five: 5 }],
    nested: { a: { b: { c: [] } } },
    [NON_ASCII]: 'a non-ASCII name',
    [LONE]: 'a name with lone surrogates',
    ['n'.repeat(40)]: 'a long name',
    toString: 'a name Object.prototype has',
    '': 'the empty name',
  };
}

function checkEverything(v, id) {
  const want = everything(id);
  assert.deepEqual(Object.keys(v), Object.keys(want));
  for (const k of Object.keys(want)) {
    if (want[k] instanceof ArrayBuffer) {
      assert.ok(v[k] instanceof ArrayBuffer, k);
      assert.deepEqual([...new Uint8Array(v[k])], [...new Uint8Array(want[k])], k);
    } else if (want[k] instanceof Date) {
      assert.ok(v[k] instanceof Date, k);
      assert.ok(Object.is(v[k].getTime(), want[k].getTime()), k);
    } else if (typeof want[k] === 'number') {
      assert.ok(Object.is(v[k], want[k]), `${k}: ${v[k]}`);
    } else {
      assert.deepEqual(v[k], want[k], k);
    }
  }
  assert.ok(Object.prototype.hasOwnProperty.call(v, 'toString'));
}

test('every kind of value and key comes back exactly through get, getAll, getAllRecords and cursors', async () => {
  const { factory } = freshFactory();
  const keys = [-0.5, 7, 'k', NON_ASCII, LONE, new Date(0), new Uint8Array([9, 8]).buffer, [1, ['a', new Date(5)]]];
  const db = await open(factory, 'db', 1, (d) => d.createObjectStore('s'));
  let tx = db.transaction('s', 'readwrite');
  keys.forEach((k, i) => tx.objectStore('s').put(everything(i), k));
  await finished(tx);
  tx = db.transaction('s');
  const s = tx.objectStore('s');
  checkEverything(await done(s.get(7)), 1);
  const all = await done(s.getAll());
  assert.equal(all.length, keys.length);
  const records = await done(s.getAllRecords());
  const walked = [];
  const cursor = s.openCursor();
  cursor.onsuccess = () => {
    const c = cursor.result;
    if (c) {
      walked.push([c.key, c.primaryKey, c.value]);
      c.continue();
    }
  };
  const keyWalk = [];
  const keyCursor = s.openKeyCursor(null, 'prev');
  keyCursor.onsuccess = () => {
    const c = keyCursor.result;
    if (c) {
      keyWalk.push(c.key);
      c.continue();
    }
  };
  await finished(tx);
  // Key order: numbers, dates, strings, binary, arrays.
  const order = [-0.5, 7, new Date(0), NON_ASCII, 'k', LONE, new Uint8Array([9, 8]).buffer, [1, ['a', new Date(5)]]];
  const index = (k) => keys.findIndex((x) => factory.cmp(x, k) === 0);
  assert.equal(records.length, keys.length);
  order.forEach((k, i) => {
    assert.equal(factory.cmp(records[i].key, k), 0);
    assert.equal(factory.cmp(walked[i][0], k), 0);
    assert.equal(factory.cmp(walked[i][1], k), 0);
    assert.equal(factory.cmp(keyWalk[keys.length - 1 - i], k), 0);
    checkEverything(all[i], index(k));
    checkEverything(records[i].value, index(k));
    checkEverything(walked[i][2], index(k));
  });
  assert.ok(walked[2][0] instanceof Date);
  assert.ok(walked[6][0] instanceof ArrayBuffer);
  assert.ok(walked[7][0][1][1] instanceof Date);
  db.close();
});

test('values larger than the writer\'s buffer, and many values one after the other, are written whole', async () => {
  const { factory } = freshFactory();
  const db = await open(factory, 'db', 1, (d) => d.createObjectStore('s'));
  const big = {
    text: 'x'.repeat(100000),
    wide: '\u00e9'.repeat(50000),
    bytes: new Uint8Array(70000).map((_, i) => i % 251).buffer,
    list: Array.from({ length: 5000 }, (_, i) => ({ i, s: `item ${i}` })),
  };
  let tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  for (let i = 0; i < 2000; i++) s.put({ i, name: `record ${i}` }, i);
  s.put(big, 'big');
  s.put({ after: 'big' }, 'next');
  await finished(tx);
  tx = db.transaction('s');
  const all = await done(tx.objectStore('s').getAll(IDBKeyRange.upperBound(1999)));
  all.forEach((v, i) => assert.deepEqual(v, { i, name: `record ${i}` }));
  const back = await done(tx.objectStore('s').get('big'));
  assert.equal(back.text, big.text);
  assert.equal(back.wide, big.wide);
  assert.deepEqual(new Uint8Array(back.bytes), new Uint8Array(big.bytes));
  assert.deepEqual(back.list, big.list);
  assert.deepEqual(await done(tx.objectStore('s').get('next')), { after: 'big' });
  db.close();
});

test('property names: more distinct names than the decoder keeps, names that differ only late, and many records', async () => {
  const { factory } = freshFactory();
  const db = await open(factory, 'db', 1, (d) => d.createObjectStore('s'));
  const value = (i) => {
    const v = {};
    for (let j = 0; j < 20; j++) v[`name${(i * 20 + j) % 3000}`] = i * 100 + j;
    v[`abcdefgh${i % 7}`] = i;
    return v;
  };
  let tx = db.transaction('s', 'readwrite');
  for (let i = 0; i < 600; i++) tx.objectStore('s').put(value(i), i);
  await finished(tx);
  tx = db.transaction('s');
  const all = await done(tx.objectStore('s').getAll());
  const one = await done(tx.objectStore('s').get(599));
  await finished(tx);
  assert.equal(all.length, 600);
  all.forEach((v, i) => assert.deepEqual(v, value(i)));
  assert.deepEqual(one, value(599));
  db.close();
});

/**
 * Records whose objects come back by shape (lib/wire.js `shapedObject`): each kind ten times
 * in a row, so that its shape is kept, then made, then used; then objects with the same count
 * and first name as the first kind whose later names differ, and the first kind again.
 */
function shapedRecords() {
  const kinds = [
    (i) => ({ a: i, b: { x: i, y: [i, { x: -i, y: null }] }, c: `c${i}` }),
    (i) => JSON.parse(`{"__proto__": ${i}, "z": 1}`),
    (i) => JSON.parse(`{"z": ${i}, "__proto__": {"polluted": true}}`),
    (i) => ({ 'q"uote': i, 'back\\slash': 2, 'new\nline': 3, '${x}': 4, '`': 5, '</script>': 6 }),
    (i) => ({ b: i, 2: 'two', 1: 'one', a: 0 }),
    (i) => ({ constructor: i, toString: 'own', valueOf: null, hasOwnProperty: 1 }),
  ];
  const out = [];
  for (const kind of kinds) for (let i = 0; i < 10; i++) out.push(kind(i));
  out.push({ a: 1, b: 2, d: 3 }, { a: 1, e: 2, c: 3 }, kinds[0](10));
  return out;
}

/** `got` has `want`'s own properties, in order, at every level, and the plain prototypes. */
function sameObjects(got, want) {
  assert.deepEqual(got, want);
  if (want === null || typeof want !== 'object') return;
  assert.equal(Object.getPrototypeOf(got), Object.getPrototypeOf(want));
  assert.deepEqual(Reflect.ownKeys(got), Reflect.ownKeys(want));
  for (const k of Reflect.ownKeys(want)) sameObjects(got[k], want[k]);
}

test('objects read by shape: names that part late, nested objects, __proto__, names to quote, and no prototype setter runs', async () => {
  const { factory } = freshFactory();
  const db = await open(factory, 'db', 1, (d) => d.createObjectStore('s'));
  const records = shapedRecords();
  let tx = db.transaction('s', 'readwrite');
  records.forEach((r, i) => tx.objectStore('s').put(r, i));
  await finished(tx);
  let called = 0;
  for (const name of ['a', 'x', 'z', 'b']) {
    Object.defineProperty(Object.prototype, name, { configurable: true, set() { called++; } });
  }
  try {
    tx = db.transaction('s');
    const s = tx.objectStore('s');
    const all = await done(s.getAll());
    const each = await Promise.all(records.map((_, i) => done(s.get(i))));
    const stepped = [];
    const cursor = s.openCursor();
    cursor.onsuccess = () => {
      if (cursor.result) {
        stepped.push(cursor.result.value);
        cursor.result.continue();
      }
    };
    await finished(tx);
    for (const got of [all, each, stepped]) {
      assert.equal(got.length, records.length);
      got.forEach((v, i) => sameObjects(v, records[i]));
    }
    assert.equal(called, 0);
    assert.equal(Object.prototype.polluted, undefined);
    assert.equal(Object.getOwnPropertyDescriptor(all[20], '__proto__').value.polluted, true);
  } finally {
    for (const name of ['a', 'x', 'z', 'b']) delete Object.prototype[name];
  }
  db.close();
});

/**
 * Runs `body` (an async function's body) in a child process started with `nodeFlags`, where
 * `request(r)` is the promise of request `r`'s result and `filled(values)` opens a database
 * with one object store `s`, puts `values` under keys 0, 1, … and resolves to the connection;
 * returns its stdout, trimmed.
 */
function inChild(nodeFlags, body) {
  const { dir } = freshFactory();
  const out = spawnSync(process.execPath, [...nodeFlags, '-e', `
    const { IDBFactory } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const factory = new IDBFactory({ dir: ${JSON.stringify(dir)} });
    const request = (r) => new Promise((resolve, reject) => { r.onsuccess = () => resolve(r.result); r.onerror = () => reject(r.error); });
    const filled = async (values) => {
      const open = factory.open('d', 1);
      open.onupgradeneeded = () => open.result.createObjectStore('s');
      const db = await request(open);
      const tx = db.transaction('s', 'readwrite');
      values.forEach((v, i) => tx.objectStore('s').put(v, i));
      await new Promise((resolve) => { tx.oncomplete = resolve; });
      return db;
    };
    (async () => { ${body} })().catch((e) => { console.error(e); process.exit(1); });`], { encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return out.stdout.trim();
}

test('objects come back whole where code may not be made from strings', () => {
  const out = inChild(['--disallow-code-generation-from-strings'], `
    const db = await filled(Array.from({ length: 20 }, (_, i) => ({ a: i, b: { c: i } })));
    console.log(JSON.stringify(await request(db.transaction('s').objectStore('s').getAll())));`);
  assert.equal(out, JSON.stringify(Array.from({ length: 20 }, (_, i) => ({ a: i, b: { c: i } }))));
});

test('objects read by shape keep none of their values alive once the program lets them go', () => {
  const out = inChild(['--expose-gc'], `
    const db = await filled(Array.from({ length: 12 }, (_, i) => ({ a: { n: i }, blob: new ArrayBuffer(1 << 20) })));
    const refs = [];
    const read = async () => {
      for (const v of await request(db.transaction('s').objectStore('s').getAll())) refs.push(new WeakRef(v.a), new WeakRef(v.blob));
    };
    await read();
    for (let i = 0; i < 3; i++) {
      await new Promise(setImmediate);
      gc();
    }
    console.log(refs.length, refs.filter((r) => r.deref() !== undefined).length);`);
  assert.equal(out, '24 0');
});

test('one function per shape, kept when an object with other names comes among its objects', () => {
  const out = inChild([], `
    let written = 0;
    const OriginalFunction = Function;
    globalThis.Function = new Proxy(OriginalFunction, { construct(target, args) { written++; return Reflect.construct(target, args); } });
    const values = Array.from({ length: 1000 }, (_, i) => (i % 9 === 8 ? { id: i, a: 1, c: 2 } : { id: i, a: 1, b: 2 }));
    const db = await filled(values);
    const all = await request(db.transaction('s').objectStore('s').getAll());
    console.log(written, JSON.stringify(all) === JSON.stringify(values));`);
  assert.equal(out, '1 true');
});
