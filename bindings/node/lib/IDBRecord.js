'use strict';
// IDBRecord (IndexedDB 3.0, what getAllRecords() returns).

const { defineInterface } = require('./webidl.js');
const { internal, illegal } = require('./internal.js');
const { revive } = require('./values.js');

/** IDBRecord (IndexedDB 3.0): a record's key, primary key and value. */
class IDBRecord {
  constructor() { illegal(); }
  get key() { return this[internal].key; }
  get primaryKey() { return this[internal].primaryKey; }
  get value() { return this[internal].value; }
}
defineInterface(IDBRecord, 'IDBRecord');

/** `[key, primaryKey, value, …]` from the native layer as IDBRecords. */
function recordsOf(rows, kp) {
  const records = [];
  for (let i = 0; i < rows.length; i += 3) {
    const r = Object.create(IDBRecord.prototype);
    r[internal] = { key: rows[i], primaryKey: rows[i + 1], value: revive(rows[i + 2], kp) };
    records.push(r);
  }
  return records;
}

module.exports = { IDBRecord, recordsOf };
