'use strict';
// Several IDBFactory objects on one data directory in one thread share its connection queues,
// as one origin's connections do: an upgrade or delete through one fires versionchange at the
// connections of the others, and blocked while they stay open.
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IDBFactory } = require('..');
const { freshFactory, open, done } = require('./helpers.js');

test('factories on one directory: versionchange and blocked between their connections', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'indexa-node-factories-'));
  try {
    const first = new IDBFactory({ dir });
    // The same directory under another spelling is the same origin.
    const second = new IDBFactory({ dir: path.join(dir, '.', '') });
    const events = [];
    const db = await open(first, 'db', 1, (d) => d.createObjectStore('a'));
    db.onversionchange = (e) => {
      events.push(['versionchange', e.oldVersion, e.newVersion]);
      setTimeout(() => { events.push(['close']); db.close(); }, 50);
    };
    const request = second.open('db', 2);
    request.onblocked = (e) => events.push(['blocked', e.oldVersion, e.newVersion]);
    request.onupgradeneeded = (e) => events.push(['upgradeneeded', e.oldVersion, e.newVersion]);
    const upgraded = await done(request);
    assert.deepEqual(events, [
      ['versionchange', 1, 2], ['blocked', 1, 2], ['close'], ['upgradeneeded', 1, 2],
    ]);

    events.length = 0;
    upgraded.onversionchange = (e) => { events.push(['versionchange', e.newVersion]); upgraded.close(); };
    const deletion = first.deleteDatabase('db');
    deletion.onblocked = () => events.push(['blocked']);
    await done(deletion);
    assert.deepEqual(events, [['versionchange', null]]);
    assert.deepEqual(await second.databases(), []);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('an upgrade waits for a connection whose close is pending until its transaction ends', async () => {
  const { factory } = freshFactory();
  const db = await open(factory, 'wait', 1, (d) => d.createObjectStore('s').put('v', 1));
  const log = [];
  let upgraded = false;
  // A readonly transaction kept running by one get after another, for as long as the upgrade
  // has not started (at most 200 gets).
  const tx = db.transaction('s');
  let gets = 0;
  const next = () => {
    gets++;
    const rq = tx.objectStore('s').get(1);
    rq.onsuccess = () => { if (!upgraded && gets < 200) next(); };
  };
  next();
  tx.oncomplete = () => log.push('first connection\'s transaction complete');
  db.close();
  await open(factory, 'wait', 2, () => {
    upgraded = true;
    log.push('upgradeneeded');
  });
  assert.deepEqual(log, ['first connection\'s transaction complete', 'upgradeneeded']);
  assert.equal(gets, 200);
});

test('a factory whose server cannot be reached throws a DOMException named UnknownError, without the password', () => {
  // Nothing listens on port 1 of the loopback address.
  const url = 'postgres://nobody:sekret@127.0.0.1:1/x';
  assert.throws(() => new IDBFactory({ url }), (e) => {
    assert.ok(e instanceof DOMException);
    assert.equal(e.name, 'UnknownError');
    assert.ok(e.message.startsWith('cannot connect to postgres://nobody:***@127.0.0.1:1/x'), e.message);
    assert.ok(!e.message.includes('sekret'), e.message);
    return true;
  });
});
