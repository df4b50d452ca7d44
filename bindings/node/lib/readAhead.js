'use strict';
// Cursors read ahead. A cursor step that goes to the worker returns the record it moved to
// and up to `batch - 1` records beyond it, each what one more plain step would reach. Plain
// steps (`continue()` without a key, `advance`) then take their record from those rows without
// a round trip, as long as nothing else of the transaction is pending, so the step still
// completes in request order; its success event fires in a later task, or as soon as a
// reply of a request placed after it arrives. Batches double from 1 up to MAX_READ_AHEAD
// while their rows get used, and start again from 1 when rows are dropped unused.
//
// The rows show the records as they were when read, so any write to the transaction drops
// every cursor's rows before it is sent (`dropReadAhead` in requests.js). The worker's engine
// cursor stays on the record the worker last returned; steps taken through the rows are
// counted in `skipped` and sent with the cursor's next step, or ahead of the write in a
// `cursorSync`, so the engine cursor catches up while the records are still the ones that
// were read. At the first step served from a batch, the cursor asks the worker for the rows
// beyond it (`cursorReadAhead`, kept in `more`), so the worker reads them while Node's thread
// steps through these; they are forgotten with the rows. A plain step that finds the rows
// stepped through before those read on have arrived waits for them, when nothing else of the
// transaction is pending (its reply then comes in request order), rather than asking the
// worker to read them again. The steps themselves are in IDBCursor.js.

const { internal } = require('./internal.js');
const { inTask } = require('./tasks.js');

/** The most records a cursor step reads. */
const MAX_READ_AHEAD = 256;

/** Forgets the cursor's rows read ahead (the worker's cursor needs no catching up). */
function forgetRows(cursor) {
  const ci = cursor[internal];
  ci.ahead = null;
  ci.skipped = 0;
  ci.more = null;
  ci.tx[internal].readAhead.delete(cursor);
}

/** A finished transaction's cursors let go of their rows. */
function forgetReadAhead(ti) {
  for (const cursor of ti.readAhead) {
    cursor[internal].ahead = null;
    cursor[internal].skipped = 0;
    cursor[internal].more = null;
  }
  ti.readAhead.clear();
}

/**
 * How long, in milliseconds, steps served from read-ahead rows may follow one another within
 * one turn of Node's event loop; past it, the next one waits for the loop's next turn
 * (`setImmediate`), so timers and I/O get their turn.
 */
const SERVED_STEPS_PER_TURN_MS = 1;

// When the current run of served steps within one turn of the event loop began, or null.
let turnStart = null;

/** Whether a served step may run in this turn of the event loop (see SERVED_STEPS_PER_TURN_MS). */
function servedStepFitsTurn() {
  const now = performance.now();
  if (turnStart === null) {
    turnStart = now;
    setImmediate(() => { turnStart = null; });
  }
  return now - turnStart < SERVED_STEPS_PER_TURN_MS;
}

/**
 * Runs or schedules `run`, which settles a step of `ti` served from read-ahead rows (its
 * success event fires in a task of its own). Called within one of the package's tasks (a
 * success event's dispatch, say), `run` queues that task at once, behind the running one
 * (tasks.js), while the turn's budget lasts; otherwise `run` waits for `setImmediate`, and a
 * reply of a request placed after the step runs it first (`runServedStep`).
 */
function scheduleServedStep(ti, run) {
  if (inTask() && servedStepFitsTurn()) {
    run();
    return;
  }
  ti.servedStep = { run, immediate: setImmediate(() => runServedStep(ti)) };
}

/** Fires the success event of the step served from read-ahead rows, if it has not fired yet. */
function runServedStep(ti) {
  const served = ti.servedStep;
  if (served === null) return;
  ti.servedStep = null;
  clearImmediate(served.immediate);
  served.run();
}

module.exports = {
  MAX_READ_AHEAD, SERVED_STEPS_PER_TURN_MS, forgetRows, forgetReadAhead, scheduleServedStep, runServedStep,
};
