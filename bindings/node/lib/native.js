'use strict';
// The native addon, from the first of:
// - the file INDEXA_NODE_ADDON names;
// - `indexa.node` beside package.json, built by `scripts/build.sh` in a checkout of the
//   repository (never part of a published package);
// - the platform package of the running platform (`indexa-indexeddb-linux-x64-gnu`, …),
//   installed beside this package from npm or from the tarballs `scripts/pack.sh` writes.
const fs = require('node:fs');
const path = require('node:path');
const platform = require('./platform.js');

function loadAddon() {
  if (process.env.INDEXA_NODE_ADDON) return require(process.env.INDEXA_NODE_ADDON);
  const local = path.join(__dirname, '..', 'indexa.node');
  if (fs.existsSync(local)) return require(local);
  const name = platform.currentPlatform();
  const pkg = platform.packageName(name);
  try {
    return require(pkg);
  } catch (err) {
    if (err.code !== 'MODULE_NOT_FOUND' || !String(err.message).includes(pkg)) {
      throw new Error(`indexa-indexeddb: the native addon ${pkg} is installed but does not load on ${name}: ${err.message}`, { cause: err });
    }
    throw new Error(
      `indexa-indexeddb: no native addon for this platform (${name}): the package ${pkg} is not ` +
      'installed. Install it beside indexa-indexeddb (npm installs it as an optional dependency ' +
      'where it is published; npm install --include=optional if optional dependencies were ' +
      'skipped), or build the addon from a checkout of the repository with ' +
      'bash bindings/node/scripts/build.sh.',
      { cause: err },
    );
  }
}

module.exports = loadAddon();
