#!/usr/bin/env bash
# The GPU validation points (data/validation/gpu.csv, the held-out gpu-holdout.csv, the
# Splitwise grid splitwise-grid.csv, the vidur GEMM grid vidur-gemm.csv and the vidur allreduce
# grid vidur-allreduce.csv, issue 16; the MoE engine rows gpu-moe-holdout.csv, issue 47): every row has the documented columns with valid values (docs/data-format.md, "Validation
# points"), and names an accelerator, a cluster, a runtime and (but for the GEMM rows, whose
# shape is in the row) a model that the tool loads: the scenario of each row resolves. Rows marked `moe` must name a model that either
# loads or is refused by the tool because MoE is not modelled or not bundled yet, never a malformed
# row. Also checks that the checker fails: a row with a bad accelerator and a row with a bad
# metric are reported.
# Usage: test_validation.sh PATH/TO/preserve-model SOURCE_ROOT
set -u
pm="$1"
root="$2"
export PRESERVE_MODEL_DATA="$root/data"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
header="section,model,accelerator,cluster,devices,parallel,engine,runtime,weight_dtype,act_dtype,kv_dtype,batch,input_tokens,output_tokens,gemm_m,gemm_n,gemm_k,metric,measured,status,source,distinct_sequences"

# check FILE: prints one line per bad row, returns the number of bad rows (capped at 255). The
# fields are checked in one awk pass; each distinct scenario (model, accelerator, cluster,
# devices, runtime, datatypes) is resolved once, for all the rows that share it.
# The metrics a row may name (docs/data-format.md, `metric`).
metrics="tpot_ms ttft_ms e2e_s gemm_us attention_us allreduce_us"
check() {
    local file=$1 bad=0
    if [ "$(head -n 1 "$file")" != "$header" ]; then
        echo "$file:1: the header is not the documented one"
        return 1
    fi
    # Per row: "LINE<TAB>bad<TAB>WHY", or "LINE<TAB>ok<TAB>model,acc,cluster,dev,runtime,wd,ad,kd".
    local checked
    checked=$(awk -F, -v metric_re="^(${metrics// /|})$" 'NR > 1 {
        why = ""
        int_re = "^[1-9][0-9]*$"
        if (NF != 22) why = "expected 22 fields, got " NF
        else if ($1 !~ /^[1-9][0-9]?\.[0-9]+$/) why = "section: expected S.N, got " $1
        else if ($5 !~ int_re) why = "devices: expected an integer >= 1"
        else if ($12 !~ int_re) why = "batch: expected an integer >= 1"
        else if ($13 !~ /^[0-9]+$/ || $14 !~ /^[0-9]+$/) why = "input_tokens/output_tokens: expected integers"
        else if ($9 !~ /^(int8|fp8|bf16|fp16|fp32)$/) why = "datatype: got " $9
        else if ($10 !~ /^(int8|fp8|bf16|fp16|fp32)$/) why = "datatype: got " $10
        else if ($11 !~ /^(int8|fp8|bf16|fp16|fp32)$/) why = "datatype: got " $11
        else if ($18 !~ metric_re) why = "metric: unknown " $18
        else if ($19 !~ /^[0-9]+(\.[0-9]+)?$/ || !($19 > 0)) why = "measured: expected a positive number"
        else if ($20 !~ /^(ok|moe)$/) why = "status: expected ok or moe, got " $20
        else if (length($21) < 20) why = "source: too short"
        else if ($22 != "" && ($22 !~ int_re || $22 > $12)) why = "distinct_sequences: expected empty or an integer in [1, batch]"
        else if ($22 != "" && $8 == "kernel") why = "distinct_sequences: not for kernel rows"
        else if ($18 == "gemm_us") {
            if ($15 !~ int_re || $16 !~ int_re || $17 !~ int_re || $17 % 128 != 0) why = "gemm_m/n/k: expected integers, k a multiple of 128"
            else if ($2 != "-" || $8 != "kernel") why = "a GEMM row has model - and runtime kernel"
        } else if ($18 == "allreduce_us") {
            if ($15 != "" || $16 != "" || $17 !~ int_re || $17 % 128 != 0) why = "gemm_k: an allreduce row gives its hidden size there (a multiple of 128), gemm_m/n empty"
            else if ($2 != "-" || $8 == "kernel") why = "an allreduce row has model - and a runtime (its collective library)"
            else if ($13 < 1) why = "input_tokens: expected >= 1"
        } else {
            if ($15 != "" || $16 != "" || $17 != "") why = "gemm_m/n/k: only for gemm_us"
            else if ($13 < 1) why = "input_tokens: expected >= 1"
            else if ($18 != "attention_us" && $14 < 1) why = "output_tokens: expected >= 1"
            else if (($18 == "attention_us") != ($8 == "kernel")) why = "runtime kernel is for kernel rows only"
        }
        if (why != "") print NR "\tbad\t" why
        else print NR "\tok\t" $2 "," $3 "," $4 "," $5 "," $8 "," $9 "," $10 "," $11
    }' "$file")
    local -A verdict=()
    local line state what
    while IFS=$'\t' read -r line state what; do
        if [ "$state" = ok ]; then
            if [ -z "${verdict[$what]+x}" ]; then
                local model acc cluster dev runtime wd ad kd msg
                IFS=, read -r model acc cluster dev runtime wd ad kd <<<"$what"
                local -a cmd=("$pm" resolve --config llama8b --accelerator "$acc" --set cluster="$cluster"
                              --devices "$dev" --set workload.weight_dtype="$wd"
                              --set workload.act_dtype="$ad" --set workload.kv_dtype="$kd")
                [ "$model" != - ] && cmd+=(--model "$model")
                [ "$runtime" != kernel ] && cmd+=(--set runtime="$runtime")
                # Every row, MoE included, names a bundled model now (Mixtral-8x22B and DBRX too).
                if msg=$("${cmd[@]}" 2>&1 >/dev/null); then
                    verdict[$what]=""
                else
                    verdict[$what]="does not resolve: $(echo "$msg" | head -n 1)"
                fi
            fi
            what=${verdict[$what]}
        fi
        if [ -n "$what" ]; then
            echo "$file:$line: $what"
            bad=$((bad + 1))
        fi
    done <<<"$checked"
    [ "$bad" -gt 255 ] && bad=255
    return "$bad"
}

