#!/usr/bin/env bash
# Reproduces Fig 10 of the PRESERVE paper (arXiv 2501.08192, appendix), design-space exploration:
# PRESERVE's speedup over the serial baseline as tensor parallelism scales out. The paper states:
#   - the speedup rises up to 32 devices and falls beyond;
#   - at 8 and 16 devices the FFN prefetch time exceeds the allreduce time; the two match at 32.
#   (The models and the axis grid are NOT FOUND; the six paper models are used on the bundled
#   paper-dse scenario: an Ascend 910B-like device on a ring, batch 2, sequence 32K, W8A8, ideal
#   sharding so that the device count may exceed the head count.)
# Usage: scripts/fig10.sh [OUTDIR]   (default $root/out; the tool is $PM). Runs, per model,
#   preserve-model --config paper-dse --model <m> --sweep devices=1:128:x2
#   and writes OUTDIR/fig10-<m>.csv, OUTDIR/fig10.png (plots/fig10.gp) and
#   OUTDIR/fig10-summary.txt: peak_devices_<m>, peak_speedup_<m> (the device count with the
#   largest speedup_preserve_vs_serial, the smallest on a tie, and that speedup).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
pm_setup "${1:-}"

files=()
for m in "${MODELS[@]}"; do
    "$pm" --config paper-dse --model "$m" "${PAPER_MODEL[@]}" --sweep devices=1:128:x2 >"$out/fig10-$m.csv"
    files+=("$out/fig10-$m.csv")
done

gp fig10.gp "$out/fig10.png" 1000,650 dir="$out" models="${MODELS[*]}"

csv_awk -v names="${MODELS[*]}" '
BEGIN { nm = split(names, mod, " ") }
ok("speedup_preserve_vs_serial") {
    x = v("speedup_preserve_vs_serial") + 0; d = v("devices") + 0
    if (!(fi in best) || x > best[fi] || (x == best[fi] && d < bd[fi])) { best[fi] = x; bd[fi] = d }
}
END {
    for (j = 1; j <= nm; j++)
        if (j in best) printf "peak_devices_%s %d\npeak_speedup_%s %.4f\n", mod[j], bd[j], mod[j], best[j]
        else printf "peak_devices_%s none\npeak_speedup_%s none\n", mod[j], mod[j]
}' "${files[@]}" >"$out/fig10-summary.txt"
