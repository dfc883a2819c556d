#!/usr/bin/env bash
# Round trips of every writer of the tool (issue 13): what it writes parses back, with Python's
# json and csv modules, to the values it was given, even when the names from the inputs hold
# quotes, commas, backslashes, control characters and multibyte characters.
# Usage: test_writers.sh PATH/TO/preserve-model SOURCE_ROOT
set -u
# shellcheck source=tests/check.sh
. "$2/tests/check.sh"
check_begin "$1" "$2"

# name, python program reading the output on stdin (it raises on a mismatch), command...
check() {
    local name="$1" prog="$2"
    shift 2
    local out
    if ! out=$("$@" 2>&1 >"$tmp/out"); then
        echo "FAIL $name: the command failed: $out"
        fail=$((fail + 1))
    elif ! out=$(python3 -c "$prog" <"$tmp/out" 2>&1); then
        echo "FAIL $name: $out"
        head -c 1500 "$tmp/out"
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
}

# A model whose name holds what breaks careless writers, in a directory with a comma.
name='q"x,y\z é'$'\t''end'
mkdir -p 'dir,1'
python3 - "$name" <<'PY'
import json, sys
json.dump({"kind": "model", "name": sys.argv[1], "num_hidden_layers": 2, "hidden_size": 64,
           "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100,
           "source": 'a "quoted", source'}, open("dir,1/m.json", "w"))
PY
export WANT="$name"
py_csv='import csv, os, sys
def table(f):
    rows = list(csv.reader(l for l in f if not l.startswith("#") and l.strip()))
    head, body = rows[0], rows[1:]
    for r in body:
        assert len(r) == len(head), (len(r), len(head), r)
    return head, body
'

check run-json 'import json, os, sys
d = json.load(sys.stdin)
assert d["inputs"]["model"] == os.environ["WANT"], d["inputs"]["model"]
assert d["inputs"]["devices"] == 4 and d["inputs"]["batch"] == 4, d["inputs"]
assert d["modes"]["preserve"]["tokens_per_s"] > 0' \
    "$pm" --model './dir,1/m.json' --format json

check run-csv "$py_csv"'
head, body = table(sys.stdin)
row = dict(zip(head, body[0]))
assert len(body) == 1 and row["model"] == os.environ["WANT"], row["model"]
assert row["devices"] == "4" and float(row["preserve_tokens_per_s"]) > 0' \
    "$pm" --model './dir,1/m.json' --format csv

# JSON and CSV of one sweep agree point by point, errors included (devices=64 is refused).
"$pm" --config llama8b --sweep devices=2,64 --sweep batch=1,4 --format json >sweep.json
check sweep-csv-vs-json "$py_csv"'
import json
head, body = table(sys.stdin)
pts = json.load(open("sweep.json"))["points"]
assert len(pts) == len(body) == 4, (len(pts), len(body))
for p, r in zip(pts, body):
    row = dict(zip(head, r))
    assert float(row["devices"]) == p["devices"] and float(row["batch"]) == p["batch"]
    assert row["error"] == p["error"], (row["error"], p["error"])
    if not p["error"]:
        # the CSV has 9 significant digits, the JSON every digit (round-trip)
        c, j = float(row["preserve_tpot_s"]), p["preserve_tpot_s"]
        assert abs(c - j) <= 5e-9 * j and float("%.9g" % j) == c, (c, j)
assert "\"" in pts[2]["error"] or "heads" in pts[2]["error"], pts[2]["error"]' \
    "$pm" --config llama8b --sweep devices=2,64 --sweep batch=1,4

check resolve-csv "$py_csv"'
head, body = table(sys.stdin)
assert head == ["path", "value_si", "unit_si", "origin", "file", "source"], head
mine = [r for r in body if r[4] == "./dir,1/m.json" and r[3] == "given"]
assert mine and all(r[5] == "a \"quoted\", source" for r in mine), mine[:1]
assert any(r[0] == "$.model.hidden_size" and float(r[1]) == 64 for r in mine)' \
    "$pm" resolve --model './dir,1/m.json'

check footprint-csv "$py_csv"'
head, body = table(sys.stdin)
assert [int(r[0]) for r in body] == [1, 2, 4, 8, 16], body' \
    "$pm" footprint --format csv

check timeline-csv "$py_csv"'
head, body = table(sys.stdin)
assert head[:4] == ["lane_index", "lane", "node", "kind"], head
assert any(r[2] == "PF.L1.Gate" for r in body)
assert all(float(r[5]) >= float(r[4]) for r in body)' \
    "$pm" timeline

"$pm" graph --layers 1 >graph.json
check graph-dot-vs-json 'import json, re, sys
nodes = [n["name"] for n in json.load(open("graph.json"))["nodes"]]
labels = re.findall(r"^  n(\d+) \[label=\"((?:[^\"\\]|\\.)*)\"", sys.stdin.read(), re.M)
assert len(labels) == len(nodes), (len(labels), len(nodes))
for (i, lab), name in zip(labels, nodes):
    text = re.sub(r"\\(.)", lambda m: "\n" if m.group(1) == "n" else m.group(1), lab)
    assert text.split("\n")[0] == name, (text, name)' \
    "$pm" graph --layers 1 --format dot

check graph-json-names 'import json, sys
g = json.load(sys.stdin)
assert g["nodes"] and all(isinstance(n["name"], str) for n in g["nodes"])' \
    "$pm" graph --layers 1 --set "model.name=$name"

# Shards merged are the single run, byte for byte, and parse as it does.
"$pm" --config llama8b --sweep devices=2,64 --sweep batch=1,4 >single.csv
for k in 1 2 3; do
    "$pm" --config llama8b --sweep devices=2,64 --sweep batch=1,4 --shard $k/3 >s$k.csv
done
check merge-csv "$py_csv"'
head, body = table(sys.stdin)
assert open("single.csv").read() == open("merged.csv").read()
assert len(body) == 4' bash -c '"$0" merge s3.csv s1.csv s2.csv | tee merged.csv' "$pm"

# A line break in an option or a name never starts a line of data: the comment lines write it
# as \n, and every CSV still parses to its header's width.
nl='a'$'\n''b,c'
for args in "--sweep batch=1" "--format csv" "timeline" "footprint --format csv" \
    "--optimize l2=8MiB:64MiB"; do
    # shellcheck disable=SC2086
    check "comment-line-break: $args" "$py_csv"'
head, body = table(sys.stdin)
assert body, "no rows"' "$pm" $args --set "model.name=$nl"
done

check_end
