#!/usr/bin/env bash
# Regenerates the README's figures (docs/img/) with the tool's own --plot and the scripts of
# plots/, so they always show the current model and calibration:
#   l2-sweep.png          preserve-model --config llama70b --sweep l2=8MiB:256MiB:8MiB --plot FILE
#   batch-seq.png         preserve-model --config llama70b --sweep batch=1,4,16,64
#                             --sweep seq=2Ki:64Ki:x2 --plot FILE
#   timeline.png          preserve-model timeline --config llama70b --plot FILE
#   timeline-compare.png  preserve-model timeline --config llama70b --compare --plot FILE
#   validate-gpu.png      scripts/validate-gpu.sh (predicted vs measured on data/validation/gpu.csv)
#   serve-910b.png        preserve-model serve --config llama70b --plot FILE
#   serve-h100.png        preserve-model serve --config llama70b-h100 --plot FILE
#   serve-910b-l2.png     preserve-model serve --config llama70b --concurrency 1,2,4,8,16,32,64
#                             --sweep l2=48MiB,96MiB,192MiB,384MiB --plot FILE
#   search-910b-l2.png    preserve-model search --config llama70b --budget 32 --tpot-limit 50ms
#                             --sweep l2=8MiB,24MiB,96MiB,192MiB --plot FILE
# Usage: scripts/readme-figures.sh [OUTDIR]   (default $root/docs/img; the tool is $PM, default
#   build/src/cli/preserve-model). The data and plot scripts are this tree's (data/, plots/).
#   Only the PNGs go to OUTDIR: the CSV the tool writes beside each figure stays in a temporary
#   folder, removed at the end (rerun the command above to get it).
set -euo pipefail
# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"
pm_setup "${1:-$root/docs/img}"
export PRESERVE_MODEL_DATA="$root/data" PRESERVE_MODEL_PLOTS="$root/plots"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$pm" --config llama70b --sweep l2=8MiB:256MiB:8MiB --plot "$tmp/l2-sweep.png" >/dev/null
"$pm" --config llama70b --sweep batch=1,4,16,64 --sweep seq=2Ki:64Ki:x2 \
    --plot "$tmp/batch-seq.png" >/dev/null
"$pm" timeline --config llama70b --plot "$tmp/timeline.png" >/dev/null
"$pm" timeline --config llama70b --compare --plot "$tmp/timeline-compare.png" >/dev/null
PM="$pm" "$root/scripts/validate-gpu.sh" "$tmp" >/dev/null
"$pm" serve --config llama70b --plot "$tmp/serve-910b.png" 2>/dev/null
"$pm" serve --config llama70b-h100 --plot "$tmp/serve-h100.png" 2>/dev/null
"$pm" serve --config llama70b --concurrency 1,2,4,8,16,32,64 \
    --sweep l2=48MiB,96MiB,192MiB,384MiB --plot "$tmp/serve-910b-l2.png" 2>/dev/null
"$pm" search --config llama70b --budget 32 --tpot-limit 50ms --sweep l2=8MiB,24MiB,96MiB,192MiB \
    --plot "$tmp/search-910b-l2.png" 2>/dev/null
for f in l2-sweep batch-seq timeline timeline-compare validate-gpu serve-910b serve-h100 serve-910b-l2 search-910b-l2; do
    cp "$tmp/$f.png" "$out/$f.png"
    echo "$out/$f.png"
done
