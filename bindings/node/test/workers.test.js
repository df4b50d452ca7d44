'use strict';
// worker_threads: the addon is context-aware, so the package loads in several threads of one
// process; their connections to one database serialise readwrite transactions and get each
// other's versionchange and blocked as connections from different tabs do; and a thread that
// exits or is terminated while its transactions run neither crashes the process nor leaves
// part of a transaction behind.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const { Worker } = require('node:worker_threads');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IDBFactory } = require('..');
const { freshPlace, open, done } = require('./helpers.js');

const pkg = path.join(__dirname, '..');

// Opens "shared" at version 1 (creating it with object store "counter" when it is new), then
// increments the counter \`n\` in \`each\` readwrite transactions (read, then write the read value
// plus one), and reports the database's object store names; an error or abort is reported
// and ends the thread.
const incrementer = `
const { parentPort, workerData: { pkg, dir, each } } = require('node:worker_threads');
const { IDBFactory } = require(pkg);
const request = new IDBFactory({ dir }).open('shared', 1);
request.onupgradeneeded = () => request.result.createObjectStore('counter');
request.onerror = () => parentPort.postMessage(['open', request.error.name, request.error.message]);
request.onsuccess = () => {
  const db = request.result;
  let done = 0;
  const step = () => {
    const tx = db.transaction('counter', 'readwrite');
    const store = tx.objectStore('counter');
    const get = store.get('n');
    get.onsuccess = () => store.put((get.result || 0) + 1, 'n');
    tx.onabort = () => {
      parentPort.postMessage(['abort', tx.error && tx.error.name, tx.error && tx.error.message]);
      db.close();
    };
    tx.oncomplete = () => {
      if (++done < each) return step();
      parentPort.postMessage([...db.objectStoreNames]);
      db.close();
    };
  };
  step();
};
`;

