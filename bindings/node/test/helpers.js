'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { IDBFactory } = require('..');

/** A factory over a fresh directory, and the directory. */
function freshFactory() {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'indexa-node-test-'));
  return { factory: new IDBFactory({ dir }), dir };
}

/** Promise of a request's success result; rejects with its error. */
function done(request) {
  return new Promise((resolve, reject) => {
    request.addEventListener('success', () => resolve(request.result));
    request.addEventListener('error', (e) => { e.preventDefault(); reject(request.error); });
  });
}

/** Opens `name` at `version`, running `upgrade(db, tx, event)` in upgradeneeded. */
function open(factory, name, version, upgrade) {
  const request = factory.open(name, version);
  if (upgrade) {
    request.onupgradeneeded = (e) => upgrade(request.result, request.transaction, e);
  }
  return done(request);
}

/** Resolves when `tx` completes; rejects with its error when it aborts. */
function finished(tx) {
  return new Promise((resolve, reject) => {
    tx.addEventListener('complete', () => resolve());
    tx.addEventListener('abort', () => reject(tx.error));
  });
}

module.exports = { freshFactory, done, open, finished };
