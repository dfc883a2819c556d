#!/usr/bin/env bash
# CLI tests: the executable against the shipped data, exit codes and messages.
# Usage: test_cli.sh PATH/TO/preserve-model SOURCE_ROOT
set -u
# shellcheck source=tests/check.sh
. "$2/tests/check.sh"
check_begin "$1" "$2"

check help 0 "Usage: preserve-model" "$pm" --help
check version 0 "preserve-model 0." "$pm" --version
check default-run 0 "speedup: preserve vs serial" "$pm"
check bundled-by-filename 0 "scenario llama70b" "$pm" --config llama70b.json
check json-keys 0 '"preserve_vs_fused"' "$pm" --config llama70b.json --format json
check json-fused-keys 0 '"fused": {"request_s"' "$pm" --config llama70b.json --format json
check shortcuts 0 "x 8 (" "$pm" --config llama70b --devices 8 --batch 2 --seq 16k
check seq-suffix 0 "sequence 32768" "$pm" --config llama8b --seq 32Ki
check set-override 0 "batch 8," "$pm" --config llama70b --set workload.batch=8
check set-unit-replace 0 "window 99 MiB" "$pm" --config llama70b --set accelerator.l2_capacity_MB=104
check model-shortcut 0 "model llama3-8b" "$pm" --config llama70b --model llama3-8b
check explain 0 "prefetch KV cache" "$pm" explain --config llama70b
# A pipeline stage's views (issue 44): stage 1 of 2 waits on stage 0's hidden states, one
# token's bf16 state (8192 x 2 bytes = 16.0 KiB) over the nodes' link, and PRESERVE fills it
pp2=(--config llama70b-h100 --cluster hgx-h100-ib-ndr --devices 8 --pp 2)
check explain-stage 0 "during Recv (16.0 KiB, 10.3 us): prefetch QKV weights 20.0 MiB" "$pm" explain "${pp2[@]}" --stage 1
# Stage 0 waits on the token the last stage sampled: one int32 id, 4 bytes, printed in bytes
# (not "0.0 KiB"), 10 us of the link's start-up + 4 B / 50 GB/s
check explain-stage-bytes 0 "during Recv (4 B, 10.0 us): prefetch QKV weights 20.0 MiB" "$pm" explain "${pp2[@]}" --stage 0
check explain-stage-head 0 "Pipeline stage 1 of stages 0 to 1: layers 40 to 79, the LM head" "$pm" explain "${pp2[@]}" --stage 1
check explain-stage-json 0 '"stage": 1, "stages": 2, "first_layer": 40, "stage_layers": 40' "$pm" explain "${pp2[@]}" --stage 1 --format json
check explain-stage-kind 0 '"kind": "receive"' "$pm" explain "${pp2[@]}" --format json
check timeline-stage 0 "1,collective,Recv,Recv,0.000000" "$pm" timeline "${pp2[@]}" --stage 1
check graph-stage 0 '"inter_node":' "$pm" graph "${pp2[@]}" --stage 1
check stage-range 1 "stage 2: the plan has 2 stages" "$pm" explain "${pp2[@]}" --stage 2
check stage-no-stages 1 "stage 1: the plan has 1 stage" "$pm" timeline --config llama70b --stage 1
check stage-not-run 2 "--stage" "$pm" --config llama70b --stage 0
# The split axis: the last stage's layers, 1 to the even share (80 layers over 2 stages: 40)
check sweep-split 0 "40,25.0115" "$pm" sweep "${pp2[@]}" --batch 16 --sweep split
check sweep-split-no-stages 0 "give pp > 1" "$pm" sweep --config llama70b --sweep split=2
# KV reads: 70 heads / 8 KV heads over 4 devices = 2 KV heads per device. On ascend-910b
# (kv_strided_efficiency_frac 0.5) they are strided at 0.5 x 100 = 50 %; on h100-sxm (1) the
# strided penalty does not apply and the table must not say strided; 8 devices: 1 head each.
check kv-strided-npu 0 "2 KV heads (strided KV reads at 50 % of the HBM bandwidth)" "$pm" --config llama70b
check kv-full-gpu 0 "2 KV heads (KV reads at full bandwidth: no strided penalty)" "$pm" --config llama70b --accelerator h100-sxm
check kv-contiguous 0 "1 KV head (contiguous KV reads)" "$pm" --config llama70b --devices 8
if "$pm" --config llama70b --accelerator h100-sxm 2>&1 | grep -qF "strided KV reads"; then
    echo "FAIL kv-gpu-not-strided: the h100-sxm table says strided KV reads"
    fail=$((fail + 1))
else
    pass=$((pass + 1))
fi
# The serving runtime's line (issue 16): its overheads, and where it decodes with its
# PagedAttention kernel: vllm for Mistral 7B (a window in every layer) and for an fp8 KV cache,
# not for Llama 3 70B in bf16; vllm-2023 for every model; at 0.33 of the efficiency otherwise
# used. vLLM has no int8 KV cache: the paper's int8 scenario is refused under it.
check runtime-line 0 "# runtime vllm: 843 us per step + 42.1 us per sequence (+ 590 us at more than one device), 3 us per kernel" "$pm" --config llama70b-h100 --set runtime=vllm
check runtime-kv-dtype 1 "not int8" "$pm" --config llama8b --set runtime=vllm
check runtime-paged-windowed 0 "PagedAttention kernel (a sliding window in every layer), KV reads at 33 %" "$pm" --config llama70b-h100 --model mistral-7b --set runtime=vllm
check runtime-paged-all 0 "PagedAttention kernel (every model)" "$pm" --config llama70b-h100 --set runtime=vllm-2023
check runtime-paged-fp8-kv 0 "PagedAttention kernel (an fp8 KV cache)" "$pm" --config llama70b-h100 --set workload.kv_dtype=fp8 --set runtime=vllm
check runtime-json 0 '"runtime": "vllm", "paged_attention_frac": 0.33,' "$pm" --config llama70b-h100 --model mistral-7b --set runtime=vllm --format json
check runtime-json-none 0 '"runtime": null, "paged_attention_frac": 1,' "$pm" --config llama8b --format json
if "$pm" --config llama70b-h100 --set runtime=vllm 2>&1 | grep -qF "PagedAttention"; then
    echo "FAIL runtime-not-paged: vllm reports PagedAttention for Llama 3 8B (no window)"
    fail=$((fail + 1))
else
    pass=$((pass + 1))
fi
# MoE (issue 15): the done-when figures, the dispatch window, --ep and its validation.
# Mixtral-8x7B int8 on 4 devices: 32 x ((4096 x 48 x 128 + 4096 x 4096 + 8 x 3 x 4096 x 14336) / 4
# + the router 4096 x 8) + the embedding and LM head 2 x 32000 x 4096 / 4 = 11676418048 bytes
# (exact in the JSON).
check moe-mixtral-bytes 0 '"weight_bytes_per_device": 11676418048,' "$pm" --model mixtral-8x7b --format json
check moe-mixtral-reads 0 '"experts_read_per_step": 5.46875' "$pm" --model mixtral-8x7b --format json
check moe-table-line 0 "5.47 read per step at batch 4" "$pm" --model mixtral-8x7b
# ... in GiB as every other size in the table (issue 48): 11676418048 / 2^30 = 10.87 GiB.
check moe-table-bytes 0 "10.87 GiB of weights per device" "$pm" --model mixtral-8x7b
# The 910B's HBM as memory is priced, per binary GB: 64 GiB x $7 = $448 (a device $1481).
check table-hbm-usd 0 "+ HBM \$448 + package" "$pm"
# An I/O dies' wafer on a part without I/O dies is refused at the key.
check io-wafer-without-io-dies 1 '$.accelerator.cost.io_wafer_usd: the I/O dies'"'"' wafer, but the area has no I/O dies' \
    "$pm" --config llama70b-h100 --set accelerator.cost.io_wafer_usd=9346
check table-usd 0 "tokens/s per \$ of devices: serial 0.02921, fused 0.03003, preserve 0.03864" "$pm"
# One prompt copied over a batch of 16: a decode step reads the experts of 1 token, 8 (1 - (6/8)^1)
# = 2 (16 independent tokens: 8 (1 - 0.75^16) = 7.92).
check moe-identical-sequences 0 "2 read per step at batch 16" "$pm" --model mixtral-8x7b --batch 16 --set workload.distinct_sequences=1
check moe-identical-note 0 "1 distinct sequence in the batch of 16" "$pm" --model mixtral-8x7b --batch 16 --set workload.distinct_sequences=1
check moe-distinct-over-batch 1 "distinct_sequences" "$pm" --model mixtral-8x7b --batch 4 --set workload.distinct_sequences=5
check moe-deepseek-fits 0 '"fits_hbm": true' "$pm" --config deepseek-v3-h200 --format json
# The HBM weights and KV may take: the H100's 80 GiB = 85899345920 B without a runtime, 0.9 of it
# (72.0 GiB) under vLLM; what is left is the capacity less 16.4 GiB of weights and 0.1 GiB of KV.
check memory-usable-json 0 '"hbm_usable_bytes_per_device": 85899345920' "$pm" --config llama70b-h100 --format json
check memory-usable-text 0 "of 72.0 GiB usable (55.5 GiB left)" "$pm" --config llama70b-h100 --set runtime=vllm --set workload.kv_dtype=fp8
check moe-explain-dispatch 0 "during L0.A2A.dispatch" "$pm" explain --config qwen3-30b-a3b
check moe-explain-routed 0 "routed experts are known only after the router runs" "$pm" explain --config mixtral8x7b
check moe-ep-option 0 "EP 8 x 1 devices per expert" "$pm" --config mixtral8x7b --devices 8 --ep 8
check moe-ep-divides 1 "expert_parallel: must divide devices (got 3 ranks, 4 devices)" "$pm" --config mixtral8x7b --ep 3
# SGLang (issue 47): its overlap scheduler hides the host's work (0 per step and sequence), TP8's
# 0.81 of the H100's 80 GiB is usable (64.8 GiB), and expert parallelism is refused.
check sglang-runtime 0 "runtime sglang: 0 us per step + 0 us per sequence, 3 us per kernel" "$pm" --model mixtral-8x7b --accelerator h100-sxm --set cluster=nvlink4-nvswitch --devices 8 --set runtime=sglang --set workload.kv_dtype=bf16
check sglang-hbm 0 "of 64.8 GiB usable" "$pm" --model mixtral-8x7b --accelerator h100-sxm --set cluster=nvlink4-nvswitch --devices 8 --set runtime=sglang --set workload.kv_dtype=bf16
check sglang-ep-refused 1 'runtime "sglang" runs expert parallelism over 8 ranks' "$pm" --model mixtral-8x7b --accelerator h100-sxm --set cluster=nvlink4-nvswitch --devices 8 --ep 8 --set runtime=sglang --set workload.kv_dtype=bf16
# vLLM's MoE routing kernels (issue 47): in the layer under the vllm runtime, and the align's
# per-slot time without its fixed time (the switch) is refused.
check moe-routing-kernels 0 "L1.MoE.Align,Elementwise" "$pm" timeline --config dbrx-h100 --set runtime=vllm --phase decode
check moe-routing-header 0 "routing kernels of their own (top-k, align at 12.9 us + 7.54 ns a slot, sum)" "$pm" --config dbrx-h100 --set runtime=vllm
check moe-routing-off 1 "" bash -c "\"$pm\" timeline --config dbrx-h100 --phase decode | grep -q MoE.Align"
check moe-align-refused 1 'moe_align_per_slot: given without a positive "moe_align_fixed"' "$pm" --config dbrx-h100 --set runtime=vllm --set runtime.moe_align_fixed_us=0
# A sweep point gets the same message from the scenario check (it read "must divide devices,
# with an all-to-all latency >= 0 and efficiency in (0, 1]" whatever was wrong).
check moe-ep-divides-sweep 0 '"$.cluster.expert_parallel: must divide devices (got 8 ranks, 4 devices)"' \
    "$pm" --config mixtral8x7b --sweep ep=1,8
check moe-ep-dense 1 "needs a mixture-of-experts model" "$pm" --config llama70b --ep 2
check moe-sweep-ep 0 "expert_parallel,serial_request_s" "$pm" --config qwen3-30b-a3b --sweep ep=1,2,4 --format csv
check moe-graph-a2a 0 '"op":	"AllToAll"' "$pm" graph --config qwen3-30b-a3b --layers 1
check moe-dot-a2a 0 "AllToAll" "$pm" graph --config qwen3-30b-a3b --layers 1 --format dot
check moe-timeline 0 "A2A.dispatch,AllToAll" "$pm" timeline --config deepseek-v3-h200
check explain-stop 0 "stopped at" "$pm" explain --config llama70b --seq 64k --batch 16
# Layers of two classes: explain walks a whole period. Phi-3-small's block-sparse layer 2 at
# context 16383 (batch 4, 2 KV heads of 128, int8): 1024 + 15359 / 2 = 8703.5 positions, 4 x
# 8703.5 x 2 x 2 x 128 = 17,824,768 bytes = 17.0 MiB prefetched under layer 1's allreduce,
# where the dense layer 1 takes 32.0 MiB under layer 0's.
# InternLM2's "bias" is on wqkv and wo only (InternLM2MLP's w1, w2, w3 have none).
sed 's/"bias": false/"bias": true/' "$root/tests/configs/hf-families/internlm2-7b-config.json" >internlm2-bias.json
check internlm2-bias-attention 0 '$.model.attention_bias,1,1,derived' "$pm" resolve --config llama8b --model internlm2-bias.json
check internlm2-bias-no-mlp 0 '$.model.mlp_bias,0,1,derived' "$pm" resolve --config llama8b --model internlm2-bias.json
check timeline-class 0 "layer 1 (global attention: 21 of 42 layers are like it) lasts" "$pm" timeline --config gemma2-9b
# The layer shown past the dense ones (DeepSeek-V3's first three) is the header's: layer 4, MoE.
check timeline-class-moe 0 "layer 4 (MoE: 58 of 61 layers are like it) lasts" "$pm" timeline --config deepseek-v3-h200 --mode serial
check explain-period 0 "Layers 0 to 3 shown; from layer 1 on, every layer repeats the one 2 before it" \
    "$pm" explain --config phi3-small --set model.dense_attention_every_n_layers=2
check explain-sparse-kv 0 "during L1.AR.mlp (32.0 KiB, 14.6 us): prefetch QKV weights 6.0 MiB, prefetch KV cache 17.0 MiB" \
    "$pm" explain --config phi3-small --set model.dense_attention_every_n_layers=2
