#!/usr/bin/env bash
# Calibration of the paper-dse platform (accelerator paper-dse, cluster paper-dse-ring, workload
# paper-dse) against the paper's design-space statements, the one calibration of that platform.
# The paper does not state the DSE's device count, batch or sequence length (paper-claims.md
# section 5, NOT FOUND), so they are fitted here, jointly to every DSE figure at once:
#   Fig 6   mean latency reduction from the smallest to the largest L2: 25 %;
#   Fig 7   Llama3-70B's density optimum with prefetching at 104 MB, 1.25x the optimum without;
#   Fig 8   at 128 devices, mean speedup 1.18x at 200 Gbps and 1.27x at 1000 Gbps;
#   Fig 9   more L2 bandwidth (5x -> 10x HBM) adds at most 10 %;
#   Fig 10  Llama3-70B's speedup peaks at 32 devices.
# The start-up latency is not fitted: for each candidate it follows from Fig 10's statement that
# the FFN prefetch and the allreduce take equal time at 32 devices (Llama3-70B: 3 x 8192 x 28672
# int8 weights / 32 at the bulk HBM rate, minus the ring's fp16 bytes at 400 Gbps).
# Candidates are ranked by the number of these seven numbers inside the reproduction issue's
# bands (Fig 6 mean 20-36 %, Fig 7 optimum 80-128 MB and ratio 1.20-1.30, Fig 8 +-0.04, Fig 9
# at most 10 %, Fig 10 at 32), then by the sum of squared distances (the optimum's in units of
# 100 MB, 0.01 for a Fig 10 peak elsewhere).
# Usage: scripts/calibrate-dse.sh [DEVICES] [BATCHES] [SEQS]   -> one line per candidate, best last
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh" # root, pm, csv_awk
devs=${1:-"4 8"}
batches=${2:-"2 4 8 16"}
seqs=${3:-"8192 16384 32768"}
models="llama3-8b llama3-70b qwen2-7b qwen2-72b phi3-small phi3-medium"
col() { csv_awk -v n="$1" '{ print v(n) }'; } # the named column of a CLI CSV on stdin
for d in $devs; do
  for b in $batches; do
    for s in $seqs; do
      a=$(awk -v b="$b" 'BEGIN { ffn = 3 * 8192 * 28672 / 32; printf "%.2f", (ffn / (1.6e12 * 0.86) - 2 * 31 / 32 * b * 8192 * 2 / 50e9) * 1e6 }')
      if awk -v a="$a" 'BEGIN { exit !(a <= 0) }'; then continue; fi
      set=(--set "cluster.devices=$d" --set "workload.batch=$b" --set "workload.seq_len=$s"
           --set "cluster.link_latency_us=$a")
      red=() f8a=() f8b=()
      for m in $models; do
        red+=("$("$pm" --config paper-dse --model "$m" "${PAPER_MODEL[@]}" "${set[@]}" --sweep l2=8MiB:256MiB:8MiB \
                  --format csv | col preserve_request_s | awk 'NR == 1 { f = $1 } { l = $1 } END { print 1 - l / f }')")
        sp=$("$pm" --config paper-dse --model "$m" "${PAPER_MODEL[@]}" "${set[@]}" --devices 128 \
                  --sweep link_bw=200Gbps,1000Gbps --format csv | col speedup_preserve_vs_serial)
        f8a+=("$(echo "$sp" | sed -n 1p)")
        f8b+=("$(echo "$sp" | sed -n 2p)")
      done
      pk=$("$pm" --config paper-dse "${set[@]}" --sweep devices=1:128:x2 --format csv |
           csv_awk 'v("speedup_preserve_vs_serial") > best { best = v("speedup_preserve_vs_serial"); at = v("devices") }
                    END { print at }')
      g9=$("$pm" --config paper-dse "${set[@]}" --sweep compute=100TFLOPS:1600TFLOPS:x2 \
               --sweep l2_bw=8TBps,16TBps --format csv | col speedup_preserve_vs_serial |
           awk 'NR % 2 { lo = $1; next } { g = $1 / lo - 1; if (g > m) m = g } END { print m + 0 }')
      f7=$("$pm" --config paper-dse "${set[@]}" --optimize l2=8MiB:512MiB --format csv |
           csv_awk '{ l[v("mode")] = v("best_l2_capacity_MiB"); x[v("mode")] = v("density_tokens_per_s_per_mm2") }
                    END { printf "%s %s", l["preserve"] * 1.048576, x["preserve"] / x["serial"] }')
      echo "$d $b $s $a $pk $g9 $f7 ${red[*]} ${f8a[*]} ${f8b[*]}"
    done
  done
done | awk '{
  # fields: devices batch seq alpha peak g9 opt_MB ratio, 6 reductions, 6 f8 at 200, 6 at 1000
  mr = 0; ma = 0; mb = 0
  for (i = 0; i < 6; i++) { mr += $(9 + i) / 6; ma += $(15 + i) / 6; mb += $(21 + i) / 6 }
  # claims inside the bands of the reproduction issue
  pass = (mr >= 0.20 && mr <= 0.36) + ($7 >= 80 && $7 <= 128) + ($8 >= 1.20 && $8 <= 1.30) \
       + (ma >= 1.14 && ma <= 1.22) + (mb >= 1.23 && mb <= 1.31) + ($6 > 0 && $6 <= 0.10) \
       + ($5 == 32)
  ex = $6 > 0.10 ? $6 - 0.10 : 0
  dist = (mr - 0.25)^2 + (ma - 1.18)^2 + (mb - 1.27)^2 + (($7 - 104) / 100)^2 + ($8 - 1.25)^2 \
         + ex^2 + ($5 != 32 ? 0.01 : 0)
  printf "devices %s batch %s seq %s alpha_us %s claims_in_band %d/7 distance %.4f  fig6_mean_reduction %.3f fig7_opt_MB %.0f fig7_ratio %.3f fig8 %.3f/%.3f fig9_gain %.3f fig10_peak %s\n",
    $1, $2, $3, $4, pass, dist, mr, $7, $8, ma, mb, $6, $5
}' | sort -k10,10n -k12,12gr
