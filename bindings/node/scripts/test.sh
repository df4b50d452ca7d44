#!/usr/bin/env bash
# The Node.js package's test suite: builds the addon, installs the devDependencies (dexie,
# idb, fake-indexeddb) from npm, and runs every node:test file in test/.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
npm install --no-audit --no-fund --loglevel=error
node --test test/
