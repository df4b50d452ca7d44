#!/usr/bin/env bash
# Builds the native addon with cargo and copies it to bindings/node/indexa.node.
# PROFILE=release for an optimised build (the benchmark uses it).
set -euo pipefail
cd "$(dirname "$0")/.."
profile="${PROFILE:-debug}"
flags=()
[ "$profile" = release ] && flags=(--release)
cargo build -q -p indexa-node "${flags[@]}"
target="${CARGO_TARGET_DIR:-$(cd ../.. && pwd)/target}"
case "$(uname -s)" in
  Darwin) lib="libindexa_node.dylib" ;;
  *) lib="libindexa_node.so" ;;
esac
cp "$target/$profile/$lib" indexa.node
