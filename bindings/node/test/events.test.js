'use strict';
// DOM event details: the success event's path, listener objects, the order of error events
// when a transaction aborts, blocked in a task of its own, close() during an upgrade, and the
// microtask checkpoint after each listener.
const test = require('node:test');
const assert = require('node:assert/strict');
const { spawnSync } = require('node:child_process');
const path = require('node:path');
const { freshFactory, open, finished } = require('./helpers.js');
const { IDBVersionChangeEvent } = require('..');

async function withStore() {
  const { factory } = freshFactory();
  const db = await open(factory, 'db', 1, (db) => {
    const s = db.createObjectStore('s');
    s.put('a', 1);
    s.put('b', 2);
  });
  return { factory, db };
}

test('success goes request → transaction → connection: capture listeners see it', async () => {
  const { db } = await withStore();
  const seen = [];
  const tx = db.transaction('s');
  db.addEventListener('success', (e) => seen.push(`capture db ${e.eventPhase}`), true);
  db.addEventListener('success', () => seen.push('bubble db'));
  tx.addEventListener('success', (e) => seen.push(`capture tx ${e.eventPhase}`), { capture: true });
  const rq = tx.objectStore('s').get(1);
  rq.addEventListener('success', (e) => seen.push(`target ${e.eventPhase} ${e.target === rq}`));
  await finished(tx);
  assert.deepEqual(seen, ['capture db 1', 'capture tx 1', 'target 2 true']);
  db.close();
});

test('a listener object whose handleEvent is not callable aborts the transaction', () => {
  // In a child process: the TypeError is reported as an uncaught exception, as a browser does.
  const script = `
    const { IDBFactory } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const reported = [];
    process.on('uncaughtException', (e) => reported.push(e.constructor.name + ': ' + e.message));
    const rq = new IDBFactory({ memory: true }).open('db', 1);
    rq.onupgradeneeded = () => rq.result.createObjectStore('s');
    rq.onsuccess = () => {
      const tx = rq.result.transaction('s', 'readwrite');
      tx.objectStore('s').put('c', 3).addEventListener('success', { handleEvent: 42 });
      tx.oncomplete = () => console.log(JSON.stringify(['complete', reported]));
      tx.onabort = () => console.log(JSON.stringify([tx.error.name, reported]));
    };
  `;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), ['AbortError', ["TypeError: the listener's handleEvent is not callable"]]);
});

test('a program that replaced the global Promise does not keep transactions active longer', () => {
  // In a child process: its global Promise is one whose reactions wait for setImmediate, set
  // before the package loads. A transaction still goes inactive when its task ends.
  const script = `
    const Native = Promise;
    global.Promise = class extends Native {
      then(onFulfilled, onRejected) {
        return super.then(
          (v) => new Native((resolve) => setImmediate(() => resolve(onFulfilled ? onFulfilled(v) : v))),
          onRejected);
      }
    };
    const { IDBFactory } = require(${JSON.stringify(path.join(__dirname, '..'))});
    const rq = new IDBFactory({ memory: true }).open('db', 1);
    rq.onupgradeneeded = () => rq.result.createObjectStore('s');
    rq.onsuccess = () => {
      const store = rq.result.transaction('s', 'readwrite').objectStore('s');
      setImmediate(() => {
        try {
          store.put('late', 1);
          console.log('accepted');
        } catch (e) {
          console.log(e.name);
        }
      });
    };
  `;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout.trim(), 'TransactionInactiveError');
});

test('on abort, error events fire in the order the requests were placed, a stepped cursor last', async () => {
  const { db } = await withStore();
  const tx = db.transaction('s', 'readwrite');
  const store = tx.objectStore('s');
  const order = [];
  const cursorRequest = store.openCursor();
  await new Promise((resolve) => { cursorRequest.onsuccess = resolve; });
  const requests = [store.get(1), store.count(), store.put('d', 4)];
  cursorRequest.result.continue();
  requests.push(cursorRequest);
  requests.forEach((r, i) => {
    r.onsuccess = () => order.push(`success ${i}`);
    r.onerror = (e) => { e.preventDefault(); order.push(`${r.error.name} ${i}`); };
  });
  const aborted = new Promise((resolve) => { tx.onabort = resolve; });
  tx.abort();
  await aborted;
  assert.deepEqual(order, ['AbortError 0', 'AbortError 1', 'AbortError 2', 'AbortError 3']);
  db.close();
});

