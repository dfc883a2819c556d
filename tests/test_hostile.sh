#!/usr/bin/env bash
# Hostile inputs the fixtures in tests/configs/invalid/ cannot hold: generated files too large
# to ship (100000 levels of nesting, a 1 MB key, 100000 keys), files that are not files
# (a directory, an unreadable file), and command-line values at integer limits (--set,
# --devices, --seq, --batch). Every case must end in its documented exit code with a message
# that names the file (or option) and the JSON path; none may crash, hang or print NaN (unless
# the command line itself spelled "nan" or "inf", which a message may quote).
# Usage: test_hostile.sh PATH/TO/preserve-model DATA_DIR
# PM_WRAPPER (e.g. "valgrind --error-exitcode=99 ...") runs the tool under a checker, and
# PM_TIME_LIMIT (seconds per case, default 20) gives it the time (scripts/valgrind.sh).
set -u
pm="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")" # the cases run in a scratch directory
export PRESERVE_MODEL_DATA="$(cd "$2" && pwd)"
fail=0
pass=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Seconds any one case may take: the largest input here is a few MB, parsed in milliseconds.
limit="${PM_TIME_LIMIT:-20}"
read -r -a wrapper <<<"${PM_WRAPPER:-}"
# The tool under the wrapper, for the cases that run it from a shell of their own (bash -c):
# those run the shell unwrapped (check_sh), so the checker sees the tool and not bash.
export PMW="${wrapper[*]} $pm"

check() { # name, expected exit code, substring expected in stdout+stderr, command...
    local name="$1" code="$2" want="$3"
    shift 3
    local out rc
    out=$(timeout "$limit" "${wrapper[@]}" "$@" 2>&1)
    rc=$?
    local why=""
    if [ "$rc" -eq 124 ]; then
        why="hung (killed after $limit s)"
    elif [ "$rc" -ge 128 ]; then
        why="crashed (signal $((rc - 128)))"
    elif [ "$rc" -ne "$code" ]; then
        why="exit $rc, want $code"
    elif ! grep -qF -- "$want" <<<"$out"; then
        why="output lacks '$want'"
    elif ! grep -qiE 'nan|inf' <<<"$*" && grep -qiwE -- '-?(nan|inf|infinity)' <<<"$out"; then
        why="a non-finite number in the output"
    elif [ "${#out}" -gt 100000 ]; then
        why="${#out} bytes of output (an input echoed whole?)"
    fi
    if [ -n "$why" ]; then
        echo "FAIL $name: $why:"
        head -c 2000 <<<"$out"
        echo
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
}

check_sh() { # as check, for a command that runs $PMW itself
    local saved=("${wrapper[@]}")
    wrapper=()
    check "$@"
    wrapper=("${saved[@]}")
}

cd "$tmp" || exit 1

# ---- nesting: our limit is 64, cJSON's 1000 -----------------------------------------------
nest() { # count, opener, closer, inner -> file on stdout
    head -c "$1" </dev/zero | tr '\0' "$2"
    printf '%s' "$4"
    head -c "$1" </dev/zero | tr '\0' "$3"
}
nest 100000 '[' ']' '' >deep-arrays.json
check deep-arrays-100000 1 'deep-arrays.json:1:65: JSON nested deeper than 64 levels' \
    "$pm" validate deep-arrays.json
nest 999 '[' ']' '' >deep-999.json
check deep-arrays-999 1 'nested deeper than 64 levels' "$pm" validate deep-999.json
nest 1000 '[' ']' '' >deep-1000.json
check deep-arrays-1000 1 'nested deeper than 64 levels' "$pm" validate deep-1000.json
# Unclosed: the depth is found before the missing end.
head -c 100000 </dev/zero | tr '\0' '[' >deep-unclosed.json
check deep-arrays-unclosed 1 'nested deeper than 64 levels' "$pm" validate deep-unclosed.json
{
    printf '{"kind": "scenario", "name": "x", "model": '
    for _ in $(seq 100000); do printf '{"a": '; done
    printf '1'
    head -c 100000 </dev/zero | tr '\0' '}'
    printf '}\n'
} >deep-objects.json
check deep-objects-100000 1 'deep-objects.json:1:' "$pm" validate deep-objects.json
check deep-objects-message 1 'nested deeper than 64 levels' "$pm" validate deep-objects.json
# Passing: 64 levels are allowed (a valid array, but not an object: a type error at $).
nest 64 '[' ']' '1' >deep-64.json
check deep-arrays-64 1 '$: expected a JSON object (got an array)' "$pm" validate deep-64.json

