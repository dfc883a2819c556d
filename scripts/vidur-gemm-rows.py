#!/usr/bin/env python3
"""Writes data/validation/vidur-gemm.csv: the held-out GEMM kernel times of vidur's profiling
tables (microsoft/vidur data/profiling/compute/{a100,h100}/<org>/<model>/mlp.csv), section 7.N.

Usage: scripts/vidur-gemm-rows.py VIDUR_CHECKOUT COMMIT > data/validation/vidur-gemm.csv

Each table times the linear layers of one model on one GPU (cuBLAS through torch, fp16) for a
range of token counts M (num_tokens) and tensor-parallel degrees; this keeps, for M a power of
two and every degree, the four GEMMs of a layer with their shapes M x N x K:

  attn_pre_proj   N = (q + 2 kv) d / TP, K = h     (QKV, d = h / q)
  attn_post_proj  N = h,               K = q d / TP
  mlp_up_proj     N = g I / TP,        K = h       (g = 2 when the MLP is gated: gate and up)
  mlp_down_proj   N = h,               K = I / TP

with q, kv, h, I the table's n_head, n_kv_head, n_embd, n_expanded_embd. The measured value is
the table's median (ms, here in us); where a table holds a (M, TP) twice, the first. Rows whose
K is not a multiple of 128 are left out (scripts/validate-gpu.sh builds the GEMM as the up
projection of a model with 128-wide heads), and so is every (GPU, M, N, K) that
data/validation/gpu.csv already holds (its section 5 rows 7-46 came from two of these tables):
the file is held out, read by no calibration. vidur's A100 is the 80 GB part
(shared/reference/validation-gpu.md, section 5 note).
"""
import csv
import os
import sys

GPUS = {"a100": "a100-sxm-80gb", "h100": "h100-sxm"}
CLUSTERS = {"a100": "nvlink3-nvswitch", "h100": "nvlink4-nvswitch"}
OPS = ("attn_pre_proj", "attn_post_proj", "mlp_up_proj", "mlp_down_proj")


def shape(op, r, tp, m):
    q, kv, h, inter = (int(r[k]) for k in ("n_head", "n_kv_head", "n_embd", "n_expanded_embd"))
    d = h // q
    g = 2 if r["use_gated_mlp"] == "True" else 1
    if op == "attn_pre_proj":
        return m, (q + 2 * kv) * d // tp, h
    if op == "attn_post_proj":
        return m, h, q * d // tp
    if op == "mlp_up_proj":
        return m, g * inter // tp, h
    return m, h, inter // tp


def main():
    root, commit = sys.argv[1], sys.argv[2]
    here = os.path.dirname(os.path.abspath(__file__))
    taken = set()
    with open(os.path.join(here, "..", "data", "validation", "gpu.csv")) as f:
        for r in csv.DictReader(f):
            if r["metric"] == "gemm_us":
                taken.add((r["accelerator"], int(r["gemm_m"]), int(r["gemm_n"]), int(r["gemm_k"])))
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow("section,model,accelerator,cluster,devices,parallel,engine,runtime,weight_dtype,"
                 "act_dtype,kv_dtype,batch,input_tokens,output_tokens,gemm_m,gemm_n,gemm_k,metric,"
                 "measured,status,source,distinct_sequences".split(","))
    n = 0
    base = os.path.join(root, "data", "profiling", "compute")
    for gpu in sorted(GPUS):
        for org in sorted(os.listdir(os.path.join(base, gpu))):
            for model in sorted(os.listdir(os.path.join(base, gpu, org))):
                path = os.path.join(base, gpu, org, model, "mlp.csv")
                rel = os.path.relpath(path, root)
                seen = set()
                with open(path) as f:
                    rows = list(csv.DictReader(f))
                for r in rows:
                    m, tp = int(r["num_tokens"]), int(r["num_tensor_parallel_workers"])
                    if m & (m - 1) or (m, tp) in seen:
                        continue
                    seen.add((m, tp))
                    for op in OPS:
                        mm, nn, kk = shape(op, r, tp, m)
                        key = (GPUS[gpu], mm, nn, kk)
                        if kk % 128 or key in taken:
                            continue
                        taken.add(key)
                        n += 1
                        us = float(r["time_stats.%s.median" % op]) * 1000.0
                        src = "microsoft/vidur %s @%s (median); %s %s TP%d" % (rel, commit, op,
                                                                              model, tp)
                        out.writerow(["7.%d" % n, "-", GPUS[gpu], CLUSTERS[gpu], 1, "-",
                                      "cuBLAS via torch (vidur profiling)", "kernel", "fp16",
                                      "fp16", "fp16", 1, 0, 0, mm, nn, kk, "gemm_us",
                                      "%.6g" % us, "ok", src, ""])


if __name__ == "__main__":
    main()