test('a transaction waiting behind an aborted one fires its events after the abort event', async () => {
  // The waiting transaction's begin and put may run at once on Node's thread when the aborted
  // one has rolled back; its events still come after the aborted one's.
  const { db } = await withStore();
  for (let round = 0; round < 20; round++) {
    const seen = [];
    const first = db.transaction('s', 'readwrite');
    first.objectStore('s').put('x', 10 + round);
    first.addEventListener('abort', () => seen.push('first abort'));
    first.abort();
    const second = db.transaction('s', 'readwrite', { durability: 'relaxed' });
    second.objectStore('s').put('y', 100 + round).onsuccess = () => seen.push('second success');
    second.addEventListener('complete', () => seen.push('second complete'));
    await finished(second);
    assert.deepEqual(seen, ['first abort', 'second success', 'second complete'], `round ${round}`);
  }
  db.close();
});

test('blocked fires in its own task: a close in a versionchange promise continuation unblocks', async () => {
  const { factory, db } = await withStore();
  const events = [];
  db.onversionchange = () => { Promise.resolve().then(() => db.close()); };
  const rq = factory.open('db', 2);
  rq.onblocked = () => events.push('blocked');
  rq.onupgradeneeded = () => events.push('upgradeneeded');
  await new Promise((resolve) => { rq.onsuccess = resolve; });
  assert.deepEqual(events, ['upgradeneeded']);
  rq.result.close();

  // Still open after the versionchange task and its continuations: blocked, then the upgrade.
  const db3 = rq.result;
  const again = await open(factory, 'db', 2);
  again.onversionchange = () => setTimeout(() => again.close(), 20);
  const rq3 = factory.open('db', 3);
  const later = [];
  await Promise.resolve();
  rq3.onblocked = (e) => later.push(`blocked ${e.oldVersion} ${e.newVersion}`);
  rq3.onupgradeneeded = () => later.push('upgradeneeded');
  await new Promise((resolve) => { rq3.onsuccess = resolve; });
  assert.deepEqual(later, ['blocked 2 3', 'upgradeneeded']);
  rq3.result.close();
  assert.equal(db3.version, 2);
});

test('close() during upgradeneeded: the upgrade commits, the open fails with AbortError', async () => {
  const { factory } = freshFactory();
  const rq = factory.open('db', 1);
  let db;
  let completed = false;
  rq.onupgradeneeded = () => {
    db = rq.result;
    db.createObjectStore('os');
    db.close();
    rq.transaction.oncomplete = () => { completed = true; };
  };
  const error = await new Promise((resolve) => { rq.onerror = (e) => { e.preventDefault(); resolve(rq.error); }; });
  assert.equal(error.name, 'AbortError');
  assert.equal(completed, true);
  assert.equal(rq.result, undefined);
  assert.equal(db.version, 1);
  assert.deepEqual([...db.objectStoreNames], ['os']);
  assert.throws(() => db.transaction('os'), { name: 'InvalidStateError' });
});

/** Whether `tx` takes a request now (a get of key 1 in store 's'). */
function isActive(tx) {
  try {
    tx.objectStore('s').get(1);
    return true;
  } catch (e) {
    assert.equal(e.name, 'TransactionInactiveError');
    return false;
  }
}

test('a listener\'s microtasks run before the next listener; a transaction it made is then inactive', async () => {
  const { db } = await withStore();
  const tx = db.transaction('s');
  const rq = tx.objectStore('s').get(1);
  const log = [];
  let made = null;
  rq.addEventListener('success', () => {
    made = db.transaction('s');
    log.push(`first: made ${isActive(made)}`);
    setImmediate(() => log.push('immediate'));
    setTimeout(() => log.push('timeout'), 0);
    Promise.resolve()
      .then(() => log.push(`microtask: made ${isActive(made)}`))
      .then(() => log.push('chained microtask'));
  });
  tx.addEventListener('success', () => log.push('never: success does not bubble'));
  rq.addEventListener('success', () => {
    log.push(`second: tx ${isActive(tx)}, made ${isActive(made)}`);
  });
  await finished(tx);
  await new Promise((resolve) => setTimeout(resolve, 10));
  assert.deepEqual(log, [
    'first: made true', 'microtask: made true', 'chained microtask', 'second: tx true, made false',
    'immediate', 'timeout',
  ]);
  db.close();
});

