#!/usr/bin/env bash
# Table 1 of the PRESERVE paper: end-to-end time, serial baseline vs PRESERVE, batch 4,
# sequence 16K, int8, on Ascend 910B with 2, 4 and 8 NPUs, for the six paper models.
# The paper states: speedups 1.09x-1.61x overall; best ~1.6x for Llama3-8B and Phi-3-small at
# 4 NPUs; Llama3-70B best 1.36x; Phi-3-medium best 1.43x; Qwen2-7B peaks at 2 NPUs.
# Usage: scripts/table1.sh [OUTDIR]   (writes OUTDIR/table1.csv and prints a markdown table)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pm=${PM:-$root/build/src/cli/preserve-model}
out=${1:-$root/out}
mkdir -p "$out"
csv="$out/table1.csv"
first=1
for sc in llama8b llama70b qwen2-7b qwen2-72b phi3-small phi3-medium; do
  for p in 2 4 8; do
    if [ $first -eq 1 ]; then
      "$pm" --config "$sc" --devices "$p" --format csv | grep -v '^#' >"$csv"
      first=0
    else
      "$pm" --config "$sc" --devices "$p" --format csv | grep -v '^#' | tail -n 1 >>"$csv"
    fi
  done
done
echo "| model | NPUs | KV heads/NPU | serial s | fused s | PRESERVE s | PRESERVE vs serial | PRESERVE vs fused |"
echo "|---|---|---|---|---|---|---|---|"
awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
  { printf "| %s | %s | %s | %.2f | %.2f | %.2f | %.3f | %.3f |\n", $col["model"], $col["devices"],
      $col["kv_heads_per_device"], $col["serial_request_s"], $col["fused_request_s"],
      $col["preserve_request_s"], $col["speedup_preserve_vs_serial"],
      $col["speedup_preserve_vs_fused"] }' "$csv"