# ---- long strings ------------------------------------------------------------------------
key=$(head -c 1048576 </dev/zero | tr '\0' 'k')
printf '{"kind": "workload", "name": "w", "batch": 4, "seq_len": 1024, "prefill_frac": 0.5,
 "weight_dtype": "bf16", "kv_dtype": "bf16", "act_dtype": "bf16", "%s": 1}\n' "$key" >long-key.json
check long-key-1mb 1 'long-key.json: $.kkkk' "$pm" validate long-key.json
check long-key-1mb-message 1 'unknown key "kkkk' "$pm" validate long-key.json
key=$(head -c 1048576 </dev/zero | tr '\0' '_')
printf '{"kind": "workload", "name": "w", "batch": 4, "seq_len": 1024, "prefill_frac": 0.5,
 "weight_dtype": "bf16", "kv_dtype": "bf16", "act_dtype": "bf16", "%s_MiB": 1}\n' "$key" \
    >long-underscores.json
check long-key-of-underscores 1 'long-underscores.json: $.____' "$pm" validate long-underscores.json
printf '{"kind": "model", "name": "%s", "num_hidden_layers": 2, "hidden_size": 64,
 "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 100, "source": "t"}\n' \
    "$(head -c 1048576 </dev/zero | tr '\0' 'n')" >long-name.json
# A name longer than its field is refused (a cut name would be another name), not cut.
check long-name-1mb-is-refused 1 'long-name.json: $.name: expected a name of at most 63 bytes (got 1048576' \
    "$pm" validate long-name.json
# More keys of one component from outside its file than the origin record holds: refused, not
# recorded as the component file's.
sets=()
for i in $(seq 0 64); do sets+=(--set "model.extra_$i=1"); done
check many-origins-refused 1 'more than 64 keys of one component are given outside its file' \
    "$pm" resolve --config llama8b "${sets[@]}"

# ---- many keys: the duplicate check must not be quadratic --------------------------------
{
    printf '{"kind": "workload"'
    for i in $(seq 0 99999); do printf ', "k%d": 0' "$i"; done
    printf ', "k5": 1}\n'
} >many-keys.json
check many-keys-duplicate 1 'many-keys.json: $.k5: duplicate key "k5"' "$pm" validate many-keys.json

# ---- files that are not JSON, or not files ----------------------------------------------
: >empty.json
check empty-file 1 'empty.json: empty file' "$pm" validate empty.json
head -c 65536 /dev/urandom >random.json
check random-bytes 1 'random.json' "$pm" validate random.json
printf '\x01\x02\x03binary\xff\xfe' >garbage.json
check binary-garbage 1 'garbage.json:1:1: JSON syntax error' "$pm" validate garbage.json
printf '{"kind": "model", "name": "\xff"}' >latin.json
check non-utf8-string 1 'latin.json:1:28: JSON syntax error: invalid UTF-8' "$pm" validate latin.json
printf '{"kind": "model", "\xc3\x28": 1}' >badkey.json
check non-utf8-key 1 'badkey.json:1:20: JSON syntax error: invalid UTF-8' "$pm" validate badkey.json
# A 2 GB file (sparse: no disk used) is refused from its size before a byte is read.
truncate -s 2G huge.json
check huge-file-refused-unread 1 'huge.json: 2147483648 bytes: input files are limited to 67108864 bytes' \
    "$pm" validate huge.json
rm -f huge.json
# An ignored HuggingFace key whose value is not a number: resolve leaves its value empty (it
# printed nan).
printf '{"model_type": "llama", "num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4,
 "intermediate_size": 128, "vocab_size": 100, "rope_scaling": {"type": "linear"}}\n' >hf-ignored.json
check resolve-ignored-object 0 '$.model.rope_scaling,,1,ignored,' "$pm" resolve --model ./hf-ignored.json
# Dimensions at the limit: the default MLP width 4 x hidden_size is computed in 64 bits and
# refused when it exceeds the limit (it overflowed an int).
printf '{"kind": "model", "name": "x", "source": "s", "num_hidden_layers": 2,
 "hidden_size": 1073741824, "num_attention_heads": 8, "vocab_size": 100}\n' >wide.json
