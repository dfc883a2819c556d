#!/usr/bin/env bash
# Instruction counts (exact, from valgrind's callgrind) beside wall times (native, noisy on a
# shared machine) for the figures of pm-bench's counting mode, and for a whole CLI process
# beside process start-up itself (/bin/true). Prints the CPU model first.
#
# A figure's instructions per call are (Ir(N + 1 iterations) - Ir(1 iteration)) / N: loading
# the scenario, start-up, exit and the first call's one-time work (the dynamic linker binding
# the library's symbols, the allocator's first pages) cancel out. Its time is the median of 5 native runs of M
# iterations each.
#
# Usage: scripts/bench-instructions.sh BUILD_DIR [--quick]
#   BUILD_DIR  a configured and compiled meson build (not a sanitizer build)
#   --quick    fewer iterations and figures (the test suite's smoke run)
# Needs valgrind (Debian: apt-get install valgrind).
set -euo pipefail

build="${1:?usage: scripts/bench-instructions.sh BUILD_DIR [--quick]}"
quick="${2:-}"
root="$(cd "$(dirname "$0")/.." && pwd)"
bench="$build/bench/pm-bench"
cli="$build/src/cli/preserve-model"
command -v valgrind >/dev/null || { echo "bench-instructions.sh: valgrind not found" >&2; exit 2; }
[ -x "$bench" ] || { echo "bench-instructions.sh: $bench not built" >&2; exit 2; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Total instructions of a command under callgrind.
instr() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "$@" >/dev/null 2>"$tmp/cg.err" ||
        { cat "$tmp/cg.err" >&2; exit 1; }
    awk '/^(summary|totals):/ {print $2; exit}' "$tmp/cg.out"
}

# Median of the numbers on stdin.
median() { sort -g | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }

n_cg=20
n_time=2000
[ "$quick" = --quick ] && { n_cg=2; n_time=20; }

echo "CPU: $(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo), $(nproc) cores"
printf '%-44s %14s %14s\n' figure instructions ns
# figure NAME ITERATIONS_FACTOR pm-bench-args...: one row.
figure() {
    local name="$1" factor="$2"
    shift 2
    local args=(--data-dir "$root/data" "$@")
    local n=$((n_cg * factor)) nt=$((n_time * factor))
    local with without
    with=$(instr "$bench" "${args[@]}" --iterations $((n + 1)))
    without=$(instr "$bench" "${args[@]}" --iterations 1)
    local points
    points=$("$bench" "${args[@]}" --iterations 0 | awk '/^points/ {print $2}')
    local ns
    ns=$(for _ in 1 2 3 4 5; do "$bench" "${args[@]}" --iterations "$nt"; done |
        awk '/^ns_per_iteration/ {print $2}' | median)
    awk -v name="$name" -v a="$with" -v b="$without" -v n="$n" -v p="$points" -v ns="$ns" \
        'BEGIN {printf "%-44s %14.0f %14.1f\n", name, (a - b) / n / p, ns / p}'
}

figure "decode step, prepared (llama70b, 16K)" 10 --count step
figure "decode step, cold (llama70b, 16K)" 10 --count step_cold
figure "estimate, llama70b, seq 16K" 1 --count e2e --seq 16384
figure "estimate, llama70b, seq 64K" 1 --count e2e --seq 65536
figure "served point, llama70b, 64 in flight, 3 modes" 1 --count serve
figure "hw point of a compiled served point (l2, 256)" 1 --count search_hw --axis l2=1MiB:256MiB:1MiB

