#!/usr/bin/env bash
# linearity.sh: are the passes linear in module size? (issue 22: 10k -> 100k
# bindings, ratio <= 11). `make linearity` runs it; see the comment in
# transform/linear_bench_test.go for what the numbers mean.
#
# For the benchmarks of package transform built on measureLinear that
# BENCH names (the model transformations, the general passes, the
# BenchmarkReferenceWalk yardsticks) it prints, 100k bindings against 10
# modules of 10k (equal total work):
#   - ir-off, ir-on: the ratio of instructions executed by the runs alone
#     (callgrind, building the inputs not counted), with the collector off
#     and (for the benchmarks GCBENCH matches) on, GOGC=100. Deterministic
#     whatever the machine's load: a pass whose ir-off exceeds 11 does
#     more work per binding on a larger module.
#   - cpu-off, cpu-on: measureLinear's CPU-time ratio (best of ROUNDS
#     rounds, GOMAXPROCS 1), GOGC=off and as set, in native runs before
#     the counts, so they compare with the yardsticks' rows.
#
# Environment: BENCH (regexp of benchmarks; default the model
# transformations and the yardsticks, BENCH=. every one: over an hour),
# SKIP (regexp of benchmarks not built on measureLinear), GCBENCH (regexp
# of benchmarks also counted with the collector on: ten runs of 10k where
# one stands for ten without it, so about three times the cost), JOBS
# (callgrind processes at once, default 1; they run under nice -n 19,
# which does not change a count, so others' timings stay usable), ROUNDS (native rounds, default
# 3), OUT (directory for the callgrind profiles, kept for
# callgrind_annotate), CPU=0 to skip the native timings, COUNT=0 to skip
# the counts, GO. LINEAR_SMALL=100000 compares 100k with ten times as many
# bindings, both past the last-level cache (CPU time only: COUNT defaults
# to 0 then; give GOMEMLIMIT, as the 1M modules take several GiB).
set -euo pipefail

GO=${GO:-go}
BENCH=${BENCH:-ModelTransformations|ReferenceWalk}
SKIP=${SKIP:-ResNet|LinearProfile|NormalizeGlobalVar}
GCBENCH=${GCBENCH:-ReferenceWalk|ExpandMatmulOfSum|LiftTransformParams}
JOBS=${JOBS:-1}
ROUNDS=${ROUNDS:-3}
CPU=${CPU:-1}
if [ -n "${LINEAR_SMALL:-}" ]; then COUNT=${COUNT:-0}; else COUNT=${COUNT:-1}; fi
OUT=${OUT:-${TMPDIR:-/tmp}/phasec-linearity}
root=$(cd "$(dirname "$0")/.." && pwd)

if ! command -v valgrind >/dev/null; then
	if [ "$(id -u)" = 0 ]; then apt-get install -y valgrind || { apt-get update && apt-get install -y valgrind; }
	else sudo apt-get install -y valgrind || { sudo apt-get update && sudo apt-get install -y valgrind; }; fi
fi

