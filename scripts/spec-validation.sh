#!/bin/sh
# Speculative decoding against published speedups (issue 45): for each row of
# data/validation/spec-decode.csv, the model's decode speedup over plain decoding (the run
# report's speculative.modes.<mode>.speedup_vs_plain) beside the measured one, and the error.
# A row names its scenario, its speculation (method, draft_tokens, acceptance: passed as the
# --spec-* options) and its overrides (--set PATH=VALUE, separated by ';').
# Usage: scripts/spec-validation.sh [path/to/preserve-model]
set -eu
pm=${1:-build/src/cli/preserve-model}
root=$(dirname "$0")/..
echo "id,mode,measured,model,error_pct"
python3 - "$pm" "$root/data/validation/spec-decode.csv" <<'PY'
import csv, json, subprocess, sys
pm, path = sys.argv[1], sys.argv[2]
for r in csv.DictReader(open(path)):
    args = [pm, "--config", r["scenario"], "--spec-tokens", r["draft_tokens"],
            "--spec-accept", r["acceptance"], "--format", "json"]
    if r["method"] != "mtp":
        sys.exit("%s: method %s: only mtp rows are run (a draft model needs its name)" % (r["id"], r["method"]))
    args += ["--spec-mtp", "1"]
    for ov in filter(None, r["overrides"].split(";")):
        args += ["--set", ov]
    rep = json.loads(subprocess.run(args, check=True, capture_output=True, text=True).stdout)
    m = float(r["measured"])
    for mode in ("serial", "preserve"):
        x = rep["speculative"]["modes"][mode]["speedup_vs_plain"]
        print("%s,%s,%g,%.3f,%.1f" % (r["id"], mode, m, x, 100 * (x - m) / m))
PY
