'use strict';
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const { IDBFactory } = require('..');

/**
 * True when the tests run on PostgreSQL: `INDEXA_TEST_BACKEND=postgres`, with the server at
 * `INDEXA_TEST_PG_URL` (`scripts/pg-test-cluster.sh` starts one; `psql` must be installed).
 */
const onPostgres = process.env.INDEXA_TEST_BACKEND === 'postgres';

let nextDatabase = 0;

/** The PostgreSQL databases this process made, dropped when it exits. */
const madeDatabases = [];
process.once('exit', () => {
  for (const name of madeDatabases) {
    try {
      execFileSync('psql', ['-q', `${process.env.INDEXA_TEST_PG_URL}/postgres`, '-c', `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`], { stdio: 'ignore' });
    } catch {
      // Left for the throw-away cluster to take away.
    }
  }
});

/**
 * A fresh place for databases on the backend under test: a new directory, or on PostgreSQL
 * the URL of a new PostgreSQL database (dropped when the process exits). `new IDBFactory({
 * dir })` takes either.
 */
function freshPlace() {
  if (!onPostgres) return fs.mkdtempSync(path.join(os.tmpdir(), 'indexa-node-test-'));
  const server = process.env.INDEXA_TEST_PG_URL;
  if (!server) throw new Error('INDEXA_TEST_BACKEND=postgres needs INDEXA_TEST_PG_URL (scripts/pg-test-cluster.sh)');
  const name = `indexa_node_${process.pid}_${nextDatabase++}`;
  execFileSync('psql', ['-q', '-v', 'ON_ERROR_STOP=1', `${server}/postgres`, '-c', `CREATE DATABASE ${name}`]);
  madeDatabases.push(name);
  return `${server}/${name}`;
}

/** A factory over a fresh place (see `freshPlace`), and the place as `dir`. */
function freshFactory() {
  const dir = freshPlace();
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

module.exports = { onPostgres, freshPlace, freshFactory, done, open, finished };