test('dispatchEvent() called by script runs every listener before any microtask', async () => {
  const { db } = await withStore();
  const log = [];
  db.addEventListener('ping', () => {
    log.push('first');
    Promise.resolve().then(() => log.push('microtask'));
  });
  db.addEventListener('ping', () => log.push('second'));
  db.dispatchEvent(new IDBVersionChangeEvent('ping'));
  log.push('returned');
  await Promise.resolve();
  assert.deepEqual(log, ['first', 'second', 'returned', 'microtask']);
  db.close();
});

test('events fire one task at a time: a request\'s listeners, microtasks and ticks finish before the next request\'s event', async () => {
  const { db } = await withStore();
  const tx = db.transaction('s');
  const store = tx.objectStore('s');
  const log = [];
  const first = store.get(1);
  const second = store.get(2);
  first.onsuccess = () => {
    log.push(`first ${first.result}, second ${second.readyState}`);
    Promise.resolve().then(() => log.push('first microtask'));
  };
  first.addEventListener('success', () => {
    log.push('first, last listener');
    Promise.resolve().then(() => log.push('its microtask')).then(() => log.push('a microtask that one queued'));
    process.nextTick(() => log.push('its tick'));
  });
  second.onsuccess = () => log.push(`second ${second.result}`);
  await finished(tx);
  // How the tick and the microtasks interleave is Node's order; all come before the next event.
  assert.deepEqual(log.slice(0, 3), ['first a, second pending', 'first microtask', 'first, last listener']);
  assert.deepEqual(log.slice(3, 6).sort(), ['a microtask that one queued', 'its microtask', 'its tick']);
  assert.ok(log.indexOf('its microtask') < log.indexOf('a microtask that one queued'));
  assert.deepEqual(log.slice(6), ['second b']);
  db.close();
});

/** A function that puts `what` under `key` in `store`, logging `<what>: placed` or the error's name. */
function placer(store, log) {
  return (key, what) => {
    try {
      store.put(what, key);
      log.push(`${what}: placed`);
    } catch (e) {
      log.push(`${what}: ${e.name}`);
    }
  };
}

test('a request placed from a listener\'s microtasks finds the transaction active, also after stopImmediatePropagation', async () => {
  const { db } = await withStore();
  const log = [];
  const tx = db.transaction('s', 'readwrite');
  const store = tx.objectStore('s');
  const place = placer(store, log);
  store.get(1).addEventListener('success', (e) => {
    e.stopImmediatePropagation();
    Promise.resolve().then(() => place(3, 'after stopImmediatePropagation'));
  });
  store.get(2).onsuccess = () => {
    Promise.resolve().then(() => 0).then(() => place(4, 'from a chained microtask'));
  };
  await finished(tx);
  assert.deepEqual(log, ['after stopImmediatePropagation: placed', 'from a chained microtask: placed']);
  db.close();
});

test('requests placed from microtasks that a listener\'s microtask queued through a tick find the transaction active', async () => {
  // Promise libraries that schedule with process.nextTick (lie, through immediate) hop like
  // this; the transaction goes inactive only once these microtasks have run too.
  const { db } = await withStore();
  const log = [];
  const tx = db.transaction('s', 'readwrite');
  const place = placer(tx.objectStore('s'), log);
  tx.objectStore('s').get(1).onsuccess = () => {
    Promise.resolve().then(() => process.nextTick(() => {
      Promise.resolve().then(() => place(5, 'a microtask'));
      Promise.resolve().then(() => 0).then(() => place(6, 'a chained microtask'));
    }));
  };
  await finished(tx);
  assert.deepEqual(log, ['a microtask: placed', 'a chained microtask: placed']);
  db.close();
});

test('a transaction is inactive again when the next event, another transaction\'s, is dispatched', async () => {
  const { db } = await withStore();
  const first = db.transaction('s');
  const second = db.transaction('s');
  const log = [];
  first.objectStore('s').get(1).onsuccess = () => log.push('first');
  second.objectStore('s').get(2).onsuccess = () => {
    try {
      first.objectStore('s').get(1);
      log.push('first still active');
    } catch (e) {
      log.push(e.name);
    }
  };
  await Promise.all([finished(first), finished(second)]);
  assert.deepEqual(log, ['first', 'TransactionInactiveError']);
  db.close();
});

test('Node\'s own EventTarget methods keep separate state per request', async () => {
  const { getEventListeners } = require('node:events');
  const { factory } = freshFactory();
  const db = await open(factory, 'db', 1, (d) => d.createObjectStore('s'));
  const tx = db.transaction('s', 'readonly');
  const r1 = tx.objectStore('s').get(1);
  const r2 = tx.objectStore('s').get(2);
  const listener = () => {};
  EventTarget.prototype.addEventListener.call(r1, 'x', listener);
  assert.deepEqual(getEventListeners(r1, 'x'), [listener]);
  assert.deepEqual(getEventListeners(r2, 'x'), []);
  assert.deepEqual(getEventListeners(tx, 'x'), []);
  await finished(tx);
  db.close();
});

