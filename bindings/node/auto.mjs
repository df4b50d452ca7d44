// The ES module form of auto.js: `import "indexa-indexeddb/auto"` installs `indexedDB` and the
// IDB* interfaces as globals (the same objects `require` gives).
import './auto.js';
