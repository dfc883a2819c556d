#!/usr/bin/env bash
# What a new user meets (issue 18): a help per command, suggestions for mistyped names,
# --format json for every reporting command with its keys documented in docs/output-format.md,
# exact integers in JSON, --plot only where there is a figure, the platform warning, token
# counts with k = 1024, and the sweep CSV's memory, allreduce and prefill/decode columns.
# Usage: test_ux.sh PATH/TO/preserve-model SOURCE_ROOT
set -u
# shellcheck source=tests/check.sh
. "$2/tests/check.sh"
check_begin "$1" "$2"

py() { # name, python code reading stdin (exit non-zero to fail), command...
    local name="$1" code="$2"
    shift 2
    local out
    if ! out=$("$@" 2>/dev/null | python3 -c "$code" 2>&1); then
        echo "FAIL $name:"
        echo "$out" | tail -8
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
}

# ---- a help per command ----------------------------------------------------------------
for cmd in explain graph footprint resolve timeline validate list merge; do
    check "help-$cmd" 0 "Usage: preserve-model $cmd" "$pm" "$cmd" --help
    check "help-$cmd-example" 0 "Example:" "$pm" help "$cmd"
done
check help-run-usage 0 "Usage: preserve-model [run] [OPTIONS]" "$pm" run --help
check help-run-example 0 "Example:" "$pm" help run
check help-help 0 "Commands (" "$pm" help --help
check help-sweep 0 "or: preserve-model --sweep AXIS[=R]" "$pm" sweep --help
check help-sweep-option 0 "or: preserve-model --sweep AXIS[=R]" "$pm" --sweep l2 --help
check help-optimize 0 "or: preserve-model --optimize AXIS[=LO:HI]" "$pm" help optimize
check help-sweep-word 0 "Usage: preserve-model sweep AXIS[=R]..." "$pm" help sweep
check help-optimize-option 0 "--objective O" "$pm" --optimize l2 --help
check help-overview 0 "Commands ('preserve-model help COMMAND'" "$pm" --help
# An option whose name and argument fill the column has its help on the next line (it was
# glued to it: "--optimize AXIS[=LO:HI]the value ...").
lacks help-wide-head "AXIS[=LO:HI]the" "$pm" --help
# A command's help lists its own options, not the others'.
check help-explain-context 0 "--context N" "$pm" explain --help
lacks help-explain-no-devlist "--devices-list" "$pm" explain --help
lacks help-explain-no-sweep "--sweep" "$pm" explain --help
check help-footprint-devlist 0 "--devices-list L" "$pm" footprint --help
check help-graph-formats 0 "json or dot (default json)" "$pm" graph --help
check help-timeline-compare 0 "--compare" "$pm" timeline --help
lacks help-merge-no-config "--config" "$pm" merge --help
check help-seq-1024 0 "16k = 16384" "$pm" run --help
check help-unknown 2 "unknown command 'explian' (did you mean 'explain'?)" "$pm" help explian
# Each command's example runs (those that write no file and need no other program).
for cmd in run explain footprint resolve list; do
    ex=$("$pm" help "$cmd" | sed -n '/^Example:/{n;p}' | sed 's/^ *preserve-model //')
    # shellcheck disable=SC2086
    check "example-$cmd-runs" 0 "" "$pm" $ex
done

# ---- suggestions -------------------------------------------------------------------------
check suggest-option 2 "unknown option '--bach' (did you mean '--batch'?)" "$pm" --bach 8
check suggest-option-value 2 "unknown option '--acclerator' (did you mean '--accelerator'?)" \
    "$pm" --acclerator=h100-sxm
check suggest-command 2 "unknown command 'lst' (did you mean 'list'?)" "$pm" lst
check suggest-command-word 2 "unknown command 'sweeep' (did you mean 'sweep'?)" "$pm" sweeep
# sweep and optimize as words take their axes as arguments: the same output as the options.
check command-sweep-needs-axis 2 "sweep needs an axis" "$pm" sweep
check command-optimize-one-axis 2 "optimize takes one axis (got 2)" "$pm" optimize l2 hbm_bw
check command-sweep-not-optimize 2 "sweep: --optimize is another command" "$pm" sweep l2 --optimize l2
if [ "$("$pm" sweep devices=1,2 batch=1,4 --config llama8b | grep -v '^#')" = \
     "$("$pm" --sweep devices=1,2 --sweep batch=1,4 --config llama8b | grep -v '^#')" ] &&
   [ "$("$pm" optimize l2=8MiB:64MiB --config paper-dse 2>&1 | grep -v '^#')" = \
     "$("$pm" --optimize l2=8MiB:64MiB --config paper-dse 2>&1 | grep -v '^#')" ]; then
    pass=$((pass + 1))
