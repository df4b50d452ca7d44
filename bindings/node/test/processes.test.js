'use strict';
// Several processes on one data directory (or one PostgreSQL database with
// INDEXA_TEST_BACKEND=postgres, also across hosts there): each test runs a child node process holding a
// connection while this process deletes, upgrades or reads (RELIABILITY.md, "Several
// processes").
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const readline = require('node:readline');
const { spawn } = require('node:child_process');
const { IDBFactory } = require('..');
const { freshFactory, done, open, finished } = require('./helpers');

/**
 * Starts a child node process running `body` with `factory` over `dir`; `say(line)` writes
 * a line to the parent, `heard()` resolves with the parent's next line; the child exits when
 * `body` is done. Returns `{ next(), send(line), kill(signal), exit }`: `next()` resolves with
 * the child's next output line, `exit` with its exit code (or the signal that ended it).
 */
function child(dir, body) {
  const code = `
    const { IDBFactory } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const readline = require('node:readline');
    const factory = new IDBFactory({ dir: ${JSON.stringify(dir)} });
    const say = (line) => console.log(line);
    const lines = readline.createInterface({ input: process.stdin })[Symbol.asyncIterator]();
    const heard = async () => (await lines.next()).value;
    (async () => { ${body} })().then(() => process.exit(0), (e) => { say('failed ' + e.name + ' ' + e.message); process.exit(1); });`;
  const proc = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'inherit'] });
  const out = readline.createInterface({ input: proc.stdout })[Symbol.asyncIterator]();
  const exit = new Promise((resolve) => proc.on('exit', (c, signal) => resolve(signal || c)));
  return {
    next: async () => (await out.next()).value,
    send: (line) => proc.stdin.write(line + '\n'),
    kill: (signal) => proc.kill(signal),
    exit,
  };
}

/** In the child: promise of a request's result. */
const CHILD_HELPERS = `
  const done = (r) => new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = (e) => { e.preventDefault(); reject(r.error); };
  });
  const complete = (tx) => new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onabort = () => reject(tx.error);
  });`;

async function makeX(factory) {
  const db = await open(factory, 'x', 1, (d) => {
    d.createObjectStore('s');
    d.createObjectStore('p', { keyPath: 'id' }).createIndex('by_v', 'v');
  });
  const tx = db.transaction(['s', 'p'], 'readwrite');
  tx.objectStore('s').put('a', 1);
  tx.objectStore('p').put({ id: 1, v: 'one' });
  await finished(tx);
  db.close();
}

test('deleteDatabase fails against a connection open in another process, which keeps its data', async () => {
  const { factory: setup, dir } = freshFactory();
  await makeX(setup);
  const a = child(dir, `${CHILD_HELPERS}
    const db = await done(factory.open('x'));
    say('open');
    await heard();
    const tx = db.transaction('s', 'readwrite');
    tx.objectStore('s').put('b', 2);
    await complete(tx);
    say('complete ' + JSON.stringify(await done(db.transaction('s').objectStore('s').getAll())));
    await heard();
    db.close();
    say('closed');
    await heard();`);
  assert.equal(await a.next(), 'open');
  const factory = new IDBFactory({ dir, lockTimeout: 200 });
  await assert.rejects(done(factory.deleteDatabase('x')), {
    name: 'InvalidStateError',
    message: 'database "x" is open in another process; close it there first (waited 200 ms)',
  });
  a.send('write');
  assert.equal(await a.next(), 'complete ["a","b"]');
  assert.deepEqual(await factory.databases(), [{ name: 'x', version: 1 }]);
  // Once the other process closed its connection, the deletion goes ahead.
  a.send('close');
  assert.equal(await a.next(), 'closed');
  const waiting = new IDBFactory({ dir, lockTimeout: 60000 });
  await done(waiting.deleteDatabase('x'));
  assert.deepEqual(await waiting.databases(), []);
  a.send('exit');
  assert.equal(await a.exit, 0);
});

test('deleteDatabase waits for another process with the database open, until it exits', async () => {
  const { factory: setup, dir } = freshFactory();
  await makeX(setup);
  const a = child(dir, `${CHILD_HELPERS}
    const db = await done(factory.open('x'));
    say('open');
    await heard();
    process.exit(0);`);
  assert.equal(await a.next(), 'open');
  const factory = new IDBFactory({ dir, lockTimeout: 60000 });
  let deleted = false;
  const del = done(factory.deleteDatabase('x')).then(() => { deleted = true; });
  await new Promise((r) => setTimeout(r, 300));
  assert.equal(deleted, false, 'the deletion went ahead while the other process had the database open');
  a.send('exit');
  assert.equal(await a.exit, 0);
  await del;
  assert.deepEqual(await factory.databases(), []);
});

