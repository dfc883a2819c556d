#!/usr/bin/env python3
"""TTFT rows of a validation CSV, split by what the model spends the prefill on (issue 47).

For every ttft_ms row of data/validation/gpu.csv (or the file given) it runs the row's scenario
as scripts/validate-gpu.sh does (serial mode, the row's runtime and datatypes, a sequence of
I + 1 tokens of which I are prompt) and prints:

  the measured and modelled TTFT and the signed error (modelled / measured - 1);
  the modelled prefill's layer split by node kind (`timeline --phase prefill`, one layer times
  the model's layers): GEMMs (MatMul), attention (SelfAttention), collectives (AllReduce and
  the other collectives), the rest (norms, RoPE, elementwise, host);
  for each of GEMM, attention and collective, the factor by which that part alone would have
  to be slower to close the row's miss (1 + (measured - modelled) / part; '-' where the model
  is already slow or the part is empty).

Usage: scripts/ttft-breakdown.py [CSV] [PM]   (PM: the CLI, default build/src/cli/preserve-model)
Read by no calibration; a diagnostic, not a fit.
"""
import csv
import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def scenario_args(r):
    i = int(r["input_tokens"])
    args = ["--config", "llama8b", "--model", r["model"], "--accelerator", r["accelerator"],
            "--set", "cluster=" + r["cluster"], "--devices", r["devices"],
            "--batch", r["batch"], "--seq", str(i + 1),
            "--set", "workload.prefill_frac=%.15g" % (i / (i + 1)),
            "--set", "runtime=" + r["runtime"],
            "--set", "workload.weight_dtype=" + r["weight_dtype"],
            "--set", "workload.act_dtype=" + r["act_dtype"],
            "--set", "workload.kv_dtype=" + r["kv_dtype"]]
    if r["act_dtype"] in ("fp8", "int8"):
        args += ["--set", "workload.allreduce_dtype=fp16"]
    return args


def run(pm, args):
    out = subprocess.run([pm] + args, capture_output=True, text=True, check=True).stdout
    return out


def layer_split(pm, r):
    """Seconds of one prefill layer by kind (serial schedule)."""
    out = run(pm, ["timeline"] + scenario_args(r) +
              ["--phase", "prefill", "--mode", "serial", "--context", r["input_tokens"]])
    parts = {"gemm": 0.0, "attention": 0.0, "collective": 0.0, "other": 0.0}
    lines = [l for l in out.splitlines() if l and not l.startswith("#")]
    for row in csv.DictReader(lines):
        t = (float(row["end_us"]) - float(row["start_us"])) * 1e-6
        k = row["kind"]
        if k in ("MatMul", "FusedMatMulAllReduce"):
            parts["gemm"] += t
        elif k == "SelfAttention":
            parts["attention"] += t
        elif row["lane"] == "collective":
            parts["collective"] += t
        else:
            parts["other"] += t
    return parts


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "data/validation/gpu.csv")
    pm = sys.argv[2] if len(sys.argv) > 2 else os.path.join(ROOT, "build/src/cli/preserve-model")
    print("section,accelerator,devices,runtime,batch,input_tokens,measured_ms,modelled_ms,"
          "signed_error,gemm_share,attention_share,collective_share,other_share,"
          "gemm_factor,attention_factor,collective_factor")
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            if r["metric"] != "ttft_ms" or not r["status"].startswith("ok"):
                continue
            j = json.loads(run(pm, ["run", "--format", "json"] + scenario_args(r)))
            model_s = j["modes"]["serial"]["prefill_s"]
            meas_s = float(r["measured"]) * 1e-3
            with open(os.path.join(ROOT, "data/models", r["model"] + ".json")) as mf:
                layers = json.load(mf)["num_hidden_layers"]
            parts = {k: v * layers for k, v in layer_split(pm, r).items()}
            total = sum(parts.values())
            gap = meas_s - model_s

            def factor(k):
                return "%.2f" % (1 + gap / parts[k]) if gap > 0 and parts[k] > 0 else "-"

            print("%s,%s,%s,%s,%s,%s,%.1f,%.1f,%+.3f,%.2f,%.2f,%.2f,%.2f,%s,%s,%s" % (
                r["section"], r["accelerator"], r["devices"], r["runtime"], r["batch"],
                r["input_tokens"], meas_s * 1e3, model_s * 1e3, model_s / meas_s - 1,
                parts["gemm"] / total, parts["attention"] / total, parts["collective"] / total,
                parts["other"] / total, factor("gemm"), factor("attention"),
                factor("collective")))


if __name__ == "__main__":
    main()
