#!/usr/bin/env bash
# data/validation/parallel-serving.csv (issue 44 item 6) through scripts/validate-served.py: the
# shipped rows parse and are all printed, every `ok` row runs (none refused, none over the HBM,
# none saturated), every `not_modelled` row keeps its reason, a note that says the hardware is not
# in data/ names hardware that is not, and the DP-attention rows' claim that the tool refuses
# DeepSeek-V3's data-parallel attention still holds. A fixture row at a request rate checks the
# pipeline's output rate against flow conservation by hand, a `refused` fixture the tool runs is
# reported stale (`runs-now`), and malformed rows exit 2.
# Usage: test_validate_parallel_serving.sh PATH/TO/preserve-model SOURCE_ROOT
set -u
pm="$1"
root="$2"
py=${PYTHON:-python3}
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
script="$root/scripts/validate-served.py"
csv="$root/data/validation/parallel-serving.csv"
export PRESERVE_MODEL_DATA="$root/data"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
run() { VALIDATION_CSV="$1" PM="$pm" "$py" "$script" > "$2" 2> "$2.err"; }

# 1. The shipped rows: exit 0, every id printed, each ok row `ok`, each not_modelled row so.
run "$csv" "$tmp/shipped.txt" || fail "the shipped rows: $(cat "$tmp/shipped.txt.err")"
tail -n +2 "$csv" | while IFS=, read -r id _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ _ status _; do
    got=$(awk -v id="$id" '$1 == id { print $7 }' "$tmp/shipped.txt")
    [ "$got" = "$status" ] || echo "FAIL: row $id printed as '$got', its status is '$status'"
done > "$tmp/status.txt"
[ -s "$tmp/status.txt" ] && { cat "$tmp/status.txt"; fails=$((fails + 1)); }
n_ok=$(awk -F, 'NR > 1 && $20 == "ok"' "$csv" | wc -l)
[ "$n_ok" -ge 6 ] || fail "expected at least 6 ok rows, got $n_ok"
grep -q "rows $(($(wc -l < "$csv") - 1)):" "$tmp/shipped.txt" || fail "the row count is not printed"

# 2. A not_modelled note saying 'no ... in data/' names an accelerator or a cluster that is not
# bundled; the notes that say DeepSeek-V3's DP attention is refused are still true.
"$py" - "$csv" "$root/data" > "$tmp/notes.txt" <<'PYEOF'
import csv, os, re, sys
for r in csv.DictReader(open(sys.argv[1])):
    if r["status"] == "not_modelled" and re.search(r"\bno .* in data/", r["note"]):
        have = [os.path.exists(os.path.join(sys.argv[2], kind, r[key] + ".json"))
                for kind, key in (("accelerators", "accelerator"), ("clusters", "cluster"))]
        if all(have):
            print("FAIL: %s says its hardware is not in data/, but %s and %s are"
                  % (r["id"], r["accelerator"], r["cluster"]))
PYEOF
[ -s "$tmp/notes.txt" ] && { cat "$tmp/notes.txt"; fails=$((fails + 1)); }
if grep -q "refused by the tool" "$csv"; then
    if "$pm" run --config deepseek-v3-h200 --ep 8 --dp-attention > /dev/null 2> "$tmp/dpa.err"; then
        fail "DeepSeek-V3 with --dp-attention now runs: the notes of parallel-serving.csv's DP-attention rows are stale"
    elif ! grep -q "attention_data_parallel" "$tmp/dpa.err"; then
        fail "DeepSeek-V3 with --dp-attention is refused for another reason: $(cat "$tmp/dpa.err")"
    fi
fi

