#!/usr/bin/env bash
# The whole test suite: starts a throw-away PostgreSQL cluster for the shard router's tests
# (installing Debian's postgresql package if needed), runs every test of the workspace, and
# stops the cluster again.
set -euo pipefail
cd "$(dirname "$0")/.."

eval "$(scripts/pg-test-cluster.sh start)"
trap 'scripts/pg-test-cluster.sh stop' EXIT

cargo fmt --all -- --check
cargo test --workspace --all-targets
cargo test --workspace --doc
# The examples assert what they show.
for example in crates/indexa/examples/*.rs; do
    cargo run -q -p indexa --example "$(basename "$example" .rs)" >/dev/null
done
bash bindings/node/scripts/test.sh
# The W3C web-platform-tests IndexedDB suite, when a copy is at hand (else one line says so).
bash scripts/wpt.sh
