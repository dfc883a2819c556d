#!/usr/bin/env bash
# Validation of the GPU presets against published measurements of real engines (issue 16):
# every row of data/validation/gpu.csv (docs/data-format.md, "Validation points") goes through
# the CLI, and the prediction is set beside the measurement.
#
#   tpot_ms, ttft_ms, e2e_s   `run --format csv`, serial mode (engines do not prefetch into L2):
#                             the scenario is the row's model, accelerator, cluster, devices,
#                             runtime, datatypes, batch B, and a sequence of I + O - 1 tokens of
#                             which I are prompt (the prefill emits the first output token, so
#                             O tokens take O - 1 decode steps). tpot_ms = serial_decode_s /
#                             (O - 1), ttft_ms = serial_prefill_s, e2e_s = serial_request_s.
#   gemm_us                   `timeline --phase prefill`: one synthetic ungated layer with
#                             hidden K and intermediate N at M prompt tokens, batch 1, 1 device;
#                             the Up MatMul is the M x N x K GEMM. Launch cost 0: the sources
#                             time the kernel alone (CUDA events, Kineto).
#   attention_us              `timeline --phase decode --context I`: the row's model at batch B;
#                             the Attention node. Launch cost 0, as above.
#   allreduce_us              `timeline --phase prefill`: a synthetic two-layer model of hidden
#                             size K (gemm_k) at I prompt tokens on the row's devices, cluster and
#                             runtime; the first AllReduce node, whose message is I x K elements of
#                             the activation type (the runtime's start-up included, as in an
#                             engine's step).
#
# Rows marked `moe` in the status column are MoE models: they run like the others (status
# `ok-moe` in the output) and stay out of the platforms' calibration, which fits dense rows
# only (scripts/calibrate-gpu.sh's MoE stage fits vLLM's expert kernel over them). The held-out
# rows, data/validation/gpu-holdout.csv, which no calibration reads, run with
# VALIDATION_CSV=data/validation/gpu-holdout.csv. A row
# the CLI refuses is recorded as `refused` with the message, and a request whose batch's weights
# and KV cache (the model's own footprint, at the last context) exceed the HBM as `exceeds-hbm`
# with its prediction: the engine then preempts, swaps or fails, which a static batch does not
# model. A dense model's decode measured faster than reading its weights once per step at the
# accelerator's nominal HBM bandwidth is `below-bound`: not the stated setup (fewer tokens
# generated than stated, or other weights). The summary counts only the other rows (and how many
# of each kind there were).
#
# Writes OUTDIR/validate-gpu.csv (one line per row: predicted, measured, signed relative error
# predicted / measured - 1, and both in seconds for the figure), OUTDIR/validate-gpu-summary.txt
# (`key value` lines: points, median_abs_error, p90_abs_error and median_error (the signed
# median: below 0, the model is fast) overall, per metric and per GPU; refused, exceeds_hbm,
# below_bound; then a breakdown, issue 47: the same three statistics and the points per phase
# (phase.prefill for ttft_ms, phase.decode for tpot_ms, phase.request for e2e_s, phase.kernel for
# the kernel rows), per class (class.dense, class.moe: status moe), per engine (engine.RUNTIME,
# the row's runtime preset; engine.kernel for the kernel rows) and per class and phase
# (class.moe.phase.prefill ...)) and OUTDIR/validate-gpu.png (plots/validate-gpu.gp: log-log, the +-25 % band).
# Percentiles are nearest-rank: the p-th of n sorted values is the ceil(p n)-th.
# Usage: scripts/validate-gpu.sh [OUTDIR]   (the tool is $PM, default build/src/cli/preserve-model;
#   VALIDATION_CSV=FILE validates another file of the same format, e.g. a subset; VALIDATE_SET="K=V
#   ..." adds --set K=V to every row, e.g. a calibration candidate; PM_NO_RUNTIME=1 runs the rows
#   without their runtimes, to measure what the runtime component is worth)
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
pm_setup "${1:-}"
data=${VALIDATION_CSV:-$root/data/validation/gpu.csv}
csv=$out/validate-gpu.csv
summary=$out/validate-gpu-summary.txt

