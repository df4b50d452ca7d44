'use strict';
// The outcome a transaction reports is the outcome on disk: on every path that ends a
// transaction (explicit commit(), auto-commit, abort(), a request error not prevented, an
// exception in an event handler, a storage failure, the connection closing, the process
// exiting), `complete` fires exactly when a later reader (a fresh connection, or another
// process) sees the transaction's writes, and `abort` (with its `error`) exactly when it
// sees none of them.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IDBFactory } = require('..');
const { freshFactory, done, open } = require('./helpers.js');

/** A fresh directory with database 'db' holding store 's' (out-of-line keys) with record 0 → 'base'. */
async function setup(where) {
  const dir = where || freshFactory().dir;
  const factory = new IDBFactory({ dir });
  const db = await open(factory, 'db', 1, (db) => {
    db.createObjectStore('s').put('base', 0);
  });
  return { factory, db, dir };
}

/** The transaction's reported outcome: `'complete'`, or `'abort:<error name or null>'`. */
function outcome(tx) {
  return new Promise((resolve) => {
    tx.addEventListener('complete', () => resolve('complete'));
    tx.addEventListener('abort', () => resolve(`abort:${tx.error === null ? null : tx.error.name}`));
  });
}

/** The records of store 's' as `[key, value]` pairs, read through a new factory and connection. */
async function onDisk(dir) {
  const factory = new IDBFactory({ dir });
  const db = await done(factory.open('db'));
  const tx = db.transaction('s');
  const keys = done(tx.objectStore('s').getAllKeys());
  const values = done(tx.objectStore('s').getAll());
  const records = (await keys).map((k) => [k, undefined]);
  (await values).forEach((v, i) => { records[i][1] = v; });
  db.close();
  return records;
}

/**
 * Runs `body` with exceptions thrown from event handlers (which the package reports as
 * uncaught, like a browser) collected instead of failing the test; returns them.
 */
async function catchingHandlerErrors(body) {
  const saved = process.listeners('uncaughtException');
  process.removeAllListeners('uncaughtException');
  const caught = [];
  process.on('uncaughtException', (e) => caught.push(e));
  try {
    await body();
    // Let the reports queued with process.nextTick arrive.
    await new Promise((r) => setImmediate(r));
  } finally {
    process.removeAllListeners('uncaughtException');
    for (const l of saved) process.on('uncaughtException', l);
  }
  return caught;
}

const BASE = [[0, 'base']];

test('commit(): a put then a failing add not prevented aborts, and the put is not on disk', async () => {
  const { db, dir } = await setup();
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  s.put('one', 1);
  s.add('dup', 0);
  tx.commit();
  assert.equal(await outcome(tx), 'abort:ConstraintError');
  db.close();
  assert.deepEqual(await onDisk(dir), BASE);
});

test('commit(): a failing add whose error is prevented completes, with the put on disk', async () => {
  const { db, dir } = await setup();
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  s.put('one', 1);
  s.add('dup', 0).onerror = (e) => e.preventDefault();
  tx.commit();
  assert.equal(await outcome(tx), 'complete');
  db.close();
  assert.deepEqual(await onDisk(dir), [...BASE, [1, 'one']]);
});

test('commit(): a success handler that throws does not stop the commit; the record is on disk', async () => {
  const { db, dir } = await setup();
  let result;
  const caught = await catchingHandlerErrors(async () => {
    const tx = db.transaction('s', 'readwrite');
    tx.objectStore('s').put('one', 1).onsuccess = () => { throw new Error('handler failed'); };
    tx.commit();
    result = await outcome(tx);
  });
  assert.equal(result, 'complete');
  assert.deepEqual(caught.map((e) => e.message), ['handler failed']);
  db.close();
  assert.deepEqual(await onDisk(dir), [...BASE, [1, 'one']]);
});

test('commit(): an error handler that prevents the error and throws does not stop the commit', async () => {
  const { db, dir } = await setup();
  let result;
  const caught = await catchingHandlerErrors(async () => {
    const tx = db.transaction('s', 'readwrite');
    const s = tx.objectStore('s');
    s.put('one', 1);
    s.add('dup', 0).onerror = (e) => { e.preventDefault(); throw new Error('handler failed'); };
    tx.commit();
    result = await outcome(tx);
  });
  assert.equal(result, 'complete');
  assert.equal(caught.length, 1);
  db.close();
  assert.deepEqual(await onDisk(dir), [...BASE, [1, 'one']]);
});

