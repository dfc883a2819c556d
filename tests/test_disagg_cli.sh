#!/usr/bin/env bash
# CLI tests of `disagg` (issue 45): a disaggregated deployment, its co-design sweep, its
# outputs and refusals, against the shipped data.
# Usage: test_disagg_cli.sh PATH/TO/preserve-model SOURCE_ROOT
set -u
# shellcheck source=tests/check.sh
. "$2/tests/check.sh"
check_begin "$1" "$2"

P=(--prefill-config llama70b-h100 --decode-config llama70b --decode-set workload=decode-bf16)
check disagg-help 0 "usage: preserve-model disagg" "$pm" disagg --help
check disagg-help-word 0 "usage: preserve-model disagg" "$pm" help disagg
# Llama-3-70B in bf16: 80 x 2 x 8 x 128 x 2 bytes x 2048 positions = 671.1 MB a request.
check disagg-table 0 "KV cache 671.1 MB a request (83.89 MB per prefill device)" "$pm" disagg "${P[@]}"
check disagg-table-modes 0 "preserve" "$pm" disagg "${P[@]}" --concurrency 16
check disagg-csv 0 "kv_bytes_per_request,transfer_bytes_per_device,decode_concurrency" \
    "$pm" disagg "${P[@]}" --concurrency 8,16 --format csv
check disagg-csv-colocated 0 "colocated_decode_chip_preserve_tokens_per_s_per_device" \
    "$pm" disagg "${P[@]}" --concurrency 8 --format csv
check disagg-json 0 '"preserve_tokens_per_s_per_mm2": ' "$pm" disagg "${P[@]}" --concurrency 8 --format json
# requests past the model's trained context are warned of (serve and sweep warned; disagg did not)
check disagg-past-context 0 "warning: each pool: a request of 8000 + 8000 tokens exceeds the model's max_position_embeddings 4096" \
    "$pm" disagg --prefill-config llama70b-h100 --decode-config llama70b-h100 --prefill-set model=llama2-70b --decode-set model=llama2-70b --input 8000 --output 8000 --concurrency 4
# a bandwidth or time without its unit is refused (50 was 50 bytes/s: every row saturated)
check disagg-link-unit 2 "--link-bandwidth: give the unit, e.g. 25GBps" "$pm" disagg "${P[@]}" --link-bandwidth 50
check disagg-latency-zero 0 "over 25 GB/s, 0 us" "$pm" disagg "${P[@]}" --link-latency 0
check disagg-format-short 0 '"preserve_tokens_per_s_per_mm2": ' "$pm" disagg "${P[@]}" --concurrency 8 -f json
# sequences in flight are whole, as every command's (2.5 was shown as 2 and computed as 2.5)
check disagg-concurrency-whole 2 "--concurrency: expected an integer" "$pm" disagg "${P[@]}" --concurrency 4,2.5
check disagg-rate 0 "1.50" "$pm" disagg "${P[@]}" --concurrency 32 --rate 1.5
check disagg-fixed 0 " 2:3 " "$pm" disagg "${P[@]}" --concurrency 32 --prefill-instances 2 --decode-instances 3
check disagg-codesign 0 "<- best (preserve)" "$pm" disagg "${P[@]}" --concurrency 64 --codesign l2=8MiB:256MiB:x2
check disagg-codesign-csv 0 "pool,l2_capacity_MiB," "$pm" disagg "${P[@]}" --concurrency 64 --codesign l2=8MiB,64MiB --format csv
# Speculative decoding in both pools (issue 45): one MTP layer drafting 2 at 0.7 accepted,
# E = 1 + 0.7 + 0.49 = 2.19 tokens a verify step; the cache sent holds the MTP layer's too.
# Llama-3-70B has no MTP layer: each pool's model is given one (a what-if).
S=(--spec-tokens 2 --spec-accept 0.7 --spec-mtp 1 --prefill-set model.num_nextn_predict_layers=1
   --decode-set model.num_nextn_predict_layers=1)
check disagg-spec-no-mtp 1 "--prefill-set speculative.mtp_layers=1: \$.speculative.mtp_layers: 1 MTP layer asked of a model with 0" \
    "$pm" disagg "${P[@]}" --concurrency 16 --spec-tokens 2 --spec-accept 0.7 --spec-mtp 1
check disagg-spec 0 "2.1900 tokens per verify step" "$pm" disagg "${P[@]}" --concurrency 16 "${S[@]}"
check disagg-spec-json 0 '"speculative": {"method": "mtp", "draft_tokens": 2, "tokens_per_step": 2.19}' \
    "$pm" disagg "${P[@]}" --concurrency 16 "${S[@]}" --format json
check disagg-spec-one-pool 1 "prefill.speculative" "$pm" disagg "${P[@]}" --decode-set speculative.draft_tokens=2 \
    --decode-set speculative.acceptance=0.7 --decode-set speculative.method=mtp --decode-set speculative.mtp_layers=1 \
    --decode-set speculative.source=test --decode-set model.num_nextn_predict_layers=1
# Refusals: the key named, usage errors exit 2.
check disagg-models 1 "decode.model" "$pm" disagg --prefill-config llama70b-h100 --decode-config llama8b
check disagg-kv-dtype 1 "decode.workload.kv_dtype" "$pm" disagg --prefill-config llama70b-h100 --decode-config llama70b
check disagg-not-fit 1 "prefill.accelerator.hbm_capacity_GiB" "$pm" disagg "${P[@]}" --prefill-set cluster.devices=1
# A pool's override is named by the option that gave it, not --set.
check disagg-prefill-set-named 1 "error: --prefill-set workload.batch=abc: \$.workload.batch" \
    "$pm" disagg "${P[@]}" --prefill-set workload.batch=abc
