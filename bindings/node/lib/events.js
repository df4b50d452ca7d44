'use strict';
// Events with the DOM's propagation (capture, target, bubble) over the IndexedDB parent chain
// request → transaction → database, which Node's own EventTarget (no tree) cannot do.

const NONE = 0;
const CAPTURING_PHASE = 1;
const AT_TARGET = 2;
const BUBBLING_PHASE = 3;

const state = Symbol('state');
const listeners = Symbol('listeners');
const handlers = Symbol('handlers');

/** An event of this package: `target` stays the object it was fired at while it propagates. */
class IDBEvent extends Event {
  constructor(type, init = {}) {
    super(type, init);
    this[state] = {
      target: null,
      currentTarget: null,
      phase: NONE,
      canceled: false,
      stop: false,
      stopImmediate: false,
      dispatching: false,
      passive: false,
    };
  }
  get target() { return this[state].target; }
  get srcElement() { return this[state].target; }
  get currentTarget() { return this[state].currentTarget; }
  get eventPhase() { return this[state].phase; }
  get defaultPrevented() { return this[state].canceled; }
  get returnValue() { return !this[state].canceled; }
  set returnValue(v) { if (!v) this.preventDefault(); }
  get cancelBubble() { return this[state].stop; }
  set cancelBubble(v) { if (v) this[state].stop = true; }
  preventDefault() {
    if (this.cancelable && !this[state].passive) this[state].canceled = true;
  }
  stopPropagation() { this[state].stop = true; }
  stopImmediatePropagation() { this[state].stop = true; this[state].stopImmediate = true; }
  composedPath() {
    const s = this[state];
    return s.dispatching && s.path ? s.path.slice() : [];
  }
}

/** `IDBVersionChangeEvent`: `oldVersion` and `newVersion` (null for a deletion). */
class IDBVersionChangeEvent extends IDBEvent {
  constructor(type, init = {}) {
    super(type, init);
    this[state].oldVersion = init.oldVersion === undefined ? 0 : Number(init.oldVersion);
    this[state].newVersion = init.newVersion === undefined || init.newVersion === null
      ? null : Number(init.newVersion);
  }
  get oldVersion() { return this[state].oldVersion; }
  get newVersion() { return this[state].newVersion; }
}

function flatten(options) {
  if (typeof options === 'boolean') return { capture: options, once: false, passive: false };
  const o = options || {};
  return { capture: !!o.capture, once: !!o.once, passive: !!o.passive };
}

/**
 * The EventTarget of every IndexedDB object. Listeners and `on…` handlers run in the order
 * they were registered; an exception in one is reported (as an uncaught exception, like a
 * browser reports it) and recorded, so the caller can abort the transaction as the spec says.
 */
class IDBEventTarget extends EventTarget {
  constructor() {
    super();
    this[listeners] = new Map();
    this[handlers] = new Map();
  }

  addEventListener(type, callback, options) {
    if (callback === null || callback === undefined) return;
    const { capture, once, passive } = flatten(options);
    let list = this[listeners].get(type);
    if (!list) this[listeners].set(type, (list = []));
    if (list.some((l) => l.callback === callback && l.capture === capture)) return;
    list.push({ callback, capture, once, passive, removed: false });
  }

  removeEventListener(type, callback, options) {
    const { capture } = flatten(options);
    const list = this[listeners].get(type);
    if (!list) return;
    const i = list.findIndex((l) => l.callback === callback && l.capture === capture);
    if (i >= 0) {
      list[i].removed = true;
      list.splice(i, 1);
    }
  }

  /** Dispatches at this object alone (no parents); returns `!defaultPrevented`. */
  dispatchEvent(event) {
    if (!(event instanceof IDBEvent)) return super.dispatchEvent(event);
    return !dispatch(event, [this]).canceled;
  }
}

/** Defines `on<type>` event handler attributes on a class. */
function defineHandlers(cls, types) {
  for (const type of types) {
    Object.defineProperty(cls.prototype, `on${type}`, {
      configurable: true,
      enumerable: true,
      get() {
        const h = this[handlers].get(type);
        return h ? h.fn : null;
      },
      set(fn) {
        let h = this[handlers].get(type);
        if (typeof fn !== 'function' && (typeof fn !== 'object' || fn === null)) fn = null;
        if (!h) {
          if (fn === null) return;
          h = { fn, callback: null };
          h.callback = function (event) {
            return typeof h.fn === 'function' ? h.fn.call(this, event) : undefined;
          };
          this[handlers].set(type, h);
          this.addEventListener(type, h.callback);
        } else {
          h.fn = fn;
        }
      },
    });
  }
}

function invoke(target, event, phase) {
  const s = event[state];
  const list = target[listeners] && target[listeners].get(event.type);
  if (!list || list.length === 0) return;
  s.currentTarget = target;
  for (const l of list.slice()) {
    if (l.removed) continue;
    if (phase === CAPTURING_PHASE && !l.capture) continue;
    if (phase === BUBBLING_PHASE && l.capture) continue;
    if (l.once) target.removeEventListener(event.type, l.callback, { capture: l.capture });
    s.passive = l.passive;
    try {
      if (typeof l.callback === 'function') l.callback.call(target, event);
      else if (l.callback && typeof l.callback.handleEvent === 'function') l.callback.handleEvent(event);
    } catch (err) {
      s.threw = true;
      process.nextTick(() => { throw err; });
    }
    s.passive = false;
    if (s.stopImmediate) return;
  }
}

/**
 * Fires `event` at `path[0]` with `path.slice(1)` as its parents (nearest first).
 * Returns `{ canceled, threw }`.
 */
function dispatch(event, path) {
  const s = event[state];
  s.target = path[0];
  s.path = path;
  s.dispatching = true;
  s.threw = false;
  for (let i = path.length - 1; i >= 1 && !s.stop; i--) {
    s.phase = CAPTURING_PHASE;
    invoke(path[i], event, CAPTURING_PHASE);
  }
  if (!s.stop) {
    s.phase = AT_TARGET;
    invoke(path[0], event, AT_TARGET);
  }
  if (event.bubbles) {
    for (let i = 1; i < path.length && !s.stop; i++) {
      s.phase = BUBBLING_PHASE;
      invoke(path[i], event, BUBBLING_PHASE);
    }
  }
  s.phase = NONE;
  s.currentTarget = null;
  s.dispatching = false;
  return { canceled: s.canceled, threw: s.threw };
}

module.exports = { IDBEvent, IDBVersionChangeEvent, IDBEventTarget, defineHandlers, dispatch };