else
    echo "FAIL command-words-as-options: sweep/optimize as words differ from --sweep/--optimize"
    fail=$((fail + 1))
fi
check suggest-axis 2 'unknown axis "l22" (did you mean "l2"?' "$pm" --sweep l22=8MiB
check suggest-optimize-axis 2 'unknown axis "hbm_bwx" (did you mean "hbm_bw"?' "$pm" --optimize hbm_bwx
check suggest-kind 2 "unknown list 'acelerators'" "$pm" list acelerators
check suggest-kind-hint 2 "(did you mean 'accelerators'?)" "$pm" list acelerators
check suggest-format 2 "(did you mean 'json'?)" "$pm" --format jsno
check suggest-mode 2 "(did you mean 'preserve'?)" "$pm" graph --mode presrve
check suggest-phase 2 "(did you mean 'decode'?)" "$pm" explain --phase decod
check suggest-objective 2 "(did you mean 'joule'?)" "$pm" --optimize l2 --objective jolue
check ambiguous-option 2 "option '--dev' is ambiguous" "$pm" --dev 4
check list-singular 0 "llama3-70b" "$pm" list model
lacks no-suggestion-when-far "did you mean" "$pm" --frobnicate
# JSON keys keep theirs, by the same rule (pm_suggest): 2 edits for a short key.
check suggest-key 1 'did you mean "hbm_bandwidth' "$pm" --set accelerator.hbm_bandwith_TBps=2

# ---- --format json for every reporting command, every key documented ------------------
# The documented keys: `a.b` paths in docs/output-format.md (MODE for serial, fused, preserve).
doc="$root/docs/output-format.md"
keycheck='
import json, re, sys
doc = set(re.findall(r"`([A-Za-z_][A-Za-z0-9_.\[\]]*)`", open(sys.argv[1]).read()))
cols = set(sys.argv[2].split(",")) if len(sys.argv) > 2 else set()
d = json.load(sys.stdin)
def walk(o, p):
    if isinstance(o, dict):
        for k, v in o.items():
            k = "MODE" if k in ("serial", "fused", "preserve") and p.endswith("modes.") else k
            key = p + k
            if key.startswith("points[].") and k in cols:
                continue
            assert key in doc, "undocumented key " + key
            walk(v, key + ".")
    elif isinstance(o, list):
        for v in o:
            walk(v, p[:-1] + "[].")
walk(d, "")
'
kc() { python3 -c "$keycheck" "$doc" "$@"; }
for args in "run" "explain" "explain --phase prefill --context 100" "footprint" \
    "footprint --config gemma2-9b --devices-list 1,64" "resolve" "list accelerators" "graph" \
    "timeline" "timeline --compare --phase prefill" "--config mixtral8x7b" \
    "explain --config deepseek-v3-h200" "footprint --config qwen3-30b-a3b" \
    "--optimize l2=8MiB:64MiB" "--config llama8b --devices 1" "--accelerator $root/tests/configs/valid/accelerator-with-area.json" \
    "serve --concurrency 1,8,512" "serve --config llama70b-h100 --rule prefill_first --concurrency 2,64 --tpot-limit 30ms"; do
    # shellcheck disable=SC2086
    if ! "$pm" $args --format json 2>/dev/null | kc; then
        echo "FAIL json-keys: $args"
        fail=$((fail + 1))
    else
        pass=$((pass + 1))
    fi
done
cols=$("$pm" --sweep devices=2,64 --sweep batch=1,4 --config llama8b | grep -v '^#' | head -1)
if ! "$pm" --sweep devices=2,64 --sweep batch=1,4 --config llama8b --format json | kc "$cols"; then
    echo "FAIL json-keys: sweep"
    fail=$((fail + 1))
else
    pass=$((pass + 1))
