#!/usr/bin/env bash
# scripts/validate-disagg-e2e.py (issue 45 item 5): the shipped rows of
# data/validation/disagg-e2e.csv parse and are all printed (each not_modelled row with its
# reason); an `ok` row runs through `preserve-model disagg` and its printed error is the signed
# predicted / measured - 1 of the printed prediction; a malformed file exits 2.
# Usage: test_validate_disagg_e2e.sh PATH/TO/preserve-model SOURCE_ROOT
set -u
pm="$1"
root="$2"
py=${PYTHON:-python3}
[ -x /usr/bin/python3 ] && py=/usr/bin/python3
script="$root/scripts/validate-disagg-e2e.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# 1. The shipped rows: exit 0, one output line per measured metric, every row id printed.
if ! PM="$pm" "$py" "$script" > "$tmp/shipped.csv" 2> "$tmp/shipped.err"; then
    fail "the shipped rows: $(cat "$tmp/shipped.err")"
fi
csv="$root/data/validation/disagg-e2e.csv"
for id in $(tail -n +2 "$csv" | cut -d, -f1); do
    grep -q "^$id," "$tmp/shipped.csv" || fail "row $id not printed"
done
# Measured metrics are columns 19..23 (ttft_ms .. total_tokens_per_s_per_device): the output has
# one line per non-empty one, plus the header.
expect=$("$py" -c 'import csv,sys
rows = list(csv.DictReader(open(sys.argv[1])))
m = ["ttft_ms", "tpot_ms", "itl_ms", "output_tokens_per_s", "total_tokens_per_s_per_device"]
print(1 + sum(1 for r in rows for k in m if r[k]))' "$csv")
[ "$(wc -l < "$tmp/shipped.csv")" = "$expect" ] || fail "expected $expect lines, got $(wc -l < "$tmp/shipped.csv")"
grep -v '^id,' "$tmp/shipped.csv" | grep -q ',not_modelled,$' && fail "a not_modelled line without its reason"

# 2. An ok row (a fixture, not a measurement): Llama-3-70B, one H100 TP4 prefill instance and
# one H100 TP4 decode instance, 512 in / 128 out, concurrency 1, "measured" TTFT 100 ms and TPOT
# 20 ms. The printed error must be 100 (predicted / measured - 1) of the printed prediction: for
# TTFT, predicted p gives 100 (p / 100 - 1) = p - 100; for TPOT, 100 (p / 20 - 1) = 5 p - 100.
head -n 1 "$csv" > "$tmp/ok.csv"
echo "fx.ok,llama3-70b,h100-sxm,nvlink4-nvswitch,4,1,h100-sxm,nvlink4-nvswitch,4,1,vllm,fp16,fp16,fp16,512,128,1,,100,20,,,,mean,ok,test fixture,not a measurement" >> "$tmp/ok.csv"
if ! VALIDATION_CSV="$tmp/ok.csv" PM="$pm" "$py" "$script" > "$tmp/ok.out" 2> "$tmp/ok.err"; then
    fail "the ok fixture: $(cat "$tmp/ok.err")"
fi
awk -F, '$1 == "fx.ok" {
    n++
    if ($6 != "ok" || $4 <= 0) { print "FAIL: " $0; bad++ }
    want = $2 == "ttft_ms" ? $4 - 100 : 5 * $4 - 100
    d = $5 - want; if (d < 0) d = -d
    if (d > 0.06 + 0.001 * (want < 0 ? -want : want)) { print "FAIL: error " $5 " for " $0 ", want " want; bad++ }
} END { if (n != 2) { print "FAIL: expected 2 ok lines, got " n; bad++ } exit bad > 0 }' "$tmp/ok.out" ||
    fails=$((fails + 1))

# 3. Malformed files exit 2: a bad status, a not_modelled row without a reason, an ok row
# missing its concurrency, a negative measurement.
bad_rows=(
  "fx.a,m,a,c,4,1,a,c,4,1,r,fp16,fp16,fp16,512,128,1,,100,,,,,mean,maybe,src,why"
  "fx.b,m,a,c,4,1,a,c,4,1,r,fp16,fp16,fp16,512,128,1,,100,,,,,mean,not_modelled,src,"
  "fx.c,llama3-70b,h100-sxm,nvlink4-nvswitch,4,1,h100-sxm,nvlink4-nvswitch,4,1,vllm,fp16,fp16,fp16,512,128,,,100,,,,,mean,ok,src,"
  "fx.d,m,a,c,4,1,a,c,4,1,r,fp16,fp16,fp16,512,128,1,,-5,,,,,mean,not_modelled,src,why"
)
for r in "${bad_rows[@]}"; do
    { head -n 1 "$csv"; echo "$r"; } > "$tmp/bad.csv"
    VALIDATION_CSV="$tmp/bad.csv" PM="$pm" "$py" "$script" > /dev/null 2>&1
    rc=$?
    [ "$rc" = 2 ] || fail "malformed row ${r%%,*}: exit $rc, want 2"
done

[ "$fails" = 0 ] && echo "validate-disagg-e2e: ok"
exit $((fails > 0))