check explain-prefill-context 0 "prefill, context 100:" "$pm" explain --config llama70b --phase prefill --context 100
check graph-json 0 '"PF.L0.Gate"' "$pm" graph --config llama70b
check graph-dot 0 "digraph preserve" "$pm" graph --config llama70b --format dot
check graph-fused 0 '"L0.O+AR.attn"' "$pm" graph --config llama70b --mode fused
check graph-fused-dot 0 "L1.O+AR.attn" "$pm" graph --config llama70b --mode fused --format dot
check footprint 0 "attn_W+kv_MiB" "$pm" footprint --config llama70b
check footprint-csv 0 "devices,attn_weights_MiB" "$pm" footprint --config llama70b --format csv
check resolve 0 "hbm_bandwidth_TBps" "$pm" resolve --config llama70b
# Issue 14: windows in the footprint (Fig 2) and the estimate, origins, warnings, refusals.
# Mistral-7B on 4 devices, batch 4, int8, context 16384: a layer holds min(16384, 4096)
# positions of 2 KV heads x 128 x (K, V) x 4 sequences = 8 MiB; attention weights
# 4096 x (8 + 4) x 128 + 8 x 128 x 4096 = 10 MiB, MLP 3 x 4096 x 3584 = 42 MiB.
check footprint-window 0 "4,10,8,18,42,8" "$pm" footprint --config mistral7b --format csv
# Gemma-2-9B at 8192: a global layer 2 x 4 x 8192 x 2 x 256 = 32 MiB, a local one 16 MiB;
# attention 3584 x 8 x 256 + 4 x 256 x 3584 = 10.5 MiB, MLP 3 x 3584 x 3584 = 36.75 MiB.
check footprint-pattern 0 "4,10.5,32,42.5,36.75,16" "$pm" footprint --config gemma2-9b --format csv
check estimate-window 0 "attention window's KV cache fits it at every context" "$pm" --config mistral7b
check resolve-origin 0 "head_dim,64,1,derived" "$pm" resolve --config llama8b \
    --set model="$root/tests/configs/hf/gpt2-config.json"
check resolve-ignored 0 "rope_theta,500000,1,ignored" "$pm" resolve --config llama8b \
    --set model="$root/tests/configs/hf/llama3-8b-config.json"
check max-position-warning 0 "exceeds the model's max_position_embeddings 2048" "$pm" \
    --config falcon7b --seq 4096
check refuse-moe 1 "mlp_only_layers: dense layers listed one by one are not modelled" "$pm" validate \
    "$root/tests/configs/invalid/hf-moe-mlp-only-layers/input.json"
check list-models 0 "llama3-70b" "$pm" list models
check list-scenarios 0 "qwen2-7b" "$pm" list scenarios
check validate-shipped 0 "0 invalid" "$pm" validate
# serve: the throughput-interactivity front of a served workload (issue 43).
check serve-table 0 "tokens/s/device" "$pm" serve --concurrency 1,4
check serve-csv 0 "concurrency,serial_tokens_per_s_per_device,serial_tokens_per_s_per_user" \
    "$pm" serve --format csv --concurrency 2
check serve-budget-binds 0 "(chunk budget binds)" "$pm" serve --config llama70b-h100 --chunk 256 \
    --concurrency 512
check serve-hbm 0 "(cache exceeds HBM)" "$pm" serve --concurrency 1024
check serve-rule-suggest 2 "did you mean 'decode_first'" "$pm" serve --rule decode_frist
check serve-prefill-first-budget 2 "must hold the prompt" \
    "$pm" serve --rule prefill_first --chunk 1024
check serve-chunk-zero 2 "--chunk: expected an integer" "$pm" serve --chunk 0
check serve-limit-unit 2 "--ttft-limit: unknown unit 'kg'" "$pm" serve --ttft-limit 3kg
check serve-list 2 "--concurrency: expected counts separated by commas" \
    "$pm" serve --concurrency 1,,2
check serve-run-refuses 2 "--concurrency: run does not use it" "$pm" --concurrency 4
check serve-plot 0 "wrote $tmp/front.svg" "$pm" serve --config llama8b --concurrency 1,8,64 \
    --plot "$tmp/front.svg"
check serve-plot-csv 0 "concurrency,serial_tokens_per_s_per_device" cat "$tmp/front.svg.csv"
check serve-plot-json 2 "--plot: the figure is drawn from CSV" \
    "$pm" serve --format json --plot "$tmp/x.png"
# A family of fronts (serve --sweep AXIS=V1,V2...): the axis's column first, a front's rows
# together; the 910B's own L2 (192 MiB) gives the plain front's rows exactly.
check serve-family-csv 0 "l2_capacity_MiB,concurrency,serial_tokens_per_s_per_device" \
    "$pm" serve --format csv --concurrency 1,16 --sweep l2=96MiB,192MiB
fam_rows=$("$pm" serve --format csv --concurrency 1,16 --sweep l2=96MiB,192MiB 2>&1 |
    grep '^192,' | cut -d, -f2-)
plain_rows=$("$pm" serve --format csv --concurrency 1,16 2>&1 | grep -v '^#' | tail -n +2)
if [ -n "$plain_rows" ] && [ "$fam_rows" = "$plain_rows" ]; then
    pass=$((pass + 1))
else
    echo "FAIL serve-family-own-l2: the 192 MiB front differs from the plain front"
    fail=$((fail + 1))
fi
fam96=$("$pm" serve --format csv --concurrency 16 --sweep l2=96MiB,192MiB 2>&1 | grep '^96,' |
    cut -d, -f2-)
if [ -n "$fam96" ] && [ "$fam96" != "$(echo "$plain_rows" | tail -1)" ]; then
    pass=$((pass + 1))
else
    echo "FAIL serve-family-96: the 96 MiB front equals the 192 MiB one at 16 sequences"
    fail=$((fail + 1))
fi
check serve-family-json 0 '"family": {"axis": "l2", "column": "l2_capacity_MiB", "values": [96, 192]}' \
    "$pm" serve --format json --concurrency 4 --sweep l2=96MiB,192MiB
check serve-family-table 0 "l2_capacity_MiB = 96" \
    "$pm" serve --concurrency 4 --sweep l2=96MiB,192MiB
check serve-family-two-axes 2 "serve draws a family of fronts along one axis (got 2)" \
    "$pm" serve --sweep l2=96MiB,192MiB --sweep hbm_bw=1TB/s,2TB/s
# serve --burst: requests sent at once, a transient (pm_burst_compute).
check burst-table 0 "makespan_s" "$pm" serve --config llama70b-h100 --burst 64,512
check burst-csv 0 "requests,serial_ttft_s,serial_tpot_s,serial_e2e_s,serial_makespan_s" \
    "$pm" serve --config llama70b-h100 --burst 64 --format csv
# A burst at one length class is that length (its share is 1); two classes are refused.
check burst-one-class 0 "same rows" bash -c "[ \"\$('$pm' serve -c llama70b-h100 --burst 10 --lengths 1000:100:1 -f csv | grep -v '^#')\" = \"\$('$pm' serve -c llama70b-h100 --burst 10 --seq 1100 --set workload.prefill_frac=0.9090909090909091 -f csv | grep -v '^#')\" ] && echo same rows"
check burst-two-classes 1 "a burst is modelled at one length (got 2 length classes)" \
    "$pm" serve -c llama70b-h100 --burst 10 --lengths 1000:100:0.5,2000:100:0.5
check burst-json 0 '"preserve_makespan_s":' "$pm" serve --burst 8 --format json
check burst-max-running 0 "8 running at once, bound by --max-running" \
    "$pm" serve --config llama70b-h100 --burst 64 --max-running 8
check burst-hbm 0 "bound by the HBM" "$pm" serve --config llama70b-h100 --burst 100000 \
    --rule prefill_first --chunk 4096
check burst-no-concurrency 2 "--burst: the requests are sent at once" \
    "$pm" serve --burst 8 --concurrency 4
check burst-max-running-alone 2 "--max-running: only with --burst" "$pm" serve --max-running 8
check burst-zero 2 "--burst: expected" "$pm" serve --burst 0
check burst-budget 2 "decode-first needs a chunk budget above the running sequences" \
    "$pm" serve --burst 64 --chunk 32
check burst-run-refuses 2 "--burst: run does not use it" "$pm" --burst 4
check serve-family-batch 2 "--sweep batch: a served workload's sequences are --concurrency" \
    "$pm" serve --sweep batch=1,2
check serve-family-many 2 "serve draws at most 8 fronts" \
    "$pm" serve --sweep l2=8MiB:256MiB:8MiB
# Requests in a wave (serve --arrival wave): the header says so; under decode-first only when
# the budget holds every prompt.
check serve-wave 0 "requests in a wave (sent and ended together)" \
    "$pm" serve --rule prefill_first --arrival wave --concurrency 1,4 --chunk 65536
check serve-wave-json 0 '"arrival": "wave"' \
    "$pm" serve --format json --rule prefill_first --arrival wave --concurrency 4 --chunk 65536
check serve-wave-decode-first 1 "holds every prompt" \
    "$pm" serve --arrival wave --concurrency 64
check serve-wave-suggest 2 "did you mean 'wave'" "$pm" serve --arrival wav
check serve-wave-run-refuses 2 "--arrival: run does not use it" "$pm" --arrival wave
# An open loop at request rates (serve --rate): each mode's sequences in flight, saturation said.
check serve-rate 0 "in_flight" "$pm" serve --config llama70b-h100 --rate 0.5,2
check serve-rate-saturated 0 "(saturated: the rate exceeds what it serves)" \
    "$pm" serve --config llama70b-h100 --rate 50
check serve-rate-csv 0 "request_rate_per_s,serial_in_flight,fused_in_flight,preserve_in_flight" \
    "$pm" serve --format csv --rate 1
check serve-rate-json 0 '"request_rate_per_s": 0.5' "$pm" serve --format json --rate 0.5
check serve-rate-both 2 "--rate: an open loop at request rates, or --concurrency" \
    "$pm" serve --rate 1 --concurrency 4
check serve-rate-bad 2 "--rate: expected request rates in (0, 1e12]" "$pm" serve --rate 0
check serve-rate-wave 2 "a wave is a closed loop's" \
    "$pm" serve --rate 1 --arrival wave --rule prefill_first --chunk 65536
# A distribution of lengths (serve --lengths IN:OUT:SHARE,...).
check serve-lengths 0 "# lengths (in:out x share): 4000:100 x 0.25 500:600 x 0.75" \
    "$pm" serve --config llama70b-h100 --lengths 4000:100:0.25,500:600:0.75 --concurrency 4
check serve-lengths-json 0 '"lengths": [{"input_tokens": 4000, "output_tokens": 100, "share": 0.25}' \
    "$pm" serve --format json --lengths 4000:100:0.25,500:600:0.75 --concurrency 4
# A concurrency whose prompts of one class fit a step each (the finishing were an ulp above
# the count: refused until session 41); the search over it found nothing.
check serve-lengths-every-concurrency 0 "preserve" \
    "$pm" serve --config llama70b-h100 --lengths azure-conv-2023 --concurrency 185,192
check serve-lengths-rate-saturated 0 "preserve" \
    "$pm" serve --config llama70b-h100 --rate 10.2 --lengths 1000:100:0.5,3000:300:0.5
check serve-lengths-bad 2 "--lengths: '4000:100' is not IN:OUT:SHARE" \
    "$pm" serve --lengths 4000:100
check serve-lengths-share 2 "a class's share must be a number > 0" \
    "$pm" serve --lengths 4000:100:0
check serve-lengths-wave 1 "staggered requests only" \
    "$pm" serve --lengths 400:100:1 --arrival wave --rule prefill_first
# A lengths file: bundled by name, listed, refused at its key when bad.
check serve-lengths-file 0 "# lengths (in:out x share): 167:148 x 0.124961" \
    "$pm" serve --config llama70b-h100 --lengths azure-conv-2023 --rule prefill_first --chunk 8192 \
    --concurrency 1,16
check list-lengths 0 "azure-code-2023" "$pm" list lengths
check serve-lengths-name 1 "no bundled lengths of that name (bundled: azure-code-2023, azure-conv-2023, sglang-random-1000-1000)" \
    "$pm" serve --lengths azure-conv
printf '{"kind": "lengths", "name": "x", "source": "t", "classes": [{"input_tokens": 9, "output_tokens": 2}]}' \
    > "$tmp/lengths.json"
check serve-lengths-file-bad 1 "lengths.json: \$.classes[0].share: missing required key" \
    "$pm" serve --lengths "$tmp/lengths.json"
check serve-family-plot 0 "wrote $tmp/fronts.png" "$pm" serve --concurrency 1,8,64 \
    --sweep hbm_bw=1.6TBps,3.2TBps --plot "$tmp/fronts.png"
# A grid too large for one run says how to cut it; one beyond any count says so (issue 42: the
# first streamed four billion points, the second exited with no message).
check sweep-grid-cap 2 "cut it with --shard K/N for N >= 40" \
    "$pm" --config llama8b --sweep seq=2:4000000:1 --sweep batch=1:1000:1
check sweep-grid-overflow 2 "more than any run or set of shards can count" \
    "$pm" --config llama8b --sweep seq=2:9000000:1 --sweep batch=1:9000000:1 \
    --sweep l2=1MiB:9000000MiB:1MiB --sweep devices=1:9000000:1
# A gnuplot that never ends is stopped at the time limit; a signal while it draws leaves no
# partial figure behind and ends the tool as the signal would (issue 42: the tool waited
# forever, and Ctrl-C left FILE.tmpXXXXXX; a background job ignores SIGINT, so SIGTERM here).
mkdir -p "$tmp/slowbin"
printf '#!/bin/sh\nexec sleep 30\n' >"$tmp/slowbin/gnuplot"
chmod +x "$tmp/slowbin/gnuplot"
check plot-timeout 1 "gnuplot did not finish within 1 s and was stopped" \
    env PATH="$tmp/slowbin:$PATH" PRESERVE_MODEL_PLOT_TIMEOUT_S=1 \
    "$pm" --config llama8b --sweep batch=1,2 --plot "$tmp/slow.png"
check plot-timeout-no-tmp 0 "none" sh -c "ls '$tmp' | grep -c 'slow.png.tmp' || echo none"
PATH="$tmp/slowbin:$PATH" "$pm" --config llama8b --sweep batch=1,2 --plot "$tmp/int.png" \
    >/dev/null 2>&1 &
