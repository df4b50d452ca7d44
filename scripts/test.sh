#!/usr/bin/env bash
# The whole test suite: fetches the real data sets the tests read (scripts/fetch-data.sh),
# starts a throw-away PostgreSQL cluster (installing Debian's postgresql package if needed), runs
# every test of the workspace and of the Node.js package, the backend-neutral ones a second time
# on that cluster, and,
# when a copy is at hand, the W3C web-platform-tests suite (scripts/wpt.sh), and stops the cluster.
#
#   scripts/test.sh                # in this checkout
#   scripts/test.sh --fresh-clone  # clones the committed HEAD into an empty temporary folder
#                                  # (no sibling folders, no data-location variables; the W3C
#                                  # suite scripts/wpt.sh would use here, $WPT_DIR or
#                                  # ../shared/wpt, is handed on by its absolute path) and runs
#                                  # the suite there, building in target/fresh-clone/ (its own
#                                  # folder: binaries bake in their source paths)
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "${1:-}" = --fresh-clone ]; then
    top=$(pwd)
    head=$(git rev-parse HEAD)
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    git clone -q --no-hardlinks "$top" "$tmp/indexa"
    git -C "$tmp/indexa" checkout -q --detach "$head"
    echo "test.sh: fresh clone of $head in $tmp/indexa" >&2
    export CARGO_TARGET_DIR="$top/target/fresh-clone"
    export INDEXA_PG_DIR="/tmp/indexa-pg-fresh-clone-$$"
    unset INDEXA_DATA_DIR INDEXA_TEST_PG_URL
    wpt="${WPT_DIR:-../shared/wpt}"
    if [ -d "$wpt/IndexedDB" ]; then export WPT_DIR="$(cd "$wpt" && pwd)"; else unset WPT_DIR; fi
    (cd "$tmp/indexa" && bash scripts/test.sh)
    exit
fi

bash scripts/fetch-data.sh

eval "$(scripts/pg-test-cluster.sh start)"
trap 'scripts/pg-test-cluster.sh stop' EXIT

cargo fmt --all -- --check
cargo test --workspace --all-targets
cargo test --workspace --doc
# The engine's and the CLI's backend-neutral tests again on PostgreSQL (the engine's
# tests/support and the CLI's tests/common make each factory or data directory a fresh database
# of the cluster and drop it); the SQLite-only ones are listed in README.md.
INDEXA_TEST_BACKEND=postgres cargo test -p indexa --test seeds --test spec_edge_cases \
    --test cursors --test cursor_read_ahead --test transactions --test model \
    --test countries --test stress --test names --test typed_reads --test typed_writes \
    --test version_change
INDEXA_TEST_BACKEND=postgres cargo test -p indexa-cli --test batch_ops --test batch_robustness \
    --test batch_seeds --test commands --test dump_restore --test import_streaming \
    --test info_indexes --test list_names --test processes --test query_formats \
    --test real_data --test schema_commands --test shell
# The examples assert what they show.
for example in crates/indexa/examples/*.rs; do
    cargo run -q -p indexa --example "$(basename "$example" .rs)" >/dev/null
done
bash bindings/node/scripts/test.sh
# The W3C web-platform-tests IndexedDB suite, when a copy is at hand (else one line says so).
bash scripts/wpt.sh
