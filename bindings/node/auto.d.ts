// `import "indexa-indexeddb/auto"` installs `indexedDB` and the IDB* interfaces as globals,
// which TypeScript's `lib.dom` types; the reference brings it in whether or not the project's
// tsconfig lists "dom".
/// <reference lib="dom" />
/// <reference path="./index.d.ts" />
export {};