check dim-default-overflow 1 'wide.json: $.intermediate_size: the default 4 x hidden_size = 4294967296 exceeds 1073741824' \
    "$pm" validate wide.json
mkdir dir.json
check directory 1 'dir.json: not a regular file' "$pm" validate dir.json
check directory-as-config 1 'not a regular file' "$pm" --config ./dir.json
printf '{"kind": "scenario", "name": "s", "model": "./dir.json", "accelerator": "ascend-910b",
 "cluster": "hccs-full-mesh", "workload": "paper-default"}\n' >names-dir.json
check directory-as-component 1 'names-dir.json: $.model: "./dir.json" is not a regular file' \
    "$pm" --config ./names-dir.json
check missing-file 1 'no such file' "$pm" --config ./nothing-here.json
if [ "$(id -u)" -ne 0 ]; then
    printf '{"kind": "model"}' >unreadable.json
    chmod 000 unreadable.json
    check unreadable 1 'unreadable.json: cannot open' "$pm" validate unreadable.json
    chmod 600 unreadable.json
fi
longpath=$(head -c 5000 </dev/zero | tr '\0' 'p')
# Longer than the 1023 bytes every kept path holds (errors and `resolve` name each input's file
# whole): refused, not cut.
check path-too-long 1 'is 5005 bytes long, more than the 1023 this reader handles' \
    "$pm" validate "$longpath.json"

# ---- numbers in files at the limits of their types ---------------------------------------
printf '{"kind": "scenario", "name": "s", "model": "llama3-70b", "accelerator": "ascend-910b",
 "cluster": {"from": "hccs-full-mesh", "devices": 2147483647}, "workload": "paper-default"}\n' \
    >devices-max.json
check file-devices-int-max 1 'devices-max.json: $.cluster.devices: must be in [1, 1048576]' \
    "$pm" --config ./devices-max.json
printf '{"kind": "scenario", "name": "s", "model": "llama3-70b", "accelerator": "ascend-910b",
 "cluster": "hccs-full-mesh", "workload": {"from": "paper-default", "seq_len": 9223372036854775807}}\n' \
    >seq-max.json
check file-seq-int64-max 1 'seq-max.json: $.workload.seq_len: must be in [2, 4294967296]' \
    "$pm" --config ./seq-max.json
printf '{"kind": "scenario", "name": "s", "model": "llama3-70b", "accelerator": {"from": "ascend-910b",
 "hbm_bandwidth_TBps": 5e-324}, "cluster": "hccs-full-mesh", "workload": "paper-default"}\n' \
    >denormal.json
check file-bandwidth-denormal 1 'denormal.json: $.accelerator.hbm_bandwidth_TBps: must be in' \
    "$pm" --config ./denormal.json

# ---- --set at the limits ------------------------------------------------------------------
for v in 2147483647 2147483648 9223372036854775807 -1 0 1e308 5e-324 -9223372036854775808; do
    check "set-batch=$v" 1 "--set workload.batch=$v: \$.workload.batch:" \
        "$pm" --config llama70b --set "workload.batch=$v"
    check "set-devices=$v" 1 "--set cluster.devices=$v: \$.cluster.devices:" \
        "$pm" --config llama70b --set "cluster.devices=$v"
done
for v in 9223372036854775807 4294967297 -1 1 1e308 5e-324; do
    check "set-seq=$v" 1 "--set workload.seq_len=$v: \$.workload.seq_len:" \
        "$pm" --config llama70b --set "workload.seq_len=$v"
done
for v in 2147483647 1073741825 -1; do
    check "set-layers=$v" 1 "--set model.num_hidden_layers=$v: \$.model.num_hidden_layers:" \
        "$pm" --config llama70b --set "model.num_hidden_layers=$v"
done
check set-bandwidth-1e308 1 '$.accelerator.hbm_bandwidth_TBps: out of range: 1e+308 TBps' \
    "$pm" --config llama70b --set accelerator.hbm_bandwidth_TBps=1e308
