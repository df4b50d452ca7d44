#!/usr/bin/env bash
# Instructions per operation of the package, counted by valgrind's callgrind (steadier than
# time on a shared machine), for the steps of bench/instructions.js:
#
#   bash bindings/node/bench/callgrind.sh [LO] [HI]     # default 1000 and 2000 operations
#
# Each step runs twice, with LO and HI operations; the difference in instructions over HI - LO
# is the cost of one operation, free of starting Node, loading the package and filling the
# store. Every thread of the process counts (Node's, the engine's pool, V8's), with V8 on one
# thread (--single-threaded) so that its compiler and collector run where they are counted.
# Two runs of one build differ by up to about 7% (when V8 compiles and collects moves a
# little, and so does which ops run on Node's thread: that budget is wall time, which
# valgrind stretches). One get per transaction is left out: its count moved by a third
# between two runs of one build.
# INDEXA_PACKAGE (another build of the package) passes through. Needs valgrind.
set -euo pipefail
cd "$(dirname "$0")"
lo=${1:-1000}
hi=${2:-2000}

instructions() {
  valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    node --single-threaded instructions.js "$1" "$2" 2>&1 >/dev/null |
    awk '/Collected/ { print $NF }'
}

echo "| step | instructions per operation |"
echo "|---|---:|"
for step in gets cursor puts; do
  a=$(instructions "$step" "$lo")
  b=$(instructions "$step" "$hi")
  echo "| $step | $(( (b - a) / (hi - lo) )) |"
done