fi
check json-timeline-plot 2 "--plot: the figure is drawn from CSV (no --format json)" \
    "$pm" timeline --format json --plot x.png
check json-resolve-table 2 "resolve: --format must be json or csv" "$pm" resolve --format table

# ---- exact integers in JSON ----------------------------------------------------------------
# llama3-70b, int8, batch 4, sequence 16384, 4 devices (the llama70b scenario): the KV cache
# is 80 layers x 2 KV heads x 128 x 2 (K, V) x 4 sequences x 16384 positions = 2684354560 B;
# the weights per device 80 x (8192 x (64 + 2 x 8) x 128 + 8192 x 8192 + 3 x 8192 x 28672) / 4
# = 17112760320 B plus the embedding and the LM head, 128256 x 8192 / 4 = 262668288 B each:
# 17638096896 B (a 6-significant-digit writer gave 1.76381e+10).
check json-kv-exact 0 '"kv_bytes_per_device": 2684354560,' "$pm" --format json
check json-weights-exact 0 '"weight_bytes_per_device": 17638096896,' "$pm" --format json
# The window: 192 MiB x the usable fraction; explain's payload 4 x 8192 x 2 (fp16) = 65536 B
# and a Gate prefetch 8192 x 28672 / 4 = 58720256 B.
check explain-json-exact 0 '"comm_bytes": 65536,' "$pm" explain --format json
check explain-json-gate 0 '{"consumer": "L0.Gate", "what": "weights", "bytes": 58720256}' \
    "$pm" explain --format json
# Mistral-7B, 1 device: attention 4096 x (32 + 2 x 8) x 128 + 32 x 128 x 4096 = 41943040 B.
check footprint-json-exact 0 '"attn_weight_bytes": 41943040,' "$pm" footprint --config mistral7b --format json
# Doubles round-trip: the speedup is the ratio of the two times as printed, to rounding.
py json-round-trip '
import json, sys
r = json.load(sys.stdin)
m = r["modes"]
q = m["serial"]["request_s"] / m["preserve"]["request_s"]
assert abs(r["speedup"]["preserve_vs_serial"] - q) <= 4e-16 * q, (r["speedup"], q)
assert len(repr(m["serial"]["request_s"])) > 12  # more than the 9 digits of old
' "$pm" --format json

# ---- --plot only where there is a figure --------------------------------------------------
check plot-without-sweep 2 "--plot: only with --sweep or timeline (a single run draws no figure)" \
    "$pm" --plot x.png
check plot-explain 2 "--plot: explain does not use it" "$pm" explain --plot x.png
check plot-footprint 2 "--plot: footprint does not use it" "$pm" footprint --plot x.png
check plot-optimize 2 "--plot: --optimize does not use it" "$pm" --optimize l2 --plot x.png

# ---- a cluster of another platform ----------------------------------------------------------
check platform-warning 0 "warning: cluster hccs-full-mesh is of platform ascend, accelerator h100-sxm of nvidia-hopper" \
    "$pm" --accelerator h100-sxm
check platform-own-cluster 0 "(its own cluster: nvlink4-nvswitch)" "$pm" --accelerator h100-sxm
lacks platform-matched "warning: cluster" "$pm" --accelerator h100-sxm --set cluster=nvlink4-nvswitch
lacks platform-matched-shortcut "warning: cluster" "$pm" --accelerator h100-sxm --cluster nvlink4-nvswitch
check cluster-shortcut 0 "on h100-sxm x 8 (switch" "$pm" --accelerator h100-sxm --cluster nvlink4-nvswitch
for s in $("$pm" list scenarios); do
    lacks "platform-shipped-$s" "warning: cluster" "$pm" --config "$s"
done

# ---- a checkpoint quantised otherwise than the workload ----------------------------------------
# gpt-oss's published config states MXFP4 experts; the llama70b scenario's workload is int8.
oss="$root/tests/configs/hf/gpt-oss-20b-config.json"
check checkpoint-warning 0 "warning: model gpt-oss-20b-config ($oss): the checkpoint's weights are 4-bit floats (quantization_config's quant_method \"mxfp4\"); modelled as int8, the workload's weight_dtype: below 8 bits only int4 integer weights are modelled" \
    "$pm" --model "$oss" --accelerator h100-sxm --cluster nvlink4-nvswitch --devices 4
