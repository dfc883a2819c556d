#!/usr/bin/env bash
# Calibration of the ascend-910b preset's two unmeasured physical parameters against the
# paper's Table 1 (the one calibration of this platform; every other figure follows from it):
#   - the HCCS allreduce start-up latency (cluster hccs-full-mesh, link_latency_us): the paper
#     ran host-driven torch.distributed collectives, whose start-up no source measures;
#   - the HBM efficiency of strided KV reads (accelerator ascend-910b,
#     kv_strided_efficiency_frac): the paper's explanation of its speedup peak, no source.
# The objective is the squared distance to the stated numbers: Llama3-8B and Phi-3-small best
# ~1.61x at 4 NPUs, Llama3-70B best 1.36x, Phi-3-medium best 1.43x, the overall minimum
# 1.09x, plus a penalty for each speedup peak in the wrong place (4 NPUs; Qwen2-7B at 2).
# Usage: scripts/calibrate-ascend.sh [ALPHAS_US] [STRIDED_FRACS]  -> the grid, best last
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pm=${PM:-$root/build/src/cli/preserve-model}
alphas=${1:-"10 15 20 25 30 40"}
fracs=${2:-"0.3 0.35 0.4 0.45 0.5 0.6"}
for a in $alphas; do
  for k in $fracs; do
    row="$a $k"
    for sc in llama8b llama70b qwen2-7b qwen2-72b phi3-small phi3-medium; do
      for p in 2 4 8; do
        v=$("$pm" --config "$sc" --devices "$p" --format csv \
              --set cluster.link_latency_us="$a" \
              --set accelerator.kv_strided_efficiency_frac="$k" |
            awk -F, '/^#/ { next } NR > 0 && !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
                     { print $c["speedup_preserve_vs_serial"] }')
        row="$row $v"
      done
    done
    echo "$row"
  done
done | awk '{
  # fields: alpha frac then 6 models x (2, 4, 8 NPUs)
  for (i = 0; i < 18; i++) s[i] = $(i + 3)
  b70 = s[3]; for (j = 4; j < 6; j++) if (s[j] > b70) b70 = s[j]
  bpm = s[15]; for (j = 16; j < 18; j++) if (s[j] > bpm) bpm = s[j]
  mn = 9; for (i = 0; i < 18; i++) if (s[i] < mn) mn = s[i]
  err = (s[1] - 1.61)^2 + (s[13] - 1.61)^2 + (b70 - 1.36)^2 + (bpm - 1.43)^2 + (mn - 1.09)^2
  pen = 0
  for (m = 0; m < 5; m++) { pk = (m == 2) ? 0 : 1; for (j = 0; j < 3; j++) if (s[m*3+j] > s[m*3+pk] + 1e-9) pen++ }
  printf "alpha_us %s strided %s objective %.4f misplaced_peaks %d  8B %.2f/%.2f/%.2f  70B %.2f/%.2f/%.2f  Q7 %.2f/%.2f/%.2f  Q72 %.2f/%.2f/%.2f  P3s %.2f/%.2f/%.2f  P3m %.2f/%.2f/%.2f\n",
    $1, $2, err + 0.01 * pen, pen, s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7], s[8], s[9], s[10], s[11], s[12], s[13], s[14], s[15], s[16], s[17]
}' | sort -k6 -g -r
