#!/usr/bin/env bash
# Reproduces Fig 6 of the PRESERVE paper (arXiv 2501.08192), design-space exploration: PRESERVE's
# latency as the L2 capacity grows, normalised to the smallest L2, one line per model. The paper
# states:
#   - latency falls by 20% to 36% (average 25%) as L2 grows;
#   - the maximum speedup for most models is reached at 136-144 MB of L2, with no gain beyond.
#   (The DSE's model, batch and sequence and its x-axis grid are NOT FOUND; the bundled
#   paper-dse scenario is an Ascend 910B-like device (L2 at 5x HBM) on a ring of 8, batch 2,
#   sequence 32K, W8A8, ideal sharding, calibrated once by scripts/calibrate-dse.sh. The sweep
#   is in MiB, the paper's axis in MB.)
# Usage: scripts/fig6.sh [OUTDIR]   (default $root/out; the tool is $PM). Runs, per model,
#   preserve-model --config paper-dse --model <m> --sweep l2=8MiB:256MiB:8MiB
#   and writes OUTDIR/fig6-<m>.csv, OUTDIR/fig6.csv (l2_capacity_MiB and, per model,
#   preserve_request_s divided by its value at the smallest L2), OUTDIR/fig6.png (plots/fig6.gp)
#   and OUTDIR/fig6-summary.txt: reduction_<m> = 1 - t(largest L2)/t(smallest L2),
#   mean_reduction (over the models), saturation_l2_mib_<m> (the smallest L2 whose PRESERVE time
#   is within 0.5% of the minimum over the sweep).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
pm_setup "${1:-}"

files=()
for m in "${MODELS[@]}"; do
    "$pm" --config paper-dse --model "$m" "${PAPER_MODEL[@]}" --sweep l2=8MiB:256MiB:8MiB >"$out/fig6-$m.csv"
    files+=("$out/fig6-$m.csv")
done

# Wide table of the normalised times: one row per L2 size, one column per model.
csv_awk -v names="${MODELS[*]}" '
BEGIN { nm = split(names, mod, " ") }
{ l = v("l2_capacity_MiB"); if (!(l in seen)) { seen[l] = 1; order[++n] = l }
  if (ok("preserve_request_s")) {
      t = v("preserve_request_s") + 0; val[fi, l] = t
      if (!((fi) in first) || l + 0 < firstl[fi]) { first[fi] = t; firstl[fi] = l + 0 }
  } }
END {
    printf "l2_capacity_MiB"
    for (j = 1; j <= nm; j++) printf ",%s", mod[j]
    printf "\n"
    for (i = 1; i <= n; i++) {
        l = order[i]; printf "%s", l
        for (j = 1; j <= nm; j++)
            if ((j, l) in val) printf ",%.6g", val[j, l] / first[j]; else printf ",NaN"
        printf "\n"
    }
}' "${files[@]}" >"$out/fig6.csv"

gp fig6.gp "$out/fig6.png" 1000,650 csv="$out/fig6.csv" models="${MODELS[*]}"

csv_awk -v names="${MODELS[*]}" '
BEGIN { nm = split(names, mod, " ") }
ok("preserve_request_s") {
    l = v("l2_capacity_MiB") + 0; t = v("preserve_request_s") + 0
    k = ++cnt[fi]; L[fi, k] = l; T[fi, k] = t
    if (!(fi in lo) || l < lo[fi]) { lo[fi] = l; tlo[fi] = t }
    if (!(fi in hi) || l > hi[fi]) { hi[fi] = l; thi[fi] = t }
    if (!(fi in tmin) || t < tmin[fi]) tmin[fi] = t
}
END {
    for (j = 1; j <= nm; j++) {
        if (!(j in lo)) { printf "reduction_%s none\n", mod[j]; continue }
        r = 1 - thi[j] / tlo[j]; sum += r; used++
        printf "reduction_%s %.4f\n", mod[j], r
    }
    printf "mean_reduction %s\n", used ? sprintf("%.4f", sum / used) : "none"
    for (j = 1; j <= nm; j++) {
        sat = "none"
        for (k = 1; k <= cnt[j]; k++)
            if (T[j, k] <= tmin[j] * 1.005 && (sat == "none" || L[j, k] < sat + 0)) sat = L[j, k]
        printf "saturation_l2_mib_%s %s\n", mod[j], sat
    }
}' "${files[@]}" >"$out/fig6-summary.txt"
