'use strict';
// Events with the DOM's propagation (capture, target, bubble) over the IndexedDB parent chain
// request → transaction → database, which Node's own EventTarget (no tree) cannot do. The
// events the package fires go through tasks.js.

const { defineInterface } = require('./webidl.js');

const NONE = 0;
const CAPTURING_PHASE = 1;
const AT_TARGET = 2;
const BUBBLING_PHASE = 3;

const state = Symbol('state');
const listeners = Symbol('listeners');

/** An event of this package: `target` stays the object it was fired at while it propagates. */
class IDBEvent extends Event {
  constructor(type, init) {
    super(type, init);
    initEvent(this);
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

/** Sets up the propagation state of an event of this package. */
function initEvent(event) {
  event[state] = {
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

/** `IDBVersionChangeEvent`: `oldVersion` and `newVersion` (null for a deletion). */
class IDBVersionChangeEvent extends Event {
  constructor(type, init = {}) {
    super(type, init);
    initEvent(this);
    this[state].oldVersion = init.oldVersion === undefined ? 0 : Number(init.oldVersion);
    this[state].newVersion = init.newVersion === undefined || init.newVersion === null
      ? null : Number(init.newVersion);
  }
  get oldVersion() { return this[state].oldVersion; }
  get newVersion() { return this[state].newVersion; }
}
defineInterface(IDBVersionChangeEvent, 'IDBVersionChangeEvent');
// Its prototype is Event.prototype, as the IDL says; the propagation members are its own.
copyMembers(IDBEvent.prototype, IDBVersionChangeEvent.prototype);

/** Copies the members of `from` (but its constructor) onto `to`, not enumerable. */
function copyMembers(from, to) {
  for (const [key, desc] of Object.entries(Object.getOwnPropertyDescriptors(from))) {
    if (key !== 'constructor') Object.defineProperty(to, key, { ...desc, enumerable: false });
  }
}

const NO_OPTIONS = Object.freeze({ capture: false, once: false, passive: false });

function flatten(options) {
  if (options === undefined) return NO_OPTIONS;
  if (typeof options === 'boolean') return { capture: options, once: false, passive: false };
  const o = options || {};
  return { capture: !!o.capture, once: !!o.once, passive: !!o.passive };
}

// An event target's listeners, of every type, are one list in the order they were added (null
// until the first): each `{ type, callback, capture, once, passive, removed, fn }`. An `on…`
// handler is a listener of its own kind, with `callback` null and the handler in `fn`: it
// keeps its place from when it was first set, and no removeEventListener call can reach it.
// Most requests get one handler and nothing else, so this costs them one array and one
// record.

/** Appends `record` to the listeners of `target` (made with the first). */
function addRecord(target, record) {
  if (target[listeners] === null) target[listeners] = [record];
  else target[listeners].push(record);
}

/**
 * The EventTarget members of every IndexedDB object. Listeners and `on…` handlers run in the
 * order they were registered; an exception in one is reported (as an uncaught exception, like a
 * browser reports it) and recorded, so the caller can abort the transaction as the spec says.
 * They are installed on each interface's prototype by `defineEventTarget`, so that prototype
 * still inherits straight from EventTarget.prototype as the IDL says.
 */
const eventTargetMembers = {
  addEventListener(type, callback, options) {
    if (callback === null || callback === undefined) return;
    const { capture, once, passive } = flatten(options);
    const list = this[listeners];
    // On an interface's prototype the list is undefined: WebIDL's brand check throws a TypeError.
    if (list !== null && list.some((l) => l.type === type && l.callback === callback && l.capture === capture)) return;
    addRecord(this, { type, callback, capture, once, passive, removed: false, fn: null });
  },

  removeEventListener(type, callback, options) {
    const { capture } = flatten(options);
    const list = this[listeners];
    if (list === null) return;
    // A null callback matches nothing (a handler's record has none); on an interface's
    // prototype the list is undefined and this throws the brand check's TypeError.
    const i = list.findIndex((l) => l.callback !== null && l.callback === callback && l.type === type && l.capture === capture);
    if (i >= 0) {
      list[i].removed = true;
      list.splice(i, 1);
    }
  },

  /** Dispatches at this object alone (no parents); returns `!defaultPrevented`. */
  dispatchEvent(event) {
    if (!(event instanceof Event) || !(state in event)) return EventTarget.prototype.dispatchEvent.call(this, event);
    return !dispatch(event, [this]).canceled;
  },
};

// Node's EventTarget keeps its own state in symbol-keyed fields of each instance, which its
// own methods (called on our objects through EventTarget.prototype) read.
const nodeTargetFields = Object.getOwnPropertySymbols(new EventTarget());

/** Gives `o` a set of Node's EventTarget fields of its own. */
function makeNodeTargetFields(o) {
  const t = new EventTarget();
  for (const s of nodeTargetFields) {
    Object.defineProperty(o, s, { value: t[s], writable: true, enumerable: true, configurable: true });
  }
}

/**
 * Makes `cls` an EventTarget of this package: `cls.prototype` inherits from
 * EventTarget.prototype. Node's EventTarget fields of an instance are made on their first use
 * (most requests and transactions never need them), through accessors on the prototype.
 */
function defineEventTarget(cls) {
  const proto = cls.prototype;
  copyMembers(eventTargetMembers, proto);
  for (const s of nodeTargetFields) {
    Object.defineProperty(proto, s, {
      get() {
        if (Object.prototype.hasOwnProperty.call(this, 'constructor')) return undefined;
        makeNodeTargetFields(this);
        return this[s];
      },
      set(value) {
        if (Object.prototype.hasOwnProperty.call(this, 'constructor')) return;
        makeNodeTargetFields(this);
        this[s] = value;
      },
      configurable: true,
    });
  }
}

/** Sets up the listeners of an event target made without a constructor (`Object.create`). */
function initEventTarget(o) {
  o[listeners] = null;
}

/**
 * The `on<type>` handler's record of `target`, or undefined. On an object that is no event
 * target of this package (an interface's prototype) the list is undefined, and this throws
 * the TypeError WebIDL's brand check asks for.
 */
function handlerOf(target, type) {
  const list = target[listeners];
  if (list === null) return undefined;
  for (const l of list) if (l.callback === null && l.type === type) return l;
  return undefined;
}

/** Defines `on<type>` event handler attributes on a class. */
function defineHandlers(cls, types) {
  for (const type of types) {
    const name = `on${type}`;
    const accessors = {
      get [name]() {
        const h = handlerOf(this, type);
        return h ? h.fn : null;
      },
      set [name](fn) {
        const h = handlerOf(this, type);
        if (typeof fn !== 'function' && (typeof fn !== 'object' || fn === null)) fn = null;
        if (h) {
          h.fn = fn;
          return;
        }
        if (fn === null) return;
        addRecord(this, { type, callback: null, capture: false, once: false, passive: false, removed: false, fn });
      },
    };
    Object.defineProperty(cls.prototype, name, { ...Object.getOwnPropertyDescriptor(accessors, name), enumerable: true });
  }
}

/**
 * The DOM's dispatch of `event` at `path[0]` with `path.slice(1)` as its parents (nearest
 * first: capture from the farthest, the target, then bubbling when the event bubbles), one
 * listener call at a time: `step()` makes the next call ("inner invoke") and returns true, or
 * ends the dispatch and returns false, `result` then holding `{ canceled, threw }`. A
 * listener that stops immediate propagation ends the dispatch at once (its step returns
 * false). A plain object rather than a generator: a success event's dispatch is on every
 * request's path, and generators (one per target, with a result object per step) were a
 * fifth of what a request allocated.
 */
class DispatchSteps {
  constructor(event, path) {
    const s = event[state];
    s.target = path[0];
    s.path = path;
    s.dispatching = true;
    s.threw = false;
    this.event = event;
    this.path = path;
    // Where the dispatch is: the phase and the index in `path` of the target whose listeners
    // `list` holds (a snapshot of those of the event's type; null between targets).
    this.phase = NONE;
    this.at = 0;
    this.list = null;
    this.next = 0;
    this.result = null;
  }

  step() {
    const s = this.event[state];
    for (;;) {
      if (this.list !== null) {
        if (this.invokeNext(s) && !s.stopImmediate) return true;
        this.list = null;
      }
      if (!this.nextTarget(s)) {
        s.phase = NONE;
        s.currentTarget = null;
        s.dispatching = false;
        this.result = { canceled: s.canceled, threw: s.threw };
        return false;
      }
    }
  }

  /** Moves to the next target on the path, false past the last. */
  nextTarget(s) {
    const last = this.path.length - 1;
    let phase = this.phase;
    let at = this.at;
    do {
      if (s.stop) return false;
      if (phase === NONE) {
        phase = last >= 1 ? CAPTURING_PHASE : AT_TARGET;
        at = last;
      } else if (phase === CAPTURING_PHASE && at > 1) {
        at--;
      } else if (phase === CAPTURING_PHASE) {
        phase = AT_TARGET;
        at = 0;
      } else if (phase === AT_TARGET || at < last) {
        if (!this.event.bubbles || last < 1) return false;
        phase = BUBBLING_PHASE;
        at++;
      } else {
        return false;
      }
      s.phase = phase;
      this.phase = phase;
      this.at = at;
    } while (!this.listenersOf(s, this.path[at]));
    return true;
  }

  /**
   * Takes a snapshot of `target`'s listeners of the event's type (those added during the
   * dispatch do not run); false when it has none.
   */
  listenersOf(s, target) {
    const all = target[listeners];
    if (!all) return false;
    const type = this.event.type;
    let list = null;
    for (const l of all) {
      if (l.type !== type) continue;
      if (list === null) list = [];
      list.push(l);
    }
    if (list === null) return false;
    s.currentTarget = target;
    this.list = list;
    this.next = 0;
    return true;
  }

  /** Calls the next listener of the current target that this phase runs; false when none is left. */
  invokeNext(s) {
    const list = this.list;
    const phase = this.phase;
    const target = this.path[this.at];
    const event = this.event;
    while (this.next < list.length) {
      const l = list[this.next++];
      if (l.removed) continue;
      if (phase === CAPTURING_PHASE && !l.capture) continue;
      if (phase === BUBBLING_PHASE && l.capture) continue;
      if (l.once) target.removeEventListener(l.type, l.callback, { capture: l.capture });
      s.passive = l.passive;
      try {
        if (l.callback === null) {
          if (typeof l.fn === 'function') l.fn.call(target, event);
        } else if (typeof l.callback === 'function') l.callback.call(target, event);
        else {
          // A callback interface object: its handleEvent must be callable (WebIDL "call a
          // user object's operation"), else the TypeError is reported like a thrown exception.
          const handleEvent = l.callback.handleEvent;
          if (typeof handleEvent !== 'function') throw new TypeError('the listener\'s handleEvent is not callable');
          handleEvent.call(l.callback, event);
        }
      } catch (err) {
        s.threw = true;
        process.nextTick(() => { throw err; });
      }
      s.passive = false;
      return true;
    }
    return false;
  }
}

/**
 * Dispatches `event` at `path[0]` with `path.slice(1)` as its parents (nearest first), all
 * listeners in one go, as `dispatchEvent()` does (script is running, so no microtask
 * checkpoint between listeners). Returns `{ canceled, threw }`.
 */
function dispatch(event, path) {
  const steps = new DispatchSteps(event, path);
  while (steps.step());
  return steps.result;
}

module.exports = {
  IDBEvent, IDBVersionChangeEvent, defineEventTarget, initEventTarget, defineHandlers, DispatchSteps,
};
