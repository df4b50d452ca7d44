'use strict';
// The bridge to the native addon: one connection's calls to its engine thread, each with an
// op id, and the batched replies that come back through a thread-safe function. A short op
// may run at once on Node's thread (the addon decides, see src/worker.rs): the native call then
// returns its reply, which is delivered in a task of its own (setImmediate), as any reply is.
// Replies are delivered in op order, whichever way they came.

const native = require('./native.js');
const { rethrow } = require('./errors.js');

class Connection {
  constructor(factory) {
    this.pending = new Map();
    this.held = [];
    this.nextId = 1;
    // Replies not yet delivered: from the thread-safe function, in the order they came, and
    // returned by native calls that ran at once, each batch with how many of the former it
    // follows (`{ after, replies }`); how many of the former were delivered; whether a
    // delivery is scheduled.
    this.queued = [];
    this.ran = [];
    this.delivered = 0;
    this.deliverySet = false;
    // Ops whose reply is to come through the thread-safe function.
    this.busy = 0;
    this.native = new native.NativeConnection(factory, (replies) => this.onReplies(replies));
  }

  /**
   * Calls native method `method` with a fresh op id; `done(errorName, result)` gets the reply.
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
    const id = this.nextId;
    let ran;
    try {
      ran = this.native[method](id, ...args);
    } catch (e) {
      throw rethrow(e);
    }
    this.nextId++;
    this.pending.set(id, done);
    if (ran === undefined || ran === null) {
      if (this.busy++ === 0) this.native.setBusy(true);
      return;
    }
    this.ran.push({ after: ran[0], replies: ran, start: 1 });
    if (!this.deliverySet) {
      this.deliverySet = true;
      setImmediate(() => {
        this.deliverySet = false;
        this.deliver();
      });
    }
  }

  /**
   * Delivers the replies in the order the addon made them: a batch that ran at once goes
   * after the replies of the thread-safe function sent before it and before those sent after.
   */
  deliver() {
    for (;;) {
      if (this.ran.length > 0 && this.ran[0].after <= this.delivered) {
        const { replies, start } = this.ran.shift();
        this.take(replies, start);
      } else if (this.queued.length > 0) {
        const replies = this.queued.shift();
        this.delivered += replies.length / 3;
        this.take(replies, 0);
      } else {
        return;
      }
    }
  }

  take(replies, start) {
    for (let i = start; i < replies.length; i += 3) {
      const done = this.pending.get(replies[i]);
      this.pending.delete(replies[i]);
      done(replies[i + 1], replies[i + 2]);
    }
  }

  /** Sends the held calls whose arguments are ready, in order; a failure becomes the reply. */
  release() {
    while (this.held.length > 0 && this.held[0].ready) {
      const { method, args, done, error } = this.held.shift();
      try {
        if (error !== null) throw error;
        this.send(method, args, done);
      } catch (e) {
        const err = rethrow(e);
        done(err.name || 'UnknownError', err.message);
      }
    }
  }

  onReplies(replies) {
    this.busy -= replies.length / 3;
    if (this.busy === 0) this.native.setBusy(false);
    this.queued.push(replies);
    this.deliver();
  }
}

module.exports = { Connection };