fail=0
csv="$root/data/validation/gpu.csv"
rows=$(($(wc -l <"$csv") - 1))
if ! check "$csv"; then
    echo "FAIL: $csv has bad rows"
    fail=1
fi
# The held-out rows (section 9: measurements outside the reference, read by no calibration).
holdout="$root/data/validation/gpu-holdout.csv"
if ! check "$holdout"; then
    echo "FAIL: $holdout has bad rows"
    fail=1
fi
if awk -F, 'NR > 1 && $1 !~ /^9\./ { exit 1 }' "$holdout" && ! grep -q '^9\.' "$csv"; then :; else
    echo "FAIL: the held-out rows are section 9 and only there"
    fail=1
fi
# The Splitwise grid (section 8: every configuration of that source's file, to show how its
# misses depend on the tokens per pass and the tensor-parallel degree; read by no calibration).
grid="$root/data/validation/splitwise-grid.csv"
if ! check "$grid"; then
    echo "FAIL: $grid has bad rows"
    fail=1
fi
if awk -F, 'NR > 1 && $1 !~ /^8\./ { exit 1 }' "$grid" && ! grep -q '^8\.' "$csv" "$holdout"; then :; else
    echo "FAIL: the Splitwise grid's rows are section 8 and only there"
    fail=1
fi
# The vidur GEMM grid (section 7: the held-out GEMM shapes of vidur's profiling tables,
# scripts/vidur-gemm-rows.py; read by no calibration), none of them a shape gpu.csv holds.
gemms="$root/data/validation/vidur-gemm.csv"
if ! check "$gemms"; then
    echo "FAIL: $gemms has bad rows"
    fail=1
fi
if awk -F, 'NR > 1 && ($1 !~ /^7\./ || $18 != "gemm_us") { exit 1 }' "$gemms" &&
    ! grep -q '^7\.' "$csv" "$holdout" "$grid"; then :; else
    echo "FAIL: the vidur GEMM rows are section 7, GEMMs, and only there"
    fail=1
fi
if [ -n "$(awk -F, 'FNR > 1 && $18 == "gemm_us" { k = $3 "," $15 "," $16 "," $17
        if (FILENAME ~ /vidur/ && (k in seen)) print k; else seen[k] = 1 }' "$csv" "$gemms")" ]; then
    echo "FAIL: a vidur GEMM row repeats a shape of $csv: it is not held out"
    fail=1
