#!/bin/sh
# Speculative decoding against published speedups (issue 45): for each row of
# data/validation/spec-decode.csv, the model's decode speedup over plain decoding (the run
# report's speculative.modes.<mode>.speedup_vs_plain) beside the measured one, and the error.
# Usage: scripts/spec-validation.sh [path/to/preserve-model]
set -eu
pm=${1:-build/src/cli/preserve-model}
root=$(dirname "$0")/..
echo "id,mode,measured,model,error_pct"
tail -n +2 "$root/data/validation/spec-decode.csv" | while IFS=, read -r id scen _rest; do
    measured=$(grep "^$id," "$root/data/validation/spec-decode.csv" | cut -d, -f7)
    json=$("$pm" --config "$scen" --format json)
    for mode in serial preserve; do
        model=$(printf '%s\n' "$json" | python3 -c "import json,sys; print(json.load(sys.stdin)['speculative']['modes']['$mode']['speedup_vs_plain'])")
        python3 -c "m=$measured; x=$model; print('$id,$mode,%g,%.3f,%.1f' % (m, x, 100*(x-m)/m))"
    done
done
