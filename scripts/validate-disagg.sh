#!/usr/bin/env bash
# Validation of the disaggregated deployment (issue 45): each row of data/validation/disagg.csv
# (a prefill pool and a decode pool, a measured phase time) run through `preserve-model disagg`
# (one prefill and one decode instance, no target rate: the prefill alone, the decode pool at
# the row's concurrency) and set beside the measurement, per mode. Prints CSV: id, metric,
# measured, serial, fused, preserve, serial_error_pct. Usage: scripts/validate-disagg.sh
# (the tool is $PM, default build/src/cli/preserve-model).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
pm=${PM:-$root/build/src/cli/preserve-model}
export PRESERVE_MODEL_DATA="$root/data"
echo "id,metric,measured,serial,fused,preserve,serial_error_pct"
tail -n +2 "$root/data/validation/disagg.csv" |
while IFS=, read -r id model pa pc pd da dc dd rt dt isl osl conc metric measured _; do
    pool() { # $1 prefill|decode, accelerator, cluster, devices
        echo "--$1-config" llama70b-h100 "--$1-set" model="$model" "--$1-set" accelerator="$2" \
            "--$1-set" cluster="$3" "--$1-set" cluster.devices="$4" "--$1-set" runtime="$rt" \
            "--$1-set" workload.weight_dtype="$dt" "--$1-set" workload.act_dtype="$dt" \
            "--$1-set" workload.kv_dtype="$dt"
    }
    # shellcheck disable=SC2046
    "$pm" disagg $(pool prefill "$pa" "$pc" "$pd") $(pool decode "$da" "$dc" "$dd") \
        --input "$isl" --output "$osl" --concurrency "$conc" --prefill-instances 1 \
        --decode-instances 1 --format csv |
    awk -F, -v id="$id" -v metric="$metric" -v m="$measured" '
        /^#/ { next }
        !h { for (i = 1; i <= NF; i++) c[$i] = i; h = 1; next }
        {
            col = metric == "prefill_ms" ? "_prefill_s" : "_tpot_s"
            s = $c["serial" col] * 1e3; f = $c["fused" col] * 1e3; p = $c["preserve" col] * 1e3
            printf "%s,%s,%s,%.4g,%.4g,%.4g,%+.1f\n", id, metric, m, s, f, p, 100 * (s - m) / m
        }'
done
