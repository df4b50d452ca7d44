'use strict';
// One test file of the web-platform-tests IndexedDB suite in this process:
//   node run-file.js <wpt dir> <file under IndexedDB/> <variant or ""> <timeout ms>
// The package is installed as the globals, with its databases in a fresh directory
// ($INDEXA_DATA_DIR, set by the runner); the `// META: script=` helpers and then the file are
// evaluated as classic scripts in this one global scope, as a page would; the results go to the
// parent process as one message.
const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const { install } = require('./harness.js');
const { metaOf } = require('./meta.js');

const [wptDir, file, variant, timeout] = process.argv.slice(2);

function send(result) {
  process.send(result, () => process.exit(0));
}

const testPath = path.join(wptDir, 'IndexedDB', file);
const source = fs.readFileSync(testPath, 'utf8');
const meta = metaOf(source);
const title = meta.title || file.replace(/\.any\.js$/, '');
const { loaded, harnessError } = install(globalThis, { timeout: Number(timeout), title, report: send });

require('../auto.js');
const pathname = `/IndexedDB/${file}`;
const href = `http://web-platform.test:8000${pathname}${variant}`;
const location = {
  href, pathname, search: variant, protocol: 'http:', host: 'web-platform.test:8000',
  hostname: 'web-platform.test', port: '8000', origin: 'http://web-platform.test:8000', hash: '',
  toString() { return href; },
};
for (const [name, value] of Object.entries({ self: globalThis, location })) {
  Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: true });
}
// The global scope stands for a dedicated worker's (no DOM, no window), the closest of the
// suite's globals to a Node.js process; idlharness.js tests the exposure of interfaces by it.
class WorkerGlobalScope {
  static [Symbol.hasInstance](o) { return o === globalThis; }
}
// A worker has `indexedDB` (WindowOrWorkerGlobalScope) on WorkerGlobalScope.prototype, an
// accessor that needs the global as its `this`; the global's own accessor (auto.js) serves it.
const globalIndexedDB = Object.getOwnPropertyDescriptor(globalThis, 'indexedDB').get;
Object.defineProperty(WorkerGlobalScope.prototype, 'indexedDB', {
  get: {
    get indexedDB() {
      if (this !== undefined && this !== globalThis) throw new TypeError('Illegal invocation');
      return globalIndexedDB();
    },
  }.__lookupGetter__('indexedDB'),
  enumerable: true,
  configurable: true,
});
class DedicatedWorkerGlobalScope extends WorkerGlobalScope {
  static [Symbol.hasInstance](o) { return o === globalThis; }
}
// Like a worker's global it is an EventTarget: an uncaught exception fires `error` at it.
const globalEvents = new EventTarget();
process.on('uncaughtException', (error) => {
  const event = new Event('error', { cancelable: true });
  Object.assign(event, { error, message: error && error.message });
  globalEvents.dispatchEvent(event);
});
// Interfaces a worker has but Node.js lacks, which test files construct at their top level
// (structured-clone.any.js): plain classes, so the file runs; no value of them is serializable
// here, so the subtests that clone them still fail, as they should.
class Placeholder {
  get [Symbol.toStringTag]() { return this.constructor.name; }
}
class DOMMatrixReadOnly extends Placeholder {}
class DOMMatrix extends DOMMatrixReadOnly {}
class DOMPointReadOnly extends Placeholder {}
class DOMPoint extends DOMPointReadOnly {}
class DOMRectReadOnly extends Placeholder {}
class DOMRect extends DOMRectReadOnly {}
class ImageData extends Placeholder {
  constructor(width, height) {
    super();
    Object.assign(this, { width, height, data: new Uint8ClampedArray(width * height * 4) });
  }
}
// FileReader, which Node.js lacks: readAsArrayBuffer only (what the suite's helpers use),
// over Blob.arrayBuffer(), with `result`/`error` set before `load`/`error` and `loadend`.
class FileReader extends EventTarget {
  constructor() {
    super();
    this.result = null;
    this.error = null;
    this.onload = null;
    this.onerror = null;
    this.onloadend = null;
  }

  readAsArrayBuffer(blob) {
    blob.arrayBuffer().then((buffer) => { this.result = buffer; this.finish('load'); },
      (error) => { this.error = error; this.finish('error'); });
  }

  finish(type) {
    for (const name of [type, 'loadend']) {
      const event = new Event(name);
      if (typeof this[`on${name}`] === 'function') this[`on${name}`](event);
      this.dispatchEvent(event);
    }
  }
}
const globals = {
  FileReader,
  DOMMatrixReadOnly, DOMMatrix, DOMPointReadOnly, DOMPoint, DOMRectReadOnly, DOMRect, ImageData,
  WorkerGlobalScope,
  DedicatedWorkerGlobalScope,
  addEventListener: globalEvents.addEventListener.bind(globalEvents),
  removeEventListener: globalEvents.removeEventListener.bind(globalEvents),
  dispatchEvent: globalEvents.dispatchEvent.bind(globalEvents),
};
for (const [name, value] of Object.entries(globals)) {
  Object.defineProperty(globalThis, name, { value, writable: true, configurable: true, enumerable: false });
}
// Files of the suite by their server path (idlharness fetches /interfaces/*.idl).
const nodeFetch = globalThis.fetch;
globalThis.fetch = function fetch(url, init) {
  if (typeof url === 'string' && url.startsWith('/')) {
    return fs.promises.readFile(path.join(wptDir, url)).then(
      (body) => new Response(body, { status: 200 }),
      () => new Response('', { status: 404 }),
    );
  }
  return nodeFetch(url, init);
};

/** A script path of a META line: relative to IndexedDB/, or from the suite's root; /common/ is ours. */
function scriptPath(src) {
  if (src.startsWith('/common/')) return path.join(__dirname, src);
  if (src.startsWith('/')) return path.join(wptDir, src);
  return path.join(wptDir, 'IndexedDB', src);
}

const scripts = meta.scripts.map(scriptPath).concat([testPath]);
for (const script of scripts) {
  let code;
  try {
    code = fs.readFileSync(script, 'utf8');
  } catch (e) {
    harnessError(`cannot read script ${script}: ${e.message}`);
    break;
  }
  try {
    vm.runInThisContext(code, { filename: script });
  } catch (e) {
    harnessError(`${path.basename(script)} threw: ${e && e.name}: ${e && e.message}`);
    break;
  }
}
loaded();