# predict ROW-FIELDS...: prints the predicted value in the metric's unit, or fails with the CLI's
# message on stderr.
predict() {
    local model=$1 acc=$2 cluster=$3 dev=$4 runtime=$5 wd=$6 ad=$7 kd=$8 b=$9 i=${10} o=${11}
    local gm=${12} gn=${13} gk=${14} metric=${15} distinct=${16}
    local -a dt=(--set workload.weight_dtype="$wd" --set workload.act_dtype="$ad"
                 --set workload.kv_dtype="$kd")
    # fp8 and int8 engines reduce their partial sums in 16 bits.
    case "$ad" in fp8 | int8) dt+=(--set workload.allreduce_dtype=fp16) ;; esac
    # VALIDATE_SET: more overrides for every row (scripts/calibrate-gpu.sh's candidates).
    local kv
    for kv in ${VALIDATE_SET:-}; do dt+=(--set "$kv"); done
    local -a rt=()
    [ "${PM_NO_RUNTIME:-0}" = 0 ] && [ "$runtime" != kernel ] && rt=(--set runtime="$runtime")
    # A benchmark that copies one prompt over the batch (distinct_sequences 1): its MoE steps
    # route every copy alike.
    [ -n "$distinct" ] && rt+=(--set workload.distinct_sequences="$distinct")
    case "$metric" in
    gemm_us)
        "$pm" timeline --config llama8b --accelerator "$acc" --devices 1 --batch 1 \
            --seq $((gm + 2)) --phase prefill --context "$gm" --mode serial \
            --set model.num_hidden_layers=2 --set model.hidden_size="$gk" \
            --set model.num_attention_heads=$((gk / 128)) \
            --set model.num_key_value_heads=$((gk / 128)) --set model.head_dim=128 \
            --set model.intermediate_size="$gn" --set model.mlp_gated=false \
            --set accelerator.kernel_launch_us=0 "${dt[@]}" |
            csv_awk '$3 ~ /\.Up$/ { printf "%.6g\n", v("end_us") - v("start_us") }'
        ;;
    attention_us)
        "$pm" timeline --config llama8b --model "$model" --accelerator "$acc" \
            --set cluster="$cluster" --devices "$dev" --batch "$b" --seq $((i + 2)) \
            --phase decode --context "$i" --mode serial --set accelerator.kernel_launch_us=0 \
            "${dt[@]}" |
            csv_awk '$3 ~ /\.Attention$/ { printf "%.6g\n", v("end_us") - v("start_us") }'
        ;;
    allreduce_us)
        "$pm" timeline --config llama8b --accelerator "$acc" --set cluster="$cluster" \
            --devices "$dev" --batch 1 --seq $((i + 2)) --phase prefill --context "$i" \
            --mode serial --set model.num_hidden_layers=2 --set model.hidden_size="$gk" \
            --set model.num_attention_heads=$((gk / 128)) \
            --set model.num_key_value_heads=$((gk / 128)) --set model.head_dim=128 \
            --set model.intermediate_size=$((4 * gk)) --set workload.allreduce_dtype="$ad" \
            "${rt[@]}" "${dt[@]}" |
            csv_awk 'v("kind") == "AllReduce" && !done { printf "%.6g\n", v("end_us") - v("start_us"); done = 1 }'
        ;;
    tpot_ms | ttft_ms | e2e_s)
        local seq=$((i + o - 1)) steps=$((o - 1))
        [ "$steps" -lt 1 ] && seq=$((i + 1)) steps=1
        "$pm" --config llama8b --model "$model" --accelerator "$acc" --set cluster="$cluster" \
            --devices "$dev" --batch "$b" --seq "$seq" \
            --set workload.prefill_frac="$(awk -v i="$i" -v s="$seq" 'BEGIN { printf "%.15g", i / s }')" \
            "${rt[@]}" "${dt[@]}" --format csv |
            csv_awk -v metric="$metric" -v steps="$steps" '{
                if (metric == "tpot_ms") p = v("serial_decode_s") / steps * 1e3
                else if (metric == "ttft_ms") p = v("serial_prefill_s") * 1e3
                else p = v("serial_request_s")
                # The fewest bytes a decode step of a dense model reads: its weights, once.
                printf "%.6g %s %.6g\n", p, v("fits_hbm") == 0 ? "exceeds-hbm" : "fits",
                    v("weight_bytes_per_device") }'
        ;;
    *)
        echo "unknown metric $metric" >&2
        return 1
        ;;
    esac
}