# added NAME ONE -- AXES...: a hardware point of a compiled plan with the compile left out
# (issue 46 item 3): a search_hw over AXES less the same search over ONE, a one-point axis
# (its first point: the compile and the search's set-up), over the points beyond the first.
added() {
    local name="$1" one="$2"
    shift 3
    local n=$n_cg nt=$((n_time / 10))
    local a=(--data-dir "$root/data" --count search_hw) ax=() i
    for i in "$@"; do ax+=(--axis "$i"); done
    local w1 w0 o1 o0 points ns ns1
    w1=$(instr "$bench" "${a[@]}" "${ax[@]}" --iterations $((n + 1)))
    w0=$(instr "$bench" "${a[@]}" "${ax[@]}" --iterations 1)
    o1=$(instr "$bench" "${a[@]}" --axis "$one" --iterations $((n + 1)))
    o0=$(instr "$bench" "${a[@]}" --axis "$one" --iterations 1)
    points=$("$bench" "${a[@]}" "${ax[@]}" --iterations 0 | awk '/^points/ {print $2}')
    ns=$(for _ in 1 2 3 4 5; do "$bench" "${a[@]}" "${ax[@]}" --iterations "$nt"; done |
        awk '/^ns_per_iteration/ {print $2}' | median)
    ns1=$(for _ in 1 2 3 4 5; do "$bench" "${a[@]}" --axis "$one" --iterations "$nt"; done |
        awk '/^ns_per_iteration/ {print $2}' | median)
    awk -v name="$name" -v a="$((w1 - w0))" -v b="$((o1 - o0))" -v n="$n" -v p="$points" \
        -v ns="$ns" -v ns1="$ns1" \
        'BEGIN {printf "%-44s %14.0f %14.1f\n", name, (a - b) / n / (p - 1), (ns - ns1) / (p - 1)}'
}
added "  the compile left out (l2, 256)" l2=1MiB:1MiB:1MiB -- l2=1MiB:256MiB:1MiB
if [ "$quick" != --quick ]; then
    added "  the compile left out (hbm_bw, 61)" hbm_bw=1TBps:1TBps:1TBps -- \
        hbm_bw=1TBps:4TBps:0.05TBps
    added "  the compile left out (l2 x hbm_bw, 64 x 7)" l2=1MiB:1MiB:1MiB -- \
        l2=1MiB:64MiB:1MiB hbm_bw=1TBps:4TBps:0.5TBps
fi
if [ "$quick" != --quick ]; then
    # Across the KV-spill context (77,369 for llama70b): a request that crosses it, one beyond.
    figure "estimate, llama70b, seq 80K (crosses spill)" 1 --count e2e --seq 81920
    figure "estimate, llama70b, seq 128K" 1 --count e2e --seq 131072
    figure "estimate, llama70b, 16K, 40 layers" 1 --count e2e --seq 16384 --layers 40
    figure "estimate, llama70b, 16K, 160 layers" 1 --count e2e --seq 16384 --layers 160
    for f in "$root"/data/scenarios/*.json; do
        s="$(basename "$f" .json)"
        [ "$s" = llama70b ] && continue
        figure "estimate, $s" 1 --count e2e --scenario "$s"
    done
    figure "sweep point, seq=1k:64k:1k (64 points)" 1 --count sweep --axis seq=1k:64k:1k
    figure "sweep point, batch=1:256:x2 (9 points)" 1 --count sweep --axis batch=1:256:x2
    figure "sweep point, l2=1MiB:256MiB:1MiB (256 pts)" 1 --count sweep --axis l2=1MiB:256MiB:1MiB
fi

# Whole processes: one CLI run (start, load the scenario's JSON files, evaluate, print) beside
# process start-up itself.
proc_ns() {
    local reps=$1
    shift
    for _ in 1 2 3 4 5; do
        local t0 t1
        t0=$(date +%s%N)
        for ((i = 0; i < reps; i++)); do "$@" >/dev/null; done
        t1=$(date +%s%N)
        echo $(((t1 - t0) / reps))
    done | median
}
reps=50
[ "$quick" = --quick ] && reps=2
if [ -x "$cli" ]; then
    printf '%-44s %14s %14s\n' "/bin/true (process start-up)" "$(instr /bin/true)" \
        "$(proc_ns "$reps" /bin/true)"
    printf '%-44s %14s %14s\n' "preserve-model --config llama70b (process)" \
        "$(instr "$cli" --data-dir "$root/data" --config llama70b)" \
        "$(proc_ns "$reps" "$cli" --data-dir "$root/data" --config llama70b)"
fi
