#!/usr/bin/env bash
# The Node.js package's test suite: builds the addon, installs the devDependencies (dexie,
# idb, fake-indexeddb) from npm, and runs every node:test file in test/. The `indexa` binary
# is built too: test/cli-dump.test.js runs it on databases this package wrote.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cargo build -q -p indexa-cli
npm install --no-audit --no-fund --loglevel=error
node --test test/