test('the package loads in several worker threads; they create one database at once and their readwrite transactions are serialised', async () => {
  const dir = freshPlace();
  try {
    const threads = 4;
    const each = 50;
    const results = await Promise.all(Array.from({ length: threads }, () => new Promise((resolve, reject) => {
      const worker = new Worker(incrementer, { eval: true, workerData: { pkg, dir, each } });
      let names = null;
      worker.on('message', (m) => { names = m; });
      worker.on('error', reject);
      worker.on('exit', (code) => (code === 0 ? resolve(names) : reject(new Error(`worker exit ${code}`))));
    })));
    assert.deepEqual(results, Array(threads).fill(['counter']));
    const db = await open(new IDBFactory({ dir }), 'shared', 1);
    const total = await done(db.transaction('counter').objectStore('counter').get('n'));
    db.close();
    assert.equal(total, threads * each);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// A worker thread holding database "x" at version 1: it reports its versionchange events, and
// closes the connection when told to (\`close\`) or on versionchange (\`closeOnVersionChange\`).
const holder = `
const { parentPort, workerData: { pkg, dir, closeOnVersionChange } } = require('node:worker_threads');
const { IDBFactory } = require(pkg);
const request = new IDBFactory({ dir }).open('x', 1);
request.onupgradeneeded = () => request.result.createObjectStore('s');
request.onsuccess = () => {
  const db = request.result;
  db.onversionchange = (e) => {
    if (closeOnVersionChange) db.close();
    parentPort.postMessage(['versionchange', e.oldVersion, e.newVersion]);
  };
  parentPort.on('message', (m) => {
    if (m === 'close') db.close();
    parentPort.postMessage(m === 'close' ? ['closed'] : ['version', db.version]);
    if (m === 'close') parentPort.close();
  });
  parentPort.postMessage(['open']);
};
`;

/** Starts the holder thread; resolves once its connection is open. */
async function startHolder(dir, closeOnVersionChange = false) {
  const worker = new Worker(holder, { eval: true, workerData: { pkg, dir, closeOnVersionChange } });
  const messages = [];
  let wake = null;
  worker.on('message', (m) => { messages.push(m); if (wake) wake(); });
  const next = async () => {
    while (messages.length === 0) await new Promise((resolve) => { wake = resolve; });
    return messages.shift();
  };
  assert.deepEqual(await next(), ['open']);
  return { worker, next };
}

/** Opens "x" at version 2 in this thread, recording blocked and upgradeneeded. */
function upgradeX(factory, events, onBlocked) {
  const request = factory.open('x', 2);
  request.onblocked = (e) => {
    events.push(['blocked', e.oldVersion, e.newVersion]);
    onBlocked();
  };
  request.onupgradeneeded = (e) => events.push(['upgradeneeded', e.oldVersion, e.newVersion]);
  return done(request);
}

test('an upgrade in one thread tells a connection of another thread (versionchange), is blocked, and goes on once it closes', async () => {
  const dir = freshPlace();
  try {
    const h = await startHolder(dir);
    const exited = new Promise((resolve) => h.worker.once('exit', resolve));
    const events = [];
    const db = await upgradeX(new IDBFactory({ dir, lockTimeout: 60000 }), events, () => h.worker.postMessage('close'));
    assert.deepEqual(await h.next(), ['versionchange', 1, 2]);
    assert.deepEqual(await h.next(), ['closed']);
    assert.deepEqual(events, [['blocked', 1, 2], ['upgradeneeded', 1, 2]]);
    assert.equal(db.version, 2);
    db.close();
    // With its connection closed and its port closed, the thread ends by itself (a thread
    // still running after 10 s is stopped, with exit code 1, so the file cannot hang).
    const stop = setTimeout(() => h.worker.terminate(), 10000);
    assert.equal(await exited, 0, 'the holder thread did not end by itself');
    clearTimeout(stop);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('a connection of another thread closed by its versionchange handler does not block the upgrade', async () => {
  const dir = freshPlace();
  try {
    const h = await startHolder(dir, true);
    const events = [];
    const db = await upgradeX(new IDBFactory({ dir, lockTimeout: 60000 }), events, () => {});
    assert.deepEqual(await h.next(), ['versionchange', 1, 2]);
    assert.deepEqual(events, [['upgradeneeded', 1, 2]]);
    db.close();
    await h.worker.terminate();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('an upgrade blocked by another thread that never closes fails after lockTimeout; that connection keeps version 1', async () => {
  const dir = freshPlace();
  try {
    const h = await startHolder(dir);
    const events = [];
    await assert.rejects(upgradeX(new IDBFactory({ dir, lockTimeout: 500 }), events, () => {}), {
      name: 'InvalidStateError',
      message: 'database "x" is open through another factory of this process; close it there first (waited 500 ms)',
    });
    assert.deepEqual(await h.next(), ['versionchange', 1, 2]);
    assert.deepEqual(events, [['blocked', 1, 2]]);
    h.worker.postMessage('version');
    assert.deepEqual(await h.next(), ['version', 1]);
    await h.worker.terminate();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

// In a child process, so that a crash shows as its exit status: 30 rounds of three workers
// that each keep two chains of 10-record transactions going on an existing database; one
// exits by process.exit() with its connection open, two are terminated, at moments from 20 to
// 170 ms after they start.
const exits = `
const { Worker } = require('node:worker_threads');
const { IDBFactory } = require(${JSON.stringify(pkg)});
const dir = process.argv[1];
const writer = \`
const { parentPort, workerData: { pkg, dir } } = require('node:worker_threads');
const { IDBFactory } = require(pkg);
parentPort.on('message', () => process.exit(0));
const request = new IDBFactory({ dir }).open('shared', 1);
request.onupgradeneeded = () => request.result.createObjectStore('records', { autoIncrement: true });
request.onsuccess = () => {
  const db = request.result;
  const step = () => {
    const tx = db.transaction('records', 'readwrite');
    for (let i = 0; i < 10; i++) tx.objectStore('records').add({ i });
    tx.objectStore('records').openCursor().onsuccess = () => {};
    tx.oncomplete = step;
  };
  step();
  step();
};
\`;
(async () => {
  // The object store exists before the first round: on a loaded machine no worker of a round
  // may get as far as the upgrade that creates it, and the count below needs it.
  await new Promise((resolve) => {
    const create = new IDBFactory({ dir }).open('shared', 1);
    create.onupgradeneeded = () => create.result.createObjectStore('records', { autoIncrement: true });
    create.onsuccess = () => { create.result.close(); resolve(); };
  });
  for (let round = 0; round < 30; round++) {
    const workers = [0, 1, 2].map(() => new Worker(writer, { eval: true, workerData: { pkg: ${JSON.stringify(pkg)}, dir } }));
    await new Promise((resolve) => setTimeout(resolve, 20 + (round * 37) % 150));
    await Promise.all(workers.map((w, i) => (i === 2
      ? new Promise((resolve) => { w.on('exit', resolve); w.postMessage('exit'); })
      : w.terminate())));
  }
  // At version 1 with its store even when every worker was stopped before its upgrade
  // committed (a slow server).
  const request = new IDBFactory({ dir }).open('shared', 1);
  request.onupgradeneeded = () => request.result.createObjectStore('records', { autoIncrement: true });
  request.onsuccess = () => {
    const count = request.result.transaction('records').objectStore('records').count();
    count.onsuccess = () => { console.log(count.result); request.result.close(); };
  };
})();
`;

test('threads that exit or are terminated mid-transaction crash nothing and leave no partial transaction', () => {
  const dir = freshPlace();
  try {
    const out = spawnSync(process.execPath, ['-e', exits, dir], { encoding: 'utf8', timeout: 120000 });
    assert.equal(out.signal, null, out.stderr);
    assert.equal(out.status, 0, out.stderr);
    const count = Number(out.stdout.trim());
    assert.ok(Number.isInteger(count) && count % 10 === 0, `record count ${out.stdout}`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