# below_bound ACC METRIC MEASURED O WEIGHT_BYTES: true when a dense model's measured decode
# (tpot_ms: one step; e2e_s: O - 1 steps) is shorter than reading its weights once per step at
# the accelerator's nominal HBM bandwidth, the least any engine can do.
declare -A hbm_peak=()
below_bound() {
    local acc=$1 metric=$2 measured=$3 o=$4 wbytes=$5
    if [ -z "${hbm_peak[$acc]+x}" ]; then
        hbm_peak[$acc]=$("$pm" resolve --config llama8b --accelerator "$acc" 2>/dev/null |
            awk -F, '$1 ~ /^\$\.accelerator\.hbm_bandwidth_/ { print $2; exit }')
    fi
    awk -v m="$metric" -v x="$measured" -v o="$o" -v w="$wbytes" -v bw="${hbm_peak[$acc]}" 'BEGIN {
        if (!(bw > 0)) exit 1
        steps = m == "tpot_ms" ? 1 : o - 1
        t = m == "tpot_ms" ? x * 1e-3 : x
        exit !(t < steps * w / bw)
    }'
}

echo "# preserve-model GPU validation: $("$pm" --version 2>/dev/null || echo "$pm"), rows of $data" >"$csv"
echo "section,model,accelerator,devices,engine,runtime,metric,measured,predicted,error,measured_s,predicted_s,status,note" >>"$csv"
n=0
while IFS=, read -r section model acc cluster dev _par engine runtime wd ad kd b i o gm gn gk metric measured status _src distinct; do
    [ "$section" = section ] && continue
    n=$((n + 1))
    errf=$(mktemp)
    if pred=$(predict "$model" "$acc" "$cluster" "$dev" "$runtime" "$wd" "$ad" "$kd" "$b" "$i" "$o" \
        "$gm" "$gn" "$gk" "$metric" "$distinct" 2>"$errf") && [ -n "$pred" ]; then
        st=$status
        [ "$st" = moe ] && st=ok-moe
        note=""
        read -r pred fit wbytes <<<"$pred"
        if [ "$fit" = exceeds-hbm ]; then
            st=exceeds-hbm
            note="the batch's weights and KV cache exceed the HBM: the engine preempts or swaps"
        elif [ -n "$wbytes" ] && [ "$status" = ok ] && [ "$metric" != ttft_ms ] &&
            below_bound "$acc" "$metric" "$measured" "$o" "$wbytes"; then
            st=below-bound
            note="faster than reading the weights once per decode step at the HBM's peak: not the stated setup"
        fi
    else
        pred="" st=refused
        note=$(head -n 1 "$errf" | tr ',"' ';'"'"'')
    fi
    rm -f "$errf"
    awk -v s="$section" -v mo="$model" -v a="$acc" -v d="$dev" -v e="$engine" -v r="$runtime" \
        -v m="$metric" -v x="$measured" -v p="$pred" -v st="$st" -v note="$note" 'BEGIN {
        u = m ~ /_ms$/ ? 1e-3 : m ~ /_us$/ ? 1e-6 : 1
        if (p == "") printf "%s,%s,%s,%s,%s,%s,%s,%s,,,%.6g,,%s,\"%s\"\n", s, mo, a, d, e, r, m, x, x * u, st, note
        else printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%.4f,%.6g,%.6g,%s,%s\n", s, mo, a, d, e, r, m, x, p, p / x - 1, x * u, p * u, st, note == "" ? "" : "\"" note "\""
    }' >>"$csv"
done <"$data"

