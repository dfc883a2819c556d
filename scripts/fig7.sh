#!/usr/bin/env bash
# Reproduces Fig 7 of the PRESERVE paper (arXiv 2501.08192), design-space exploration: throughput
# density (generated tokens/s per mm^2 of die, all devices) against the L2 capacity, without and
# with prefetching. The paper states:
#   - without prefetching, throughput density peaks at 8 MB of L2;
#   - with prefetching it keeps rising up to 104 MB;
#   - the optimum density rises from 11.8 to 14.8 tokens/s/mm^2 (1.25x).
#   (The DSE's model, batch, sequence and area constants are NOT FOUND; the bundled paper-dse
#   scenario is Llama3-70B on an Ascend 910B-like device, 8 devices on a ring, batch 2,
#   sequence 32K, W8A8, with the 910B's 7 nm area coefficients: compute fitted to its die
#   shot's 665.61 mm2 compute die, L2 from TSMC's 7 nm SRAM test chip; the links on an I/O die. The search starts at 8 MiB: the paper's L2 axes step
#   by 8 MB (104, 136, 144), so its "8 MB without prefetching" is read as the axis' first
#   point, where a design without prefetching (L2 of no use to it here) is densest. The tool's L2 is in MiB,
#   the paper's in MB.)
# Usage: scripts/fig7.sh [OUTDIR]   (default $root/out; the tool is $PM). Runs
#   preserve-model --config paper-dse --sweep l2=8MiB:256MiB:8MiB
#   preserve-model --config paper-dse --optimize l2=8MiB:512MiB
#   and writes OUTDIR/fig7.csv (the sweep), OUTDIR/fig7-optimize.csv (the optimum per mode),
#   OUTDIR/fig7.png (plots/fig7.gp) and OUTDIR/fig7-summary.txt: optimum_l2_mib_serial,
#   optimum_l2_mib_preserve, density_serial_opt, density_preserve_opt (tokens/s/mm^2, from the
#   optimiser) and density_ratio (preserve optimum / serial optimum) for the default model, and the
#   same five keys suffixed _<model> for each of the six paper models (`--model`), since the
#   paper does not say which model its Fig 7 uses.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
pm_setup "${1:-}"

"$pm" --config paper-dse --sweep l2=8MiB:256MiB:8MiB >"$out/fig7.csv"
"$pm" --config paper-dse --optimize l2=8MiB:512MiB >"$out/fig7-optimize.csv"

gp fig7.gp "$out/fig7.png" 1000,650 csv="$out/fig7.csv" opt="$out/fig7-optimize.csv"

# The optimum per mode, as summary lines with a key suffix.
optimum_keys() { # CSV SUFFIX
    csv_awk -v sfx="$2" '
    ok("density_tokens_per_s_per_mm2") && ok("best_l2_capacity_MiB") {
        l2[v("mode")] = v("best_l2_capacity_MiB"); d[v("mode")] = v("density_tokens_per_s_per_mm2")
    }
    END {
        for (i = 1; i <= 2; i++) {
            m = i == 1 ? "serial" : "preserve"
            printf "optimum_l2_mib_%s%s %s\n", m, sfx, (m in l2) ? l2[m] : "none"
        }
        printf "density_serial_opt%s %s\n", sfx, ("serial" in d) ? d["serial"] : "none"
        printf "density_preserve_opt%s %s\n", sfx, ("preserve" in d) ? d["preserve"] : "none"
        if (("serial" in d) && ("preserve" in d) && d["serial"] + 0 > 0)
            printf "density_ratio%s %.4f\n", sfx, d["preserve"] / d["serial"]
        else printf "density_ratio%s none\n", sfx
    }' "$1"
}

{
    optimum_keys "$out/fig7-optimize.csv" ""
    for m in "${MODELS[@]}"; do
        "$pm" --config paper-dse --model "$m" "${PAPER_MODEL[@]}" --optimize l2=8MiB:512MiB >"$out/fig7-optimize-$m.csv"
        optimum_keys "$out/fig7-optimize-$m.csv" "_$m"
    done
} >"$out/fig7-summary.txt"