fi
# The vidur allreduce grid (section 10: the held-out allreduce times of vidur's network profiling
# tables, scripts/vidur-allreduce-rows.py; read by no calibration), allreduces only.
ars="$root/data/validation/vidur-allreduce.csv"
if ! check "$ars"; then
    echo "FAIL: $ars has bad rows"
    fail=1
fi
if awk -F, 'NR > 1 && ($1 !~ /^10\./ || $18 != "allreduce_us") { exit 1 }' "$ars" &&
    ! grep -q '^10\.' "$csv" "$holdout" "$grid" "$gemms"; then :; else
    echo "FAIL: the vidur allreduce rows are section 10, allreduces, and only there"
    fail=1
fi
# The held-out MoE rows of production engines (section 11, issue 47: vLLM's fused-MoE kernel with
# tuned and default configs, H100, H200, A100; read by no calibration), MoE rows only.
moes="$root/data/validation/gpu-moe-holdout.csv"
if ! check "$moes"; then
    echo "FAIL: $moes has bad rows"
    fail=1
fi
if awk -F, 'NR > 1 && ($1 !~ /^11\./ || $20 != "moe") { exit 1 }' "$moes" &&
    ! grep -q '^11\.' "$csv" "$holdout" "$grid" "$gemms" "$ars"; then :; else
    echo "FAIL: the held-out MoE engine rows are section 11, MoE, and only there"
    fail=1
fi
# The fused-MoE kernel benchmarks (issue 47 item 1; data/kernels/fused-moe.csv, read by
# scripts/moe-kernel-curve.py only): the documented header, a known config, a whole token
# count, a positive time and a source without commas on every row (a row of another shape fails here).
kernels="$root/data/kernels/fused-moe.csv"
if [ "$(head -1 "$kernels")" != "kernel,config,accelerator,model,tensor_parallel,dtype,tokens,kernel_us,source" ] ||
    ! awk -F, 'NR > 1 && !(NF == 9 && $2 ~ /^(tuned|default|unstated)$/ && $7 ~ /^[1-9][0-9]*$/ &&
        $8 + 0 > 0 && $9 != "") { bad = 1 } END { exit bad || NR < 2 }' "$kernels"; then
    echo "FAIL: $kernels has a bad header or row"
    fail=1
fi
# The two diagnostics of issue 47 on one row each. moe-kernel-curve.py: 16 tokens of Mixtral
# (top-2 of 8 experts) are 16 x 2 / 8 = 4 tokens per expert, and its last column is the
# modelled time over the measured 471.49 us. ttft-breakdown.py: the four shares sum to 1 and
# the GEMM factor is 1 + (measured - modelled) / (GEMM share x modelled).
kt=$(mktemp -d)
head -1 "$kernels" > "$kt/k.csv"
grep -m1 ',tuned,h100-sxm,mixtral-8x7b,2,bf16,16,' "$kernels" >> "$kt/k.csv"
if ! python3 "$root/scripts/moe-kernel-curve.py" "$kt/k.csv" "$pm" > "$kt/k.out" ||
    ! awk -F, 'NR == 2 { ok = $5 == 16 && $6 == "4.00" && $7 == "471.5" &&
        ($9 - $8 / 471.49) ^ 2 < 1e-5 } END { exit !ok }' "$kt/k.out"; then
    echo "FAIL: scripts/moe-kernel-curve.py on PR #24700's 16-token row:"; cat "$kt/k.out"
    fail=1
fi
head -1 "$csv" > "$kt/t.csv"
grep -m1 '^2\.8,' "$csv" >> "$kt/t.csv"
if ! python3 "$root/scripts/ttft-breakdown.py" "$kt/t.csv" "$pm" > "$kt/t.out" ||
    ! awk -F, 'NR == 2 { s = $10 + $11 + $12 + $13; f = 1 + ($7 - $8) / ($10 * $8);
        ok = $1 == "2.8" && $7 == "844.9" && (s - 1) ^ 2 < 1e-3 && (f - $14) ^ 2 < 0.01 }
        END { exit !ok }' "$kt/t.out"; then
    echo "FAIL: scripts/ttft-breakdown.py on row 2.8:"; cat "$kt/t.out"
    fail=1
fi
rm -rf "$kt"
# Every metric a row may name is drawn by the figure (a metric without its series would be
# counted in the summary and silently missing from the plot).
for m in $metrics; do
    if ! grep -q "sel(\"$m\")" "$root/plots/validate-gpu.gp"; then
        echo "FAIL: plots/validate-gpu.gp draws no $m series"
        fail=1
    fi