# The summary: nearest-rank percentiles of |error| over the rows that ran (status ok or ok-moe).
csv_awk '
function sort(a, c,   i, j, t) {
    for (i = 2; i <= c; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
}
function rank(c, p) { return int(c * p + 0.999999) < 1 ? 1 : int(c * p + 0.999999) }
# One group: its signed errors in list; a holds their magnitudes, b the errors themselves.
function stats(key, list,   a, b, c, i) {
    c = split(list, b, " ")
    for (i = 1; i <= c; i++) a[i] = b[i] < 0 ? -b[i] : b[i]
    sort(a, c)
    sort(b, c)
    printf "%spoints %d\n", key, c
    if (c == 0) { # no row to rank: no number, rather than a 0 that reads as a perfect fit
        printf "%smedian_abs_error n/a\n%sp90_abs_error n/a\n%smedian_error n/a\n", key, key, key
        return
    }
    printf "%smedian_abs_error %.4f\n", key, a[rank(c, 0.5)]
    printf "%sp90_abs_error %.4f\n", key, a[rank(c, 0.9)]
    printf "%smedian_error %.4f\n", key, b[rank(c, 0.5)]
}
{
    if (v("status") == "refused") { refused++; next }
    if (v("status") == "exceeds-hbm") { exceeds++; next }
    if (v("status") == "below-bound") { below++; next }
    e = v("error")
    all = all " " e
    bym[v("metric")] = bym[v("metric")] " " e
    byg[v("accelerator")] = byg[v("accelerator")] " " e
    # The breakdown (issue 47): the phase a metric times (a prefill, a decode step, a whole
    # request, or a kernel alone), the engine (the runtime preset of the row), dense or MoE, and MoE
    # or dense by phase.
    m = v("metric")
    ph = m == "ttft_ms" ? "prefill" : m == "tpot_ms" ? "decode" : m == "e2e_s" ? "request" : "kernel"
    cl = v("status") == "ok-moe" ? "moe" : "dense"
    byp[ph] = byp[ph] " " e
    byc[cl] = byc[cl] " " e
    bye[v("runtime")] = bye[v("runtime")] " " e
    bycp[cl ".phase." ph] = bycp[cl ".phase." ph] " " e
    if (e <= 0.25 && e >= -0.25) inside++
}
END {
    stats("", all)
    n_all = split(all, _x, " ")
    if (n_all > 0) printf "within_25pct_frac %.4f\n", inside / n_all
    else print "within_25pct_frac n/a"
    printf "refused %d\n", refused + 0
    printf "exceeds_hbm %d\n", exceeds + 0
    printf "below_bound %d\n", below + 0
    for (k in bym) stats("metric." k ".", bym[k])
    for (k in byg) stats("gpu." k ".", byg[k])
    for (k in byp) stats("phase." k ".", byp[k])
    for (k in byc) stats("class." k ".", byc[k])
    for (k in bye) stats("engine." k ".", bye[k])
    for (k in bycp) stats("class." k ".", bycp[k])
}' "$csv" >"$summary.tmp"
# The overall lines first (in the order above), then per metric and per GPU in name order.
{ awk '$1 !~ /\./' "$summary.tmp"; awk '$1 ~ /^metric\./' "$summary.tmp" | sort -s -k1,1
  awk '$1 ~ /^gpu\./' "$summary.tmp" | sort -s -k1,1
  # Then the breakdown (issue 47): by phase, dense or MoE, engine, and dense or MoE by phase.
  awk '$1 ~ /^phase\./' "$summary.tmp" | sort -s -k1,1
  awk '$1 ~ /^class\.[a-z]+\.[a-z_0-9]+$/' "$summary.tmp" | sort -s -k1,1
  awk '$1 ~ /^engine\./' "$summary.tmp" | sort -s -k1,1
  awk '$1 ~ /^class\.[a-z]+\.phase\./' "$summary.tmp" | sort -s -k1,1; } >"$summary"
rm -f "$summary.tmp"
gp validate-gpu.gp "$out/validate-gpu.png" 900,800 data="$csv" \
    rows="${data#"$root"/}"
echo "$n rows; $csv, $summary, $out/validate-gpu.png"
cat "$summary"