check set-bandwidth-denormal 1 '$.accelerator.hbm_bandwidth_TBps: must be in [1e-09, 1e+06] TBps' \
    "$pm" --config llama70b --set accelerator.hbm_bandwidth_TBps=5e-324
check set-link-latency-huge 1 '$.cluster.link_latency_us: must be 0 or in' \
    "$pm" --config llama70b --set cluster.link_latency_us=1e308
check set-launch-denormal 1 '$.accelerator.kernel_launch_us: must be 0 or in' \
    "$pm" --config llama70b --set accelerator.kernel_launch_us=5e-324
check set-prefill-denormal 1 '$.workload.prefill_frac' \
    "$pm" --config llama70b --set workload.prefill_frac=5e-324
check set-not-finite 1 '--set workload.batch=1e999: $.workload.batch: number out of range (not finite)' \
    "$pm" --config llama70b --set workload.batch=1e999
check set-multiplier-overflow 1 '--set workload.seq_len=1e308Ki: $.workload.seq_len: '"'"'1e308Ki'"'"' overflows' \
    "$pm" --config llama70b --set workload.seq_len=1e308Ki
check set-nan-text 1 '$.accelerator.hbm_bandwidth_TBps: expected a number (got a string)' \
    "$pm" --config llama70b --set accelerator.hbm_bandwidth_TBps=NaN
# The tool refuses overrides over PATH_MAX + 63 = 4159 bytes (a usage error; a path of
# PATH_MAX after model= fits); the library refuses keys over 255.
check set-deep-value 2 'longer than 4159 bytes' \
    "$pm" --config llama70b --set "workload.batch=$(head -c 100000 </dev/zero | tr '\0' '[')"
check set-deep-value-short 1 '$.workload.batch' \
    "$pm" --config llama70b --set "workload.batch=$(head -c 200 </dev/zero | tr '\0' '[')"
check set-huge-override 2 'longer than 4159 bytes' "$pm" --config llama70b \
    --set "$(head -c 100000 </dev/zero | tr '\0' 'k')=1"
# A model file at a 300-character path loads through --model (overrides were cut at 287 bytes),
# and `resolve` names it whole.
long_dir="$tmp/$(head -c 150 </dev/zero | tr '\0' 'd')/$(head -c 150 </dev/zero | tr '\0' 'e')"
mkdir -p "$long_dir" && cp "$PRESERVE_MODEL_DATA/models/llama3-8b.json" "$long_dir/m.json"
check long-model-path 0 'speedup: preserve vs serial' "$pm" --config llama70b --model "$long_dir/m.json"
check long-model-path-resolve 0 "$long_dir/m.json" "$pm" resolve --config llama70b --model "$long_dir/m.json"
printf '{"kind": "model", "name": 1}' >"$long_dir/bad.json"
check long-path-error-whole 1 "$long_dir/bad.json: \$.name: expected a string" "$pm" validate "$long_dir/bad.json"
check set-long-key 1 'key too long' "$pm" --config llama70b \
    --set "workload.$(head -c 260 </dev/zero | tr '\0' 'k')=1"

# ---- options at the limits (usage errors, exit 2) ----------------------------------------
for v in 2147483647 9223372036854775807 -1 0 1e308 5e-324 nan; do
    check "devices-option=$v" 2 '--devices' "$pm" --config llama70b --devices "$v"
    check "batch-option=$v" 2 '--batch' "$pm" --config llama70b --batch "$v"
done
for v in 9223372036854775807 4294967297 -1 1 1e308 5e-324 nan; do
    check "seq-option=$v" 2 '--seq' "$pm" --config llama70b --seq "$v"
done
# Passing: the largest values the options take give finite numbers (or a model error).
check devices-option-max 1 'exceed the model' "$pm" --config llama70b --devices 1048576
check seq-option-max 0 'sequence 4294967296' "$pm" --config llama8b --seq 4294967296
check batch-option-max 0 'batch 16777216' "$pm" --config llama8b --batch 16777216