done
if [ "$rows" -lt 80 ]; then
    echo "FAIL: $csv has $rows rows, the issue asks for at least 80"
    fail=1
fi
# The checker must be able to fail: a wrong accelerator, a wrong metric.
{ head -n 2 "$csv"; } >"$tmp/ok.csv"
sed '2s/,a100-sxm-80gb,/,a100-sxm-81gb,/' "$tmp/ok.csv" >"$tmp/acc.csv"
sed '2s/,tpot_ms,/,tpot_s,/' "$tmp/ok.csv" >"$tmp/metric.csv"
for bad in acc metric; do
    if check "$tmp/$bad.csv" >/dev/null; then
        echo "FAIL: the checker accepts a row with a bad $bad"
        fail=1
    fi
done
if ! check "$tmp/ok.csv" >/dev/null; then
    echo "FAIL: the checker rejects the first row alone"
    fail=1
fi
# The script on three rows (a GEMM, a decode step, a request): one output line each, the error
# is predicted / measured - 1, and the summary counts and ranks them (nearest rank: the median
# of 3 is the 2nd smallest |error|, the 90th percentile the 3rd; the signed median the 2nd
# smallest signed error).
if command -v gnuplot >/dev/null; then
    { head -n 1 "$csv"; grep -m 1 ',gemm_us,' "$csv"; grep -m 1 ',tpot_ms,' "$csv"
      grep -m 1 ',e2e_s,.*,ok,' "$csv"; } >"$tmp/three.csv"
    if ! PM="$pm" VALIDATION_CSV="$tmp/three.csv" "$root/scripts/validate-gpu.sh" "$tmp/out" \
        >"$tmp/script.log" 2>&1; then
        echo "FAIL: scripts/validate-gpu.sh on three rows:"; tail -5 "$tmp/script.log"; fail=1
    elif ! awk -F, '
        function isort(x, c,   i, j, t) {
            for (i = 2; i <= c; i++) { t = x[i]; for (j = i - 1; j >= 1 && x[j] > t; j--) x[j + 1] = x[j]; x[j + 1] = t }
        }
        FNR == 1 && FILENAME ~ /csv$/ { next }
        FILENAME ~ /csv$/ && $1 != "section" {
            n++; e = $9 / $8 - 1; if (e - $10 > 1e-4 || $10 - e > 1e-4) bad = 1
            a[n] = e < 0 ? -e : e; b[n] = e }
        FILENAME ~ /txt$/ { split($0, kv, " "); s[kv[1]] = kv[2] }
        END {
            isort(a, n)
            isort(b, n)
            if (n != 3 || bad || s["points"] != 3) exit 1
            if (s["median_error"] - b[2] > 1e-4 || b[2] - s["median_error"] > 1e-4) exit 1
            if (s["median_abs_error"] - a[2] > 1e-4 || a[2] - s["median_abs_error"] > 1e-4) exit 1
            if (s["p90_abs_error"] - a[3] > 1e-4 || a[3] - s["p90_abs_error"] > 1e-4) exit 1
            if (s["metric.gemm_us.points"] != 1 || s["refused"] != 0) exit 1
            # The breakdown (issue 47): one row per phase, all three dense, the class of all
            # three ranked as the whole, no MoE group.
            if (s["phase.kernel.points"] != 1 || s["phase.decode.points"] != 1) exit 1
            if (s["phase.request.points"] != 1 || s["class.dense.points"] != 3) exit 1
            if (("class.moe.points" in s) || ("phase.prefill.points" in s)) exit 1
            if (s["class.dense.median_error"] != s["median_error"]) exit 1
            if (s["class.dense.phase.decode.median_error"] != s["phase.decode.median_error"]) exit 1
        }' "$tmp/out/validate-gpu.csv" "$tmp/out/validate-gpu-summary.txt"; then
        echo "FAIL: scripts/validate-gpu.sh: its CSV or summary do not add up:"
        cat "$tmp/out/validate-gpu.csv" "$tmp/out/validate-gpu-summary.txt"; fail=1
    elif [ ! -s "$tmp/out/validate-gpu.png" ]; then
        echo "FAIL: scripts/validate-gpu.sh drew no figure"; fail=1
    fi
    # An allreduce row (section 10), by hand: 64 MiB (32,768 tokens x 1,024 x 2 B) over 8 A100s
    # under vllm-2023 (NCCL's ring, 10 us start-up), nvlink3-nvswitch (300 GB/s x 0.772, 2 us a
    # step): 2 x 7 x 2 us + 2 x 7 / 8 x 67,108,864 B / (300e9 x 0.772 B/s) + 10 us
    # = 28 + 507.08 + 10 = 545.08 us.
    { head -n 1 "$ars"; awk -F, '$3 == "a100-sxm-80gb" && $5 == 8 && $13 == 32768' "$ars"; } >"$tmp/ar.csv"
    if ! PM="$pm" VALIDATION_CSV="$tmp/ar.csv" "$root/scripts/validate-gpu.sh" "$tmp/out-ar" \
        >"$tmp/script-ar.log" 2>&1; then
        echo "FAIL: scripts/validate-gpu.sh on an allreduce row:"; tail -5 "$tmp/script-ar.log"; fail=1
    elif ! awk -F, '$7 == "allreduce_us" { n++; p = $9 } END {
            want = 28 + 14 / 8 * 67108864 / (300e9 * 0.772) * 1e6 + 10
            exit !(n == 1 && p / want - 1 < 1e-5 && want / p - 1 < 1e-5) }' "$tmp/out-ar/validate-gpu.csv"; then
        echo "FAIL: the 64 MiB allreduce on 8 A100s is not 545.08 us by hand:"
        cat "$tmp/out-ar/validate-gpu.csv"; fail=1
    # It is faster than measured (675 us): the summary's signed median is its error, below 0.
    elif ! awk -F, 'FILENAME ~ /csv$/ && $7 == "allreduce_us" { e = $9 / $8 - 1 }
            FILENAME ~ /txt$/ { split($0, kv, " "); s[kv[1]] = kv[2] }
            END { exit !(e < 0 && s["median_error"] - e < 1e-4 && e - s["median_error"] < 1e-4 &&
                         s["median_abs_error"] + e < 1e-4) }' \
            "$tmp/out-ar/validate-gpu.csv" "$tmp/out-ar/validate-gpu-summary.txt"; then
        echo "FAIL: the summary's median_error is not the allreduce row's signed error:"
        cat "$tmp/out-ar/validate-gpu-summary.txt"; fail=1
    fi
    # A request faster than reading the weights once per step at the HBM's peak (Llama-3-8B,
    # 15 GB over 1023 steps on an H100 take at least 1023 x 16.06e9 / 3.35e12 = 4.9 s: 1 s is
    # below), and one whose KV cache cannot fit (batch 4096 x 2047 positions x 128 KiB = 1 TiB)
    # are set apart from the statistics, each with its status.
    row=$(grep -m 1 '^3\.2,' "$csv")
    { head -n 1 "$csv"; sed 's/,e2e_s,[0-9.]*,/,e2e_s,1.0,/' <<<"$row"
      sed 's/,1,1024,1024,/,4096,1024,1024,/' <<<"$row"; } >"$tmp/bounds.csv"
    if ! PM="$pm" VALIDATION_CSV="$tmp/bounds.csv" "$root/scripts/validate-gpu.sh" "$tmp/out2" \
        >"$tmp/script2.log" 2>&1; then
        echo "FAIL: scripts/validate-gpu.sh on the bound rows:"; tail -5 "$tmp/script2.log"; fail=1
    elif ! grep -q ',below-bound,' "$tmp/out2/validate-gpu.csv" ||
        ! grep -q ',exceeds-hbm,' "$tmp/out2/validate-gpu.csv" ||
        ! grep -qx 'below_bound 1' "$tmp/out2/validate-gpu-summary.txt" ||
        ! grep -qx 'exceeds_hbm 1' "$tmp/out2/validate-gpu-summary.txt" ||
        ! grep -qx 'median_abs_error n/a' "$tmp/out2/validate-gpu-summary.txt"; then
        echo "FAIL: scripts/validate-gpu.sh does not set apart a row below the bound and one beyond the HBM:"
        cat "$tmp/out2/validate-gpu.csv" "$tmp/out2/validate-gpu-summary.txt"; fail=1
    fi
