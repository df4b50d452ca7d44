'use strict';
// Cursor steps served from rows read ahead: a cursor still sees every write made earlier in
// its transaction, write requests through a cursor act on the cursor's own record, and
// requests complete in the order they were placed. Scans are long enough for the batches to
// grow past several boundaries (1, 2, 4, 8 … records).
const test = require('node:test');
const assert = require('node:assert/strict');
const { IDBKeyRange } = require('..');
const { freshFactory, open, finished } = require('./helpers.js');

/**
 * Places write `request`, then continues `cursor` from its success event, when nothing else of
 * the transaction is pending (so the step could be served from rows read before the write).
 */
function thenContinue(request, cursor) {
  request.onsuccess = () => cursor.continue();
}

/** A database with store `s` (key path `id`, index `g` on `g`) holding `{ id: i, g: i % groups }` for i < n. */
async function numbers(n, groups = n) {
  const { factory } = freshFactory();
  return open(factory, 'db', 1, (db) => {
    const s = db.createObjectStore('s', { keyPath: 'id' });
    s.createIndex('g', 'g');
    for (let i = 0; i < n; i++) s.put({ id: i, g: i % groups });
  });
}

/**
 * Walks the cursor of `request`: `step(cursor)` moves it (after doing anything else); records
 * `[key, primaryKey, value]` for every record reached. Resolves when the cursor is past its end.
 */
function walk(request, step) {
  const seen = [];
  return new Promise((resolve, reject) => {
    request.onsuccess = () => {
      const c = request.result;
      if (!c) return resolve(seen);
      seen.push([c.key, c.primaryKey, c.value]);
      step(c);
    };
    request.onerror = () => reject(request.error);
  });
}

function range(from, to) {
  const out = [];
  for (let i = from; i < to; i++) out.push(i);
  return out;
}