test('commit(): the engine commits after the last request settles; an error not prevented there aborts', async () => {
  const { db, dir } = await setup();
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  for (let i = 1; i <= 20; i++) s.put(`v${i}`, i);
  s.add('dup', 0);
  tx.commit();
  assert.equal(await outcome(tx), 'abort:ConstraintError');
  db.close();
  assert.deepEqual(await onDisk(dir), BASE);
});

test('commit() with every request succeeding completes with all of them on disk', async () => {
  const { db, dir } = await setup();
  const tx = db.transaction('s', 'readwrite');
  tx.objectStore('s').put('one', 1);
  tx.objectStore('s').put('two', 2);
  tx.commit();
  assert.equal(await outcome(tx), 'complete');
  db.close();
  assert.deepEqual(await onDisk(dir), [...BASE, [1, 'one'], [2, 'two']]);
});

test('auto-commit: a request error not prevented aborts; prevented, the transaction completes', async () => {
  const { db, dir } = await setup();
  const t1 = db.transaction('s', 'readwrite');
  t1.objectStore('s').put('one', 1);
  t1.objectStore('s').add('dup', 0);
  assert.equal(await outcome(t1), 'abort:ConstraintError');
  const t2 = db.transaction('s', 'readwrite');
  t2.objectStore('s').put('two', 2);
  t2.objectStore('s').add('dup', 0).onerror = (e) => e.preventDefault();
  assert.equal(await outcome(t2), 'complete');
  db.close();
  assert.deepEqual(await onDisk(dir), [...BASE, [2, 'two']]);
});

test('auto-commit: a success handler that throws aborts, and nothing is on disk', async () => {
  const { db, dir } = await setup();
  let result;
  await catchingHandlerErrors(async () => {
    const tx = db.transaction('s', 'readwrite');
    tx.objectStore('s').put('one', 1).onsuccess = () => {
      tx.objectStore('s').put('two', 2);
      throw new Error('handler failed');
    };
    result = await outcome(tx);
  });
  assert.equal(result, 'abort:AbortError');
  db.close();
  assert.deepEqual(await onDisk(dir), BASE);
});

test('abort(): after a write succeeded, from its success handler, nothing is on disk', async () => {
  const { db, dir } = await setup();
  const tx = db.transaction('s', 'readwrite');
  tx.objectStore('s').put('one', 1).onsuccess = () => {
    tx.objectStore('s').put('two', 2);
    tx.abort();
  };
  assert.equal(await outcome(tx), 'abort:null');
  assert.throws(() => tx.commit(), { name: 'InvalidStateError' });
  db.close();
  assert.deepEqual(await onDisk(dir), BASE);
});

test('abort() is refused once commit() was called, and the transaction completes', async () => {
  const { db, dir } = await setup();
  const tx = db.transaction('s', 'readwrite');
  tx.objectStore('s').put('one', 1);
  tx.commit();
  assert.throws(() => tx.abort(), { name: 'InvalidStateError' });
  assert.equal(await outcome(tx), 'complete');
  db.close();
  assert.deepEqual(await onDisk(dir), [...BASE, [1, 'one']]);
});

test('connection close: close() with a transaction running lets it complete, on disk', async () => {
  const { db, dir } = await setup();
  const tx = db.transaction('s', 'readwrite');
  tx.objectStore('s').put('one', 1);
  db.close();
  assert.equal(await outcome(tx), 'complete');
  assert.deepEqual(await onDisk(dir), [...BASE, [1, 'one']]);
});

test('connection close: close() after commit() with a failing request aborts, nothing on disk', async () => {
  const { db, dir } = await setup();
  const tx = db.transaction('s', 'readwrite');
  tx.objectStore('s').put('one', 1);
  tx.objectStore('s').add('dup', 0);
  tx.commit();
  db.close();
  assert.equal(await outcome(tx), 'abort:ConstraintError');
  assert.deepEqual(await onDisk(dir), BASE);
});

test('upgrade: commit() then a failing request aborts the upgrade; the version stays', async () => {
  const { dir } = freshFactory();
  const factory = new IDBFactory({ dir });
  (await open(factory, 'db', 1, (db) => db.createObjectStore('s').put('base', 0))).close();
  const request = factory.open('db', 2);
  let tx;
  request.onupgradeneeded = () => {
    tx = request.transaction;
    tx.objectStore('s').put('one', 1);
    tx.objectStore('s').add('dup', 0);
    tx.commit();
  };
  const opened = new Promise((resolve) => {
    request.onsuccess = () => resolve('success');
    request.onerror = (e) => { e.preventDefault(); resolve(`error:${request.error.name}`); };
  });
  assert.equal(await opened, 'error:AbortError');
  assert.equal(tx.error.name, 'ConstraintError');
  const again = await done(new IDBFactory({ dir }).open('db'));
  assert.equal(again.version, 1);
  again.close();
  assert.deepEqual(await onDisk(dir), BASE);
});