# ---- outputs that cannot be written (issue 13) --------------------------------------------
# A full device: every command's stdout is checked when it ends.
if [ -w /dev/full ]; then
    for args in "--config llama70b" "--format json" "--format csv" "--sweep l2" \
        "--sweep l2=8MiB:16MiB:8MiB --format json" "graph" "graph --format dot" "explain" \
        "footprint" "resolve" "timeline" "list models" "validate" "--help" "--version" \
        "--optimize l2=8MiB:64MiB"; do
        # shellcheck disable=SC2086
        check_sh "full-stdout: $args" 1 'cannot write stdout: No space left on device' \
            bash -c '$PMW "$@" >/dev/full' "$pm" $args
    done
fi
# A file-size limit: an error (EFBIG), not a kill by SIGXFSZ with a partial file.
check_sh file-size-limit-stdout 1 'cannot write stdout: File too large' \
    bash -c 'ulimit -f 4; exec $PMW --sweep l2 --sweep batch >limited.csv' "$pm"
check_sh file-size-limit-plot-csv 1 'cannot write lim.png.csv: File too large' \
    bash -c 'ulimit -f 4; exec $PMW --sweep l2 --sweep batch=1,2 --plot lim.png >/dev/null' "$pm"
check_sh file-size-limit-plot-nothing-left 0 'none' bash -c 'ls lim.png* 2>/dev/null || echo none'
check_sh file-size-limit-plot-no-wrote 1 'File too large' \
    bash -c 'o=$(ulimit -f 4; $PMW --sweep l2 --sweep batch=1,2 --plot lim.png 2>&1 >/dev/null)
        case $o in *wrote*) exit 3 ;; esac; echo "$o"; exit 1' "$pm"
# gnuplot's figure under a limit: it is killed, the figure is not renamed into place, and the
# tool says why in words (never a raw wait status, never "wrote").
if command -v gnuplot >/dev/null; then
    check_sh figure-size-limit 1 'gnuplot was killed by signal 25' \
        bash -c 'ulimit -f 8; exec $PMW --sweep l2=8MiB:16MiB:8MiB --plot fig.png >/dev/null' "$pm"
    check_sh figure-size-limit-no-figure 0 'no figure' bash -c 'ls fig.png fig.png.tmp* 2>/dev/null || echo no figure'
fi

# ---- no fixed buffer cuts silently (issue 13) --------------------------------------------
# A --sweep list of 1,500 characters: the last value evaluated is the one given.
long=$(printf '1,%.0s' $(seq 700))7
check_sh sweep-long-list 0 'last=7.' bash -c 'echo "last=$($PMW --config llama8b --sweep "batch=$1" |
    tail -1 | cut -d, -f1)."' "$pm" "$long"
check_sh sweep-long-list-rows 0 'rows=701.' bash -c 'echo "rows=$($PMW --config llama8b --sweep "batch=$1" |
    grep -vc "^[#b]")."' "$pm" "$long"
check sweep-empty-item 2 'batch=1,,2: empty item 2 in the list' "$pm" --sweep batch=1,,2
check sweep-trailing-comma 2 'empty item 3 in the list' "$pm" --sweep batch=1,2,
check sweep-long-item 2 'list item 1 is longer than 127 characters' \
    "$pm" --sweep "batch=$(head -c 200 </dev/zero | tr '\0' '1')"
# --devices-list of 40 counts: 40 rows, the last one the last given.
devs=$(printf '1,%.0s' $(seq 39))16
check_sh devices-list-40 0 'rows=40 last=16.' bash -c 'o=$($PMW footprint --format csv --devices-list "$1" |
    grep -E "^[0-9]+,"); echo "rows=$(wc -l <<<"$o") last=$(tail -1 <<<"$o" | cut -d, -f1)."' \
    "$pm" "$devs"
check devices-list-empty-item 2 '--devices-list: empty item 2' "$pm" footprint --devices-list 1,,2
# A model name of 31 two-byte characters (62 bytes) fits the 63-byte name field whole: the JSON
# of run and of the graph stays valid UTF-8 (the graph's prefetch labels are cut between
# characters); 32 of them (64 bytes) are refused, not cut.
name=$(printf '\xc3\xa9%.0s' $(seq 31))
check_sh utf8-name-too-long 1 'at most 63 bytes (got 64' bash -c '$PMW --set "model.name=$1"' \
    "$pm" "$(printf '\xc3\xa9%.0s' $(seq 32))"
check_sh utf8-name-json 0 'valid' bash -c '$PMW --set "model.name=$1" --format json |
    python3 -c "import json,sys; json.load(sys.stdin); print(\"valid\")"' "$pm" "$name"
