'use strict';
// The native addon: built by `scripts/build.sh` into `indexa.node` beside package.json, or
// named by INDEXA_NODE_ADDON.
const path = require('node:path');

module.exports = require(process.env.INDEXA_NODE_ADDON || path.join(__dirname, '..', 'indexa.node'));
