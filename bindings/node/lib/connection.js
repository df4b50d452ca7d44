'use strict';
// The bridge to the native addon: one connection's calls to its engine thread, each with an
// op id, and the batched replies that come back through a thread-safe function; and its
// events from the engine (blocked, and versionchange from other factories or processes).

const native = require('./native.js');
const { rethrow } = require('./errors.js');
const { Fifo } = require('./fifo.js');
const { decodeReply, replyError } = require('./wire.js');

class Connection {
  constructor(factory) {
    this.pending = new Map();
    this.held = new Fifo();
    this.nextId = 1;
    this.busy = 0;
    this.onEvent = null;
    this.early = [];
    this.native = new native.NativeConnection(
      factory,
      (batch) => this.onReplies(batch),
      (kind, oldVersion, newVersion) => this.event(kind, oldVersion, newVersion),
    );
  }

  /** Sends the engine's events to `handler(kind, oldVersion, newVersion)`, those so far first. */
  listen(handler) {
    this.onEvent = handler;
    const early = this.early;
    this.early = [];
    for (const e of early) handler(...e);
  }

  event(kind, oldVersion, newVersion) {
    if (this.onEvent === null) this.early.push([kind, oldVersion, newVersion]);
    else this.onEvent(kind, oldVersion, newVersion);
  }

  /**
   * Calls native method `method` with a fresh op id; `done(errorName, result)` gets the reply
   * (`done` a function, or a request's internal state, whose `reply` method gets it).
   * With `ready` (a promise of the arguments: a write waiting for Blob bytes), the call and
   * every later one wait until it settles, so the engine sees ops in the order submitted.
   */
  submit(method, args, done, ready) {
    if (ready === undefined && this.held.length === 0) {
      this.send(method, args, done);
      return;
    }
    const entry = { method, args, done, ready: ready === undefined, error: null };
    this.held.push(entry);
    if (ready !== undefined) {
      ready.then((a) => { entry.args = a; }, (e) => { entry.error = e; })
        .then(() => { entry.ready = true; this.release(); });
    }
  }

  /** Runs a native check of `method`'s arguments (its last argument: check only) now. */
  check(method, args) {
    try {
      this.native[method](0, ...args, true);
    } catch (e) {
      throw rethrow(e);
    }
  }

  send(method, args, done) {
    const id = this.nextId++;
    try {
      this.native[method](id, ...args);
    } catch (e) {
      throw rethrow(e);
    }
    this.pending.set(id, done);
    if (this.busy++ === 0) this.native.setBusy(true);
  }

  /** Sends the held calls whose arguments are ready, in order; a failure becomes the reply. */
  release() {
    while (this.held.length > 0 && this.held.peek().ready) {
      const { method, args, done, error } = this.held.shift();
      try {
        if (error !== null) throw error;
        this.send(method, args, done);
      } catch (e) {
        const err = rethrow(e);
        deliver(done, err.name || 'UnknownError', err.message);
      }
    }
  }

  /**
   * Hands each reply of a batch to its op's `done`. The batch is one buffer (src/wire.rs): per
   * reply its op id and the length of the rest (`u32`s, little-endian), then its result or
   * error, which wire.js decodes.
   */
  onReplies(buffer) {
    for (let at = 0; at < buffer.length;) {
      const id = buffer.readUInt32LE(at);
      const start = at + 8;
      at = start + buffer.readUInt32LE(at + 4);
      const done = this.pending.get(id);
      this.pending.delete(id);
      this.busy--;
      let error;
      let result;
      try {
        error = replyError(buffer, start);
        if (error === null) result = decodeReply(buffer, start);
      } catch (e) {
        deliver(done, 'UnknownError', `a reply could not be read: ${e.message}`);
        continue;
      }
      if (error === null) deliver(done, null, result);
      else deliver(done, error[0], error[1]);
    }
    if (this.busy === 0) this.native.setBusy(false);
  }
}

/** Hands a reply to its receiver: a callback, or a request's internal state (see `submit`). */
function deliver(done, err, result) {
  if (typeof done === 'function') done(err, result);
  else done.reply(err, result);
}

module.exports = { Connection };