test('opening and reading do not wait for a readwrite transaction in another process', async () => {
  const { factory: setup, dir } = freshFactory();
  await makeX(setup);
  // The child keeps a readwrite transaction busy (it holds SQLite's write lock) until told.
  const a = child(dir, `${CHILD_HELPERS}
    const db = await done(factory.open('x'));
    const tx = db.transaction('s', 'readwrite');
    const store = tx.objectStore('s');
    let stop = false;
    let n = 0;
    const loop = () => { if (!stop) store.put('w' + n, 100 + (n++ % 10)).onsuccess = loop; };
    store.put('first', 100).onsuccess = () => { say('writing'); loop(); };
    await heard();
    stop = true;
    await complete(tx);
    say('committed');`);
  assert.equal(await a.next(), 'writing');
  // A timeout of 0 for the connection lock; SQLite's busy timeout (30 s) would fail the
  // test's default timeout should the open or the read wait for the write lock.
  const factory = new IDBFactory({ dir, lockTimeout: 0 });
  const db = await open(factory, 'x');
  const all = await done(db.transaction('s').objectStore('s').getAll());
  assert.deepEqual(all, ['a']);
  db.close();
  a.send('stop');
  assert.equal(await a.next(), 'committed');
  assert.equal(await a.exit, 0);
});

test('an upgrade waits for an older connection in another process, whose schema stays as it opened', async () => {
  const { factory: setup, dir } = freshFactory();
  await makeX(setup);
  const a = child(dir, `${CHILD_HELPERS}
    const db = await done(factory.open('x'));
    say('open');
    for (;;) {
      if ((await heard()) !== 'read') break;
      const store = db.transaction('p').objectStore('p');
      const names = [...store.indexNames];
      const got = await done(store.index('by_v').get('one'));
      say(JSON.stringify([db.version, names, got]));
    }
    db.close();
    say('closed');`);
  assert.equal(await a.next(), 'open');
  const factory = new IDBFactory({ dir, lockTimeout: 200 });
  const upgrade = (f) => open(f, 'x', 2, (d, tx) => {
    tx.objectStore('p').deleteIndex('by_v');
    tx.objectStore('p').put({ id: 2, v: 'two' });
  });
  await assert.rejects(upgrade(factory), {
    name: 'InvalidStateError',
    message: 'database "x" is open in another process; close it there first (waited 200 ms)',
  });
  a.send('read');
  assert.equal(await a.next(), '[1,["by_v"],{"id":1,"v":"one"}]');
  assert.deepEqual(await factory.databases(), [{ name: 'x', version: 1 }]);
  a.send('close');
  assert.equal(await a.next(), 'closed');
  assert.equal(await a.exit, 0);
  const db = await upgrade(new IDBFactory({ dir, lockTimeout: 60000 }));
  assert.deepEqual([db.version, [...db.transaction('p').objectStore('p').indexNames]], [2, []]);
  db.close();
});

test('an upgrade through another factory of this thread waits, with versionchange and blocked, for the older connection', async () => {
  const { factory: a, dir } = freshFactory();
  await makeX(a);
  const old = await open(a, 'x');
  // Factories of one thread on one directory are one origin: the older connection gets
  // versionchange, the upgrade gets blocked and waits until that connection closes.
  const b = new IDBFactory({ dir, lockTimeout: 200 });
  const events = [];
  old.onversionchange = (e) => events.push(['versionchange', e.oldVersion, e.newVersion]);
  const request = b.open('x', 2);
  request.onblocked = async (e) => {
    events.push(['blocked', e.oldVersion, e.newVersion]);
    // Until it closes, the older connection keeps its schema and reads through the index
    // the upgrade deletes.
    const store = old.transaction('p').objectStore('p');
    assert.deepEqual([old.version, [...store.indexNames]], [1, ['by_v']]);
    events.push(['read', await done(store.index('by_v').get('one'))]);
    old.close();
  };
  request.onupgradeneeded = () => {
    events.push(['upgradeneeded']);
    request.transaction.objectStore('p').deleteIndex('by_v');
    request.transaction.objectStore('p').put({ id: 2, v: 'two' });
  };
  const db = await done(request);
  db.close();
  assert.deepEqual(events, [
    ['versionchange', 1, 2], ['blocked', 1, 2], ['read', { id: 1, v: 'one' }], ['upgradeneeded'],
  ]);
  // The first factory sees the new version (it reads the file, not what it cached).
  const now = await open(a, 'x');
  assert.deepEqual([now.version, [...now.transaction('p').objectStore('p').indexNames]], [2, []]);
  now.close();
});

// versionchange and blocked across processes (docs/format.md, "Connections across processes").

/** A child holding database "x" at version 1 that reports its versionchange events. */
const HOLDER = `${CHILD_HELPERS}
  const db = await done(factory.open('x'));
  db.onversionchange = (e) => say('versionchange ' + e.oldVersion + ' ' + e.newVersion);
  say('open');
  await heard();
  db.close();
  say('closed');
  await heard();`;

