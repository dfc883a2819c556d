#!/usr/bin/env bash
# Reproduces Fig 2 of the PRESERVE paper (arXiv 2501.08192): the per-device memory of one layer's
# Attention (weights + KV cache) and MLP (weights) against the tensor-parallel device count, beside
# the L2 sizes of commercial accelerators. The paper states:
#   - footprints fall as the device count grows (while devices <= heads), and tensor parallelism up
#     to 16 devices brings even the largest models' per-layer footprint under the L2 of current
#     commercial accelerators;
#   - L2 sizes cited (secondary notes, uncertain): GB200 126 MB L2, MI300X 256 MB L3, Ascend 910B
#     196 MB L2 (the paper's setup says 192 MB);
#   - the batch and sequence length of the figure are NOT FOUND (the tool uses the scenario's,
#     batch 4 and context 16K, int8, as in the derived table of paper-claims.md §3).
# Usage: scripts/fig2.sh [OUTDIR]   (default $root/out; the tool is $PM). Runs
#   preserve-model footprint --config <scenario> --devices-list 1,2,4,8,16 for the six models and
#   writes OUTDIR/fig2-<scenario>.csv (the footprint table as CSV), OUTDIR/fig2.csv (one row per
#   device count, columns attn_kv_MiB_<model> and mlp_MiB_<model>), OUTDIR/fig2-l2.csv (the
#   bundled accelerators' L2 sizes), OUTDIR/fig2.png (plots/fig2.gp) and OUTDIR/fig2-summary.txt:
#   attn_kv_mib_<scenario>_<p>, mlp_mib_<scenario>_<p> for p = 1, 2, 4, 8, 16.
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
pm_setup "${1:-}"

devs=1,2,4,8,16
models=()
files=()
for sc in "${SCENARIOS[@]}"; do
    raw="$out/fig2-$sc.txt"
    "$pm" footprint --config "$sc" --devices-list "$devs" >"$raw"
    # The table: a header line starting with "devices", then one row per device count; `#` lines
    # around it (the first names the model, the last ones the L2 sizes).
    awk -v sc="$sc" '
        NR == 1 { model = $0; sub(/^# preserve-model [^ ]* footprint: */, "", model); sub(/,.*/, "", model) }
        /^#/ || NF == 0 { if (/^#/) print; next }
        $1 == "devices" { printf "scenario,model"; for (i = 1; i <= NF; i++) printf ",%s", $i
                          printf "\n"; hdr = 1; next }
        hdr { printf "%s,%s", sc, model; for (i = 1; i <= NF; i++) printf ",%s", $i; printf "\n" }
    ' "$raw" >"$out/fig2-$sc.csv"
    rm -f "$raw"
    models+=("$(csv_awk '!done { print v("model"); done = 1 }' "$out/fig2-$sc.csv")")
    files+=("$out/fig2-$sc.csv")
done

# One row per device count, two columns per model, for the plot.
csv_awk '
{ m = fi; name[m] = v("model"); d = v("devices"); if (!(d in seen)) { seen[d] = 1; order[++n] = d }
  a[m, d] = v("attn_W+kv_MiB"); w[m, d] = v("mlp_W_MiB") }
END {
    printf "devices"
    for (j = 1; j <= m; j++) printf ",attn_kv_MiB_%s", name[j]
    for (j = 1; j <= m; j++) printf ",mlp_MiB_%s", name[j]
    printf "\n"
    for (i = 1; i <= n; i++) {
        d = order[i]; printf "%s", d
        for (j = 1; j <= m; j++) printf ",%s", ((j, d) in a) ? a[j, d] : "NaN"
        for (j = 1; j <= m; j++) printf ",%s", ((j, d) in w) ? w[j, d] : "NaN"
        printf "\n"
    }
}' "${files[@]}" >"$out/fig2.csv"

# The L2 sizes from the `#` lines after the table ("# name  40.0 MiB"); accelerators with the
# same size share one line and one label.
awk '/^# on-chip L2/ { on = 1; next } on && /^# / && $NF == "MiB" { print $2 "," $3 }' \
    "$out/fig2-${SCENARIOS[0]}.csv" |
    awk -F, 'BEGIN { print "accelerators,l2_MiB" }
        { if (!($2 in names)) { order[++n] = $2; names[$2] = $1 } else names[$2] = names[$2] "/" $1 }
        END { for (i = 1; i <= n; i++) print names[order[i]] "," order[i] }' >"$out/fig2-l2.csv"
l2names=$(csv_awk '{ printf "%s%s", sep, v("accelerators"); sep = " " }' "$out/fig2-l2.csv")
l2mib=$(csv_awk '{ printf "%s%s", sep, v("l2_MiB"); sep = " " }' "$out/fig2-l2.csv")

gp fig2.gp "$out/fig2.png" 1400,650 csv="$out/fig2.csv" models="${models[*]}" \
    l2names="$l2names" l2mib="$l2mib"

csv_awk '
ok("attn_W+kv_MiB") { printf "attn_kv_mib_%s_%s %.2f\n", v("scenario"), v("devices"), v("attn_W+kv_MiB") }
ok("mlp_W_MiB") { printf "mlp_mib_%s_%s %.2f\n", v("scenario"), v("devices"), v("mlp_W_MiB") }
' "${files[@]}" >"$out/fig2-summary.txt"
