#!/usr/bin/env bash
# The Node.js package's test suite: builds the addon, installs the devDependencies (dexie,
# idb, fake-indexeddb) from npm, and runs every node:test file in test/. The `indexa` binary
# is built too: test/cli-dump.test.js runs it on databases this package wrote.
#
# With INDEXA_TEST_PG_URL set (scripts/pg-test-cluster.sh), the files whose databases come from
# test/helpers.js run a second time on PostgreSQL (INDEXA_TEST_BACKEND=postgres: a fresh
# PostgreSQL database per place, through psql). The other files are about directories and
# stay on SQLite: factories (one directory under two spellings), package (the packed
# tarballs) and wpt-harness (the WPT runner's expectations); two tests skip themselves there,
# each saying why.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/build.sh
cargo build -q -p indexa-cli
npm install --no-audit --no-fund --loglevel=error
node --test test/
if [ -n "${INDEXA_TEST_PG_URL:-}" ]; then
    INDEXA_TEST_BACKEND=postgres node --test $(grep -l 'freshFactory\|freshPlace' test/*.test.js)
fi