function busyWait(ms) {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

test('read ahead: records put ahead of the cursor after it started are returned', async () => {
  const db = await numbers(100);
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  const seen = walk(s.openCursor(), (c) => {
    if (c.key === 10) thenContinue(s.put({ id: 12.5, g: -1 }), c);
    else if (c.key === 40) thenContinue(s.add({ id: 40.5, g: -1 }), c);
    else if (c.key === 41) thenContinue(s.put({ id: 0.5, g: -1 }), c); // behind the cursor: not returned
    else if (c.key === 98) thenContinue(s.put({ id: 1000, g: -1 }), c); // beyond the last record read
    else if (c.key === 60) {
      // Placed before the continue(): the step goes after the write and sees it.
      s.put({ id: 61.5, g: -1 });
      c.continue();
    } else c.continue();
  });
  const keys = (await seen).map(([k]) => k);
  await finished(tx);
  assert.deepEqual(keys, [...range(0, 13), 12.5, ...range(13, 41), 40.5, ...range(41, 62), 61.5, ...range(62, 100), 1000]);

  // The same in reverse, and through a key cursor over the index.
  const tx2 = db.transaction('s', 'readwrite');
  const s2 = tx2.objectStore('s');
  const back = walk(s2.openKeyCursor(null, 'prev'), (c) => {
    if (c.key === 80) thenContinue(s2.put({ id: 77.5, g: -1 }), c);
    else c.continue();
  });
  const ix = walk(s2.index('g').openKeyCursor(IDBKeyRange.lowerBound(0)), (c) => {
    if (c.primaryKey === 20) thenContinue(s2.put({ id: 500, g: 30 }), c);
    else c.continue();
  });
  const [backSeen, ixSeen] = await Promise.all([back, ix]);
  await finished(tx2);
  // Every record the first transaction left (with 0.5), and 77.5 put ahead during the scan.
  const stored = [...range(0, 100), 0.5, 12.5, 40.5, 61.5, 77.5, 1000].sort((a, b) => b - a);
  assert.deepEqual(backSeen.map(([k]) => k), stored);
  assert.deepEqual(ixSeen.map(([k, p]) => [k, p]),
    [...range(0, 31).map((i) => [i, i]), [30, 500], ...range(31, 100).map((i) => [i, i])]);
  assert.deepEqual(backSeen[0], [1000, 1000, undefined]);
});

test('read ahead: records deleted ahead of the cursor are not returned', async () => {
  const db = await numbers(100);
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  const seen = walk(s.openCursor(), (c) => {
    if (c.key === 10) thenContinue(s.delete(12), c);
    else if (c.key === 11) thenContinue(s.delete(IDBKeyRange.bound(13, 14)), c);
    else if (c.key === 30) {
      s.delete(31);
      c.continue();
    } else if (c.key === 40) thenContinue(s.delete(IDBKeyRange.lowerBound(42)), c);
    else if (c.key === 41) thenContinue(s.delete(41), c); // the cursor's own record: already returned
    else c.continue();
  });
  const keys = (await seen).map(([k]) => k);
  await finished(tx);
  assert.deepEqual(keys, [...range(0, 12), ...range(15, 31), ...range(32, 42)]);

  const tx2 = db.transaction('s', 'readwrite');
  const s2 = tx2.objectStore('s');
  const cleared = walk(s2.openCursor(null, 'prev'), (c) => {
    if (c.key === 30) thenContinue(s2.clear(), c);
    else c.continue();
  });
  const after = (await cleared).map(([k]) => k);
  await finished(tx2);
  assert.deepEqual(after, [40, 39, 38, 37, 36, 35, 34, 33, 32, 30]);
});

test('read ahead: cursor.update of a later record is seen when the cursor reaches it', async () => {
  const db = await numbers(100);
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  // A second cursor on record 12, updated while the first has records 11… read ahead.
  const other = s.openCursor(IDBKeyRange.lowerBound(12));
  await new Promise((resolve) => { other.onsuccess = resolve; });
  const later = other.result;
  assert.equal(later.key, 12);
  const seen = walk(s.openCursor(), (c) => {
    if (c.key === 10) thenContinue(later.update({ id: 12, g: 'changed' }), c);
    else if (c.key === 36) {
      s.index('g').openCursor(44).onsuccess = (e) => {
        // A cursor reaching record 44 through the index, updated there.
        const ic = e.target.result;
        thenContinue(ic.update({ id: ic.primaryKey, g: 'index' }), c);
      };
    } else c.continue();
  });
  const values = (await seen).map(([, , v]) => v);
  await finished(tx);
  assert.equal(values.length, 100);
  assert.deepEqual(values[11], { id: 11, g: 11 });
  assert.deepEqual(values[12], { id: 12, g: 'changed' });
  assert.deepEqual(values[43], { id: 43, g: 43 });
  assert.deepEqual(values[44], { id: 44, g: 'index' });
  assert.deepEqual(values[45], { id: 45, g: 45 });
});

test('read ahead: cursor.update, cursor.delete and continue(key) act at the cursor\'s own record', async () => {
  const db = await numbers(100, 10);
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  const updated = [];
  const seen = walk(s.openCursor(), (c) => {
    if (c.key % 10 === 0) updated.push(c.update({ ...c.value, g: `u${c.key}` }));
    if (c.key % 10 === 5) c.delete();
    if (c.key === 8 || c.key === 57) c.continue(c.key + 2);
    else c.continue();
  });
  const keys = (await seen).map(([k]) => k);
  await finished(tx);
  const skipped = new Set([9, 58]);
  assert.deepEqual(keys, range(0, 100).filter((k) => !skipped.has(k)));
  assert.deepEqual(updated.map((r) => r.result), range(0, 10).map((i) => i * 10));
  const rtx = db.transaction('s');
  const all = rtx.objectStore('s').getAll();
  await finished(rtx);
  assert.deepEqual(all.result, range(0, 100).filter((k) => k % 10 !== 5)
    .map((k) => ({ id: k, g: k % 10 === 0 ? `u${k}` : k % 10 })));

  // continuePrimaryKey into records read ahead, over an index with ten records per key.
  const itx = db.transaction('s');
  const ix = itx.objectStore('s').index('g');
  const iseen = walk(ix.openKeyCursor(IDBKeyRange.bound(1, 9)), (c) => {
    if (c.key === 1 && c.primaryKey === 41) c.continuePrimaryKey(1, 71);
    else if (c.key === 2 && c.primaryKey === 62) c.continuePrimaryKey(3, 13);
    else c.continue();
  });
  const pairs = (await iseen).map(([k, p]) => [k, p]);
  await finished(itx);
  const expected = [];
  for (let g = 1; g <= 9; g++) {
    if (g === 5) continue;
    for (let p = g; p < 100; p += 10) {
      if ((g === 1 && (p === 51 || p === 61)) || (g === 2 && p > 62) || (g === 3 && p < 13)) continue;
      expected.push([g, p]);
    }
  }
  assert.deepEqual(pairs, expected);
});

test('read ahead: rows read on while a batch is stepped through never hide a write', async () => {
  // Batches grow 2, 4, … 256: the one holding 254 … 509 asks for 510 … 765 at its first step.
  const db = await numbers(2000);
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  const seen = walk(s.openCursor(), (c) => {
    if (c.key === 300) {
      s.put({ id: 700, g: 'changed' });
      thenContinue(s.delete(701), c);
    } else if (c.key === 900) {
      // Long enough for the rows beyond this batch to have arrived.
      busyWait(20);
      thenContinue(s.put({ id: 1100, g: 'changed' }), c);
    } else if (c.key === 1300) c.continue(1500);
    else if (c.key === 1600) c.advance(300);
    else c.continue();
  });
  const rows = await seen;
  await finished(tx);
  const keys = [...range(0, 701), ...range(702, 1301), ...range(1500, 1601), ...range(1900, 2000)];
  assert.deepEqual(rows.map(([k]) => k), keys);
  assert.deepEqual(rows.map(([, , v]) => v), keys.map((k) => ({ id: k, g: k === 700 || k === 1100 ? 'changed' : k })));
});

test('read ahead: advance() across batch boundaries', async () => {
  const db = await numbers(1000);
  const tx = db.transaction('s');
  const s = tx.objectStore('s');
  // advance(1), advance(2), advance(3) … reaches the triangular numbers.
  let n = 0;
  const forward = walk(s.openCursor(), (c) => c.advance(++n));
  // Reverse, key cursor, mixing advance and continue: 999, 998, 995, 994, 991, …
  let m = 0;
  const backward = walk(s.openKeyCursor(null, 'prev'), (c) => (m++ % 2 === 0 ? c.continue() : c.advance(3)));
  // Advances that overrun the rows read ahead, the last one past the end.
  const jumps = [3, 300, 600, 100];
  const big = walk(s.openCursor(IDBKeyRange.lowerBound(5)), (c) => c.advance(jumps.shift()));
  const [f, b, g] = await Promise.all([forward, backward, big]);
  await finished(tx);
  const triangular = [];
  for (let k = 0, i = 1; k < 1000; k += i++) triangular.push(k);
  assert.deepEqual(f.map(([k]) => k), triangular);
  assert.deepEqual(f.map(([, , v]) => v), triangular.map((k) => ({ id: k, g: k })));
  const expectedBack = [];
  for (let k = 999, i = 0; k >= 0; k -= i++ % 2 === 0 ? 1 : 3) expectedBack.push(k);
  assert.deepEqual(b.map(([k]) => k), expectedBack);
  assert.equal(b.length, 500);
  assert.deepEqual(g.map(([k]) => k), [5, 8, 308, 908]);
});

test('read ahead: index directions over duplicate keys across batch boundaries', async () => {
  // 900 records, index keys 0…299, three records per key (primary keys g, g+300, g+600).
  const db = await numbers(900, 300);
  const pairs = {
    next: range(0, 300).flatMap((g) => [[g, g], [g, g + 300], [g, g + 600]]),
    prev: range(0, 300).reverse().flatMap((g) => [[g, g + 600], [g, g + 300], [g, g]]),
    nextunique: range(0, 300).map((g) => [g, g]),
    prevunique: range(0, 300).reverse().map((g) => [g, g]),
  };
  const tx = db.transaction('s');
  const ix = tx.objectStore('s').index('g');
  const scans = [];
  for (const direction of Object.keys(pairs)) {
    scans.push(walk(ix.openCursor(null, direction), (c) => c.continue()).then((seen) => [direction, 'value', seen]));
    scans.push(walk(ix.openKeyCursor(null, direction), (c) => c.continue()).then((seen) => [direction, 'key', seen]));
  }
  const results = await Promise.all(scans);
  await finished(tx);
  for (const [direction, kind, seen] of results) {
    assert.deepEqual(seen.map(([k, p]) => [k, p]), pairs[direction], `${direction} ${kind}`);
    const values = seen.map(([, , v]) => v);
    assert.deepEqual(values, kind === 'key' ? values.map(() => undefined) : seen.map(([k, p]) => ({ id: p, g: k })),
      `${direction} ${kind}`);
  }

  // A record put ahead with a lower primary key becomes the one a unique direction returns.
  const wtx = db.transaction('s', 'readwrite');
  const ws = wtx.objectStore('s');
  const u = await walk(ws.index('g').openCursor(null, 'prevunique'), (c) => {
    if (c.key === 160) thenContinue(ws.put({ id: -1, g: 150 }), c);
    else c.continue();
  });
  const nu = await walk(ws.index('g').openKeyCursor(null, 'nextunique'), (c) => {
    if (c.key === 100) thenContinue(ws.put({ id: -2, g: 120 }), c);
    else c.continue();
  });
  await finished(wtx);
  assert.deepEqual(u.map(([k, p]) => [k, p]), range(0, 300).reverse().map((g) => [g, g === 150 ? -1 : g]));
  assert.deepEqual(u[149], [150, -1, { id: -1, g: 150 }]);
  assert.deepEqual(nu.map(([k, p]) => [k, p]),
    range(0, 300).map((g) => [g, g === 150 ? -1 : g === 120 ? -2 : g]));
});

test('read ahead: get() and continue() placed back to back complete in request order', async () => {
  const db = await numbers(100);
  const tx = db.transaction('s');
  const s = tx.objectStore('s');
  const log = [];
  const r = s.openCursor();
  await new Promise((resolve) => {
    r.onsuccess = () => {
      const c = r.result;
      if (!c) return resolve();
      log.push(`cursor ${c.key}`);
      if (c.key % 20 === 10) {
        c.continue();
        s.get(c.key).onsuccess = (e) => log.push(`get ${e.target.result.id}`);
        // Lets the get's reply arrive before the next turn of the event loop.
        busyWait(30);
      } else if (c.key % 20 === 15) {
        s.get(c.key).onsuccess = (e) => log.push(`get ${e.target.result.id}`);
        c.continue();
        busyWait(30);
      } else {
        // The step's success event fires in a later task, never inside continue().
        const logged = log.length;
        const key = c.key;
        c.continue();
        assert.equal(log.length, logged);
        assert.equal(r.readyState, 'pending');
        assert.equal(c.key, key);
      }
    };
  });
  log.push('done');
  await finished(tx);
  const expected = [];
  for (let k = 0; k < 100; k++) {
    if (k % 20 === 11) expected.push(`cursor ${k}`, `get ${k - 1}`);
    else if (k % 20 === 15) expected.push(`cursor ${k}`, `get ${k}`);
    else expected.push(`cursor ${k}`);
  }
  expected.push('done');
  // A continue() placed after the get at a key ≡ 15 (mod 20) fires after it: cursor 16 follows get 15.
  assert.deepEqual(log, expected);
});

test('read ahead: a step served from rows read ahead obeys abort and commit', async () => {
  const db = await numbers(50);
  const tx = db.transaction('s', 'readwrite');
  const log = [];
  const r = tx.objectStore('s').openCursor();
  r.onsuccess = () => {
    const c = r.result;
    log.push(c.key);
    c.continue();
    if (c.key === 10) tx.abort();
  };
  r.onerror = (e) => { log.push(e.target.error.name); e.preventDefault(); };
  await assert.rejects(finished(tx), (e) => e === null);
  assert.deepEqual(log, [...range(0, 11), 'AbortError']);

  const tx2 = db.transaction('s', 'readwrite');
  const log2 = [];
  const r2 = tx2.objectStore('s').openCursor();
  r2.onsuccess = () => {
    const c = r2.result;
    log2.push(c.key);
    if (c.key === 10) {
      c.continue();
      tx2.commit();
    } else if (c.key === 11) {
      assert.throws(() => c.continue(), { name: 'TransactionInactiveError' });
      log2.push('inactive');
    } else {
      c.continue();
    }
  };
  tx2.oncomplete = () => log2.push('complete');
  await finished(tx2);
  assert.deepEqual(log2, [...range(0, 12), 'inactive', 'complete']);
});

test('read ahead: steps served from rows read ahead fire each success event in a task of its own', async () => {
  const db = await numbers(600);
  const tx = db.transaction('s', 'readonly');
  const log = [];
  const request = tx.objectStore('s').openCursor();
  const seen = await walk(request, (c) => {
    const k = c.key;
    log.push(`s${k}`);
    queueMicrotask(() => log.push(`m${k}`));
    c.continue();
  });
  await finished(tx);
  assert.deepEqual(seen.map(([k]) => k), range(0, 600));
  const expected = [];
  for (const k of range(0, 600)) expected.push(`s${k}`, `m${k}`);
  assert.deepEqual(log, expected);
});

test('read ahead: a timer runs during a run of steps served from one batch of rows', async () => {
  const db = await numbers(400);
  const tx = db.transaction('s', 'readonly');
  let current = null;
  let timerAt = null;
  // Batches double from 1 row: records 127 to 254 come in one batch of 128 rows, whose steps
  // are served without the worker; each handler here takes 0.2 ms.
  const seen = await walk(tx.objectStore('s').openCursor(), (c) => {
    current = c.key;
    if (current === 130) setTimeout(() => { timerAt = current; }, 0);
    if (current > 130 && timerAt === null) busyWait(0.2);
    c.continue();
  });
  await finished(tx);
  assert.equal(seen.length, 400);
  assert.ok(timerAt !== null && timerAt < 254, `the timer ran at record ${timerAt}`);
});

/** Runs `run()` and counts the calls it makes into the addon, by method name. */
async function countCalls(run) {
  const { Connection } = require('../lib/connection.js');
  const submit = Connection.prototype.submit;
  const calls = {};
  Connection.prototype.submit = function counted(method, ...rest) {
    calls[method] = (calls[method] || 0) + 1;
    return submit.call(this, method, ...rest);
  };
  try {
    await run();
  } finally {
    Connection.prototype.submit = submit;
  }
  return calls;
}

test('read ahead: a scan reads each record once, each batch while the one before is stepped through', async () => {
  const db = await numbers(3000);
  const tx = db.transaction('s');
  let seen;
  const calls = await countCalls(async () => {
    seen = await walk(tx.objectStore('s').openCursor(), (c) => c.continue());
  });
  await finished(tx);
  assert.deepEqual(seen.map(([k]) => k), range(0, 3000));
  assert.deepEqual(seen.map(([, , v]) => v), range(0, 3000).map((k) => ({ id: k, g: k })));
  // The cursor opens on record 0; the first continue() reads records 1 and 2 through the
  // worker; the rest come read ahead, in batches of 4, 8 … 256 (3 … 510), then nine more of
  // 256 and one of 185 that ends the range. A step that finds its batch stepped through
  // waits for the next one rather than asking the worker to read it again.
  assert.deepEqual(calls, { openCursor: 1, cursorAdvance: 1, cursorReadAhead: 17 });
});

test('read ahead: a step that waits for rows read on completes in request order', async () => {
  // Record 2 ends the first batch (records 1 and 2); the rows beyond it (3 … 6) were asked
  // for at the step to record 2, so the continue() there waits for them.
  const db = await numbers(40);
  const tx = db.transaction('s');
  const s = tx.objectStore('s');
  const log = [];
  await walk(s.openCursor(), (c) => {
    log.push(`cursor ${c.key}`);
    c.continue();
    if (c.key === 2) s.get(2).onsuccess = (e) => log.push(`get ${e.target.result.id}`);
  });
  await finished(tx);
  assert.deepEqual(log, [
    'cursor 0', 'cursor 1', 'cursor 2', 'cursor 3', 'get 2',
    ...range(4, 40).map((k) => `cursor ${k}`),
  ]);
});

test('read ahead: a write placed while a step waits for rows read on comes after the step', async () => {
  const db = await numbers(40);
  const tx = db.transaction('s', 'readwrite');
  const s = tx.objectStore('s');
  const rows = await walk(s.openCursor(), (c) => {
    c.continue();
    if (c.key === 2) {
      s.put({ id: 3, g: 'changed' });
      s.delete(4);
    }
  });
  await finished(tx);
  const keys = [0, 1, 2, 3, ...range(5, 40)];
  assert.deepEqual(rows.map(([k]) => k), keys);
  // The step to record 3 was placed before the put: it shows the record as it was.
  assert.deepEqual(rows.map(([, , v]) => v), keys.map((k) => ({ id: k, g: k })));
  const after = db.transaction('s');
  const three = after.objectStore('s').get(3);
  await finished(after);
  assert.deepEqual(three.result, { id: 3, g: 'changed' });
});