check_sh utf8-name-graph 0 'valid' bash -c '$PMW graph --set "model.name=$1" --layers 1 |
    python3 -c "import json,sys; json.load(sys.stdin); print(\"valid\")"' "$pm" "$name"
check_sh utf8-name-whole 0 'whole characters' bash -c '$PMW --set "model.name=$1" --format csv |
    python3 -c "import csv,sys; r=list(csv.reader(l for l in sys.stdin if not l.startswith(\"#\")));
m=r[1][1]; assert set(m) == {\"\u00e9\"}, m; print(\"whole characters\")"' "$pm" "$name"

# ---- merge verifies its shards (issue 13) -------------------------------------------------
# (The shards' headers hold no '# warning:' line: the line numbers below count none.)
for k in 1 2 3; do
    "$pm" --config llama8b --sweep batch=1:12:1 --shard $k/3 >m$k.csv 2>/dev/null
done
check merge-whole 0 '' "$pm" merge m1.csv m2.csv m3.csv
head -c -20 m1.csv >cut.csv
check merge-cut-mid-line 1 'cut.csv:' "$pm" merge cut.csv m2.csv m3.csv
check merge-cut-mid-line-message 1 'the shard is incomplete' "$pm" merge cut.csv m2.csv m3.csv
head -n -2 m1.csv >short.csv
check merge-cut-at-a-row 1 "short.csv:8: no '# shard K/N end' line: the shard is incomplete" \
    "$pm" merge short.csv m2.csv m3.csv
sed '8p' m1.csv >extra.csv
check merge-extra-row 1 'extra.csv:11: 5 rows, but the shard line says 4 and the end line 4' \
    "$pm" merge extra.csv m2.csv m3.csv
sed '6s/^1,/9,/' m1.csv >relabel.csv
check merge-relabelled-row 1 'relabel.csv:10: the rows differ from those the shard wrote' \
    "$pm" merge relabel.csv m2.csv m3.csv
sed '6s/,[^,]*$//' m1.csv >fields.csv
ncols=$(grep -v '^#' m1.csv | head -1 | awk -F, '{print NF}') # the header's field count
check merge-short-row 1 "fields.csv:6: $((ncols - 1)) fields, the header has $ncols" "$pm" merge fields.csv m2.csv m3.csv
# Same command line, other inputs (a data directory with another intermediate size): refused.
cp -r "$PRESERVE_MODEL_DATA" otherdata
sed -i 's/"intermediate_size": 14336/"intermediate_size": 14208/' otherdata/models/llama3-8b.json
"$pm" --data-dir otherdata --config llama8b --sweep batch=1:12:1 --shard 2/3 >other2.csv 2>/dev/null
check merge-other-inputs 1 'other2.csv and m1.csv come from different sweeps (their resolved inputs or grids differ)' \
    "$pm" merge m1.csv other2.csv m3.csv
check merge-dev-zero 1 '/dev/zero: not a regular file' "$pm" merge /dev/zero
check merge-directory 1 'otherdata: not a regular file' "$pm" merge otherdata
truncate -s 5G huge.csv
check merge-too-large 1 'huge.csv: 5368709120 bytes, more than the 4294967296 a shard may hold' \
    "$pm" merge huge.csv
rm -f huge.csv

# ---- messages name the real cause (issue 13) ----------------------------------------------
ln -s loop-b.json loop-a.json
ln -s loop-a.json loop-b.json
check symlink-loop-config 1 './loop-a.json: too many levels of symbolic links' "$pm" --config ./loop-a.json
check symlink-loop-bare 1 'loop-a.json: too many levels of symbolic links' "$pm" --config loop-a.json
check symlink-loop-set 1 '--set model=./loop-a.json: $.model: too many levels of symbolic links' \
    "$pm" --config llama8b --set model=./loop-a.json
check set-bad-component 1 '--set model=nosuch: $.model: no file "nosuch" and no bundled model' \
    "$pm" --config llama8b --set model=nosuch
cp -r "$PRESERVE_MODEL_DATA" msgdata
rm msgdata/models/llama3-8b.json
mkdir msgdata/models/llama3-8b.json
check bundled-not-regular 1 'msgdata/models/llama3-8b.json: not a regular file' \
    "$pm" --data-dir msgdata --config llama8b
rmdir msgdata/models/llama3-8b.json
ln -s llama3-8b.json msgdata/models/llama3-8b.json
check bundled-symlink-loop 1 'msgdata/models/llama3-8b.json: too many levels of symbolic links' \
    "$pm" --data-dir msgdata --config llama8b
# gnuplot's end in words: a gnuplot that exits 3, and one killed by a signal.
mkdir fakebin
printf '#!/bin/sh\nexit 3\n' >fakebin/gnuplot
chmod +x fakebin/gnuplot
check_sh gnuplot-exit-status 1 'gnuplot exited with status 3; the CSV is in g3.png.csv' \
    env PATH="$PWD/fakebin:$PATH" $PMW --sweep l2=8MiB:16MiB:8MiB --plot g3.png
printf '#!/bin/sh\nkill -SEGV $$\n' >fakebin/gnuplot
check_sh gnuplot-signal 1 'gnuplot was killed by signal 11 (Segmentation fault)' \
    env PATH="$PWD/fakebin:$PATH" $PMW --sweep l2=8MiB:16MiB:8MiB --plot g11.png
printf '#!/bin/sh\n: >"$(echo "$4" | sed "s/^out=.\\(.*\\).$/\\1/")"\n' >fakebin/gnuplot
check_sh gnuplot-empty-figure 1 'gnuplot left g0.png empty or incomplete' \
    env PATH="$PWD/fakebin:$PATH" $PMW --sweep l2=8MiB:16MiB:8MiB --plot g0.png
check_sh gnuplot-empty-figure-gone 0 'no figure' bash -c 'ls g0.png g0.png.tmp* 2>/dev/null || echo no figure'

# ---- Round 4 (issue 42): a hostile pass over footprint, EP, runtimes, plots, the HF reader
# and --optimize. Each case failed before its fix.
hf=$(dirname "$PRESERVE_MODEL_DATA")/tests/configs/hf
# footprint --ep N holds N ranks at every row (it was ignored: EP = devices, 4 at 4 devices).
# Mixtral-8x7B at 4 devices over 2 ranks: 4 experts a rank, each split over 2 devices:
# 4 x 3 x 4096 x 14336 / 2 int8 bytes = 336 MiB, plus the router's 4096 x 8 = 0.031 MiB.
check footprint-ep-held 0 '4,10,32,42,42,0,2,336.031' \
    "$pm" footprint --config mixtral8x7b --ep 2 --devices-list 2,4 --format csv
check footprint-ep-row 1 'footprint --ep 8 at 4 devices (--devices-list): $.cluster.expert_parallel: must divide devices' \
    "$pm" footprint --config mixtral8x7b --ep 8 --devices-list 8,4
check footprint-ep-dense 1 'needs a mixture-of-experts model' \
    "$pm" footprint --config llama70b --ep 2 --devices-list 2
# --devices was dropped by footprint: its rows are --devices-list's.
check footprint-devices 2 'would change nothing' "$pm" footprint --config llama70b --devices 8
# EP on a MoE model none of whose layers has experts (DeepSeek-V3's 61 layers all dense).
check ep-all-dense 1 'needs a layer with experts' \
    "$pm" --config deepseek-v3-h200 --set model.first_k_dense_replace=61
# An unknown top-level key of --set is the option's error, not the scenario file's.
check set-unknown-top 1 'error: --set foo=3: $.foo: unknown key' "$pm" --config llama70b --set foo=3
# A runtime's allreduce decides the cluster's algorithm: its --set is named, not the cluster file.
check runtime-allreduce-blame 1 '--set runtime.allreduce=hierarchical: $.runtime.allreduce' \
    "$pm" --config mixtral8x7b --set runtime=trtllm --set runtime.allreduce=hierarchical
# A directory where a plot script should be (it was "a full disk").
mkdir -p plotsdir/sweep.gp
check plot-script-dir 1 'plotsdir/sweep.gp is not a regular file (a directory)' \
    env PRESERVE_MODEL_PLOTS="$PWD/plotsdir" "${wrapper[@]}" "$pm" --sweep l2=8MiB:16MiB:8MiB --plot d.png
# A wrapper inside a wrapper: Gemma-3's whole config as its own text_config (it called the
# supported gemma3 family unsupported).
mkdir -p nested
python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["text_config"]=dict(c); json.dump(c,open("nested/config.json","w"))' \
    "$hf/gemma-3-27b-it-config.json"
check hf-nested-wrapper 1 'text_config names the multimodal wrapper "gemma3" (a wrapper inside a wrapper)' \
    "$pm" --model nested/config.json
# compressed-tensors' num_bits: 1e308 is not a bit count (it was "below 8 bits"); 12 bits is
# not below 8.
for nb in 1e308 12; do
    mkdir -p "q$nb"
    python3 -c 'import json,sys; c=json.load(open(sys.argv[1])); c["quantization_config"]={"quant_method":"compressed-tensors","config_groups":{"g":{"weights":{"num_bits":float(sys.argv[2]),"type":"int"}}}}; json.dump(c,open(sys.argv[3],"w"))' \
        "$hf/llama3-8b-config.json" "$nb" "q$nb/config.json"
done
check hf-num-bits-huge 1 '$.quantization_config.config_groups: group "g": weights.num_bits must be a whole number of bits in [1, 32] (got 1e+308)' \
    "$pm" --config llama8b --model q1e308/config.json
check hf-num-bits-12 0 'no datatype here has 12 bits' "$pm" --config llama8b --model q12/config.json
# --optimize on a count axis it does not search says so (not a generic "needs a continuous
# axis, 0 < lo < hi..."), and an unknown axis lists only the axes it can search: the continuous
# ones and the counts pp, dp and split.
check optimize-count 2 '--optimize: batch is a count the optimum search does not take (it takes l2, l2_bw, compute, hbm_bw, link_bw, pp, dp, split)' \
    "$pm" --optimize batch
check optimize-unknown-list 2 'expected l2, l2_bw, compute, hbm_bw, link_bw, pp, dp, split)' "$pm" --optimize bogus

# ---- round 5 (issue 48): an error says what to do ------------------------------------------
# A model file, or a HuggingFace config, where the scenario goes: use --model.
check config-given-model 1 'expected a scenario file here (got a "model" file): give it as the model (--model FILE' \
    "$pm" --config "$PRESERVE_MODEL_DATA/models/llama3-8b.json"
check config-given-hf 1 '$: a HuggingFace config.json (a model) where a scenario file was expected: give it as the model (--model FILE' \
    "$pm" --config "$hf/llama3-8b-config.json"
check model-given-accelerator 1 'expected a model file here (got a "accelerator" file): give it as the accelerator (--accelerator FILE' \
    "$pm" --model "$PRESERVE_MODEL_DATA/accelerators/h100-sxm.json"
# A misspelt family gets the nearest; a three-letter family that is not modelled gets none.
mkdir -p typo
sed 's/"model_type": "llama"/"model_type": "lama"/' "$hf/llama3-8b-config.json" >typo/config.json
check hf-family-typo 1 'the family "lama" is not one this model represents (did you mean "llama"?)' \
    "$pm" --model typo/config.json
sed 's/"model_type": "llama"/"model_type": "mpt"/' "$hf/llama3-8b-config.json" >typo/mpt.json
check hf-family-mpt 1 'the family "mpt" is not one this model represents: its layers' \
    "$pm" --model typo/mpt.json
# An own HuggingFace config without _name_or_path is named by its directory (a config.json) or
# its file, not by its family ("llama" named no checkpoint).
mkdir -p Meta-Llama-3-8B
cp "$hf/llama3-8b-config.json" Meta-Llama-3-8B/config.json
check hf-name-directory 0 '# model Meta-Llama-3-8B on' "$pm" --model Meta-Llama-3-8B/config.json
check hf-name-file 0 '# model llama3-8b-config on' "$pm" --model "$hf/llama3-8b-config.json"
# A datatype the accelerator has no peak for names the fix.
check dtype-no-peak 1 'accelerator "tpu-v5e" has no fp8 peak (it lists int8, bf16): set the workload'"'"'s weight_dtype and act_dtype to one it lists' \
    "$pm" --config llama70b-h100 --accelerator tpu-v5e --set workload.weight_dtype=fp8 --set workload.act_dtype=fp8

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
