#!/usr/bin/env bash
# Calibration of the ascend-910b preset's unmeasured physical parameters against the paper's
# measured results (the one calibration of this platform; every other figure follows from it).
#
# Part 1, against Table 1 (PRESERVE vs serial, batch 4, 16K, 2/4/8 NPUs) and Fig 4 (the 3
# largest models on 4 NPUs, batch 1-256, sequence 1K-64K: up to 1.82x, and a drop from batch 4 /
# 16K to batch 4 / 32K where the KV cache spills L2):
#   - the HCCS allreduce start-up latency (cluster hccs-full-mesh, link_latency_us): the paper
#     ran host-driven torch.distributed collectives, whose start-up no source measures;
#   - the HBM efficiency of strided KV reads (accelerator ascend-910b,
#     kv_strided_efficiency_frac): the paper's explanation of its speedup peak, no source;
#   - the prefetch consumers' semantics (prefetch_consumer: wait or stream), a structural
#     choice: both are fitted and the better one is kept.
#   Candidates are ranked by how many of the stated numbers fall inside the reproduction issue's
#   bands (Llama3-8B and Phi-3-small best ~1.61x, Llama3-70B 1.36x, Phi-3-medium 1.43x, each
#   +-0.08; every speedup within 1.09-1.61x; every peak in place: 4 NPUs, Qwen2-7B at 2; Fig 4's
#   maximum 1.82x +-0.15; a drop at batch 4 / 32K for one of the three models), then
#   by the squared distance to them (the minimum counted at 1.09x) plus 0.01 per misplaced peak.
# Part 2, against Fig 5 (PRESERVE vs the fused GEMM+allreduce kernel, 4 NPUs, sequence 1K), the
#   only measurement of the fused kernel: its device-initiated communication start-up
#   (fused_latency_us), with part 1's values in the data files. The objective: the largest
#   ratio below batch 512 of Llama3-70B and of Qwen2-72B at 1.19x, the minimum at 0.93x, plus
#   0.01 per model whose ratio does not drop below 1 exactly from batch 512.
# Usage: scripts/calibrate-ascend.sh [ALPHAS_US] [STRIDED_FRACS] [FUSED_US]
#   -> each grid sorted, best last
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh" # root, pm, csv_awk
alphas=${1:-"10 12 14 16 18 20 25 30"}
fracs=${2:-"0.4 0.45 0.5 0.55 0.6"}
fused=${3:-"5 8 9 10 11 12 15 20"}
echo "== Part 1: Table 1"
for mode in wait stream; do
for a in $alphas; do
  for k in $fracs; do
    row="$mode $a $k"
    for sc in llama8b llama70b qwen2-7b qwen2-72b phi3-small phi3-medium; do
      for p in 2 4 8; do
        v=$("$pm" --config "$sc" --devices "$p" --format csv \
              --set cluster.link_latency_us="$a" \
              --set accelerator.kv_strided_efficiency_frac="$k" \
              --set accelerator.prefetch_consumer="$mode" |
            csv_awk '{ print v("speedup_preserve_vs_serial") }')
        row="$row $v"
      done
    done
    # Fig 4: the largest speedup of the 3 largest models on 4 NPUs over batch 1-256 x 1K-64K
    # and whether one of them drops from batch 4 / 16K to batch 4 / 32K (the KV spilling L2)
    f4="0 0"
    for sc in llama70b qwen2-72b phi3-medium; do
        f4=$("$pm" --config "$sc" --devices 4 --sweep batch=1:256:x2 --sweep seq=1Ki:64Ki:x2 \
                 --format csv --set cluster.link_latency_us="$a" \
                 --set accelerator.kv_strided_efficiency_frac="$k" \
                 --set accelerator.prefetch_consumer="$mode" |
             csv_awk -v prev="$f4" '
                 BEGIN { split(prev, p, " "); m = p[1]; d = p[2] }
                 { x = v("speedup_preserve_vs_serial"); if (x > m) m = x
                   if (v("batch") == 4 && v("seq_len") == 16384) s16 = x
                   if (v("batch") == 4 && v("seq_len") == 32768) s32 = x }
                 END { print m, (d || s32 < s16) ? 1 : 0 }')
    done
    echo "$row $f4"
  done
done
done | awk '{
  # fields: mode alpha frac then 6 models x (2, 4, 8 NPUs)
  for (i = 0; i < 18; i++) s[i] = $(i + 4)
  b70 = s[3]; for (j = 4; j < 6; j++) if (s[j] > b70) b70 = s[j]
  bpm = s[15]; for (j = 16; j < 18; j++) if (s[j] > bpm) bpm = s[j]
  mn = 9; for (i = 0; i < 18; i++) if (s[i] < mn) mn = s[i]
  err = (s[1] - 1.61)^2 + (s[13] - 1.61)^2 + (b70 - 1.36)^2 + (bpm - 1.43)^2 + (mn - 1.09)^2
  pen = 0
  for (m = 0; m < 5; m++) { pk = (m == 2) ? 0 : 1; for (j = 0; j < 3; j++) if (s[m*3+j] > s[m*3+pk] + 1e-9) pen++ }
  mx = 0; for (i = 0; i < 18; i++) if (s[i] > mx) mx = s[i]
  # the stated numbers inside the reproduction issue bands (the paper gives two decimals)
  f4 = $22; drop = $23
  band = (s[1] >= 1.53 && s[1] <= 1.69) + (s[13] >= 1.53 && s[13] <= 1.69) + \
         (b70 >= 1.28 && b70 <= 1.44) + (bpm >= 1.35 && bpm <= 1.51) + \
         (mn >= 1.085 && mx < 1.615) + (pen == 0) + (f4 >= 1.67 && f4 <= 1.97) + drop
  err += (f4 - 1.82)^2
  printf "consumer %s alpha_us %s strided %s in_band %d/8 objective %.4f misplaced_peaks %d  fig4_max %.2f drop %d  8B %.2f/%.2f/%.2f  70B %.2f/%.2f/%.2f  Q7 %.2f/%.2f/%.2f  Q72 %.2f/%.2f/%.2f  P3s %.2f/%.2f/%.2f  P3m %.2f/%.2f/%.2f\n",
    $1, $2, $3, band, err + 0.01 * pen, pen, f4, drop, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], s[16], s[17]
}' | sort -k8,8n -k10,10gr

echo "== Part 2: Fig 5 (with the data files' start-up, strided efficiency and consumers)"
for f in $fused; do
    row="$f"
    for sc in llama70b qwen2-72b; do
        row="$row $("$pm" --config "$sc" --devices 4 --seq 1Ki --sweep batch=1:1024:x2 --format csv \
                      --set cluster.fused_latency_us="$f" |
            csv_awk '{ x = v("speedup_preserve_vs_fused"); b = v("batch")
                       if (b < 512 && x > mx) mx = x
                       if (mn == "" || x < mn) mn = x
                       if (x >= 1) last = b }
                     END { printf "%s %s %d", mx, mn, 2 * last }')"
    done
    echo "$row"
done | awk '{
  # fields: fused_us, then per model: max below 512, min, first batch the fused kernel wins
  mn = $3 < $6 ? $3 : $6
  err = ($2 - 1.19)^2 + ($5 - 1.19)^2 + (mn - 0.93)^2 + 0.01 * (($4 != 512) + ($7 != 512))
  printf "fused_latency_us %s objective %.5f  llama70b max %.3f min %.3f from %d  qwen2-72b max %.3f min %.3f from %d\n",
    $1, err, $2, $3, $4, $5, $6, $7
}' | sort -k4 -g -r
