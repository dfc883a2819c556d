#!/usr/bin/env bash
# The held-out GPU validation (issue 16): scripts/validate-gpu.sh on
# data/validation/gpu-holdout.csv, the published measurements that are not in the reference set
# and that no calibration reads, so that fitting the shared set shows as a gap between the two.
# Writes OUTDIR/validate-gpu-holdout.csv, OUTDIR/validate-gpu-holdout-summary.txt and
# OUTDIR/validate-gpu-holdout.png (the same formats as scripts/validate-gpu.sh's).
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
