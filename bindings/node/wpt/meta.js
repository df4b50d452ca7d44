'use strict';
// The `// META:` lines at the head of a test file of the web-platform-tests.

/** `{ scripts, variants, long, title }` of a test file's source; `variants` is `['']` without any. */
function metaOf(source) {
  const meta = { scripts: [], variants: [], long: false, title: null };
  for (const line of source.split('\n')) {
    const m = /^\/\/ META: *(\w+)=(.*)$/.exec(line.trim());
    if (!m) {
      if (line.trim() === '' || line.startsWith('//')) continue;
      break;
    }
    const value = m[2].trim();
    if (m[1] === 'script') meta.scripts.push(value);
    else if (m[1] === 'variant') meta.variants.push(value);
    else if (m[1] === 'timeout') meta.long = value === 'long';
    else if (m[1] === 'title') meta.title = value;
  }
  if (meta.variants.length === 0) meta.variants.push('');
  return meta;
}

module.exports = { metaOf };
