#!/usr/bin/env bash
# Benchmark against fake-indexeddb: builds the addon optimised, then runs bench/bench.js.
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=release bash scripts/build.sh
npm install --no-audit --no-fund --loglevel=error
node bench/bench.js
