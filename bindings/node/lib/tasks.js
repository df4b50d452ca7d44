'use strict';
// The package's tasks, as a browser's event loop runs them (HTML "queue a task", DOM "inner
// invoke"): each event the package fires, and each reply of the engine that changes a
// transaction, is a task of its own; tasks run one at a time in the order queued, and after
// each listener of an event the microtasks it queued run before the next listener.

const { DispatchSteps } = require('./events.js');
const { Fifo } = require('./fifo.js');

/**
 * Calls `fn` once the microtasks queued so far, and those they queue, have run: a microtask
 * queued now runs within the current microtask checkpoint, and the tick it queues runs right
 * after that checkpoint, before any timer, immediate or I/O callback. The microtask is the
 * continuation of `await`, which the engine queues with its own promises: Node's
 * `queueMicrotask` makes an async resource for every call, and a program may have replaced
 * the global `Promise` or its `then` (with one that waits for `setImmediate`, say).
 */
async function afterMicrotasks(fn) {
  await undefined;
  process.nextTick(fn);
}

// The tasks of this package (events to fire, replies of the engine to act on), in order.
const tasks = new Fifo();
let running = false;
// What the last task's `done` returned, to run before the next task starts; or null. One at
// most: the next task starts only from the wait that runs it (`runAfterDone`).
let beforeNextTask = null;

/**
 * Runs `run()` as a task of its own: the package's tasks run one at a time in the order
 * queued, each once the one before it, its listeners and their microtasks are done. The
 * engine's replies that change a transaction go through here, so that they take effect in
 * order with the events fired before them.
 */
function queueTask(run) {
  enqueue({ run });
}

/**
 * Fires `event` along `path` (with the DOM's propagation, see events.js) in a task of its own
 * (see `queueTask`), as the spec's "queue a task to fire an event" does: after each listener
 * returns, the microtasks it queued run (the microtask checkpoint of DOM's "inner invoke",
 * since the JavaScript stack is then empty) before the next listener. `begin()` runs when the
 * task starts, before the dispatch; returning false skips the dispatch (and `done`).
 * `done({ canceled, threw })` runs after the last listener's microtasks; the function it may
 * return runs once the microtasks queued by then have run, right before the next task (the
 * same point `afterMicrotasks` called from `done` would reach, for one wait instead of two).
 */
function fire(event, path, { begin, done } = {}) {
  enqueue({ event, path, begin, done });
}

/** Queues `task`, and runs it at once when no task is running. */
function enqueue(task) {
  tasks.push(task);
  if (!running) {
    running = true;
    runTask();
  }
}

/** Runs the first queued task; the next one follows once its microtasks have run. */
function runTask() {
  const task = tasks.shift();
  if (task === undefined) {
    running = false;
    return;
  }
  let steps = null;
  try {
    if (task.run !== undefined) task.run();
    else if (task.begin === undefined || task.begin() !== false) steps = new DispatchSteps(task.event, task.path);
  } finally {
    if (steps === null) afterMicrotasks(runTask);
  }
  if (steps !== null) runListener(task, steps);
}

/** Runs what the last task's `done` left for this point, then the next task. */
function runAfterDone() {
  const f = beforeNextTask;
  beforeNextTask = null;
  try {
    f();
  } finally {
    runTask();
  }
}

/** Runs the event's next listener, then the next one once its microtasks have run; at the end, `done`. */
function runListener(task, steps) {
  if (steps.step()) {
    afterMicrotasks(() => runListener(task, steps));
    return;
  }
  let afterDone;
  try {
    if (task.done !== undefined) afterDone = task.done(steps.result);
  } finally {
    if (typeof afterDone === 'function') {
      beforeNextTask = afterDone;
      afterMicrotasks(runAfterDone);
    } else {
      afterMicrotasks(runTask);
    }
  }
}

/** Whether one of the package's tasks is running (events fired now are queued behind it). */
function inTask() {
  return running;
}

module.exports = { fire, queueTask, afterMicrotasks, inTask };
