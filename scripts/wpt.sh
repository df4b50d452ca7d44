#!/usr/bin/env bash
# The W3C web-platform-tests IndexedDB suite through the Node.js package: builds the addon and
# runs bindings/node/wpt/run.js (two test files at a time) over $WPT_DIR, else ../shared/wpt
# beside the repository, comparing every result with bindings/node/wpt/expectations.json.
# Without a suite it says so in one line and succeeds. Arguments go to run.js (--update,
# --jobs N, --results FILE, file name filters).
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${WPT_DIR:-../shared/wpt}"
if [ ! -d "$dir/IndexedDB" ]; then
    echo "WPT: skipped, no suite in $dir; get one with: git clone --depth 1 --filter=blob:none --sparse https://github.com/web-platform-tests/wpt && git -C wpt sparse-checkout set IndexedDB resources interfaces, then set WPT_DIR=\$PWD/wpt"
    exit 0
fi
bash bindings/node/scripts/build.sh
node bindings/node/wpt/run.js --wpt-dir "$(cd "$dir" && pwd)" "$@"
