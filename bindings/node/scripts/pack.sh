#!/usr/bin/env bash
# Writes into DIR every tarball a user needs on this platform: the main package
# (indexa-indexeddb-<version>.tgz) and the platform package holding the release build of the
# native addon (indexa-indexeddb-<platform>-<version>.tgz, e.g. linux-x64-gnu). Both install
# with `npm install DIR/*.tgz`, with no Rust toolchain and no network.
#
#   bash bindings/node/scripts/pack.sh DIR
#
# The release build is cargo's: an up-to-date one is reused. The tarballs are packed from
# staged copies (scripts/stage.js), so bindings/node/indexa.node of a checkout is left alone.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: bash bindings/node/scripts/pack.sh DIR" >&2; exit 2; }
mkdir -p "$1"
out="$(cd "$1" && pwd)"
cd "$(dirname "$0")/.."

cargo build -q --release -p indexa-node
target="${CARGO_TARGET_DIR:-$(cd ../.. && pwd)/target}"
case "$(uname -s)" in
  Darwin) lib="libindexa_node.dylib" ;;
  MINGW* | MSYS* | CYGWIN*) lib="indexa_node.dll" ;;
  *) lib="libindexa_node.so" ;;
esac

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
node scripts/stage.js "$target/release/$lib" "$stage"
for pkg in "$stage"/*/; do
  (cd "$pkg" && npm pack --silent --pack-destination "$out" >/dev/null)
done
ls "$out"/*.tgz
