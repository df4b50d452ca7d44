#!/usr/bin/env bash
# The package under Node, Bun and Deno, as a user installs it: packs the tarballs
# (scripts/pack.sh), installs them in a temporary project together with bun, deno, dexie and
# idb from npm, and runs scripts/smoke/smoke.cjs, smoke.mjs and clients.cjs under each runtime.
# Prints one line per runtime and script; exits non-zero when one fails. README.md, "Bun and
# Deno", records the results.
#
#   bash bindings/node/scripts/runtimes.sh
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
bash scripts/pack.sh "$work/dist" >/dev/null
mkdir "$work/app"
cp scripts/smoke/* "$work/app/"
cd "$work/app"
echo '{ "name": "app", "private": true }' >package.json
npm install --no-audit --no-fund --loglevel=error "$work"/dist/*.tgz bun deno dexie@4 idb@8 >/dev/null

declare -A cmd=([node]="node" [bun]="node_modules/.bin/bun" [deno]="node_modules/.bin/deno run -A")
failed=0
for runtime in node bun deno; do
  rm -rf data
  version="$runtime $(${cmd[$runtime]%% *} --version | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -1)"
  for script in smoke.cjs smoke.mjs clients.cjs; do
    if out="$(timeout 120 ${cmd[$runtime]} "$script" 2>&1)" && [ "$(tail -1 <<<"$out")" = ok ]; then
      echo "$version: $script ok"
    else
      echo "$version: $script FAILED"
      sed 's/^/    /' <<<"$out"
      failed=1
    fi
  done
done
exit "$failed"
