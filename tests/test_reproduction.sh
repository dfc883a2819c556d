#!/usr/bin/env bash
# The slow suite: regenerates every paper result with scripts/reproduce-all and checks each
# number the paper states (../shared/reference/paper-claims.md) against a tolerance, with the
# reason for that tolerance, so that a later change cannot silently break the reproduction.
# Claims the calibrated presets do not reproduce are listed as "not reproduced" with what we
# get (EXPERIMENTS.md explains each); they are reported, not asserted, and a change that makes
# one of them pass shows up here.
# Usage: test_reproduction.sh PATH/TO/preserve-model SOURCE_ROOT
set -u
export PM="$1"
root="$2"
export PRESERVE_MODEL_DATA="$root/data"
export PRESERVE_MODEL_PLOTS="$root/plots"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
if ! "$root/scripts/reproduce-all" "$out" >"$out/reproduce.log" 2>&1; then
    echo "FAIL: scripts/reproduce-all failed:"
    tail -30 "$out/reproduce.log"
    exit 1
fi
cat "$out"/*-summary.txt >"$out/all.txt"
fail=0
pass=0
val() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print "missing" }' "$out/all.txt"; }

# within NAME KEY PAPER TOL REASON: |ours - paper| <= tol
within() {
    local v
    v=$(val "$2")
    if awk -v v="$v" -v p="$3" -v t="$4" 'BEGIN { exit !(v != "missing" && v - p <= t && p - v <= t) }'; then
        printf 'ok    %-44s paper %-8s ours %-8s (+-%s: %s)\n' "$1" "$3" "$v" "$4" "$5"
        pass=$((pass + 1))
    else
        printf 'FAIL  %-44s paper %-8s ours %-8s (+-%s: %s)\n' "$1" "$3" "$v" "$4" "$5"
        fail=$((fail + 1))
    fi
}

# holds NAME EXPRESSION-ON-v... : an awk condition over named values (v["key"])
holds() {
    local name="$1" cond="$2" reason="$3"
    shift 3
    if awk -v cond_name="$name" "
        BEGIN { while ((getline line < \"$out/all.txt\") > 0) { split(line, f, \" \"); v[f[1]] = f[2] } }
        END { exit !($cond) }" </dev/null; then
        printf 'ok    %-44s %s\n' "$name" "$reason"
        pass=$((pass + 1))
    else
        printf 'FAIL  %-44s %s (condition: %s)\n' "$name" "$reason" "$cond"
        fail=$((fail + 1))
    fi
}

report() { # not reproduced: NAME KEY PAPER
    printf 'not reproduced  %-34s paper %-10s ours %s\n' "$1" "$3" "$(val "$2")"
}

echo "== Table 1 (ascend-910b, calibrated once: scripts/calibrate-ascend.sh)"
holds "range within 1.09-1.61" 'v["range_min"] >= 1.085 && v["range_max"] < 1.615' \
    "every speedup inside the paper's stated range (two decimals: 1.615 rounds to 1.62)"
for s in llama8b llama70b qwen2-72b phi3-small phi3-medium; do
    holds "best at 4 NPUs: $s" "v[\"best_devices_$s\"] == 4" "the paper: most models peak at 4 (2 KV heads/NPU)"
done
holds "best at 2 NPUs: qwen2-7b" 'v["best_devices_qwen2-7b"] == 2' "the paper: Qwen2-7B peaks at 2 (2 KV heads/NPU)"
within "Llama3-8B best" best_llama8b 1.61 0.08 "the issue's band; cells are not public"
within "Phi-3-small best" best_phi3-small 1.61 0.08 "'about 1.6x'; same band"
within "Llama3-70B best" best_llama70b 1.36 0.08 "the issue's band"

echo "== Fig 4 (3 largest models, 4 NPUs, batch 1-256 x sequence 1K-64K)"
within "maximum of the three models" max_speedup_all 1.82 0.15 "the issue's band"
holds "maximum at small batch and long sequence" \
    'v["argmax_batch_phi3-medium"] <= 4 && v["argmax_seq_phi3-medium"] >= 32768 && v["argmax_batch_llama70b"] <= 4 && v["argmax_seq_llama70b"] >= 32768' \
    "the paper: 'at long sequences and small batches'"
for s in llama70b qwen2-72b phi3-medium; do
    holds "speedup falls as batch grows: $s" "v[\"speedup_${s}_b256_s64k\"] < v[\"speedup_${s}_b4_s64k\"]" \
        "the paper's trend (batch 4 vs 256 at 64K)"
done

echo "== Fig 5 (PRESERVE vs fused GEMM+allreduce, 4 NPUs, sequence 1K)"
within "max below batch 512: llama70b" max_vs_fused_below_512_llama70b 1.19 0.06 "the issue's band"
within "max below batch 512: qwen2-72b" max_vs_fused_below_512_qwen2-72b 1.19 0.06 "the issue's band"
within "minimum" min_vs_fused 0.93 0.06 "'about 0.93', the issue's band"
for s in llama70b qwen2-72b phi3-medium; do
    holds "fused wins from batch 512: $s" "v[\"fused_wins_from_batch_$s\"] == 512" "the paper: from batch 512"
done

echo "== Figs 6-10 (paper-dse, calibrated once: scripts/calibrate-dse.sh)"
for m in llama3-8b llama3-70b qwen2-7b qwen2-72b phi3-small phi3-medium; do
    holds "latency reduction in 20-36 %: $m" "v[\"reduction_$m\"] >= 0.20 && v[\"reduction_$m\"] <= 0.36" \
        "Fig 6: from the smallest to the largest L2, the paper's stated range"
    holds "no gain past 144 MB: $m" "v[\"saturation_l2_mib_$m\"] <= 144 * 1e6 / 1048576" \
        "the paper: no further gain beyond 136-144 MB"
done
within "Fig 6 mean reduction" mean_reduction 0.25 0.05 "the paper's 25 % average; 0.05 is the spread of a mean of six models"
holds "density optimum without prefetch near 8 MB" 'v["optimum_l2_mib_serial"] <= (8 + 24) * 1e6 / 1048576' \
    "8 MB +- 24 MB (the issue's band)"
holds "density optimum moves up with prefetch" \
    'v["optimum_l2_mib_preserve"] > v["optimum_l2_mib_serial"]' "Fig 7's trend (Llama3-70B, the DSE default)"
# Not reproduced since issue 41 corrected the die: the throughput ratio at the two optima is
# what it was (1.26x), but the compute area is the 910B's fitted one (233 mm2, was the A100's
# 611), so the L2 PRESERVE's optimum adds is a larger share of a smaller die (EXPERIMENTS.md).
holds "Fig 7: prefetching raises the best density" 'v["density_ratio"] > 1.1' \
    "the paper: 1.25x; ours 1.19x (below the +-0.05 band since the die correction)"
report "Fig 7 density ratio (Llama3-70B)" density_ratio "1.25"
holds "speedup rises with link bandwidth (128 dev)" 'v["mean_speedup_1000gbps"] > v["mean_speedup_200gbps"]' \
    "the trend of Fig 8"
holds "Fig 9: L2 bandwidth adds at most 10 %" 'v["max_gain_from_l2_bw"] > 0 && v["max_gain_from_l2_bw"] <= 0.10' \
    "the paper: 'up to 10%' (L2 at 5x -> 10x HBM)"
holds "scale-out peak at 32 devices (Llama3-70B)" 'v["peak_devices_llama3-70b"] == 32' \
    "Fig 10; the DSE link latency is derived from its statement, so this checks that derivation"

echo "== Not reproduced (reported, not asserted; EXPERIMENTS.md says why)"
report "Phi-3-medium best" best_phi3-medium "1.43"
report "Fig 4 b4/32K (drop vs 16K), Phi-3-medium" speedup_phi3-medium_b4_s32k "<b4/16K"
report "Fig 5 max below 512, Phi-3-medium" max_vs_fused_below_512_phi3-medium "1.19"
report "Fig 7 optimum with prefetch, Llama3-70B" optimum_l2_mib_preserve "104MB"
report "Fig 8 mean speedup at 200 Gbps" mean_speedup_200gbps "1.18"
report "Fig 8 mean speedup at 1000 Gbps" mean_speedup_1000gbps "1.27"

echo "$pass claims hold, $fail failed"
[ "$fail" -eq 0 ]
