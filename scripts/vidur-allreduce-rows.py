#!/usr/bin/env python3
"""Writes data/validation/vidur-allreduce.csv: the held-out allreduce times of vidur's network
profiling tables (microsoft/vidur data/profiling/network/{a100,h100}_dgx/all_reduce.csv),
section 10.N.

Usage: scripts/vidur-allreduce-rows.py VIDUR_CHECKOUT COMMIT > data/validation/vidur-allreduce.csv

Each table times torch.distributed.all_reduce of an fp16 buffer (NCCL, replayed in a CUDA graph,
the kernel timed by the profiler: vidur/profiling/collectives) on one DGX node's GPUs for
message sizes from 2 KiB to 64 MiB in steps of 8 KiB, at 2, 4 and 8 workers (and, on the A100,
workers spread over nodes, which no bundled cluster describes: left out). This keeps, for each
GPU and worker count on one node, the size nearest to every power of two from 2 KiB (2^11 bytes)
to 64 MiB (2^26), once, and its median time (ms, here in us).

A row states the message as the allreduce after the attention of a prefill: `input_tokens`
tokens of a `gemm_k`-wide fp16 activation (1,024 wide: the message is input_tokens x 2,048
bytes; vidur's sizes are multiples of 2,048). It runs under the `vllm-2023` runtime, the
late-2023 stack whose NCCL ring and start-up vidur's profiles measure (its runtime file cites
vidur's CPU overheads). The file is held out: no calibration reads it.
"""
import csv
import os
import sys

GPUS = {"a100_dgx": ("a100-sxm-80gb", "nvlink3-nvswitch"), "h100_dgx": ("h100-sxm", "nvlink4-nvswitch")}
HIDDEN = 1024
ELEM_BYTES = 2


def main():
    root, commit = sys.argv[1], sys.argv[2]
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow("section,model,accelerator,cluster,devices,parallel,engine,runtime,weight_dtype,"
                 "act_dtype,kv_dtype,batch,input_tokens,output_tokens,gemm_m,gemm_n,gemm_k,metric,"
                 "measured,status,source,distinct_sequences".split(","))
    n = 0
    for table in sorted(GPUS):
        acc, cluster = GPUS[table]
        path = os.path.join(root, "data", "profiling", "network", table, "all_reduce.csv")
        rel = os.path.relpath(path, root)
        with open(path) as f:
            rows = [r for r in csv.DictReader(f)
                    if r["collective"] == "all_reduce" and r["num_workers"] == r["devices_per_node"]]
        for workers in sorted({int(r["num_workers"]) for r in rows}):
            mine = {int(r["size"]): r for r in rows if int(r["num_workers"]) == workers}
            taken = set()
            for p in range(11, 27):
                size = min(mine, key=lambda s: (abs(s - 2 ** p), s))
                if size % (HIDDEN * ELEM_BYTES) or size in taken:
                    continue
                taken.add(size)
                r = mine[size]
                n += 1
                us = float(r["time_stats.all_reduce.median"]) * 1000.0
                out.writerow(["10.%d" % n, "-", acc, cluster, workers, "TP%d" % workers,
                              "NCCL via torch.distributed (vidur profiling)", "vllm-2023",
                              "fp16", "fp16", "fp16", 1, size // (HIDDEN * ELEM_BYTES), 1, "", "",
                              HIDDEN, "allreduce_us", "%.6g" % us, "ok",
                              "microsoft/vidur %s @%s (median); %d bytes; %d workers on one node"
                              % (rel, commit[:7], size, workers), ""])


if __name__ == "__main__":
    main()