start=$(date +%s)
mkdir -p "$OUT/cg"
rm -f "$OUT"/cg/* "$OUT"/*.txt
bin=$OUT/transform.test
(cd "$root" && $GO test -c -o "$bin" ./transform)
cd "$root/transform" # the benchmarks read testdata relative to the package

run_bench() { "$bin" -test.run '^$' -test.bench "$BENCH" -test.skip "$SKIP" "$@"; }

LINEAR_COUNT=list run_bench -test.benchtime 1x | sed -n 's/^linear-bench: //p' >"$OUT/names.txt"
echo "linearity: $(wc -l <"$OUT/names.txt") benchmarks; load: $(uptime | sed 's/.*load average: //')"

# cpu-ratio per benchmark, from `go test -bench` lines (name-P ... X cpu-ratio).
cpu_ratios() { awk '/cpu-ratio/ { n = $1; sub(/-[0-9]+$/, "", n); for (i = 2; i <= NF; i++) if ($i == "cpu-ratio") print n, $(i-1) }'; }
if [ "$CPU" = 1 ]; then
	echo "linearity: CPU time, GOGC as set, then GOGC=off, $ROUNDS rounds each"
	run_bench -test.benchtime "${ROUNDS}x" | cpu_ratios >"$OUT/cpu-on.txt"
	GOGC=off run_bench -test.benchtime "${ROUNDS}x" | cpu_ratios >"$OUT/cpu-off.txt"
	cpuload=$(uptime | sed 's/.*load average: //')
fi

# One callgrind process per benchmark: two dumps (one small module, the
# large one, without the collector) and for GCBENCH two more (ten small
# modules, the large one, with it), see countLinear. The runtime's RDTSCP
# is off: valgrind 3.19 does not decode it.
count() {
	local name=$1 file
	file=$OUT/cg/$(echo "$name" | tr '/' '.')
	local re
	re=$(echo "$name" | sed 's,[^/]*,^&$,g')
	local gc=0
	if echo "$name" | grep -Eq "$GCBENCH"; then gc=1; fi
	LINEAR_COUNT=run LINEAR_GC=$gc GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off nice -n 19 valgrind --tool=callgrind \
		--callgrind-out-file="$file" \
		--zero-before='*transform_test.linearCountStart' --dump-before='*transform_test.linearCountStop' \
		"$bin" -test.run '^$' -test.bench "$re" -test.benchtime 1x >"$file.log" 2>&1 || {
		echo "linearity: $name failed, see $file.log" >&2
		return 0
	}
	grep -q "^linear-counted: $name\$" "$file.log" || echo "linearity: $name: no count, see $file.log" >&2
}
export -f count
export OUT bin GCBENCH
if [ "$COUNT" = 1 ]; then
	echo "linearity: instruction counts (callgrind, $JOBS at a time)"
	xargs -P "$JOBS" -I{} bash -c 'count "$@"' _ {} <"$OUT/names.txt"
fi

totals() { sed -n 's/^totals: //p' "$1" 2>/dev/null || true; }
# 10 x large / small: as measureLinear's ratios, 10 means linear.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a > 0 && b > 0) printf "%.2f", 10 * b / a; else printf "-" }'; }
lookup() { awk -v n="$2" '$1 == n { print $2 }' "$1" 2>/dev/null || true; }

small=${LINEAR_SMALL:-10000}
printf '\n%-62s %7s %7s %7s %7s %9s\n' "benchmark ($((10 * small)) vs 10x$small bindings)" ir-off ir-on cpu-off cpu-on "ir/bind"
while read -r name; do
	f=$OUT/cg/$(echo "$name" | tr '/' '.')
	s0=$(totals "$f.1") l0=$(totals "$f.2") s1=$(totals "$f.3") l1=$(totals "$f.4")
	s0=$(awk -v s="$s0" 'BEGIN { if (s > 0) printf "%.0f", 10 * s }')
	s1=$(awk -v s="$s1" 'BEGIN { if (s > 0) printf "%.0f", s }')
	per=$(awk -v s="$s0" -v n="$((10 * small))" 'BEGIN { if (s > 0) printf "%.0f", s / n; else printf "-" }')
	printf '%-62s %7s %7s %7s %7s %9s\n' "$name" "$(ratio "$s0" "$l0")" "$(ratio "$s1" "$l1")" \
		"$(lookup "$OUT/cpu-off.txt" "$name")" "$(lookup "$OUT/cpu-on.txt" "$name")" "$per"
done <"$OUT/names.txt"
echo
echo "ir: instructions of the runs alone (callgrind; ir/bind: per binding at the small size, collector off);"
echo "cpu: CPU time, best of $ROUNDS rounds (load during the native runs: ${cpuload:-not run});"
echo "yardsticks: BenchmarkReferenceWalk rows. Profiles: $OUT/cg (callgrind_annotate FILE.N: 1, 2 one small"
echo "module, the large one, without the collector; 3, 4 ten small, the large one, with it). Took $(($(date +%s) - start)) s; load now: $(uptime | sed 's/.*load average: //')"