check disagg-decode-set-named 1 "error: --decode-set model=nosuch: \$.model" \
    "$pm" disagg "${P[@]}" --decode-set model=nosuch
check disagg-conc-cap 1 "decode_concurrency" "$pm" disagg "${P[@]}" --concurrency 100000
check disagg-needs-both 2 "needs --prefill-config and --decode-config" "$pm" disagg --prefill-config llama70b-h100
check disagg-unknown 2 "unknown option" "$pm" disagg "${P[@]}" --bogus
check disagg-bad-link 2 "--link-bandwidth" "$pm" disagg "${P[@]}" --link-bandwidth 5s
check disagg-codesign-axis 2 "axis 'devices': a pool's chip sweeps" "$pm" disagg "${P[@]}" --codesign devices=1,2
# the axis is said before its range (a range error hid it), and the link's option named
check disagg-codesign-axis-range 2 "axis 'seq': a pool's chip sweeps" "$pm" disagg "${P[@]}" --codesign seq=1k:2k
check disagg-codesign-axis-link 2 "(the link between the pools: --link-bandwidth)" "$pm" disagg "${P[@]}" --codesign link_bw=100GBps:200GBps:100GBps
# Each pool's chip along the codesign axis warns as a sweep does (the H100's modelled die passes
# the reticle between 64 and 128 MiB of L2, the 910B's between 256 and 512), named by its pool.
check disagg-codesign-reticle 0 "warning: prefill pool: accelerator h100-sxm: the modelled die is over the 858 mm2 reticle at 3 of the l2 axis's 7 values (from l2_capacity_MiB 128" "$pm" disagg --prefill-config llama70b-h100 --decode-config llama70b --decode-set workload=decode-bf16 --concurrency 64 --codesign l2=8MiB:512MiB:x2
check disagg-codesign-reticle-decode 0 "warning: decode pool: accelerator ascend-910b: the modelled compute die is over the 858 mm2 reticle at 1 of the l2 axis's 7 values (from l2_capacity_MiB 512" "$pm" disagg --prefill-config llama70b-h100 --decode-config llama70b --decode-set workload=decode-bf16 --concurrency 64 --codesign l2=8MiB:512MiB:x2
# A pool's best at a chip no reticle prints, or with more bandwidth than its chip's (free along
# hbm_bw: no die area, no price), is said too (pm_disagg_codesign_warning; the search's texts).
check disagg-codesign-best-reticle 0 "warning: decode pool: preserve: the best is at l2_capacity_MiB 512, where the modelled compute die is 1092 mm2" "$pm" disagg --prefill-config llama70b-h100 --decode-config llama70b --decode-set workload=decode-bf16 --concurrency 64 --tpot-limit 40ms --codesign l2=64MiB,512MiB
check disagg-codesign-free-bw 0 "warning: decode pool: preserve: the best is at hbm_bandwidth_TBps 3, above the chip's 1.6," "$pm" disagg --prefill-config llama70b-h100 --decode-config llama70b --decode-set workload=decode-bf16 --concurrency 64 --codesign hbm_bw=1TBps,3TBps
lacks disagg-codesign-free-bw-none "as free" "$pm" disagg --prefill-config llama70b-h100 --decode-config llama70b --decode-set workload=decode-bf16 --concurrency 64 --codesign hbm_bw=1TBps,1.6TBps
# The warnings are in the outputs too, as the search's are: the JSON's "warnings", the CSV's
# "# warning:" header lines (a pool's scenario's, the axis's, each pool's best's).
check disagg-codesign-json-warnings 0 '"warnings": ["decode pool: preserve: the best is at hbm_bandwidth_TBps 3, above the chip'"'"'s 1.6,' "$pm" disagg --prefill-config llama70b-h100 --decode-config llama70b --decode-set workload=decode-bf16 --concurrency 64 --codesign hbm_bw=1TBps,3TBps --format json
check disagg-codesign-csv-warnings 0 "# warning: decode pool: preserve: the best is at hbm_bandwidth_TBps 3," "$pm" disagg --prefill-config llama70b-h100 --decode-config llama70b --decode-set workload=decode-bf16 --concurrency 64 --codesign hbm_bw=1TBps,3TBps --format csv
check disagg-json-warnings 0 '"warnings": ["decode pool: cluster nvlink4-nvswitch is of platform nvidia-hopper' "$pm" disagg "${P[@]}" --decode-set cluster=nvlink4-nvswitch --concurrency 16 --format json
check disagg-csv-warnings 0 "# warning: decode pool: cluster nvlink4-nvswitch is of platform nvidia-hopper" "$pm" disagg "${P[@]}" --decode-set cluster=nvlink4-nvswitch --concurrency 16 --format csv
check disagg-json-no-warnings 0 '"warnings": [], "points": [' "$pm" disagg "${P[@]}" --concurrency 16 --format json

# A chip without an area block has no density: "-", not a plausible 0.0000.
noarea=$(mktemp -d)
/usr/bin/env python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); a.pop("area"); a.pop("energy"); a.pop("cost", None); a["name"]="no-area"; json.dump(a, open(sys.argv[2], "w"))' "$2/data/accelerators/h100-sxm.json" "$noarea/no-area.json"
check disagg-no-area-density 0 "  -  " bash -c "'$pm' disagg --prefill-config llama70b-h100 --decode-config llama70b-h100 --prefill-set accelerator=$noarea/no-area.json --decode-set accelerator=$noarea/no-area.json --concurrency 8 2>/dev/null | grep -E '^ +8 serial'"

check_end