test('on… handlers keep the place they were first set among listeners; removal, once and duplicates', async () => {
  const { db } = await withStore();
  const tx = db.transaction('s');
  const rq = tx.objectStore('s').get(1);
  const seen = [];
  const first = () => seen.push('first');
  rq.addEventListener('success', first);
  rq.addEventListener('success', first); // the same listener again: ignored
  rq.onsuccess = () => seen.push('handler 1');
  rq.addEventListener('success', () => seen.push('once'), { once: true });
  rq.addEventListener('success', () => seen.push('capture'), true);
  rq.addEventListener('error', () => seen.push('error listener'));
  rq.onsuccess = () => seen.push('handler 2'); // replaces the handler, in its place
  rq.removeEventListener('success', null); // reaches no handler
  rq.addEventListener('success', (e) => {
    seen.push('last');
    // Added during the dispatch: does not run in it.
    e.target.addEventListener('success', () => seen.push('added late'));
  });
  assert.equal(typeof rq.onsuccess, 'function');
  assert.equal(rq.onerror, null);
  await finished(tx);
  assert.deepEqual(seen, ['first', 'handler 2', 'once', 'capture', 'last']);
  // A handler set to null stays registered, silent, and keeps its place when set again.
  const rq2 = db.transaction('s').objectStore('s').get(2);
  const seen2 = [];
  rq2.onsuccess = () => seen2.push('handler a');
  rq2.addEventListener('success', () => seen2.push('listener'));
  rq2.onsuccess = null;
  assert.equal(rq2.onsuccess, null);
  rq2.onsuccess = () => seen2.push('handler b');
  rq2.onsuccess = 'not callable';
  assert.equal(rq2.onsuccess, null);
  rq2.onsuccess = () => seen2.push('handler c');
  await finished(rq2.transaction);
  assert.deepEqual(seen2, ['handler c', 'listener']);
  // On an interface's prototype both methods fail WebIDL's brand check, a null callback
  // included, after reading the options.
  const proto = Object.getPrototypeOf(rq);
  assert.throws(() => proto.addEventListener('success', first), TypeError);
  for (const callback of [first, null, undefined]) {
    let read = false;
    const options = { get capture() { read = true; return false; } };
    assert.throws(() => proto.removeEventListener('success', callback, options), TypeError);
    assert.equal(read, true);
  }
  db.close();
});

test('an error event: capture from the connection, the target, then bubbling; stopPropagation and stopImmediatePropagation end it where they should', async () => {
  const { db } = await withStore();
  const order = async (stopAt) => {
    const seen = [];
    const tx = db.transaction('s', 'readwrite');
    const log = (where, stop) => (e) => {
      seen.push(`${where} ${e.eventPhase}`);
      if (where === stopAt) stop(e);
    };
    const stopImmediate = (e) => e.stopImmediatePropagation();
    const stop = (e) => e.stopPropagation();
    db.addEventListener('error', log('capture db', stop), true);
    tx.addEventListener('error', log('capture tx', stop), true);
    tx.addEventListener('error', log('bubble tx', stop));
    db.addEventListener('error', log('bubble db', stop));
    const rq = tx.objectStore('s').add('again', 1); // key 1 exists: ConstraintError
    rq.addEventListener('error', log('target 1', stopImmediate));
    rq.onerror = log('target 2', stop);
    rq.addEventListener('error', (e) => { seen.push(`target 3 ${e.eventPhase}`); e.preventDefault(); });
    await new Promise((resolve) => { tx.oncomplete = resolve; tx.onabort = resolve; });
    return seen;
  };
  assert.deepEqual(await order(null), [
    'capture db 1', 'capture tx 1', 'target 1 2', 'target 2 2', 'target 3 2', 'bubble tx 3', 'bubble db 3',
  ]);
  assert.deepEqual(await order('capture tx'), ['capture db 1', 'capture tx 1']);
  assert.deepEqual(await order('target 1'), ['capture db 1', 'capture tx 1', 'target 1 2']);
  assert.deepEqual(await order('target 2'), ['capture db 1', 'capture tx 1', 'target 1 2', 'target 2 2', 'target 3 2']);
  db.close();
});
