#!/usr/bin/env bash
# Builds the libFuzzer harnesses in fuzz/ (the library's sources compiled with clang under
# AddressSanitizer and UndefinedBehaviorSanitizer) and runs each for SECONDS, starting from the
# shipped data as seed corpus (data/**, data/runtimes/ among them, and tests/configs/**), then
# prints one line per harness: executions, time, crashes.
#
# Usage: scripts/fuzz.sh [SECONDS_PER_HARNESS] [OUTDIR] [HARNESS...]
#   SECONDS_PER_HARNESS  default 60
#   OUTDIR               default build-fuzz (binaries, scratch corpora, logs, crash artifacts)
#   HARNESS              any of: model accelerator cluster workload runtime hf scenario graph
#                        axis set
#                        quantity merge args writers (default: all)
# Needs clang with the fuzzer runtime (Debian: clang libclang-rt-14-dev), pkg-config, GSL and
# cJSON. Exits 1 if any harness crashed, leaked, hung or failed an oracle: reproduce with
#   OUTDIR/bin/fuzz_NAME OUTDIR/artifacts/NAME/crash-...
# The compiler is $CC (default clang); extra flags in $FUZZ_CFLAGS.
set -euo pipefail

secs="${1:-60}"
out="${2:-build-fuzz}"
shift $(($# < 2 ? $# : 2))
all=(model accelerator cluster workload runtime hf scenario graph axis set quantity merge args
    writers)
if [ $# -gt 0 ]; then harnesses=("$@"); else harnesses=("${all[@]}"); fi

root="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cc="${CC:-clang}"
case "$secs" in '' | *[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number (got '$secs')" >&2; exit 2 ;; esac

# ---- build ------------------------------------------------------------------------------------
version="$(sed -n "s/^ *version *: *'\([0-9.]*\)'.*/\1/p" "$root/meson.build" | head -1)"
IFS=. read -r vmaj vmin vpat <<<"$version"
mkdir -p "$out/include" "$out/obj" "$out/bin"
sed -e "s/@VERSION@/$version/" -e "s/@MAJOR@/$vmaj/" -e "s/@MINOR@/$vmin/" -e "s/@PATCH@/$vpat/" \
    "$root/include/preserve_model_version.h.in" >"$out/include/preserve_model_version.h"

deps_cflags="$(pkg-config --cflags gsl libcjson)"
deps_libs="$(pkg-config --libs gsl libcjson) -lm"
san="-fsanitize=address,undefined -fno-sanitize-recover=all"
cflags="-std=c11 -g -O1 -fno-omit-frame-pointer $san -D_POSIX_C_SOURCE=200809L
        -I$out/include -I$root/include -I$root/src $deps_cflags ${FUZZ_CFLAGS:-}"

echo "fuzz.sh: building with $($cc --version | head -1)"
objs=()
for src in "$root"/src/*.c; do
    obj="$out/obj/$(basename "${src%.c}").o"
    # shellcheck disable=SC2086
    $cc $cflags -fsanitize=fuzzer-no-link -DPM_BUILDING_LIBRARY -DPM_DATA_DIR="\"$root/data\"" \
        -c "$src" -o "$obj"
    objs+=("$obj")
done

harness_src() { # name -> source file and extra flags
    case "$1" in
    model) echo "fuzz_component.c -DFZ_KIND=PM_KIND_MODEL" ;;
    accelerator) echo "fuzz_component.c -DFZ_KIND=PM_KIND_ACCELERATOR" ;;
    cluster) echo "fuzz_component.c -DFZ_KIND=PM_KIND_CLUSTER" ;;
    workload) echo "fuzz_component.c -DFZ_KIND=PM_KIND_WORKLOAD" ;;
    runtime) echo "fuzz_component.c -DFZ_KIND=PM_KIND_RUNTIME" ;;
    hf | scenario | graph | axis | set | quantity) echo "fuzz_$1.c" ;;
    # The CLI's own readers and writers: its sources compiled into the harness.
    merge | args | writers) echo "fuzz_$1.c $cli_srcs" ;;
    *) echo "fuzz.sh: unknown harness '$1' (expected one of ${all[*]})" >&2; return 1 ;;
    esac
}

cli="$root/src/cli"
cli_srcs="-I$cli $cli/common.c $cli/output.c $cli/merge.c $cli/fmt.c"
for h in "${harnesses[@]}"; do
    read -r src extra <<<"$(harness_src "$h")"
    # shellcheck disable=SC2086
    $cc $cflags -fsanitize=fuzzer $extra "$root/fuzz/$src" "${objs[@]}" $deps_libs \
        -o "$out/bin/fuzz_$h"
done

# ---- run --------------------------------------------------------------------------------------
seed() { # harness, corpus dir: copy the seeds, named by content so that equal files merge
    local h="$1" dir="$2" f
    local -a files=()
    case "$h" in
    axis | set | quantity | merge | args | writers) files=("$root/fuzz/corpus/$h"/*) ;;
    graph) files=("$root/fuzz/corpus/graph"/* "$root"/tests/configs/valid/*.json) ;;
    *) mapfile -t files < <(find "$root/data" "$root/tests/configs" -name '*.json' | sort) ;;
    esac
    # Inputs that once crashed a harness are replayed first, as seeds.
    files+=("$root/fuzz/regressions/$h"/*)
    for f in "${files[@]}"; do
        if [ -f "$f" ]; then cp "$f" "$dir/seed-$(sha1sum <"$f" | cut -c1-16)"; fi
    done
}

export PRESERVE_MODEL_DATA="$root/data"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
mkdir -p "$out/tmp" "$out/logs"
export TMPDIR="$out/tmp"
# The harnesses that read files (hf, scenario, merge) write one per execution: in memory when
# the machine has /dev/shm, a disk costs them most of their time.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
    TMPDIR="$(mktemp -d /dev/shm/pm-fuzz.XXXXXX)"
    trap 'rm -rf "$TMPDIR"' EXIT
fi

failed=0
total=0
summary="$out/summary.txt"
: >"$summary"
for h in "${harnesses[@]}"; do
    corpus="$out/corpus/$h"
    arts="$out/artifacts/$h"
    rm -rf "$corpus" "$arts"
    mkdir -p "$corpus" "$arts"
    seed "$h" "$corpus"
    nseeds=$(find "$corpus" -type f | wc -l)
    log="$out/logs/$h.log"
    start=$(date +%s)
    rc=0
    # The hf harness's dictionary adds every HuggingFace family's keys (scripts/hf-dict.py).
    dict="$root/fuzz/json.dict"
    if [ "$h" = hf ]; then
        dict="$out/hf.dict"
        cat "$root/fuzz/json.dict" >"$dict"
        python3 "$root/scripts/hf-dict.py" "$root" >>"$dict"
    fi
    "$out/bin/fuzz_$h" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
        -dict="$dict" -print_final_stats=1 -artifact_prefix="$arts/" \
        "$corpus" >"$log" 2>&1 || rc=$?
    took=$(($(date +%s) - start))
    execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log" | tail -1)
    execs="${execs:-0}"
    crashes=$(find "$arts" -type f | wc -l)
    # Coverage (edges) after the seeds and at the end, from libFuzzer's INITED and DONE lines.
    cov0=$(sed -n 's/.*INITED cov: \([0-9]*\).*/\1/p' "$log" | tail -1)
    cov1=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' "$log" | tail -1)
    total=$((total + execs))
    line=$(printf '%-12s %12s execs %6s s %10s exec/s %4s seeds  cov %5s -> %5s %2s crashes' \
        "$h" "$execs" "$took" "$((execs / (took > 0 ? took : 1)))" "$nseeds" "${cov0:-?}" \
        "${cov1:-?}" "$crashes")
    if [ "$rc" -ne 0 ] || [ "$crashes" -ne 0 ]; then
        failed=1
        line="$line  FAILED (exit $rc): $(find "$arts" -type f | head -1) (log $log)"
    fi
    echo "$line" | tee -a "$summary"
done
echo "total        $(printf '%12s' "$total") execs" | tee -a "$summary"
exit "$failed"