fi
# scripts/calibrate-gpu.sh's attention stage: the least-squares line t = t0 + x / e, with x a
# row's KV read time at the peak bandwidth. First x by hand for one row: Llama-2-70B at TP2 holds
# 4 of its 8 KV heads per A100, so batch 1 x 2048 positions read 2048 x 2 (K, V) x 4 x 128 x 2 B
# = 4,194,304 B of KV, and the query and output, 2 x 32 heads x 128 x 2 B = 16,384 B: 4,210,688
# B / 2.039 TB/s = 2.0651 us (the stage's run with t0 = 0 and e = 1 gives the same within 0.5 %).
# Then the A100's eight rows with their measured times replaced by a line chosen here, 12 us +
# x / 0.6: the stage must give back 12.0 us and 0.600, every row within 1e-4; and on the shipped
# rows it must give the values the A100 presets ship.
if command -v gnuplot >/dev/null; then
    att=$tmp/att.csv
    { head -n 1 "$csv"; awk -F, '$3 == "a100-sxm-80gb" && $18 == "attention_us"' "$csv"; } >"$att"
    if ! PM="$pm" VALIDATION_CSV="$att" \
        VALIDATE_SET="accelerator.attention_latency_us=0 accelerator.attention_hbm_efficiency_frac=1" \
        "$root/scripts/validate-gpu.sh" "$tmp/att-x" >"$tmp/att.log" 2>&1; then
        echo "FAIL: scripts/validate-gpu.sh on the attention rows:"; tail -5 "$tmp/att.log"; fail=1
    else
        x65=$(awk -F, '$1 == "6.5" { print $9 }' "$tmp/att-x/validate-gpu.csv")
        if ! awk -v x="$x65" 'BEGIN { h = 4210688 / 2.039e12 * 1e6; exit !(x / h - 1 < 0.005 && h / x - 1 < 0.005) }'; then
            echo "FAIL: the attention row 6.5 reads $x65 us of KV at the peak, not 2.0651 by hand"; fail=1
        fi
        # The synthetic rows: measured = 12 + x / 0.6.
        awk -F, -v OFS=, 'NR == FNR { if ($1 ~ /^6\./) x[$1] = $9; next }
            FNR == 1 { print; next } { $19 = sprintf("%.9g", 12 + x[$1] / 0.6); print }' \
            "$tmp/att-x/validate-gpu.csv" "$att" >"$tmp/att-line.csv"
        for f in att-line att; do
            PM="$pm" CALIBRATION_CSV="$tmp/$f.csv" "$root/scripts/calibrate-gpu.sh" "$tmp/cal-$f" a100 \
                "" 0 "" "" "" "" >"$tmp/cal-$f.log" 2>&1 || { echo "FAIL: calibrate-gpu.sh on $f.csv"; tail -5 "$tmp/cal-$f.log"; fail=1; }
        done
        # The A100 80 GB preset's value of KEY (the "value" line after the key's).
        shipped() { awk -v k="\"$1\"" 'index($0, k) { getline; sub(/.*: /, ""); sub(/,.*/, ""); print; exit }' \
            "$root/data/accelerators/a100-sxm-80gb.json"; }
        want_t0=$(shipped attention_latency_us)
        want_e=$(shipped attention_hbm_efficiency_frac)
        if ! grep -qx 'a100.attention_latency_us 12.0' "$tmp/cal-att-line/calibrate-gpu-summary.txt" ||
            ! grep -qx 'a100.attention_hbm_efficiency_frac 0.600' "$tmp/cal-att-line/calibrate-gpu-summary.txt" ||
            ! grep -qx 'a100.attention_points 8' "$tmp/cal-att-line/calibrate-gpu-summary.txt" ||
            ! grep -qx 'a100.attention_max_abs_error 0.0000' "$tmp/cal-att-line/calibrate-gpu-summary.txt"; then
            echo "FAIL: calibrate-gpu.sh's attention stage does not give back the line 12 us + x / 0.6:"
            grep attention "$tmp/cal-att-line/calibrate-gpu-summary.txt"; fail=1
        elif ! grep -qx "a100.attention_latency_us $want_t0" "$tmp/cal-att/calibrate-gpu-summary.txt" ||
            ! grep -qx "a100.attention_hbm_efficiency_frac $want_e" "$tmp/cal-att/calibrate-gpu-summary.txt"; then
            echo "FAIL: the A100 presets ship an attention line ($want_t0 us, $want_e) that is not calibrate-gpu.sh's:"
            grep attention "$tmp/cal-att/calibrate-gpu-summary.txt"; fail=1
        fi
    fi
fi
[ "$fail" -eq 0 ] && echo "ok: $rows validation rows"
exit "$fail"
