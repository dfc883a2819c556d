#!/usr/bin/env bash
# Reproduces Fig 9 of the PRESERVE paper (arXiv 2501.08192, appendix), design-space exploration:
# PRESERVE's speedup over the serial baseline against the accelerator's compute (cube)
# throughput, one line per L2 bandwidth. The paper states:
#   - more L2 bandwidth adds up to 10% speedup.
#   (The baseline accelerator's TFLOPS and L2 bandwidth and the axis grids are NOT FOUND; the
#   bundled paper-dse scenario is Llama3-70B on an Ascend 910B-like device, 8 devices on a ring,
#   batch 2, sequence 32K, W8A8. The L2 bandwidths span the paper's "L2 typically provides 5-10x
#   the HBM bandwidth": 8, 12 and 16 TB/s = 5x, 7.5x and 10x 1.6 TB/s. The compute axis is int8
#   peak, in TFLOPS = 10^12 op/s.)
# Usage: scripts/fig9.sh [OUTDIR]   (default $root/out; the tool is $PM). Runs
#   preserve-model --config paper-dse --sweep compute=100TFLOPS:1600TFLOPS:x2 \
#       --sweep l2_bw=8TBps,12TBps,16TBps
#   and writes OUTDIR/fig9.csv (the 2-D sweep), OUTDIR/fig9-lines.csv (compute_TFLOPS, then one
#   column speedup_l2bw_<B>TBps per L2 bandwidth), OUTDIR/fig9.png (plots/fig9.gp) and
#   OUTDIR/fig9-summary.txt: max_gain_from_l2_bw = max over compute of
#   speedup(highest l2_bw) / speedup(lowest l2_bw) - 1, and the compute and L2 bandwidths it
#   compares (max_gain_compute_tflops, l2_bw_low_tbps, l2_bw_high_tbps).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
pm_setup "${1:-}"

"$pm" --config paper-dse --sweep compute=100TFLOPS:1600TFLOPS:x2 \
    --sweep l2_bw=8TBps,12TBps,16TBps >"$out/fig9.csv"

# One row per compute value, one column per L2 bandwidth (in the order of the sweep).
csv_awk '
{ c = v("compute_TFLOPS"); b = v("l2_bandwidth_TBps")
  if (!(c in sc)) { sc[c] = 1; co[++nc] = c }
  if (!(b in sb)) { sb[b] = 1; bo[++nb] = b }
  val[c, b] = ok("speedup_preserve_vs_serial") ? v("speedup_preserve_vs_serial") : "NaN" }
END {
    printf "compute_TFLOPS"
    for (j = 1; j <= nb; j++) printf ",speedup_l2bw_%sTBps", bo[j]
    printf "\n"
    for (i = 1; i <= nc; i++) {
        printf "%s", co[i]
        for (j = 1; j <= nb; j++) printf ",%s", ((co[i], bo[j]) in val) ? val[co[i], bo[j]] : "NaN"
        printf "\n"
    }
}' "$out/fig9.csv" >"$out/fig9-lines.csv"
l2bws=$(csv_awk '{ b = v("l2_bandwidth_TBps"); if (!(b in s)) { s[b] = 1; printf "%s%s", sep, b; sep = " " } }' \
    "$out/fig9.csv")

gp fig9.gp "$out/fig9.png" 1000,650 csv="$out/fig9-lines.csv" l2bws="$l2bws"

csv_awk '
ok("speedup_preserve_vs_serial") {
    c = v("compute_TFLOPS") + 0; b = v("l2_bandwidth_TBps") + 0
    s[c, b] = v("speedup_preserve_vs_serial") + 0; cs[c] = 1
    if (!seen || b < lo) lo = b
    if (!seen || b > hi) hi = b
    seen = 1
}
END {
    for (c in cs)
        if (((c, lo) in s) && ((c, hi) in s) && s[c, lo] > 0) {
            g = s[c, hi] / s[c, lo] - 1
            if (!found || g > best) { best = g; bc = c; found = 1 }
        }
    if (found) printf "max_gain_from_l2_bw %.4f\nmax_gain_compute_tflops %s\n", best, bc
    else print "max_gain_from_l2_bw none\nmax_gain_compute_tflops none"
    printf "l2_bw_low_tbps %s\nl2_bw_high_tbps %s\n", seen ? lo : "none", seen ? hi : "none"
}' "$out/fig9.csv" >"$out/fig9-summary.txt"