/** Opens "x" at version 2 through `factory`; `onBlocked(event)` runs on blocked. */
function upgradeX(factory, events, onBlocked) {
  const request = factory.open('x', 2);
  request.onblocked = (e) => {
    events.push(['blocked', e.oldVersion, e.newVersion]);
    onBlocked();
  };
  request.onupgradeneeded = (e) => {
    events.push(['upgradeneeded', e.oldVersion, e.newVersion]);
    request.result.createObjectStore('new');
  };
  return done(request);
}

test('an upgrade tells a connection in another process (versionchange), is blocked, and goes on once it closes', async () => {
  const { factory: setup, dir } = freshFactory();
  await makeX(setup);
  const a = child(dir, HOLDER);
  assert.equal(await a.next(), 'open');
  const events = [];
  const db = await upgradeX(new IDBFactory({ dir, lockTimeout: 60000 }), events, () => a.send('close'));
  assert.equal(await a.next(), 'versionchange 1 2');
  assert.equal(await a.next(), 'closed');
  assert.deepEqual(events, [['blocked', 1, 2], ['upgradeneeded', 1, 2]]);
  assert.deepEqual([db.version, [...db.objectStoreNames]], [2, ['new', 'p', 's']]);
  db.close();
  a.send('exit');
  assert.equal(await a.exit, 0);
});

test('a connection in another process closed by its versionchange handler does not block the upgrade', async () => {
  const { factory: setup, dir } = freshFactory();
  await makeX(setup);
  const a = child(dir, `${CHILD_HELPERS}
    const db = await done(factory.open('x'));
    db.onversionchange = (e) => { db.close(); say('closed on versionchange ' + e.oldVersion + ' ' + e.newVersion); };
    say('open');
    await heard();`);
  assert.equal(await a.next(), 'open');
  const events = [];
  const db = await upgradeX(new IDBFactory({ dir, lockTimeout: 60000 }), events, () => {});
  assert.equal(await a.next(), 'closed on versionchange 1 2');
  assert.deepEqual(events, [['upgradeneeded', 1, 2]]);
  assert.equal(db.version, 2);
  db.close();
  a.send('exit');
  assert.equal(await a.exit, 0);
});

test('an upgrade blocked by a process that never closes fails after lockTimeout; that connection keeps version 1', async () => {
  const { factory: setup, dir } = freshFactory();
  await makeX(setup);
  const a = child(dir, `${CHILD_HELPERS}
    const db = await done(factory.open('x'));
    db.onversionchange = (e) => say('versionchange ' + e.oldVersion + ' ' + e.newVersion);
    say('open');
    await heard();
    say(JSON.stringify([db.version, await done(db.transaction('s').objectStore('s').get(1))]));
    await heard();`);
  assert.equal(await a.next(), 'open');
  const events = [];
  await assert.rejects(upgradeX(new IDBFactory({ dir, lockTimeout: 500 }), events, () => {}), {
    name: 'InvalidStateError',
    message: 'database "x" is open in another process; close it there first (waited 500 ms)',
  });
  assert.equal(await a.next(), 'versionchange 1 2');
  assert.deepEqual(events, [['blocked', 1, 2]]);
  a.send('read');
  assert.equal(await a.next(), '[1,"a"]');
  assert.deepEqual(await setup.databases(), [{ name: 'x', version: 1 }]);
  a.send('exit');
  assert.equal(await a.exit, 0);
});

test('a process killed with SIGKILL while it blocks an upgrade releases the database', async () => {
  const { factory: setup, dir } = freshFactory();
  await makeX(setup);
  const a = child(dir, HOLDER);
  assert.equal(await a.next(), 'open');
  const events = [];
  const db = await upgradeX(new IDBFactory({ dir, lockTimeout: 60000 }), events, () => a.kill('SIGKILL'));
  assert.equal(await a.exit, 'SIGKILL');
  assert.deepEqual(events, [['blocked', 1, 2], ['upgradeneeded', 1, 2]]);
  assert.equal(db.version, 2);
  db.close();
});

test('deleteDatabase tells a connection in another process (versionchange with newVersion null) and is blocked until it closes', async () => {
  const { factory: setup, dir } = freshFactory();
  await makeX(setup);
  const a = child(dir, HOLDER);
  assert.equal(await a.next(), 'open');
  const request = new IDBFactory({ dir, lockTimeout: 60000 }).deleteDatabase('x');
  const events = [];
  request.onblocked = (e) => {
    events.push(['blocked', e.oldVersion, e.newVersion]);
    a.send('close');
  };
  request.onsuccess = (e) => events.push(['success', e.oldVersion, e.newVersion]);
  await done(request);
  assert.equal(await a.next(), 'versionchange 1 null');
  assert.equal(await a.next(), 'closed');
  assert.deepEqual(events, [['blocked', 1, null], ['success', 1, null]]);
  assert.deepEqual(await setup.databases(), []);
  a.send('exit');
  assert.equal(await a.exit, 0);
});