plot_pid=$!
sleep 1
kill -TERM "$plot_pid"
wait "$plot_pid"
plot_rc=$?
check plot-signal-status 0 "143" echo "$plot_rc"
check plot-signal-no-tmp 0 "none" sh -c "ls '$tmp' | grep -c 'int.png.tmp' || echo none"
# Every --set changes the model or is refused (issue 42): a multimodal wrapper's top-level
# num_hidden_layers was dropped, exit 0, the whole model's numbers.
check set-wrapper-key 1 "set it under text_config (model.text_config.KEY)" \
    "$pm" --model "$root/tests/configs/hf/gemma-3-27b-it-config.json" --set model.num_hidden_layers=2
check set-ignored-key 1 '--set of "rope_theta" changes nothing' \
    "$pm" --model "$root/tests/configs/hf/llama3-8b-config.json" --set model.rope_theta=1
check set-wrapper-text-key 0 "speedup" \
    "$pm" --model "$root/tests/configs/hf/gemma-3-27b-it-config.json" \
    --set model.text_config.num_hidden_layers=2
# A data directory that is not there, not a directory, or holds no data file is an error, never
# "0 files checked, 0 invalid" (issue 42).
check validate-no-dir 1 "validate: the data directory $tmp/nowhere does not exist" \
    "$pm" validate --data-dir "$tmp/nowhere"
mkdir -p "$tmp/empty-data"
check validate-empty-dir 1 "validate: no data files under $tmp/empty-data" \
    "$pm" validate --data-dir "$tmp/empty-data"
check validate-file-as-dir 1 "is not a directory" "$pm" validate --data-dir "$root/README.md"
check one-device 0 "preserve vs serial 1.000x" "$pm" --config llama8b --devices 1

check sweep-header 0 "l2_capacity_MiB,serial_request_s" "$pm" --config llama70b.json --sweep l2
check sweep-density 0 "density_preserve_tokens_per_s_per_mm2" "$pm" --sweep l2=8MiB:64MiB:8MiB
check sweep-2d 0 "batch,seq_len," "$pm" --sweep batch=1,4 --sweep seq=2k:8k:x2
check sweep-invalid-point 0 "exceed the model" "$pm" --config llama8b --sweep devices=16,64
# A sweep warns of what it evaluates: falcon7b's 71 heads over its scenario's 4 devices are not
# swept by a devices axis (2 is uneven, 1 is not), and are by a batch axis.
check sweep-devices-uneven 0 "does not split evenly over 1 of the devices axis's counts (2)" \
    "$pm" --config falcon7b --sweep devices=1,2
lacks sweep-devices-not-base "over 4 devices" "$pm" --config falcon7b --sweep devices=1,2
check sweep-batch-base-uneven 0 "does not split evenly over 4 devices" "$pm" --config falcon7b \
    --sweep batch=1,2
check optimize 0 "best_l2_capacity_MiB" "$pm" --config llama8b --optimize l2=8MiB:256MiB
# validate: a valid scenario's warnings under its ok line (phi3-medium's 16K beyond its 4K
# context, its 10 KV heads over 4 devices); a file that is only valid has none.
check validate-warns 0 "    warning: sequence length 16384 exceeds the model's max_position_embeddings 4096" \
    "$pm" validate "$root/data/scenarios/phi3-medium.json"
lacks validate-no-warning "warning" "$pm" validate "$root/data/scenarios/llama70b-h100.json"
# A model file's own warnings, as a run of --config with it gives them (its unrecognised keys,
# its checkpoint's format); not the scenario's (llama70b's 16K beyond Llama-3-8B's 8K).
check validate-model-key 0 "warning (run in scenario llama70b): $root/tests/configs/hf-families/starcoder2-15b-config.json: \$.model.mlp_type: key not recognised" \
    "$pm" validate "$root/tests/configs/hf-families/starcoder2-15b-config.json"
check validate-model-checkpoint 0 'the checkpoint'"'"'s weights are 4-bit floats' \
    "$pm" validate "$root/tests/configs/hf/gpt-oss-20b-config.json"
lacks validate-model-not-scenario "warning" "$pm" validate "$root/tests/configs/hf/llama3-8b-config.json"
# Serial and fused densities still rise toward the smallest L2 (less area, the same time): their
# best is the range's end, said in the at_edge column and on stderr; PRESERVE's is inside.
# At 8 MiB the 910B's package is 0.34185 x 800 + 1.3325 x 8 + 14.9617 x 4 + 76.44 + 1.7458 x 7
# + 40 = 472.6474 mm2 (serial's 173.09 tokens/s over 4 devices: 0.09156 per mm2).
check optimize-edge-lo 0 "serial,8,0.0915552,8,8.07984,0,lo" "$pm" --optimize l2
check optimize-edge-inside 0 "preserve,56.0259,0.103851,55.9949,56.0412,7," "$pm" --optimize l2
check optimize-edge-warning 0 "warning: serial: the best l2_capacity_MiB is the range's lower end (8) and density_tokens_per_s_per_mm2 still rises toward it" "$pm" --optimize l2
check optimize-edge-json 0 '"brent_iterations": 0, "at_edge": "lo"}' "$pm" --optimize l2 --format json
# A best at a chip no reticle prints is said, in the search's words (one text: sweep.c's
# pm_best_over_reticle): every L2 from 400 MiB makes the 910B's compute die over it.
check optimize-reticle 0 "warning: preserve: the best is at l2_capacity_MiB 400, where the modelled compute die is " "$pm" --config llama70b --optimize l2=400MiB:1024MiB
# Per mm2 or per dollar a best with more HBM bandwidth than the chip's took it for free (the
# hbm_bw axis moves no die area and no price: sweep.c's pm_best_free_bandwidth), said instead of
# "widen the range" (the density rises along it for ever); per joule the edge stays.
check optimize-free-bw 0 "warning: preserve: the best is at hbm_bandwidth_TBps 8, above the chip's 1.6, at the chip's die area and price: hbm_bw moves neither (the die keeps its 4 HBM PHY sites" "$pm" --config llama70b --optimize hbm_bw
lacks optimize-free-bw-no-edge "widen the range" "$pm" --config llama70b --optimize hbm_bw
check optimize-free-bw-joule 0 "upper end (8)" "$pm" --config llama70b --optimize hbm_bw --objective joule
lacks optimize-free-bw-joule-none "as free" "$pm" --config llama70b --optimize hbm_bw --objective joule
check optimize-edge-json-inside 0 '"brent_iterations": 7, "at_edge": null}' "$pm" --optimize l2 --format json
lacks optimize-flat-no-edge "warning: serial" "$pm" --optimize l2_bw
# The counts pp, dp and split (issue 44 item 5): every value of the range evaluated, the refused
# ones skipped and counted, ties to the smaller value. pp's own range is 1 to the layers (80).
check optimize-pp 0 "# searched pipeline_parallel in [1, 80]: every value, ties to the smaller value (within a relative 1e-09); 80 evaluations, 0 refused" \
    "$pm" --config llama70b-h100 --cluster hgx-h100-ib-ndr --devices 8 --batch 16 --optimize pp
check optimize-pp-columns 0 "mode,best_pipeline_parallel,density_tokens_per_s_per_mm2,bracket_lo,bracket_hi,brent_iterations,at_edge,ties,fits_hbm" \
    "$pm" --config llama70b-h100 --cluster hgx-h100-ib-ndr --devices 8 --batch 16 --optimize pp
# The split over 2 stages of 80 layers: 80 and 81 leave the first stage none (refused, skipped)
check optimize-split-skipped 0 "warning: 2 of the 4 values of last_stage_layers in [78, 81] were refused and skipped; the first, 80: \$.cluster.pipeline_layers: the last of 2 stages holds at most 79 of the 80 layers" \
    "$pm" optimize split=78:81 "${pp2[@]}" --batch 16
check optimize-split-json 0 '"skipped": 2,' "$pm" "${pp2[@]}" --batch 16 --optimize split=78:81 --format json
check optimize-split-no-stages 1 "\$.cluster.pipeline_parallel: every split in [1, 80] was refused; the first (1): the split axis sets the layers of the last of several pipeline stages" \
    "$pm" --config llama70b --optimize split
# The split's optimum is the argmax of a sweep of the same values (PRESERVE's density).
best=$("$pm" "${pp2[@]}" --batch 16 --optimize split 2>/dev/null | awk -F, '$1 == "preserve" {print $2}')
argmax=$("$pm" sweep "${pp2[@]}" --batch 16 --sweep split=1:79:1 2>/dev/null | grep -v '^#' |
    awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == "density_preserve_tokens_per_s_per_mm2") c = i; next}
             $c > b {b = $c; v = $1} END {print v}')
if [ -n "$best" ] && [ "$best" = "$argmax" ]; then
    pass=$((pass + 1))
else
    echo "FAIL optimize-split-argmax: the optimum's split '$best' is not the sweep's argmax '$argmax'"
    fail=$((fail + 1))
fi
# dp: replicas multiply tokens/s and devices alike, so every dp ties: the smallest is reported
# and the tie said, not a winner made up from a rounding
check optimize-dp-tie 0 "warning: preserve: 4 values of data_parallel in [1, 4] give the best density_tokens_per_s_per_mm2 within a relative 1e-09 (replicas multiply tokens/s, devices, dollars and joules alike: the objective is flat in dp): the smallest, 1, is reported" \
    "$pm" --config llama70b-h100 --optimize dp=1:4