check checkpoint-resolve 0 '$.model.quantization_config,4,1,ignored' "$pm" resolve --model "$oss"
check checkpoint-json 0 '"warnings": ["model gpt-oss-20b-config (' \
    "$pm" --model "$oss" --accelerator h100-sxm --cluster nvlink4-nvswitch --devices 4 --format json
check no-warnings-json 0 '"warnings": []' "$pm" --config llama70b-h100 --format json
for s in $("$pm" list scenarios); do
    lacks "checkpoint-shipped-$s" "quantization_config" "$pm" --config "$s"
done
check sweep-seq-beyond-context 0 "warning: the seq axis reaches 262144 tokens, beyond the model's max_position_embeddings 131072" \
    "$pm" --model "$oss" --accelerator h100-sxm --cluster nvlink4-nvswitch --devices 4 --sweep seq=64k,256k
lacks sweep-seq-within-context "the seq axis reaches" \
    "$pm" --model "$oss" --accelerator h100-sxm --cluster nvlink4-nvswitch --devices 4 --sweep seq=64k,128k

# ---- token counts: k = 1024 ----------------------------------------------------------------
check seq-16k 0 "sequence 16384 =" "$pm" --seq 16k                      # 16 x 1024
check seq-1M 0 "sequence 1048576 =" "$pm" --config llama8b --seq 1M     # 1024^2
check seq-16Ki 0 "sequence 16384 =" "$pm" --seq 16Ki
check seq-set-16k 0 "sequence 32768 =" "$pm" --set workload.seq_len=32k
check context-2k 0 "context 2048:" "$pm" explain --context 2k
check batch-k-is-1000 0 "batch 2000," "$pm" --config llama8b --batch 2k   # not a token count
py sweep-seq-1024 '
import sys
rows = [l.split(",") for l in sys.stdin if not l.startswith("#")]
assert [r[0] for r in rows[1:]] == ["1024", "2048", "4096"], rows[1:]
' "$pm" --sweep seq=1k:4k:x2
# Bytes keep their SI and binary units: 1 MB = 1e6 B = 0.95367431640625 MiB, 1 MiB = 1 MiB.
py sweep-bytes-si '
import sys
rows = [l.split(",") for l in sys.stdin if not l.startswith("#")]
assert [r[0] for r in rows[1:]] == ["0.953674316", "1"], rows[1:]
' "$pm" --sweep l2=1MB,1MiB

# ---- the sweep CSV's memory, allreduce and prefill/decode columns ---------------------
# llama70b on 1, 2 and 4 devices. Hand figures: the KV cache 80 x 8 KV heads x 128 x 2 x 4 x
# 16384 = 10737418240 B on one device, halved per doubling while the 8 KV heads split; the
# weights 17638096896 x 4 = 70552387584 B on one device. HBM 64 GB: one device holds
# 70552387584 + 10737418240 = 81289805824 B > 64e9 (fits_hbm 0), two 40644902912 B (1).
# The decode allreduce (oneshot on the HCCS mesh): 14 us + 65536 B / 56 GB/s = 15.1702857 us,
# 2 per layer x 80 = 160 per step: 2.42724571 ms; none on one device.
py sweep-columns '
import csv, sys
lines = [l for l in sys.stdin if not l.startswith("#")]
rows = list(csv.DictReader(lines))
head = lines[0].strip().split(",")
new = ["weight_bytes_per_device", "kv_bytes_per_device", "fits_hbm", "allreduce_decode_s",
       "allreduces_per_step", "allreduce_per_step_s", "serial_prefill_s", "fused_prefill_s",
       "preserve_prefill_s", "serial_decode_s", "fused_decode_s", "preserve_decode_s",
       "largest_die_mm2", "over_reticle", "compute_mm2", "l2_mm2", "hbm_phy_mm2", "link_phy_mm2",
       "other_mm2", "io_other_mm2", "compute_dies", "compute_die_mm2", "io_dies", "io_die_mm2"]