// ---- a storage failure: a full disk (a tmpfs, so only as root) ----

function mountTmpfs(size) {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return null;
  const where = fs.mkdtempSync(path.join(os.tmpdir(), 'indexa-node-full-'));
  const r = spawnSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', where]);
  if (r.status !== 0) {
    fs.rmdirSync(where);
    return null;
  }
  return { where, unmount: () => { spawnSync('umount', ['-l', where]); fs.rmdirSync(where); } };
}

/**
 * Runs `requests(store)` in a transaction that calls commit() on a disk with 64 KiB left;
 * returns the outcome. The disk is given its room back before reading.
 */
async function onFullDisk(t, requests) {
  const fsys = mountTmpfs('1m');
  if (fsys === null) {
    t.skip('needs root and mount to make a full disk on a tmpfs');
    return null;
  }
  try {
    const { db } = await setup(fsys.where);
    const filler = path.join(fsys.where, 'filler');
    const stat = fs.statfsSync(fsys.where);
    fs.writeFileSync(filler, Buffer.alloc(Math.max(0, stat.bavail * stat.bsize - 64 * 1024)));
    const tx = db.transaction('s', 'readwrite');
    requests(tx.objectStore('s'));
    tx.commit();
    const result = await outcome(tx);
    db.close();
    fs.rmSync(filler);
    return [result, await onDisk(fsys.where)];
  } finally {
    fsys.unmount();
  }
}

const BIG = 'x'.repeat(512 * 1024);

test('storage failure: a commit failing on a full disk aborts with QuotaExceededError, nothing on disk', async (t) => {
  const r = await onFullDisk(t, (s) => {
    s.put('one', 1);
    s.put(BIG, 2);
    s.put(BIG, 3);
  });
  if (r === null) return;
  assert.deepEqual(r, ['abort:QuotaExceededError', BASE]);
});

// ---- the process exiting ----

function child(dir, body) {
  const script = `
    const { IDBFactory } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const factory = new IDBFactory({ dir: ${JSON.stringify(dir)} });
    const r = factory.open('db');
    r.onsuccess = () => { const db = r.result; ${body} };`;
  return spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
}

test('process exit: exiting from the complete handler keeps what complete reported', async () => {
  const { db, dir } = await setup();
  db.close();
  const out = child(dir, `
    const tx = db.transaction('s', 'readwrite');
    tx.objectStore('s').put('one', 1);
    tx.commit();
    tx.oncomplete = () => { console.log('complete'); process.exit(0); };
    tx.onabort = () => { console.log('abort'); process.exit(0); };`);
  assert.equal(out.stdout.trim(), 'complete', out.stderr);
  assert.deepEqual(await onDisk(dir), [...BASE, [1, 'one']]);
});

test('process exit: exiting before the transaction ends reports nothing and stores nothing', async () => {
  const { db, dir } = await setup();
  db.close();
  const out = child(dir, `
    const tx = db.transaction('s', 'readwrite');
    tx.objectStore('s').put('one', 1).onsuccess = () => {
      tx.objectStore('s').put('two', 2);
      process.exit(0);
    };
    tx.oncomplete = () => console.log('complete');
    tx.onabort = () => console.log('abort');`);
  assert.equal(out.status, 0, out.stderr);
  assert.equal(out.stdout.trim(), '');
  assert.deepEqual(await onDisk(dir), BASE);
});

test('process exit: a failing request after commit() aborts before the exit, nothing stored', async () => {
  const { db, dir } = await setup();
  db.close();
  const out = child(dir, `
    const tx = db.transaction('s', 'readwrite');
    tx.objectStore('s').put('one', 1);
    tx.objectStore('s').add('dup', 0);
    tx.commit();
    tx.oncomplete = () => { console.log('complete'); process.exit(0); };
    tx.onabort = () => { console.log('abort ' + tx.error.name); process.exit(0); };`);
  assert.equal(out.stdout.trim(), 'abort ConstraintError', out.stderr);
  assert.deepEqual(await onDisk(dir), BASE);
});