# ...and its density is dp 1's, the scenario's own (its sweep's row)
row=$("$pm" --config llama70b-h100 --optimize dp=1:4 2>/dev/null | awk -F, '$1 == "preserve"')
own=$("$pm" sweep --config llama70b-h100 --sweep dp=1 2>/dev/null | grep -v '^#' |
    awk -F, 'NR == 1 {for (i = 1; i <= NF; i++) if ($i == "density_preserve_tokens_per_s_per_mm2") c = i; next}
             {printf "%.6g", $c}')
if [ -n "$own" ] && [ "$row" = "preserve,1,$own,1,1,0,,3,1" ]; then
    pass=$((pass + 1))
else
    echo "FAIL optimize-dp-row: '$row' is not 'preserve,1,$own,1,1,0,,3,1'"
    fail=$((fail + 1))
fi
check optimize-dp-json 0 '"at_edge": null, "ties": 3, "fits_hbm": true}' "$pm" --config llama70b-h100 --optimize dp=1:4 --format json
check optimize-dp-json-none-skipped 0 '"first_skipped": null,' "$pm" --config llama70b-h100 --optimize dp=1:4 --format json
check optimize-count-refused 2 "--optimize: batch is a count the optimum search does not take (it takes l2, l2_bw, compute, hbm_bw, link_bw, pp, dp, split)" \
    "$pm" --optimize batch
# Issue 41: the die's blocks (by hand in test_energy: 496.0509 + 115.608 + 89.7702 + 31.4244 +
# 81.14 = 813.9935 mm2) and the reticle, in the table and the JSON.
check run-die-line 0 "die 814.0 mm2 = compute 496.1 + L2 115.6 + HBM PHY 89.8 + link PHY 31.4 + other 81.1" \
    "$pm" --config llama70b-h100
# The 910B's package (by hand in test_energy): a 665.6 mm2 compute die beside a 52.2 mm2 I/O die.
check run-die-package 0 "package: 1 compute die of 665.6 mm2 + 1 I/O die of 52.2 mm2 (links)" "$pm"
check run-die-json 0 '"compute_dies": 1, "compute_die_mm2": 665.60' "$pm" --format json
check run-die-fits 0 '"largest_die_mm2": 665.60' "$pm" --format json
# ... and in the run CSV: die_mm2 = 665.6068 + 52.2206, then the blocks and the dies.
check run-die-csv 0 ',665.6068,0,273.48,255.84,59.8468,12.2206,76.44,40,1,665.6068,1,52.2206' "$pm" --format csv
# The run CSV is a sweep point's row (issue 48: its columns differed): the same header after
# the scenario's columns, the same values.
check run-csv-is-sweep-row 0 "same" bash -c "diff <('$pm' --format csv | grep -v '^#' | cut -d, -f10- | tail -1) <('$pm' --sweep batch=4 | grep -v '^#' | tail -1 | cut -d, -f2- | sed 's/,\$//') && echo same"
lacks run-die-no-warning "reticle" "$pm"
# A what-if over the reticle is warned of: 512 MiB of L2 makes the compute die 0.34185 x 800 +
# 1.3325 x 512 + 14.9617 x 4 + 76.44 = 1092.0 mm2.
check run-die-reticle 0 '"reticle_mm2": 858, "over_reticle": true}' "$pm" --format json --set accelerator.l2_capacity_MiB=512
# Issue 41: sensitivity: the scenario's own row is its run's PRESERVE (910B: stream, 228.95
# tokens/s, 1.323x); with waiting consumers the mark moves to wait/off.
check sensitivity-own 0 "stream   off                  228.95             1.323x            1.287x  (the scenario's)" \
    "$pm" sensitivity
check sensitivity-wait 0 "wait,0,1," "$pm" sensitivity --set accelerator.prefetch_consumer=wait --format csv
check sensitivity-json 0 '"prefetch_consumer": "stream", "hbm_sharing": true, "scenario_default": false' \
    "$pm" sensitivity --format json
# Issue 41: every bundled accelerator gives its prefetch semantics, with a source (resolve lists
# it as given, not defaulted).
for acc in "$root"/data/accelerators/*.json; do
    a=$(basename "$acc" .json)
    check "consumer-given-$a" 0 '$.accelerator.prefetch_consumer,' bash -c \
        "'$pm' resolve --config llama70b-h100 --accelerator $a 2>/dev/null | grep -E '^\\\$.accelerator.prefetch_consumer,(wait|stream),,given,'"
done
check run-die-reticle-warning 0 "its modelled compute die is 1092 mm2, over the 858 mm2 reticle" "$pm" --set accelerator.l2_capacity_MiB=512
check run-die-file-refused 1 '$.area: the modelled die is 1276 mm2, over the 858 mm2 reticle' "$pm" --accelerator "$root/tests/configs/invalid/area-over-reticle/input.json"
# A scenario whose KV cache outgrows the HBM: every point searched assumes memory the device
# lacks (L2, bandwidths and compute do not change it), said on stderr, in the JSON and the CSV.
# llama3-70b at 1M tokens, batch 4, 4 devices: 80 x 2 x 2 KV heads x 128 x 4 x 1048576 B =
# 160 GiB of KV beside 16.4 GiB of weights, against the Ascend 910B's 64 GiB.
check optimize-unfit-warning 0 "warning: the weights and KV cache per device (16.4 GiB + 160 GiB) exceed its 64 GiB of usable HBM: the times are of memory the device does not have" "$pm" --optimize l2 --seq 1M
# The run says it too, in every format, and its JSON report lists it.
check run-unfit-warning 0 "warning: the weights and KV cache per device (16.4 GiB + 160 GiB) exceed its 64 GiB of usable HBM" "$pm" --seq 1M --format csv
check run-unfit-json 0 '"the weights and KV cache per device (16.4 GiB + 160 GiB) exceed its 64 GiB of usable HBM' "$pm" --seq 1M --format json
lacks run-fit-no-warning "usable HBM:" "$pm" --seq 256k
# The views of one step (explain, timeline, graph) say it of the step's context.
check explain-unfit-warning 0 "warning: the weights and KV cache per device at context 1048576 (16.4 GiB + 160 GiB) exceed its 64 GiB of usable HBM" "$pm" explain --context 1M
lacks explain-fit-no-warning "usable HBM" "$pm" explain
check optimize-unfit-json 0 '"fits_hbm": false,' "$pm" --optimize l2 --seq 1M --format json
check optimize-unfit-csv 0 "# fits_hbm 0: the weights and KV cache per device exceed the usable HBM at every point searched" "$pm" --optimize l2 --seq 1M
check optimize-fit-json 0 '"fits_hbm": true,' "$pm" --optimize l2 --format json
lacks optimize-fit-no-warning "usable HBM" "$pm" --optimize l2
# A sweep whose later points outgrow it: the fits_hbm column says it per row, stderr in sum
# (a plot would not show it). 256K: 40 GiB of KV fits beside 16.4 GiB; 1M does not.
check sweep-unfit-warning 0 "warning: fits_hbm 0 at 1 of 3 points (the first at seq_len 1048576): their weights and KV cache exceed the usable HBM per device" "$pm" sweep seq=16k,256k,1M
check sweep-unfit-grid 0 "warning: fits_hbm 0 at 1 of 4 points (the first at seq_len 262144, batch 16)" "$pm" sweep seq=16k,256k batch=1,16
lacks sweep-fit-no-warning "fits_hbm 0" "$pm" sweep seq=16k,256k
# Points that are not valid are counted too, with the first one's error (llama3-70b has 64 heads).
check sweep-invalid-warning 0 "warning: 2 of 3 points are not valid (NaN, their error in the last column; the first at devices 128: \$.cluster.devices: 128 devices exceed the model's 64 attention heads" "$pm" sweep devices=4,128,256
lacks sweep-valid-no-warning "not valid" "$pm" sweep devices=4,8
check optimize-usd 0 "best_l2_capacity_MiB,tokens_per_s_per_usd" "$pm" --config llama8b --optimize l2=8MiB:256MiB --objective usd
check optimize-joule 0 "best_l2_capacity_MiB,tokens_per_J" "$pm" --config llama8b --optimize l2=8MiB:256MiB --objective joule
check objective-bad 2 "--objective: expected device, mm2, usd or joule (got 'watt')" "$pm" --optimize l2 --objective watt
check objective-alone 2 "--objective: run does not use it" "$pm" --objective usd
noblocks="$root/tests/configs/valid/accelerator-with-area.json"
check objective-usd-needs-cost 1 '$.accelerator.cost: the usd objective needs the accelerator'"'"'s "cost" object' "$pm" --accelerator "$noblocks" --optimize l2 --objective usd
check objective-joule-needs-energy 1 '$.accelerator.energy: the joule objective needs' "$pm" --accelerator "$noblocks" --optimize l2 --objective joule
check json-energy 0 '"J_per_token": ' "$pm" --format json
check json-cost 0 '"cost": {"die_mm2": ' "$pm" --format json
check json-energy-null 0 '"J_per_token": null, "avg_power_W": null, "tokens_per_J": null, "tokens_per_s_per_usd": null' "$pm" --accelerator "$noblocks" --format json
check json-cost-null 0 '"cost": null' "$pm" --accelerator "$noblocks" --format json
check table-energy 0 "J/token" "$pm"
check table-cost 0 "cost per device: \$" "$pm"
check table-no-blocks 0 "has no energy or cost coefficients" "$pm" --accelerator "$noblocks"
# The run's CSV says when the batch does not fit the HBM, as the sweeps do: llama70b at batch
# 512 and 128K positions holds 2560 GiB of KV cache per device (the text's "exceeds HBM").
check csv-fits-hbm 0 "weight_bytes_per_device,kv_bytes_per_device,fits_hbm" "$pm" --format csv
check csv-exceeds-hbm 0 ",2748779069440,0" "$pm" --batch 512 --seq 128k --format csv
# A100 NVLink3 allreduces move their bytes at NCCL's measured 0.772 of the 300 GB/s link: a
# 8192 x 8192 x 2 B = 134217728 B message on 8 devices takes twoshot's 2 x 2 us + 2 x 7 x
# 134217728 / (8 x 300e9 x 0.772) = 1.0181667702936e-3 s.
check allreduce-efficiency 0 '"allreduce_decode_s": 0.00101816677029' "$pm" --config llama8b --model llama2-70b --accelerator a100-sxm-80gb --set cluster=nvlink3-nvswitch --devices 8 --batch 8192 --seq 2 --set workload.weight_dtype=fp16 --set workload.act_dtype=fp16 --set workload.kv_dtype=fp16 --format json
check allreduce-efficiency-range 1 '$.cluster.allreduce_efficiency_frac: must be in (0, 1]' "$pm" --set cluster=nvlink3-nvswitch --set cluster.allreduce_efficiency_frac=1.5
check table-exceeds-hbm 0 "2560.0 GiB KV of 64.0 GiB usable  ** exceeds HBM capacity **" "$pm" --batch 512 --seq 128k
check csv-energy 0 "serial_J_per_token,fused_J_per_token,preserve_J_per_token,serial_avg_power_W" "$pm" --format csv
# Poisson yield of the 910B's 665.6068 mm2 compute die at 0.15 /cm2: e^-0.99841 = 36.8 %.
check set-yield-model 0 "yield 36.8%" "$pm" --set accelerator.cost.yield_model=poisson
check set-energy 0 '"hbm": 3363' "$pm" --set accelerator.energy.hbm_pJ_per_bit=3.9 --format json
check sweep-energy-cols 0 "device_usd,serial_J_per_token" "$pm" --sweep l2=8MiB:16MiB:8MiB
check sweep-no-blocks-note 0 "has no energy coefficients" "$pm" --accelerator "$noblocks" --sweep l2=8MiB:16MiB:8MiB
check sweep-bad-range 2 "reversed range" "$pm" --sweep l2=256MiB:8MiB:8MiB
check sweep-bad-axis 2 "unknown axis" "$pm" --sweep frob=1
check plot-bad-ext 2 "--plot" "$pm" --sweep l2=8MiB:16MiB:8MiB --plot out.gif

# Usage errors exit 2, config errors exit 1.
check bad-option 2 "unknown option" "$pm" --frobnicate
check bad-devices 2 "--devices" "$pm" --devices 0
check bad-seq 2 "--seq" "$pm" --seq 12parsecs
check bad-batch-text 2 "--batch" "$pm" --batch abc
check bad-format 2 "--format" "$pm" --format xml
check bad-command 2 "unknown command" "$pm" frobnicate
check bad-list 2 "unknown list" "$pm" list gizmos
check bad-set-syntax 2 "PATH=VALUE" "$pm" --set workload.batch
check missing-value 2 "needs a value" "$pm" --config
check unknown-scenario 1 "no bundled scenario" "$pm" --config nosuch
check devices-over-heads 1 "exceed the model's 32 attention heads" "$pm" --config llama8b --devices 64
check set-bad-value 1 "--set workload.batch=0" "$pm" --config llama70b --set workload.batch=0
# A datatype has no provenance item: its check names the --set that gave it, not the scenario.
check set-bad-dtype 1 "error: --set workload.act_dtype=fp8: $.workload.act_dtype: fp8 activations with int8 weights" \
    "$pm" --config llama70b --set workload.act_dtype=fp8
check set-bad-dtype-peak 1 "error: --set workload.act_dtype=fp8: $.workload.act_dtype: accelerator" \
    "$pm" --config llama70b --accelerator a100-sxm-80gb --set workload.weight_dtype=fp8 --set workload.act_dtype=fp8
# An unknown key that only an override made (it made its parent object too) is the override's.
check set-unknown-below 1 "error: --set cluster.nosuch.deep=3: \$.cluster.nosuch: unknown key" \
    "$pm" --config llama70b --set cluster.nosuch.deep=3
check set-unknown-below-scenario 1 "error: --set nosuch.key=3: \$.nosuch: unknown key" \
    "$pm" --config llama70b --set nosuch.key=3
# A die that could not run the scenario: no HBM PHY for its HBM, no link PHY for its cluster.
check area-no-hbm-phy 1 "\$.accelerator.area.hbm_stacks: a die with no HBM PHY" \
    "$pm" --config llama70b --set accelerator.area.hbm_stacks=0
check area-no-link-phy 1 "\$.accelerator.area.links: a die with no link PHY" \
    "$pm" --config llama70b --set accelerator.area.links=0
check set-unknown-key 1 "did you mean" "$pm" --config llama70b --set accelerator.hbm_bandwith_TBps=2
check consumer-wait 0 "wait for their prefetch's end" "$pm" --config llama70b --set accelerator.prefetch_consumer=wait
check consumer-stream 0 "prefetch consumers: stream" "$pm" --config llama70b
check consumer-bad 1 '--set accelerator.prefetch_consumer=eager: $.accelerator.prefetch_consumer: expected one of wait, stream (got "eager")' \
    "$pm" --config llama70b --set accelerator.prefetch_consumer=eager
check allreduce-dtype 0 "allreduce fp32" "$pm" --config llama70b --set workload.allreduce_dtype=fp32

printf '{"kind": "workload", "batch": 4,\n "seq_len": 16384 "prefill_frac": 0.5}\n' >bad.json
check syntax-error 1 "bad.json:2:" "$pm" validate bad.json
mkdir adir
check directory 1 "not a regular file" "$pm" validate adir
: >empty.json
check empty-file 1 "empty file" "$pm" validate empty.json

# Shards joined by merge are the single run, byte for byte, whatever the thread count.
"$pm" --sweep l2=8MiB:64MiB:8MiB --sweep batch=1,4,16 >single.csv 2>/dev/null
for k in 1 2 3 4 5; do
    "$pm" --sweep l2=8MiB:64MiB:8MiB --sweep batch=1,4,16 --shard $k/5 --threads 1 >shard$k.csv 2>/dev/null
done
check shard-line 0 "# shard 2/5: rows" cat shard2.csv
check merge-equals-single 0 "" bash -c "'$pm' merge shard5.csv shard2.csv shard1.csv shard4.csv shard3.csv | cmp - single.csv"
check merge-missing 1 "shard 3/5 is missing" "$pm" merge shard1.csv shard2.csv shard4.csv shard5.csv
check merge-twice 1 "given twice" "$pm" merge shard1.csv shard1.csv shard2.csv shard3.csv shard4.csv shard5.csv
"$pm" --sweep l2=8MiB:16MiB:8MiB --shard 2/5 >other.csv 2>/dev/null
check merge-different 1 "different sweeps" "$pm" merge shard1.csv other.csv
check merge-not-shard 1 "single.csv:5: a row before any '# shard K/N' line" "$pm" merge single.csv
"$pm" search --config llama70b-h100 --tp-list 8 --concurrency 4 --shard 1/1 >search1.shard 2>/dev/null
# The serve footer's cap is the fixed point, whatever the list (it was the first row's)
check serve-cap-list-free 0 "same" bash -c "a=\$('$pm' serve --config llama70b-h100 --chunk 512 --concurrency 256 2>/dev/null | tail -1 | grep -o 'at most [0-9]*'); b=\$('$pm' serve --config llama70b-h100 --chunk 512 --concurrency 1024,256 2>/dev/null | tail -1 | grep -o 'at most [0-9]*'); [ -n \"\$a\" ] && [ \"\$a\" = \"\$b\" ] && echo same"
# A limit without its unit is refused ("--tpot-limit 50" was 50 s, every candidate within it)
# A device count for search's scenario bounds nothing (each candidate its own TP): refused.
# A deployment that cannot run names the key its error is at (the scenario's EP under a TP it
# does not divide named neither the key nor --ep-list).
check search-invalid-names-the-key 0 "the first: \$.cluster.expert_parallel: must divide devices (got 4 ranks, 2 devices)" \
    "$pm" search --config qwen3-30b-a3b --tp-list 2 --chunks 2048 --concurrency 8
check search-devices-refused 2 "search gives each candidate its tensor-parallel degree" \
    "$pm" search --config llama70b-h100 --devices 4 --tpot-limit 50ms
check search-limit-unit 2 "--tpot-limit: give the unit, e.g. 50ms or 2s" "$pm" search --config llama70b-h100 --tpot-limit 50 --concurrency 4
# 0 is no limit, as the library's and disagg's (it was refused: "expected a time in (0, 1e6]")
check limit-zero-is-none 0 "# limits (0: none): TTFT 0 s, TPOT 0.05 s" "$pm" search --config llama8b --budget 8 --tpot-limit 50ms --ttft-limit 0 --concurrency 4 -f csv
check limit-negative 2 "--ttft-limit: expected a time in [0, 1e6] s, 0 for none" "$pm" serve --config llama8b --ttft-limit=-1s --concurrency 4
check serve-limit-unit 2 "--ttft-limit: give the unit" "$pm" serve --config llama70b-h100 --ttft-limit 2 --concurrency 4
# Nothing served is not "nothing meets the limits" (no limit was given)
check search-nothing-served 0 "no candidate was served" "$pm" search --config llama70b-h100 --tp-list 8 --chunks 1 --concurrency 4
# The points outside what is served are counted: 2 TP x 2 chunks x 3 concurrencies = 12, of
# which chunk 64 at 64 and 256 and chunk 512 at 512... : here chunk 64 at 64 and 256 (2 a TP).
check search-not-served 0 "12 points x 3 modes; 8 evaluated, 0 pruned, 4 not served (decode-first: a chunk budget at or below the concurrency" "$pm" search --config llama70b-h100 --tp-list 4,8 --chunks 64,512 --concurrency 16,64,256
# A wave under decode-first whose prompts need more than one step is outside the space, not a
# deployment that cannot run: the smaller concurrencies are served.
check search-wave-outside 0 "4 points x 3 modes; 3 evaluated, 0 pruned, 1 not served (decode-first: a chunk budget at or below the concurrency, or a wave whose prompts it does not hold in one step); 0 deployments could not run" "$pm" search --config llama70b-h100 --tp-list 8 --chunks 8192 --concurrency 1,2,4,8 --arrival wave
check merge-search-shard 1 "a search's shard: merge joins a sweep's" "$pm" merge search1.shard
check shard-bad 2 "expected K/N" "$pm" --sweep l2 --shard 6/5
check shard-no-sweep 2 "only with --sweep" "$pm" --shard 1/2
# A bare axis fits the scenario (issue 48): NVLink4's 450 GB/s is on the link axis, the devices
# stop at the NVSwitch board's 8.
check sweep-link-default 0 "GBps=56.25 112.5 225 450 900 ." bash -c "echo GBps=\$('$pm' --config llama70b-h100 --sweep link_bw 2>/dev/null | grep -v '^#' | tail -n +2 | cut -d, -f1 | tr '\n' ' ')."
check sweep-devices-default 0 "devices=1 2 4 8 ." bash -c "echo devices=\$('$pm' --config llama70b-h100 --sweep devices 2>/dev/null | grep -v '^#' | tail -n +2 | cut -d, -f1 | tr '\n' ' ')."
check metric-unknown 2 '--metric: "preserve_tpot" is not a result column of the sweep (did you mean "preserve_tpot_s"?' "$pm" --sweep batch=1,4 --sweep seq=1k,2k --metric preserve_tpot --plot x.png
check metric-one-axis 2 "--metric: it colours the cells of a two-axis --plot (got 1 --sweep)" "$pm" --sweep batch=1,4 --metric preserve_tpot_s --plot x.png
check sweep-4d 0 "l2_capacity_MiB,link_bandwidth_GBps,batch,seq_len,serial_request_s" "$pm" --sweep l2=8MiB,16MiB --sweep link_bw=100Gbps,200Gbps --sweep batch=1,4 --sweep seq=1k,2k
# 2 x 2 x 2 x 2 = 16 rows and the header: exactly 17 lines that are not comments.
check sweep-4d-rows 0 "lines=17." bash -c "echo lines=\$('$pm' --sweep l2=8MiB,16MiB --sweep link_bw=100Gbps,200Gbps --sweep batch=1,4 --sweep seq=1k,2k | grep -vc '^#')."
check sweep-5-axes 2 "at most 4 axes" "$pm" --sweep l2 --sweep batch --sweep seq --sweep link_bw --sweep hbm_bw
check sweep-same-axis 2 "the axes must differ" "$pm" --sweep l2 --sweep batch --sweep l2
check plot-3d 2 "one or two axes" "$pm" --sweep l2 --sweep batch --sweep seq --plot x.png
# Every input that changes a result is in resolve and its digest: a choice made by name (a
# datatype) and a true/false one too, so shards of different scenarios do not merge.
check resolve-choice 0 '$.workload.kv_dtype,fp16,,given,--set workload.kv_dtype=fp16,""' "$pm" resolve --set workload.kv_dtype=fp16
check resolve-bool 0 '$.model.tie_word_embeddings,0,1,given,' "$pm" resolve
check digest-choice 0 "differ" bash -c "a=\$('$pm' resolve | sed -n 2p); b=\$('$pm' resolve --set workload.kv_dtype=fp16 | sed -n 2p); [ \"\$a\" != \"\$b\" ] && echo differ"
check digest-bool 0 "differ" bash -c "a=\$('$pm' resolve | sed -n 2p); b=\$('$pm' resolve --set model.mlp_gated=false | sed -n 2p); [ \"\$a\" != \"\$b\" ] && echo differ"
# A hierarchy of HCCS full-mesh nodes: its intra-node phases take one step each, not a ring's
# seven (one node of 8: 2 x 10 us + 2 x 64 KiB / (8 x 56 GB/s) = 20.3 us, not 142 us).
check hier-intra-mesh 0 "hierarchical 20.3 us" "$pm" --cluster ascend-multinode --devices 8
check hier-intra-not-hier 1 '$.cluster.intra_node_topology: only meaningful with "topology": "hierarchical"' "$pm" --set cluster.intra_node_topology=ring
# The fused row's allreduce is the fused kernel's own communication: its 11 us start-up
# (fused_latency_us) + 4 x 8192 x 2 B / 56 GB/s = 12.17 us, not the separate allreduce's 15.2.
check fused-own-allreduce 0 "oneshot 12.2 us, 1 chunk" "$pm"
# A sweep point beyond a loader's bound names the field and writes the count whole.
check sweep-point-bound 0 '"$.workload.batch: must be at most 16777216 (got 33554432)"' "$pm" --sweep batch=16777216,33554432
# The one-step views warn once (explain and timeline load the scenario twice, timeline --compare
# once per mode), and of the step's own context beyond the trained one.
check views-warn-once 0 "once=1." bash -c "echo once=\$('$pm' timeline --compare -c phi3-medium 2>&1 >/dev/null | grep -c 'does not split evenly')."
check explain-warns-once 0 "once=1." bash -c "echo once=\$('$pm' explain -c phi3-medium 2>&1 >/dev/null | grep -c 'does not split evenly')."
check view-context-trained 0 "context 100000 (the step's position 100001) exceeds the model's max_position_embeddings 4096" "$pm" explain -c phi3-medium --context 100000
# explain walks a graph of the layers it shows: the last one shown ends it, so its last window
# runs into the LM head as only the model's last layer's does, and says so.
check explain-last-layer 0 "Layer 1 ends the graph shown, so its last window runs into the LM head, as only the model's last layer (79) does" "$pm" explain
check explain-last-layer-json 0 '"layers_shown": 2, "last_shown_is_layer": 79,' "$pm" explain --format json
# Mistral-Small-3.1's published config (a mistral3 wrapper whose text_config has no
# tie_word_embeddings: MistralConfig's default, untied). By hand, one byte a weight (int8), one
# device: per layer Q 5120 x 4096 + K, V 2 x 5120 x 1024 + O 4096 x 5120 + MLP 3 x 5120 x 32768
# = 555,745,280, x 40 = 22,229,811,200; embedding and LM head 2 x 131072 x 5120 =
# 1,342,177,280: 23,571,988,480 (the tied default gave 22,900,899,840).
check hf-untied-by-family 0 '"weight_bytes_per_device": 23571988480,' "$pm" -c llama8b --model "$root/tests/configs/hf/mistral-small-3.1-24b-config.json" --devices 1 --format json
# GPT-2 (124 M) holds a learned position embedding beside its tied one, whole on the device. By
# hand, one byte a weight and a bias: per layer c_attn 768 x 2304 + 2304, c_proj 768 x 768 +
# 768, c_fc 768 x 3072 + 3072, mlp c_proj 3072 x 768 + 768 = 7,084,800, x 12 = 85,017,600;
# wte 50257 x 768 = 38,597,376 (tied: the LM head), wpe 1024 x 768 = 786,432: 124,401,408, the
# published 124,439,808 parameters less the LayerNorms' 38,400.
check hf-learned-positions 0 '"weight_bytes_per_device": 124401408,' "$pm" -c llama8b --model "$root/tests/configs/hf/gpt2-config.json" --devices 1 --format json
# A die larger than the wafer has no cost: the error says which part of the die grew.
check die-beyond-wafer 1 "the die area model gives the L2 (l2_capacity)" "$pm" --set accelerator.l2_capacity_MiB=1e9
# A sweep whose every point is invalid has nothing to draw: said before gnuplot is asked (its
# own error would be about empty axes), and the CSV is kept.
check plot-none-valid 1 "--plot: none of the sweep's 2 points is valid (the warning above), nothing to draw; the CSV is in none.png.csv" "$pm" --config qwen3-30b-a3b --sweep ep=3,5 --plot none.png
check plot-none-valid-csv 0 'must divide devices' cat none.png.csv
# Without gnuplot: a clear error, and the CSV is still written.
check plot-no-gnuplot 1 "gnuplot was not found or could not be started (exit status 127)" env PATH=/nonexistent "$pm" --sweep l2=8MiB:16MiB:8MiB --plot nognu.png
check plot-no-gnuplot-csv 0 "l2_capacity_MiB,serial_request_s" cat nognu.png.csv
check threads-same 0 "" bash -c "'$pm' --sweep l2=8MiB:64MiB:8MiB --sweep batch=1,4,16 --threads 3 | cmp - single.csv"

# The timeline of one layer: both streams, relative times, the layer's length.
check timeline-csv 0 "2,prefetch,PF.L1.Gate,Prefetch," "$pm" timeline --config llama70b
check timeline-serial 0 "1,collective,L1.AR.attn,AllReduce," "$pm" timeline --mode serial
check timeline-fused 0 "L1.O+AR.attn,FusedMatMulAllReduce" "$pm" timeline --mode fused
check timeline-bad-plot 2 "--plot" "$pm" timeline --plot out.gif
# --compare: the serial layer's CSV, two blank lines, the preserve layer's.
check timeline-compare 0 "modes=serial,preserve." bash -c "echo modes=\$('$pm' timeline --compare | sed -n 's/^# preserve-model .* --mode \\([a-z]*\\) .*/\\1/p' | paste -sd,)."
check timeline-compare-blocks 0 "blank=2." bash -c "echo blank=\$('$pm' timeline --compare | grep -c '^\$')."
check timeline-compare-bad-plot 2 "--plot" "$pm" timeline --compare --plot out.gif

# Figures, where gnuplot is installed: each kind draws, and a grid's CSV is the sweep's rows
# with its values of the first axis in gnuplot data blocks (two blank lines after each). With
# --plot the figure is the output: the CSV goes beside it, not to stdout (issue 48).
if command -v gnuplot >/dev/null; then
    check plot-sweep 0 "wrote l2.svg (its data: l2.svg.csv)" "$pm" --sweep l2=8MiB:64MiB:8MiB --plot l2.svg
    check plot-sweep-stdout-empty 0 "stdout=0." bash -c "echo stdout=\$('$pm' --sweep l2=8MiB:64MiB:8MiB --plot l2b.svg 2>/dev/null | wc -c)."
    check plot-sweep-csv-whole 0 "same" bash -c "'$pm' --sweep l2=8MiB:64MiB:8MiB | cmp - l2.svg.csv && echo same"
    # The scenario's own value (the Ascend's 192 MiB L2) is marked only on a range holding it:
    # a dashed line in each of the five panels and the key's sample (six), else the key says so
    # (one); two more dashes are the speedup panel's PRESERVE-vs-fused line and its key sample.
    check plot-base-outside 0 "L2: 192 MiB (above the swept range: not drawn)" bash -c "grep -o 'L2: 192 MiB[^<]*' l2.svg"
    check plot-base-outside-dashes 0 "dashes=3." bash -c "echo dashes=\$(grep -c stroke-dasharray l2.svg)."
    check plot-base-inside 0 "dashes=8." bash -c "'$pm' --sweep l2=64MiB:256MiB:64MiB --plot l2in.svg >/dev/null && echo dashes=\$(grep -c stroke-dasharray l2in.svg)."
    check plot-sweep-geometric 0 "wrote seq.pdf" "$pm" --sweep seq=1Ki:8Ki:x2 --plot seq.pdf
    check plot-sweep-compute 0 "wrote compute.png" "$pm" --sweep compute=100TFLOPS:400TFLOPS:x2 --plot compute.png
    check plot-heatmap 0 "wrote grid.png" "$pm" --sweep batch=1,4,16 --sweep seq=1Ki,2Ki --plot grid.png
    # --metric colours the cells by another result column (issue 48: the speedup only).
    check plot-heatmap-metric 0 "density_preserve_tokens_per_s_per_mm2" bash -c "'$pm' --sweep batch=1,4 --sweep seq=1Ki,2Ki --metric density_preserve_tokens_per_s_per_mm2 --plot m.svg 2>&1 && grep -o 'density_preserve_tokens_per_s_per_mm2' m.svg | head -1"
    check plot-heatmap-one-row 0 "wrote row.png" "$pm" --sweep batch=4 --sweep seq=1Ki,2Ki --plot row.png
    check plot-heatmap-csv 0 "same" bash -c "'$pm' --sweep batch=1,4,16 --sweep seq=1Ki,2Ki | cmp - <(grep -v '^\$' grid.png.csv) && echo same"
    check plot-heatmap-blocks 0 "blank=6." bash -c "echo blank=\$(grep -c '^\$' grid.png.csv)."
    # One valid point: a range around it, and no gnuplot warning of an empty range.
    check plot-one-point 0 "quiet=0." bash -c "echo quiet=\$('$pm' --config llama70b-h100 --sweep batch=4 --plot one.png 2>&1 >/dev/null | grep -c -i 'warning')."
    # An accelerator with no cost, energy or area data: those panels say so, the figure draws.
    check plot-sweep-no-blocks 0 "wrote minimal.png" "$pm" --accelerator "$root/tests/configs/valid/accelerator-minimal.json" --sweep l2=8MiB:64MiB:8MiB --plot minimal.png
    check plot-timeline 0 "wrote tl.pdf" "$pm" timeline --plot tl.pdf
    check plot-timeline-compare 0 "wrote cmp.svg" "$pm" timeline --compare --plot cmp.svg
fi

# Strict option values (issue 13): decimal only, no wraparound, no empty list items.
check batch-hex 2 "--batch: expected a decimal integer in [1, 16777216] (got '0x10')" "$pm" --batch 0x10
check devices-hex 2 "--devices: expected a decimal integer" "$pm" --devices 0X4
check context-space 2 "--context: expected a decimal integer" "$pm" explain --context " 5"
check batch-plus 2 "--batch: expected a decimal integer" "$pm" --batch +4
check batch-exponent-ok 0 "batch 10," "$pm" --batch 1e1
check shard-negative 2 "--shard: expected K/N in decimal" "$pm" --sweep l2 --shard -18446744073709551615/2
check shard-wraps 2 "--shard: expected K/N in decimal" "$pm" --sweep l2 --shard 18446744073709551617/18446744073709551618
check shard-plus 2 "--shard: expected K/N in decimal" "$pm" --sweep l2 --shard +1/2
check shard-over-max 2 "N <= 1000000" "$pm" --sweep l2 --shard 1/1000001
check sweep-empty-item 2 "empty item 2 in the list" "$pm" --sweep batch=1,,2
# --optimize searches [LO, HI] inclusive: at the bounds of the range the model is defined for
# (HBM bandwidth 1e3 to 1e18 bytes/s) its own end points are accepted.
check optimize-inclusive-bounds 0 "searched hbm_bandwidth_TBps in [1e-09, 1e+06]" "$pm" --optimize hbm_bw=1e3Bps:1e18Bps
# Options a command does not use are errors, not silently ignored.
check optimize-shard 2 "--shard: --optimize does not use it" "$pm" --optimize l2 --shard 1/2
check optimize-sweep 2 "--sweep: --optimize does not use it" "$pm" --optimize l2 --sweep batch
check optimize-plot 2 "--plot: --optimize does not use it" "$pm" --optimize l2 --plot x.png
check optimize-table 2 "--optimize: --format must be json or csv" "$pm" --optimize l2 --format table
check run-plot 2 "--plot: only with --sweep" "$pm" --plot x.png
check run-threads 2 "--threads: only with --sweep" "$pm" --threads 2
check run-layers 2 "--layers: run does not use it" "$pm" --layers 3
check explain-csv 2 "explain: --format must be table or json" "$pm" explain --format csv
check explain-mode 2 "--mode: explain does not use it" "$pm" explain --mode serial
check timeline-table 2 "timeline: --format must be json or csv" "$pm" timeline --format table
check timeline-layers 2 "--layers: timeline does not use it" "$pm" timeline --layers 2
check footprint-dot 2 "footprint: --format must be table, json or csv" "$pm" footprint --format dot
check resolve-table 2 "resolve: --format must be json or csv" "$pm" resolve --format table
check list-config 2 "--config: list does not use it" "$pm" list models --config llama8b
check merge-format 2 "--format: merge does not use it" "$pm" merge --format json x.csv
check validate-format 2 "--format: validate does not use it" "$pm" validate --format json
check graph-devlist 2 "--devices-list: graph does not use it" "$pm" graph --devices-list 1,2
check sweep-phase 2 "--phase: --sweep does not use it" "$pm" --sweep l2 --phase prefill

# ---- pipeline stages and replicas (issue 44) ------------------------------------------------
# Llama-3.1-405B over 4 HGX nodes (TP 8 x PP 4): the plan line, the stage table; 4 micro-batches
# of 16 at batch 64; the decode send 10 us + 16 x 16384 x 2 B / 50 GB/s = 20.5 us.
check pp-plan-line 0 "# plan: 4 stages x 1 replica = 32 devices on 4 nodes; 31-32 layers a stage; 4 micro-batches of 16 in flight; sends 20.5 us decode" \
    "$pm" --config llama405b-h200 --cluster hgx-h100-ib-ndr --pp 4 --batch 64
check pp-stage-table 0 "bubble_prefill  recv_prefetch_MiB" "$pm" --config llama405b-h200 --cluster hgx-h100-ib-ndr --pp 4
check pp-json 0 '"pipeline": {"stages": 4, "replicas": 2, "devices_total": 64, "nodes": 8' \
    "$pm" --config llama405b-h200 --cluster hgx-h100-ib-ndr --pp 4 --dp 2 --format json
check pp-csv 0 "scenario,model,accelerator,devices,pipeline_parallel,data_parallel,batch" "$pm" --config llama405b-h200 --cluster hgx-h100-ib-ndr --pp 4 --format csv
check dp-plan-line 0 "# plan: 1 stage x 8 replicas = 64 devices on 8 nodes" "$pm" --config llama70b-h100 --cluster hgx-h100-ib-ndr --dp 8
check pp-no-inter-node-link 1 "inter_node_bandwidth_Gbps" "$pm" --config llama70b-h100 --pp 2
check pp-uneven-sum 1 "pipeline_layers: must give the layers of each of the 2 stages" \
    "$pm" --config llama8b --cluster hgx-h100-ib-ndr --pp 2 --set cluster.pipeline_layers=16,15
check pp-layer-classes 1 "not modelled" "$pm" --config gemma2-9b --cluster hgx-h100-ib-ndr --pp 2
check pp-serve 0 "in each of 2 pipeline stages" "$pm" serve --config llama8b --cluster hgx-h100-ib-ndr --pp 2 --concurrency 1,8
check pp-serve-layer-classes 1 "not modelled" "$pm" serve --config gemma2-9b --cluster hgx-h100-ib-ndr --pp 2
check pp-bad-count 2 "--pp" "$pm" --pp 0
check pp-sweep 0 "pipeline_parallel," "$pm" --config llama70b-h100 --cluster hgx-h100-ib-ndr --sweep pp=1,2
# the sp axis (issue 44 item 5): off then on, its on row the --sp run's TPOT; 0 and 1 only
check sp-sweep 0 "same" bash -c "[ \"\$('$pm' --config llama70b --sweep sp -f csv | grep '^1,' | cut -d, -f7)\" = \"\$('$pm' --config llama70b --sp --sweep sp=1 -f csv | grep '^1,' | cut -d, -f7)\" ] && '$pm' --config llama70b --sweep sp -f csv | grep -q '^sequence_parallel,' && echo same"
check sp-sweep-switch 2 "sp is a switch: 0 (off) or 1 (on)" "$pm" --config llama70b --sweep sp=2
check dp-serve 0 "preserve" "$pm" serve --config llama8b --dp 2 --concurrency 2,8
check dp-serve-too-few 2 "at least one sequence in flight on each" "$pm" serve --config llama8b --dp 4 --concurrency 2

# search (issue 46): each mode's best and what binds it; the CSV's front; the pruned search's
# rows are the exhaustive one's; what it refuses.
check search-table 0 "what stops it serving more" "$pm" search --config llama70b-h100 --budget 32 --tpot-limit 50ms --concurrency 8,64,256
check search-budget-dp 0 "serial        8   1     4" "$pm" search --config llama70b-h100 --budget 32 --tp-list 8 --chunks 2048 --concurrency 8
check search-csv 0 "mode,tp,pp,ep,dp,chunk,l2_capacity_MiB,concurrency,ttft_s" "$pm" search --config llama70b --tp-list 8 --sweep l2=48MiB,96MiB --concurrency 4,16 -f csv
check search-exhaustive-same 0 "same" bash -c "diff <('$pm' search --config mixtral8x7b --ep-list 1,4 --tpot-limit 30ms --concurrency 1,8,32,64,128 -f csv | grep -v '^#') <('$pm' search --config mixtral8x7b --ep-list 1,4 --tpot-limit 30ms --concurrency 1,8,32,64,128 -f csv --exhaustive | grep -v '^#') && echo same"
check search-json 0 '"binds": "' "$pm" search --config llama8b --tpot-limit 20ms --concurrency 1,4,16 -f json
check search-nothing 0 "nothing meets the limits" "$pm" search --config llama70b-h100 --tpot-limit 1ms --concurrency 1,2
check search-hw-count 2 "a hardware axis is l2, l2_bw, compute, hbm_bw or link_bw" "$pm" search --sweep devices=1,2
check search-three-hw 2 "at most 2 hardware axes" "$pm" search --sweep l2=8MiB --sweep hbm_bw=1TBps --sweep compute=100TFLOPS
check search-tp-list-bad 2 "--tp-list" "$pm" search --tp-list 8,x
check search-rate-floor 2 "--min-user-rate: expected" "$pm" search --min-user-rate 0
check search-pp-refused 1 "its pp list, \`--pp-list\`" "$pm" search --config llama8b --cluster hgx-h100-ib-ndr --pp 2
# pipeline stages in the space (issue 44 item 5): --pp-list, the pp column; a plan whose
# stages would cross nodes without an inter-node link counted as one that cannot run.
check search-pp-list 0 "serial        8   2     2" "$pm" search --config llama70b-h100 --cluster hgx-h100-ib-ndr --budget 32 --tp-list 8 --pp-list 2 --chunks 2048 --concurrency 8
check search-pp-csv 0 "preserve,8,2,1,2,2048," "$pm" search --config llama70b-h100 --cluster hgx-h100-ib-ndr --budget 32 --tp-list 8 --pp-list 2 --chunks 2048 --concurrency 8 -f csv
check search-json-keys 0 "same keys" bash -c "python3 -c 'import csv,json,sys; a=json.load(open(sys.argv[1]))[\"modes\"][\"preserve\"][\"best\"]; h=next(csv.reader(l for l in open(sys.argv[2]) if not l.startswith(\"#\"))); ks=h[h.index(\"tp\"):h.index(\"objective\") + 1]; print(\"same keys\" if all(k in a for k in ks) and all(a[k] == float(r[k]) or abs(a[k] - float(r[k])) <= 1e-8 * abs(a[k]) for r in csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith(\"#\")) if r[\"best\"] == \"1\" and r[\"mode\"] == \"preserve\" for k in ks) else [k for k in ks if k not in a])' <('$pm' search --config llama8b --tpot-limit 20ms --concurrency 1,4,16 -f json) <('$pm' search --config llama8b --tpot-limit 20ms --concurrency 1,4,16 -f csv)"
check search-pp-json 0 '"tp": 8, "pp": 2, "ep": 1, "dp": 2' "$pm" search --config llama70b-h100 --cluster hgx-h100-ib-ndr --budget 32 --tp-list 8 --pp-list 2 --chunks 2048 --concurrency 8 -f json
check search-pp-no-link 0 "1 deployments could not run, the first: $.cluster.inter_node_bandwidth_Gbps: 2 stages of 8 devices need 8-device nodes joined by an inter-node link" "$pm" search --config llama70b-h100 --budget 32 --tp-list 8 --pp-list 2 --chunks 2048 --concurrency 8
check search-pp-budget 0 "TP 8 x PP 3 = 24 devices does not divide the budget of 32" "$pm" search --config llama70b-h100 --cluster hgx-h100-ib-ndr --budget 32 --tp-list 8 --pp-list 3 --chunks 2048 --concurrency 8
check search-pp-list-bad 2 "--pp-list" "$pm" search --pp-list 0
check search-pp-list-big 2 "--pp-list" "$pm" search --pp-list 129
check search-spec 0 "# space: 55 points x 3 modes; 52 evaluated, 0 pruned, 3 not served" "$pm" search --config llama70b-h100 \
    --budget 8 --tp-list 8 --tpot-limit 30ms --spec-tokens 2 --spec-accept 0.7 --spec-mtp 1 \
    --set model.num_nextn_predict_layers=1
# The objective rises in steps where another prefetch fits and falls with the area between:
# a 33-point grid stepped over the best step (29.27 MiB reported; 43.9 MiB is 0.26 % better).
check optimize-narrow-step 0 "preserve,43.9" "$pm" optimize l2=8MiB:512MiB -c qwen3-30b-a3b
check optimize-device-refused 2 "--objective device: optimize maximises" "$pm" --optimize l2 --objective device
# search --shard K/N (issue 46): three shards of a space with an L2 axis, merged in any order,
# print byte for byte what the unsharded search prints, in each format; a missing shard, a
# shard of other options and a cut shard are refused.
sopts=(--config mixtral8x7b --budget 32 --tpot-limit 20ms --concurrency 1,8,32,64,128,256 --chunks 512,2048 --sweep l2=48MiB,96MiB,192MiB --objective mm2 --ep-list 1,2)
for k in 1 2 3; do "$pm" search "${sopts[@]}" --shard $k/3 >sshard$k.txt 2>/dev/null; done
check search-shard-line 0 "# preserve-model search shard 2/3 (format 4): groups 17 to 32 of 48" cat sshard2.txt
# A shard of format 3 (before the points not served were counted) is refused.
sed -e 's|(format 4)|(format 3)|' sshard2.txt >sshard3old.txt
check search-merge-format3 1 "a shard file of another format than this version's 4" "$pm" search "${sopts[@]}" sshard1.txt sshard3old.txt sshard3.txt
# A shard of format 2 (before disaggregated candidates: no pools in its candidates) is refused.
sed -e 's|(format 4)|(format 2)|' sshard2.txt >sshard2old.txt
check search-merge-format2 1 "a shard file of format 2, written before the search had disaggregated candidates" "$pm" search "${sopts[@]}" sshard1.txt sshard2old.txt sshard3.txt
# A shard of format 1 (before pipeline stages: no pp in its candidates) is refused.
sed -e 's| (format 4):|:|' sshard2.txt >sshardold.txt
check search-merge-format1 1 "a shard file of format 1, written before the search had pipeline stages" "$pm" search "${sopts[@]}" sshard1.txt sshardold.txt sshard3.txt
# Shards of a space with stages merge into the unsharded answer.
popts=(--config llama70b-h100 --cluster hgx-h100-ib-ndr --budget 32 --tp-list 4,8 --pp-list 1,2,4 --chunks 2048 --concurrency 8,32,128 --tpot-limit 50ms)
for k in 1 2; do "$pm" search "${popts[@]}" --shard $k/2 >pshard$k.txt 2>/dev/null; done
check search-merge-pp 0 "" bash -c "diff <('$pm' search ${popts[*]} -f csv pshard2.txt pshard1.txt) <('$pm' search ${popts[*]} -f csv)"
for f in json csv table; do
    check "search-merge-$f" 0 "" bash -c "diff <('$pm' search ${sopts[*]} -f $f sshard3.txt sshard1.txt sshard2.txt) <('$pm' search ${sopts[*]} -f $f)"
done
check search-merge-missing 2 "2 files for 3 shards" "$pm" search "${sopts[@]}" sshard1.txt sshard2.txt
check search-merge-other 1 "a shard of another search" "$pm" search "${sopts[@]}" --tpot-limit 30ms sshard1.txt sshard2.txt sshard3.txt
head -c 300 sshard2.txt >sshardcut.txt
check search-merge-cut 1 "expected a 'best' candidate line" "$pm" search "${sopts[@]}" sshard1.txt sshardcut.txt sshard3.txt
check search-shard-format 2 "a shard writes its shard file" "$pm" search --shard 1/2 -f csv
# search --disagg (issue 46 item 1): 8192-token prompts, 256 out, TPOT <= 20 ms on 16 H100s of
# IB-joined nodes: a co-located step carrying a prompt's chunk misses the limit, the pools'
# decode-only steps meet it, so serial's best is 2 prefill instances of TP 4 and one decode
# instance of TP 8 (tests/test_search.c checks the whole space against a brute force); its row
# is the disagg command's for the same pools (9 significant digits, the CSV's); the pruned
# search is the exhaustive one; shards merge into it; the refusals name the key.
dopts=(--config llama70b-h100 --cluster hgx-h100-ib-ndr --budget 16 --tp-list 4,8 --tpot-limit 20ms --chunks 2048 --concurrency 8,16,32,64,128 --lengths 8192:256:1 --disagg)
check search-disagg-table 0 "space_edge; P2xTP4+D1xTP8" "$pm" search "${dopts[@]}" --concurrency 16
check search-disagg-csv 0 "mode,layout,tp,pp,ep,dp,chunk,concurrency" "$pm" search "${dopts[@]}" -f csv
check search-disagg-json 0 '"layout": "P2xTP4+D1xTP8", "prefill_tp": 4, "prefill_instances": 2, "decode_tp": 8, "decode_instances": 1' "$pm" search "${dopts[@]}" -f json
check search-disagg-is-disagg 0 "same" bash -c "python3 -c 'import csv,json,sys; a=json.load(open(sys.argv[1]))[\"modes\"][\"serial\"][\"best\"]; b=[r for r in csv.DictReader(l for l in open(sys.argv[2]) if not l.startswith(\"#\"))][0]; print(\"same\" if a[\"layout\"] == \"P2xTP4+D1xTP8\" and a[\"concurrency\"] == 16 and all(abs(a[k] - float(b[\"serial_\" + k])) <= 1e-8 * a[k] for k in (\"ttft_s\", \"tpot_s\", \"tokens_per_s_per_device\")) else (a, b))' <('$pm' search ${dopts[*]} --concurrency 16 -f json) <('$pm' disagg --prefill-config llama70b-h100 --decode-config llama70b-h100 --prefill-set cluster=hgx-h100-ib-ndr --prefill-set cluster.devices=4 --decode-set cluster=hgx-h100-ib-ndr --decode-set cluster.devices=8 --prefill-instances 2 --decode-instances 1 --concurrency 16 --input 8192 --output 256 --format csv)"
check search-disagg-exhaustive-same 0 "same" bash -c "diff <('$pm' search ${dopts[*]} --concurrency 8,16,32,64,128,256,512 -f csv | grep -v '^#') <('$pm' search ${dopts[*]} --concurrency 8,16,32,64,128,256,512 -f csv --exhaustive | grep -v '^#') && echo same"
for k in 1 2 3; do "$pm" search "${dopts[@]}" --shard $k/3 >dshard$k.txt 2>/dev/null; done
check search-merge-disagg 0 "" bash -c "diff <('$pm' search ${dopts[*]} -f csv dshard2.txt dshard3.txt dshard1.txt) <('$pm' search ${dopts[*]} -f csv)"
check search-disagg-no-budget 2 "device_budget: search: disaggregated deployments split a device budget" "$pm" search --config llama70b-h100 --cluster hgx-h100-ib-ndr --disagg --concurrency 8
# The static batch changes nothing in a search (each candidate serves its concurrency): refused
check search-batch-refused 2 "--set workload.batch=64 (--batch): search serves each candidate's --concurrency sequences" "$pm" search --config llama70b-h100 --budget 8 --tpot-limit 40ms --batch 64
check search-disagg-one-node 0 "KV over 25 GB/s and 50 us a transfer (inference-sim's: the cluster has no inter-node link)" "$pm" search --config llama70b-h100 --budget 16 --disagg --concurrency 8 --lengths 8192:256:1 --tpot-limit 20ms
check search-disagg-classes 1 "workload.classes: search: a disaggregated deployment" "$pm" search --config llama70b-h100 --cluster hgx-h100-ib-ndr --budget 16 --disagg --concurrency 8 --lengths 2048:256:1,512:512:1
check search-not-for-serve 2 "--budget: serve does not use it" "$pm" serve --budget 8
# search --mix (issue 46 item 1): one member alone is its own search, mode by mode (the mix's
# objective 1 / (1 / o) = o); two members at shares 1 and 3 give 1 / (0.25 / o1 + 0.75 / o2)
# of each member's own search, checked here from the two searches' JSON; the refusals.
mixo=(--tp-list 1,2 --chunks 512,2048 --concurrency 1,4,16 --tpot-limit 30ms -f json)
check mix-one-is-search 0 "same" bash -c "python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); print(\"same\" if all(b[\"modes\"][m][\"points\"][0][\"mix_objective\"] == a[\"modes\"][m][\"best\"][\"objective\"] for m in (\"serial\", \"fused\", \"preserve\")) else \"differ\")' <('$pm' search --config llama8b ${mixo[*]}) <('$pm' search --mix llama8b ${mixo[*]})"
check mix-harmonic 0 "harmonic" bash -c "python3 -c 'import json,sys; a,b,m=(json.load(open(f)) for f in sys.argv[1:4]); o=lambda d: d[\"modes\"][\"preserve\"][\"best\"][\"objective\"]; w=1/(0.25/o(a)+0.75/o(b)); x=m[\"modes\"][\"preserve\"][\"points\"][0][\"mix_objective\"]; print(\"harmonic\" if abs(x-w) <= 1e-9*w else (x, w))' <('$pm' search --config llama8b --lengths 4096:128:1 ${mixo[*]}) <('$pm' search --config mistral7b --lengths 512:512:1 ${mixo[*]}) <('$pm' search --mix llama8b@4096:128=1,mistral7b@512:512=3 ${mixo[*]})"
check mix-table 0 "preserve: the mix's tokens_per_s_per_device" "$pm" search --mix llama8b,mistral7b=2 --tp-list 1,2 --concurrency 1,4,16 --sweep l2=16MiB,96MiB
check mix-csv 0 "mode,l2_capacity_MiB,mix_objective,found,missing_member,best,m1_tp" "$pm" search --mix llama8b,mistral7b=2 --tp-list 1 --concurrency 1,4 --sweep l2=16MiB,96MiB -f csv
check mix-short 0 "no hardware point serves every member" "$pm" search --mix llama8b,mistral7b --tpot-limit 1ms --concurrency 1,2
check mix-config 2 "--mix: the members name their scenarios" "$pm" search --config llama8b --mix llama8b
check mix-share 2 "a share must be a number > 0" "$pm" search --mix llama8b=0
check mix-lengths 2 "LENGTHS is a lengths file's name or path, or IN:OUT" "$pm" search --mix llama8b@1:2:3
check mix-chips 1 "a mix is served by one chip design" "$pm" search --mix llama8b,llama70b-h100 --concurrency 1
check mix-shard 2 "a mix is searched whole" "$pm" search --mix llama8b --shard 1/2
# Stages in a mix's space (--pp-list): one member alone is its own search with the same pp list,
# row for row (tp, pp, ep, dp, chunk, concurrency, objective of each mode's best); Llama-3-70B
# on 8 H100s is best at TP 4 x PP 2 x DP 1 (256 sequences within 100 ms; PP 1 stops at 64),
# Llama-3-8B beside it at TP 4 x PP 1 x DP 2.
mixpp=(--budget 8 --tp-list 4 --pp-list 1,2 --chunks 2048 --concurrency 16,64,256 --tpot-limit 100ms --lengths 2048:256:1)
check mix-pp-one-is-search 0 "same" bash -c "python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); ks=(\"tp\", \"pp\", \"ep\", \"dp\", \"chunk\", \"concurrency\", \"objective\"); print(\"same\" if all(b[\"modes\"][m][\"points\"][0][\"members\"][0][k] == a[\"modes\"][m][\"best\"][k] for m in (\"serial\", \"fused\", \"preserve\") for k in ks) and a[\"modes\"][\"preserve\"][\"best\"][\"pp\"] == 2 else \"differ\")' <('$pm' search --config llama70b-h100 ${mixpp[*]} -f json) <('$pm' search --mix llama70b-h100 ${mixpp[*]} -f json)"
check mix-pp-json 0 '"members": [{"tp": 4, "pp": 2, "ep": 1, "dp": 1, "chunk": 2048, "concurrency": 256' "$pm" search --mix llama70b-h100,llama8b=3 --accelerator h100-sxm --cluster nvlink4-nvswitch "${mixpp[@]}" -f json
check mix-pp-json-8b 0 '{"tp": 4, "pp": 1, "ep": 1, "dp": 2, "chunk": 2048, "concurrency": 256' "$pm" search --mix llama70b-h100,llama8b=3 --accelerator h100-sxm --cluster nvlink4-nvswitch "${mixpp[@]}" -f json
check mix-pp-table 0 "1. llama70b-h100          4   2    1    1   2048    256" "$pm" search --mix llama70b-h100,llama8b=3 --accelerator h100-sxm --cluster nvlink4-nvswitch "${mixpp[@]}"
check mix-pp-csv 0 ",m1_tp,m1_pp,m1_ep,m1_dp,m1_chunk," "$pm" search --mix llama70b-h100,llama8b=3 --accelerator h100-sxm --cluster nvlink4-nvswitch "${mixpp[@]}" -f csv
check mix-pp-list-bad 2 "--pp-list" "$pm" search --mix llama8b --pp-list 0
check mix-plot-axes 2 "drawn along one hardware axis" "$pm" search --mix llama8b --concurrency 1 --plot "$tmp/mix.png"
# --mix --disagg: each member's disaggregated deployments too (dopts above: Llama-3-70B, 16 H100s
# joined by NDR, TP 4 or 8, TPOT <= 20 ms). One member alone is its own search --disagg, mode by
# mode (layout, concurrency, objective; the mix's 1 / (1 / o) within an ulp); two members (8192
# in, 256 out, share 1: disaggregated; 2048 in and out, share 3: co-located) join as
# 1 / (0.25 / o_a + 0.75 / o_b), each o the member's own search --disagg.
mixd=(--cluster hgx-h100-ib-ndr --budget 16 --tp-list 4,8 --tpot-limit 20ms --chunks 2048 --concurrency 8,16,32,64,128 --disagg)
check mix-disagg-one-is-search 0 "same" bash -c "python3 -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open(sys.argv[2])); print(\"same\" if all(b[\"modes\"][m][\"points\"][0][\"members\"][0][k] == a[\"modes\"][m][\"best\"][k] for m in (\"serial\", \"fused\", \"preserve\") for k in (\"layout\", \"prefill_instances\", \"decode_tp\", \"concurrency\", \"objective\")) and all(abs(b[\"modes\"][m][\"points\"][0][\"mix_objective\"] - a[\"modes\"][m][\"best\"][\"objective\"]) <= 1e-15 * a[\"modes\"][m][\"best\"][\"objective\"] for m in (\"serial\", \"fused\", \"preserve\")) and a[\"modes\"][\"serial\"][\"best\"][\"layout\"] == \"P2xTP4+D1xTP8\" else \"differ\")' <('$pm' search --config llama70b-h100 --lengths 8192:256:1 ${mixd[*]} -f json) <('$pm' search --mix llama70b-h100@8192:256 ${mixd[*]} -f json)"
check mix-disagg-harmonic 0 "harmonic" bash -c "python3 -c 'import json,sys; a,b,m=(json.load(open(f)) for f in sys.argv[1:4]); o=lambda d, x: d[\"modes\"][x][\"best\"][\"objective\"]; w=[1/(0.25/o(a, x)+0.75/o(b, x)) for x in (\"serial\", \"fused\", \"preserve\")]; g=[m[\"modes\"][x][\"points\"][0][\"mix_objective\"] for x in (\"serial\", \"fused\", \"preserve\")]; print(\"harmonic\" if all(abs(x-y) <= 1e-9*y for x, y in zip(g, w)) else (g, w))' <('$pm' search --config llama70b-h100 --lengths 8192:256:1 ${mixd[*]} -f json) <('$pm' search --config llama70b-h100 --lengths 2048:2048:1 ${mixd[*]} -f json) <('$pm' search --mix llama70b-h100@8192:256=1,llama70b-h100@2048:2048=3 ${mixd[*]} -f json)"
check mix-disagg-table 0 "objective_peak; P2xTP4+D1xTP8" "$pm" search --mix llama70b-h100@8192:256=1,llama70b-h100@2048:2048=3 "${mixd[@]}"
check mix-disagg-table-colocated 0 "tpot; colocated" "$pm" search --mix llama70b-h100@8192:256=1,llama70b-h100@2048:2048=3 "${mixd[@]}"
check mix-disagg-header 0 "# disaggregated deployments too (layout P<x>xTP<p>+D<y>xTP<d>" "$pm" search --mix llama70b-h100@8192:256=1,llama70b-h100@2048:2048=3 "${mixd[@]}"
check mix-disagg-csv 0 "best,m1_layout,m1_tp,m1_pp,m1_ep,m1_dp,m1_chunk,m1_concurrency,m1_ttft_s,m1_tpot_s,m1_tokens_per_s_per_device,m1_objective,m1_binds,m2_layout,m2_tp" "$pm" search --mix llama70b-h100@8192:256=1,llama70b-h100@2048:2048=3 "${mixd[@]}" -f csv
check mix-disagg-csv-row 0 ",P2xTP4+D1xTP8,0,1,1,1,0,16," "$pm" search --mix llama70b-h100@8192:256=1,llama70b-h100@2048:2048=3 "${mixd[@]}" -f csv
check mix-disagg-json 0 '"members": [{"layout": "P2xTP4+D1xTP8", "prefill_tp": 4, "prefill_instances": 2, "decode_tp": 8, "decode_instances": 1, "tp": 0, "pp": 1' "$pm" search --mix llama70b-h100@8192:256=1,llama70b-h100@2048:2048=3 "${mixd[@]}" -f json
check mix-disagg-json-colocated 0 '{"layout": "colocated", "prefill_tp": 0, "prefill_instances": 0, "decode_tp": 0, "decode_instances": 0, "tp": 8' "$pm" search --mix llama70b-h100@8192:256=1,llama70b-h100@2048:2048=3 "${mixd[@]}" -f json
check mix-disagg-plain-csv 0 "best,m1_tp,m1_pp" "$pm" search --mix llama70b-h100@2048:2048 --cluster hgx-h100-ib-ndr --budget 16 --tp-list 4,8 --chunks 2048 --concurrency 8,16 -f csv
# The mix's figure marks a member's disaggregated bests (its pools) on its line, and names two
# members of one scenario by their lengths: at 10 MiB the 8192:256 member's best is
# disaggregated (mix-disagg-csv-row above).
check mix-disagg-plot 0 "wrote $tmp/mixd.svg" "$pm" search --mix llama70b-h100@8192:256=1,llama70b-h100@2048:2048=3 "${mixd[@]}" --sweep l2=10MiB:20MiB:10MiB --plot "$tmp/mixd.svg"
check mix-disagg-plot-mark 0 "a member's best disaggregated (prefill and decode pools)" cat "$tmp/mixd.svg"
check mix-disagg-plot-names 0 "llama70b-h100@2048:2048:1 alone (preserve)" cat "$tmp/mixd.svg"
# search's figure names the best's hardware point in its label, and labels serial's best too
# where it is another candidate: PRESERVE's best at 110 MiB and 3 TB/s, serial's at 10 MiB (the
# table's lines), not the first point for both.
hwp=(--config llama70b-h100 --budget 8 --tp-list 8 --concurrency 16,64 --chunks 2048 --sweep l2=10MiB:110MiB:100MiB --sweep hbm_bw=2TBps:3TBps:1TBps)
check search-plot-hw-table 0 "space_edge at l2_capacity_MiB 110, hbm_bandwidth_TBps 3" "$pm" search "${hwp[@]}"
check search-plot-hw-table-serial 0 "space_edge at l2_capacity_MiB 10, hbm_bandwidth_TBps 3" "$pm" search "${hwp[@]}"
check search-plot-hw 0 "wrote $tmp/hwp.svg" "$pm" search "${hwp[@]}" --plot "$tmp/hwp.svg"
check search-plot-hw-label 0 ">preserve best: TP8 x PP1 x DP1, chunk 2048, 64 in flight<" cat "$tmp/hwp.svg"
check search-plot-hw-point 0 ">l2_capacity_MiB 110, hbm_bandwidth_TBps 3<" cat "$tmp/hwp.svg"
check search-plot-serial-point 0 ">l2_capacity_MiB 10, hbm_bandwidth_TBps 3<" cat "$tmp/hwp.svg"
# One best for both (the same candidate): one label, no mode named, no warning from gnuplot.
check search-plot-one 0 "wrote $tmp/one.svg" "$pm" search --config llama70b-h100 --budget 8 --tp-list 8 --concurrency 16,64 --chunks 2048 --plot "$tmp/one.svg"
check search-plot-one-label 0 ">TP8 x PP1 x DP1, chunk 2048, 64 in flight<" cat "$tmp/one.svg"
lacks search-plot-one-quiet "warning" "$pm" search --config llama70b-h100 --budget 8 --tp-list 8 --concurrency 16,64 --chunks 2048 --plot "$tmp/one2.svg"
# A search whose chip cannot be built says so (pm_search_warning; test_search.c checks the
# sizes): the 910B's die passes the reticle at 384 MiB of L2, where PRESERVE's best per device is.
ret=(--config llama70b --budget 32 --tp-list 8 --chunks 512 --concurrency 16,64 --tpot-limit 50ms)
check search-reticle 0 "warning: preserve: the best is at l2_capacity_MiB 384, where the modelled compute die is " "$pm" search "${ret[@]}" --sweep l2=8MiB,384MiB
check search-reticle-csv 0 "# warning: accelerator ascend-910b: the modelled compute die is over the 858 mm2 reticle at 1 of the l2 axis's 2 values" "$pm" search "${ret[@]}" --sweep l2=8MiB,384MiB -f csv
check search-reticle-json 0 '"warnings": ["accelerator ascend-910b: the modelled compute die is over the 858 mm2 reticle' "$pm" search "${ret[@]}" --sweep l2=8MiB,384MiB -f json
check search-free-bw 0 '"warnings": ["serial: the best is at hbm_bandwidth_TBps 4, above the chip'"'"'s 1.6,' "$pm" search "${ret[@]}" --objective mm2 --sweep hbm_bw=1TBps,4TBps -f json
check search-free-bw-link 0 "warning: preserve: the best is at link_bandwidth_GBps 900, above the cluster's 450, at the chip's die area and price: link_bw moves neither (the die keeps its 18 link PHYs)" "$pm" search --config llama70b-h100 --budget 16 --tp-list 8 --chunks 2048 --concurrency 16,64 --tpot-limit 50ms --objective usd --sweep link_bw=100GBps,900GBps
lacks search-free-bw-device "as free" "$pm" search "${ret[@]}" --sweep hbm_bw=1TBps,4TBps
lacks search-reticle-none "reticle" "$pm" search "${ret[@]}" --sweep l2=8MiB,96MiB
check search-reticle-mix 0 "warning: preserve: the best is at l2_capacity_MiB 384, where the modelled compute die is " "$pm" search --mix llama70b,mixtral8x7b --budget 32 --tp-list 8 --chunks 512 --concurrency 16,64 --tpot-limit 50ms --sweep l2=8MiB,384MiB -f json
# serve's family of fronts warns as the sweep does: a die over the reticle at some of its values.
check serve-reticle 0 "warning: accelerator ascend-910b: the modelled compute die is over the 858 mm2 reticle at 1 of the l2 axis's 2 values" "$pm" serve --config llama70b --concurrency 8 --sweep l2=8MiB,384MiB
check serve-reticle-csv 0 "# warning: accelerator ascend-910b: the modelled compute die is over the 858 mm2 reticle" "$pm" serve --config llama70b --concurrency 8 --sweep l2=8MiB,384MiB -f csv
lacks serve-reticle-none "reticle" "$pm" serve --config llama70b --concurrency 8 --sweep l2=8MiB,96MiB
check mix-disagg-no-budget 2 "search mix: member 1 (llama3-70b): search: disaggregated deployments split a device budget" "$pm" search --mix llama70b-h100 --cluster hgx-h100-ib-ndr --disagg --concurrency 8

# ---- speculative decoding (issue 45) ---------------------------------------------------------
# Leviathan's tokens per verify step: k = 3 at a = 0.8 gives 1 + 0.8 + 0.64 + 0.512 = 2.952.
check spec-line 0 "speculative: llama3-8b, 3 drafted tokens, 2.9520 tokens per verify step" \
    "$pm" --config llama70b-h100 --spec-tokens 3 --spec-accept 0.8 --spec-draft llama3-8b
# Per position 0.9, 0.5: 1 + 0.9 + 0.45 = 2.35.
check spec-json 0 '"tokens_per_step": 2.35' \
    "$pm" --config deepseek-v3-h200 --spec-tokens 2 --spec-accept 0.9,0.5 --spec-mtp 1 --format json
check spec-scenario 0 "speculative: MTP heads, 1 drafted tokens" "$pm" --config deepseek-v3-mtp
# Two names of one setting that disagree, one of them overridden: the override is named (the
# file was, when the file's name came second in the reader's list).
check alias-blames-override 1 "error: --set model.num_hidden_layers=20: \$.model.num_hidden_layers" \
    "$pm" -c llama70b-h100 --model "$root/tests/configs/hf-families/bloom-560m-config.json" --set model.num_hidden_layers=20
# Drafting with no drafter named: the options that name one are said; the source line once.
check spec-no-drafter 1 "the drafter is named by --spec-draft MODEL or --spec-mtp N" \
    "$pm" --config llama70b-h100 --spec-tokens 3 --spec-accept 0.5
# --spec-tokens 0 is plain decoding: alone, on a scenario without a block, the plain run (it
# asked for an acceptance); beside the other --spec-* options (a sweep over K from 0) too.
check spec-off-alone 0 "same as without" bash -c "[ \"\$('$pm' -c llama70b-h100 --spec-tokens 0 -f json)\" = \"\$('$pm' -c llama70b-h100 -f json)\" ] && echo same as without"
check spec-off-others 0 "same as without" bash -c "[ \"\$('$pm' -c deepseek-v3-mtp --spec-tokens 0 --spec-accept 0.5 --spec-mtp 1 -f json)\" = \"\$('$pm' -c deepseek-v3-mtp --set speculative.draft_tokens=0 -f json)\" ] && echo same as without"
# A verify step of one sequence and 2 tokens reads the experts 2 plain sequences do: the report's
# moe object and header describe the step that is timed (they described a plain step).
check moe-reads-verify-step 0 "same reads" bash -c "a=\$('$pm' -c deepseek-v3-mtp -f json | grep -o '\"experts_read_per_step\": [0-9.e+-]*'); b=\$('$pm' -c deepseek-v3-mtp --spec-tokens 0 --batch 2 -f json | grep -o '\"experts_read_per_step\": [0-9.e+-]*'); [ -n \"\$a\" ] && [ \"\$a\" = \"\$b\" ] && echo same reads"
check moe-header-verify-step 0 "read per step at batch 1 x 2 tokens a verify step" "$pm" -c deepseek-v3-mtp
check spec-source-once 0 "source once" bash -c "n=\$('$pm' serve -c deepseek-v3-mtp --spec-tokens 2 --spec-accept 0.8 --spec-mtp 1 --concurrency 4 | grep -c speculative.source); [ \"\$n\" = 1 ] && echo source once || echo \$n"
check spec-accept-one 1 '$.speculative.acceptance: must be in [0, 1)' \
    "$pm" --spec-tokens 3 --spec-accept 1 --spec-mtp 1
check spec-accept-count 1 "expected one rate or one per drafted token (3; got 2)" \
    "$pm" --spec-tokens 3 --spec-accept 0.8,0.6 --spec-mtp 1
check spec-tokens-cap 2 "--spec-tokens: expected an integer in [0, 16]" "$pm" --spec-tokens 17
check spec-vocab 1 "the draft model's vocabulary differs from the target's (32000 vs 128256" \
    "$pm" --config llama70b-h100 --spec-tokens 3 --spec-accept 0.8 --spec-draft mistral-7b
check spec-pp 1 "speculative decoding over pipeline stages is not modelled" \
    "$pm" --spec-tokens 3 --spec-accept 0.8 --spec-mtp 1 --pp 2
check spec-no-draft 1 '$.speculative.draft_model: missing' \
    "$pm" --spec-tokens 3 --spec-accept 0.8 --set speculative.method=draft_model
# Served: 1 + 0.7 + 0.49 = 2.19 tokens per verify step.
# Llama-3-8B has no MTP layer (no num_nextn_predict_layers): refused, the option's override
# named; given one (a what-if), served.
check spec-mtp-none 1 '--set speculative.mtp_layers=1: $.speculative.mtp_layers: 1 MTP layer asked of a model with 0 (its num_nextn_predict_layers)' \
    "$pm" serve --config llama8b --spec-tokens 2 --spec-accept 0.7 --spec-mtp 1
check spec-mtp-more 1 '2 MTP layers asked of a model with 1' \
    "$pm" --config deepseek-v3-mtp --spec-mtp 2
check spec-accept-named 1 '--set speculative.acceptance=1: $.speculative.acceptance: must be in [0, 1)' \
    "$pm" --config deepseek-v3-mtp --spec-accept 1
# A served request past the trained context (Falcon-7B: 2048 positions) is warned of.
check serve-lengths-past-context 0 "warning: a request of 1500 + 1000 tokens (the longest class) exceeds the model's max_position_embeddings 2048" \
    "$pm" serve --config falcon7b --lengths 1000:500:0.5,1500:1000:0.5 --concurrency 1
M=(--set model.num_nextn_predict_layers=1)
check spec-serve 0 "MTP heads, 2 drafted tokens, 2.1900 tokens per verify step" \
    "$pm" serve --config llama8b --spec-tokens 2 --spec-accept 0.7 --spec-mtp 1 "${M[@]}"
check spec-serve-json 0 '"speculative": {"method": "mtp", "draft_tokens": 2, "tokens_per_step": 2.19}' \
    "$pm" serve --config llama8b --spec-tokens 2 --spec-accept 0.7 --spec-mtp 1 "${M[@]}" --format json

# ---- data-parallel attention with EP MLPs (issue 44) -----------------------------------------
# Qwen3-30B-A3B at batch 64 on 4 ranks: 16 sequences each.
check dp-attention-line 0 "attention data parallel over 4 ranks: each holds 16 of the 64 sequences" \
    "$pm" --config qwen3-30b-a3b --batch 64 --dp-attention
check dp-attention-no-allreduce 0 '"allreduces_per_step": 0' \
    "$pm" --config qwen3-30b-a3b --dp-attention --format json
# The run table's allreduce column says none where a decode step has no allreduce (data-parallel
# attention, one device); under sequence parallelism it is the allreduce the collectives replace.
check dp-attention-table-none 0 "3 none" bash -c "echo \$('$pm' --config qwen3-30b-a3b --dp-attention | grep -cE '^(serial|fused|preserve) +[0-9].*[0-9]  none\$') none"
check one-device-table-none 0 "3 none" bash -c "echo \$('$pm' --config llama8b --devices 1 | grep -cE '^(serial|fused|preserve) +[0-9].*[0-9]  none\$') none"
check sp-table-allreduce 0 "3 oneshot" bash -c "echo \$('$pm' --config llama70b --sp | grep -cE '^(serial|fused|preserve) +[0-9].*  oneshot [0-9.]+ us') oneshot"
check dp-attention-dense 1 '$.cluster.attention_data_parallel: data-parallel attention with expert-parallel MLPs needs a mixture-of-experts model' \
    "$pm" --config llama70b --dp-attention
check dp-attention-ep 1 "one expert-parallel rank a device (expert_parallel = devices, 4) or tensor parallel over the group (expert_parallel 1); got 2" \
    "$pm" --config qwen3-30b-a3b --dp-attention --ep 2
# The experts tensor parallel beside DP attention (--ep 1: SGLang's default without --ep).
check dp-attention-tp-experts 0 "tensor parallel over the 4 devices on the ranks' gathered tokens" \
    "$pm" --config qwen3-30b-a3b --batch 64 --dp-attention --ep 1
check dp-attention-serve 0 "--set cluster.attention_data_parallel=true" \
    "$pm" serve --config qwen3-30b-a3b --dp-attention
check dp-attention-search 0 "could not run, the first: $.cluster.attention_data_parallel: needs a group of at least 2 devices to split the sequences over (got 1)" \
    "$pm" search --config qwen3-30b-a3b --dp-attention
# DeepSeek-V3's three dense layers beside DP attention run on the fast path too (issue 44).
check dp-attention-deepseek 0 "attention data parallel over 8 ranks" \
    "$pm" --config deepseek-v3-h200 --ep 8 --dp-attention --seq 1024
check dp-attention-deepseek-serve 0 "tokens/s" \
    "$pm" serve --config deepseek-v3-h200 --ep 8 --dp-attention --seq 1024 --concurrency 8,64

check_end