# appended after the 29 earlier columns and the MoE column experts_read_per_step (positions
# unchanged) and before error
assert head[1 + 30:] == new + ["error"], head
assert head[1 + 29] == "experts_read_per_step", head
assert head[1] == "serial_request_s" and head[29] == "preserve_tokens_per_s_per_usd", head
want = {"1": (70552387584, 10737418240, 0, 0, 0, 0),
        "2": (35276193792, 5368709120, 1, 15.1702857e-6, 160, 2.42724571e-3),
        "4": (17638096896, 2684354560, 1, 15.1702857e-6, 160, 2.42724571e-3)}
for r in rows:
    w = want[r["devices"]]
    got = [float(r[c]) for c in new[:6]]
    for g, x in zip(got, w):
        assert abs(g - x) <= 5e-9 * abs(x), (r["devices"], got, w)
    for m in ("serial", "fused", "preserve"):
        total = float(r[m + "_prefill_s"]) + float(r[m + "_decode_s"])
        assert abs(total - float(r[m + "_request_s"])) <= 1e-8 * total, (m, r)
' "$pm" --sweep devices=1,2,4
# The # header: the resolved inputs' names, their digest (the one resolve prints) and the data.
# Byte counts above 10^9 are whole in the sweep CSV (Mixtral at TP4 int8: 11,676,418,048 bytes
# per device, worked by hand in tests/test_moe.c), not rounded to nine digits.
# A compute-bound request on one H100 (no allreduce to wait on): bf16 MACs at the 45 nm 1.5 pJ
# (989 TFLOPS = 494.5e12 MAC/s, x 0.8 efficiency x 1.5 pJ = 593 W, + 210 W static = 803 W in
# the GEMMs; the attention at its own 0.62 draws less) put the average (754 W) above the 700 W
# board power, which the run warns of (in the JSON report's warnings too). Llama-3-70B at TP8
# (batch 256, 16K) waits on its allreduces: 606-685 W, no warning.
pw="--config llama70b-h100 --model llama3-8b --devices 1 --batch 64 --seq 4096"
check power-above-board 0 "exceeds h100-sxm's board power 700 W" \
    "$pm" $pw --set workload.prefill_frac=0.999
check power-above-board-json 0 "exceeds h100-sxm's board power 700 W" \
    "$pm" $pw --set workload.prefill_frac=0.999 --format json
lacks power-below-board "board power" "$pm" --config llama70b-h100
# A nested key set by --set is the override's, in errors and in resolve (they named the
# accelerator file: the origin was kept for a component's top-level keys only).
check set-nested-unknown 1 '--set accelerator.peak_compute.fp4_TFLOPS=9000: $.accelerator.peak_compute.fp4_TFLOPS: unknown key' \
    "$pm" --set accelerator.peak_compute.fp4_TFLOPS=9000
check set-nested-range 1 '--set accelerator.energy.mac.int8_pJ=-3: $.accelerator.energy.mac.int8_pJ: must be >= 0' \
    "$pm" --set accelerator.energy.mac.int8_pJ=-3
check resolve-nested-origin 0 '$.accelerator.peak_compute.int8_TOPS,9e+14,flop/s,given,--set accelerator.peak_compute.int8_TOPS=900,' \
    "$pm" resolve --set accelerator.peak_compute.int8_TOPS=900
check sweep-bytes-exact 0 ",11676418048," "$pm" --model mixtral-8x7b --sweep batch=1,4
check sweep-header-resolved 0 "# resolved: model llama3-70b, accelerator ascend-910b, cluster hccs-full-mesh x 4, batch 4, seq_len 16384;" \
    "$pm" --sweep l2=8MiB:16MiB:8MiB
check sweep-header-data 0 "# data directory $root/data" "$pm" --sweep l2=8MiB:16MiB:8MiB
digest=$("$pm" resolve --format json | python3 -c 'import json,sys; print(json.load(sys.stdin)["inputs_fnv1a64"])')
check sweep-header-digest 0 "inputs fnv1a64 $digest" "$pm" --sweep l2=8MiB:16MiB:8MiB
check resolve-digest-same 0 "inputs fnv1a64 $digest" "$pm" resolve
other=$("$pm" resolve --format json --batch 8 | python3 -c 'import json,sys; print(json.load(sys.stdin)["inputs_fnv1a64"])')
if [ "$other" = "$digest" ]; then
    echo "FAIL digest-differs: batch 8 gives the same digest $digest"
    fail=$((fail + 1))
else
    pass=$((pass + 1))
fi

check_end