# 3. Fixture (not a measurement): Llama-3-70B, TP4 x PP2 on two A100-40GB VMs, 213 in / 214 out,
# an open loop at 1 request/s, "measured" 1 token/s. Unsaturated, the deployment's output rate is
# the arrivals' (flow conservation): 1 request/s x 214 tokens = 214 tokens/s over all 8 GPUs, so
# the printed prediction must be 214 (it is per device x TP x PP: 26.75 x 4 x 2 = 214) and its
# error +21300 %. A TPOT row beside it, "measured" 10 ms: error = prediction / 10 - 1.
head -n 1 "$csv" > "$tmp/fx.csv"
fx="llama3-70b,a100-sxm-40gb,ndv4-a100-ib-hdr,4,TP4xPP2,vLLM fixture,vllm,bf16,bf16,bf16,,213,214,2048,decode_first"
echo "fx.tps,$fx,output_tokens_per_s,mean,1,ok,test fixture,not a measurement,,2,,,1," >> "$tmp/fx.csv"
echo "fx.tpot,$fx,tpot_ms,mean,10,ok,test fixture,not a measurement,,2,,,1," >> "$tmp/fx.csv"
echo "fx.stale,llama3-8b,h100-sxm,nvlink4-nvswitch,1,TP1,vLLM fixture,vllm,bf16,bf16,bf16,4,512,128,2048,decode_first,tpot_ms,mean,10,refused,test fixture,runs today,,,,,," >> "$tmp/fx.csv"
echo "fx.refused,llama3-8b,h100-sxm,nvlink4-nvswitch,1,TP1+DPattn,vLLM fixture,vllm,bf16,bf16,bf16,4,512,128,2048,decode_first,tpot_ms,mean,10,refused,test fixture,a dense model,,,,1,," >> "$tmp/fx.csv"
# A burst row (burst_requests 16, no concurrency or rate) runs as serve --burst 16 and prints b=16.
echo "fx.burst,$fx,tpot_ms,mean,10,ok,test fixture,not a measurement,,2,,,,16" >> "$tmp/fx.csv"
run "$tmp/fx.csv" "$tmp/fx.txt" || fail "the fixtures: $(cat "$tmp/fx.txt.err")"
awk '$1 == "fx.tps" { p = $5 + 0; if (p < 213 || p > 215 || $6 != "+21300.0%" && $6 != "+21299.9%" && $6 != "+21300.1%" || $7 != "ok") { print "FAIL: " $0 ", want 214 tokens/s at +21300 %"; bad = 1 } n++ }
     $1 == "fx.tpot" { p = $5 + 0; want = 100 * (p / 10 - 1); e = $6; sub("%", "", e); d = e - want; if (d < 0) d = -d
                       if ($7 != "ok" || d > 0.06 + 0.001 * (want < 0 ? -want : want)) { print "FAIL: " $0; bad = 1 } n++ }
     $1 == "fx.stale" { if ($7 != "runs-now") { print "FAIL: a refused row the tool runs: " $0; bad = 1 } n++ }
     $1 == "fx.refused" { if ($7 != "refused") { print "FAIL: a refused row: " $0; bad = 1 } n++ }
     $1 == "fx.burst" { if ($3 != "b=16" || $7 != "ok" || $5 + 0 <= 0) { print "FAIL: a burst row: " $0; bad = 1 } n++ }
     END { if (n != 5) { print "FAIL: expected 5 fixture lines, got " n; bad = 1 } exit bad }' "$tmp/fx.txt" ||
    fails=$((fails + 1))

# 4. Malformed rows exit 2: a label that is not its columns', an ok row with both a concurrency
# and a rate, an ok row in fp4, an ok row's p90, a not_modelled row without its reason, an ok row
# with both a rate and a burst.
ok="llama3-70b,a100-sxm-40gb,ndv4-a100-ib-hdr,4"
bad_rows=(
  "fx.a,$ok,TP4,e,vllm,bf16,bf16,bf16,,213,214,2048,decode_first,tpot_ms,mean,10,ok,src,,,2,,,1,"
  "fx.b,$ok,TP4xPP2,e,vllm,bf16,bf16,bf16,8,213,214,2048,decode_first,tpot_ms,mean,10,ok,src,,,2,,,1,"
  "fx.c,$ok,TP4xPP2,e,vllm,fp4,bf16,bf16,,213,214,2048,decode_first,tpot_ms,mean,10,ok,src,,,2,,,1,"
  "fx.d,$ok,TP4xPP2,e,vllm,bf16,bf16,bf16,,213,214,2048,decode_first,tpot_ms,p90,10,ok,src,,,2,,,1,"
  "fx.e,$ok,TP4xPP2,e,vllm,fp4,,,,,,,decode_first,tpot_ms,mean,10,not_modelled,src,,,2,,,,"
  "fx.f,$ok,TP4xPP2,e,vllm,bf16,bf16,bf16,,213,214,2048,decode_first,tpot_ms,mean,10,ok,src,,,2,,,1,16"
)
for r in "${bad_rows[@]}"; do
    { head -n 1 "$csv"; echo "$r"; } > "$tmp/bad.csv"
    run "$tmp/bad.csv" "$tmp/bad.txt"
    rc=$?
    [ "$rc" = 2 ] || fail "malformed row ${r%%,*}: exit $rc, want 2"
done

[ "$fails" = 0 ] && echo "validate-parallel-serving: ok"
exit $((fails > 0))
