#!/usr/bin/env bash
# The held-out GPU validation (issue 16): scripts/validate-gpu.sh on
# data/validation/gpu-holdout.csv, the published measurements that are not in the reference set
# and that no calibration reads, so that fitting the shared set shows as a gap between the two.
# Writes OUTDIR/validate-gpu-holdout.csv, OUTDIR/validate-gpu-holdout-summary.txt and
# OUTDIR/validate-gpu-holdout.png (the same formats as scripts/validate-gpu.sh's). Then the same
# for data/validation/gpu-moe-holdout.csv (issue 47: MoE models on production engines, the rows the
# MoE target is judged on, which no calibration reads either): OUTDIR/validate-gpu-moe-holdout.csv,
# OUTDIR/validate-gpu-moe-holdout-summary.txt and OUTDIR/validate-gpu-moe-holdout.png.
# Usage: scripts/validate-gpu-holdout.sh [OUTDIR]   (the tool is $PM, as there)
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
pm_setup "${1:-}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
PM="$pm" VALIDATION_CSV="$root/data/validation/gpu-holdout.csv" "$root/scripts/validate-gpu.sh" \
    "$work" >/dev/null
for f in csv png; do mv "$work/validate-gpu.$f" "$out/validate-gpu-holdout.$f"; done
mv "$work/validate-gpu-summary.txt" "$out/validate-gpu-holdout-summary.txt"
echo "$(head -n 1 "$out/validate-gpu-holdout-summary.txt" | cut -d" " -f2) held-out rows ran; $out/validate-gpu-holdout.csv, $out/validate-gpu-holdout-summary.txt, $out/validate-gpu-holdout.png"
cat "$out/validate-gpu-holdout-summary.txt"
# The MoE rows of production engines (issue 47), after the lines above.
PM="$pm" VALIDATION_CSV="$root/data/validation/gpu-moe-holdout.csv" "$root/scripts/validate-gpu.sh" \
    "$work/moe" >/dev/null
for f in csv png; do mv "$work/moe/validate-gpu.$f" "$out/validate-gpu-moe-holdout.$f"; done
mv "$work/moe/validate-gpu-summary.txt" "$out/validate-gpu-moe-holdout-summary.txt"
echo "$(head -n 1 "$out/validate-gpu-moe-holdout-summary.txt" | cut -d" " -f2) held-out MoE engine rows ran; $out/validate-gpu-moe-holdout.csv, $out/validate-gpu-moe-holdout-summary.txt, $out/validate-gpu-moe-holdout.png"
cat "$out/validate-gpu-moe-holdout-summary.txt"
