#!/usr/bin/env bash
# Reproduces Fig 8 of the PRESERVE paper (arXiv 2501.08192), design-space exploration: PRESERVE's
# speedup over the serial baseline against the link bandwidth at 128 devices. The paper states:
#   - at 128 devices, raising the link bandwidth from 200 Gbps to 1000 Gbps raises the mean
#     speedup from 1.18x to 1.27x.
#   (Which models the mean covers is NOT FOUND; the six paper models are used, on the bundled
#   paper-dse scenario: an Ascend 910B-like device on a ring, batch 2, sequence 32K, W8A8, ideal
#   sharding so that 128 devices are allowed. The link bandwidth is per device-to-device link.)
# Usage: scripts/fig8.sh [OUTDIR]   (default $root/out; the tool is $PM). Runs, per model,
#   preserve-model --config paper-dse --model <m> --devices 128 \
#       --sweep link_bw=200Gbps:1000Gbps:100Gbps
#   and writes OUTDIR/fig8-<m>.csv, OUTDIR/fig8.csv (link_bandwidth_GBps: the tool's unit, GB/s;
#   the paper's 200 and 1000 Gbit/s are 25 and 125 GB/s; the speedup per model
#   and mean_speedup, their mean over the models valid at that point), OUTDIR/fig8.png
#   (plots/fig8.gp) and OUTDIR/fig8-summary.txt: mean_speedup_200gbps, mean_speedup_1000gbps.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
pm_setup "${1:-}"

files=()
for m in "${MODELS[@]}"; do
    "$pm" --config paper-dse --model "$m" "${PAPER_MODEL[@]}" --devices 128 \
        --sweep link_bw=200Gbps:1000Gbps:100Gbps >"$out/fig8-$m.csv"
    files+=("$out/fig8-$m.csv")
done

csv_awk -v names="${MODELS[*]}" '
BEGIN { nm = split(names, mod, " ") }
{ b = v("link_bandwidth_GBps"); if (!(b in seen)) { seen[b] = 1; order[++n] = b }
  if (ok("speedup_preserve_vs_serial")) val[fi, b] = v("speedup_preserve_vs_serial") }
END {
    printf "link_bandwidth_GBps"
    for (j = 1; j <= nm; j++) printf ",%s", mod[j]
    printf ",mean_speedup\n"
    for (i = 1; i <= n; i++) {
        b = order[i]; printf "%s", b; sum = 0; cnt = 0
        for (j = 1; j <= nm; j++)
            if ((j, b) in val) { printf ",%s", val[j, b]; sum += val[j, b]; cnt++ } else printf ",NaN"
        if (cnt) printf ",%.9g\n", sum / cnt; else printf ",NaN\n"
    }
}' "${files[@]}" >"$out/fig8.csv"

gp fig8.gp "$out/fig8.png" 1000,650 csv="$out/fig8.csv" models="${MODELS[*]}"

csv_awk '
ok("mean_speedup") { s[v("link_bandwidth_GBps") + 0] = v("mean_speedup") }
END {
    printf "mean_speedup_200gbps %s\n", (25 in s) ? sprintf("%.4f", s[25]) : "none"
    printf "mean_speedup_1000gbps %s\n", (125 in s) ? sprintf("%.4f", s[125]) : "none"
}' "$out/fig8.csv" >"$out/fig8-summary.txt"
