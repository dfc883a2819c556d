#!/usr/bin/env python3
"""The fused-MoE kernel's measured time against the model's, by tokens per expert (issue 47).

Reads data/kernels/fused-moe.csv (published kernel benchmarks: tokens, kernel_us, source) and,
for every row whose accelerator has a preset, runs the row's model at a decode step of `tokens`
sequences (`timeline --phase decode --mode serial`, runtime vllm, the row's tensor-parallel
degree and datatype) and sums what vLLM's fused_moe call runs: the routing kernels (MoE.TopK,
MoE.Align, MoE.Sum) and the routed experts (ExpertGate, ExpertUp, ExpertAct, ExpertDown); the
router GEMM is outside the call (benchmark_moe.py hands it the gating output). Prints, per row:
tokens per expert (tokens x top-k / experts), the measured and modelled microseconds, and their
ratio modelled / measured: the expert kernel's efficiency relative to the model's as it ships
(above 1: the kernel is faster than the model).

Usage: scripts/moe-kernel-curve.py [CSV] [PM]   (PM default build/src/cli/preserve-model)
Read by no calibration and by no code: a diagnostic of the kernel evidence.
"""
import csv
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PARTS = ("MoE.TopK", "MoE.Align", "MoE.Sum", "ExpertGate", "ExpertUp", "ExpertAct",
         "ExpertDown")


def modelled_us(pm, r, runtime):
    args = [pm, "timeline", "--config", "llama8b", "--model", r["model"],
            "--accelerator", r["accelerator"], "--devices", r["tensor_parallel"],
            "--set", "runtime=" + runtime, "--set", "workload.weight_dtype=" + r["dtype"],
            "--set", "workload.act_dtype=" + r["dtype"], "--set", "workload.kv_dtype=" + r["dtype"],
            "--batch", r["tokens"], "--seq", "128", "--phase", "decode", "--mode", "serial"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    lines = [l for l in out.splitlines() if l and not l.startswith("#")]
    total = 0.0
    for row in csv.DictReader(lines):
        if row["node"].split(".", 1)[1] in PARTS:
            total += float(row["end_us"]) - float(row["start_us"])
    return total


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "data/kernels/fused-moe.csv")
    pm = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "build/src/cli/preserve-model")
    runtime = os.environ.get("MOE_RUNTIME", "vllm")
    print("accelerator,model,tensor_parallel,config,tokens,tokens_per_expert,measured_us,"
          "modelled_us,modelled_over_measured")
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if not os.path.exists(os.path.join(ROOT, "data/accelerators",
                                               r["accelerator"] + ".json")):
                continue
            with open(os.path.join(ROOT, "data/models", r["model"] + ".json")) as mf:
                m = json.load(mf)
            tpe = int(r["tokens"]) * m["num_experts_per_tok"] / m["num_experts"]
            mod = modelled_us(pm, r, runtime)
            meas = float(r["kernel_us"])
            print("%s,%s,%s,%s,%s,%.2f,%.1f,%.1f,%.3f" % (
                r["accelerator"], r["model"], r["tensor_parallel"], r["config"], r["tokens"],
                tpe, meas, mod, mod / meas))


if __name__ == "__main__":
    main()
