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

With --compute (issue 47, item 1: the derivation of data/runtimes/vllm*.json's
"moe_gemm_compute_efficiency" table) it prints instead, for each tuned row whose accelerator has
a preset, the expert GEMMs' compute efficiency that makes the modelled call take the measured
time: the runtime without its table (a copy written to a temporary folder) is the dense GEMM
model; a copy whose table is one constant fraction f on the row's accelerator slows the four
expert nodes' compute time by 1 / f; f is found by bisection (14 steps, to 1e-4). A row the
model already times at or above the measurement (at f = 1) has no such f (memory-bound there:
its reads are the accelerator's HBM efficiency, not a MoE effect). compute_bound says whether at
f every expert GEMM is compute-bound (the call's time then grows as 1 / f: its slope at f equals
(T(f / 2) - T(f)) / (1 / f), within 2 %); only those rows measure the compute rate, and only they
give the table's points (tokens per expert, f), printed last as JSON.

Usage: scripts/moe-kernel-curve.py [--compute] [CSV] [PM]
  (PM default build/src/cli/preserve-model; MOE_RUNTIME, default vllm, the runtime preset)
Read by no calibration and by no code: a diagnostic of the kernel evidence.
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

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


def row_info(r):
    """tokens per expert of a row (tokens x top-k / experts), or None without a preset."""
    if not os.path.exists(os.path.join(ROOT, "data/accelerators", r["accelerator"] + ".json")):
        return None
    with open(os.path.join(ROOT, "data/models", r["model"] + ".json")) as mf:
        m = json.load(mf)
    return int(r["tokens"]) * m["num_experts_per_tok"] / m["num_experts"]


def probe_runtime(base, folder, accelerator, frac):
    """A copy of the runtime base (a dict) whose expert GEMMs' compute table is frac on
    accelerator, or none (frac None): the file's path."""
    rt = dict(base)
    rt.pop("moe_gemm_compute_efficiency", None)
    name = "dense"
    if frac is not None:
        name = "f%.6f" % frac
        rt["moe_gemm_compute_efficiency"] = {
            "accelerators": [accelerator], "source": "moe-kernel-curve.py probe",
            "points": [{"tokens_per_expert": 1, "compute_efficiency_frac": frac}]}
    path = os.path.join(folder, "%s-%s.json" % (accelerator, name))
    with open(path, "w") as f:
        json.dump(rt, f)
    return path


def compute_ratio(pm, r, base, folder):
    """(dense modelled us, f or None, compute-bound at f) for one row."""
    at = lambda f: modelled_us(pm, r, probe_runtime(base, folder, r["accelerator"], f))
    meas = float(r["kernel_us"])
    dense = at(None)
    if dense >= meas:
        return dense, None, False
    lo, hi = 0.2, 1.0  # T(lo) > meas > T(hi): the time falls as f rises
    for _ in range(14):
        mid = (lo + hi) / 2
        if at(mid) > meas:
            lo = mid
        else:
            hi = mid
    f = (lo + hi) / 2
    t, t_near, t_half = at(f), at(f * 0.99), at(f / 2)
    slope_near = (t_near - t) / (1 / (f * 0.99) - 1 / f)
    slope_far = (t_half - t) / (1 / f)
    bound = abs(slope_near - slope_far) <= 0.02 * slope_far
    return dense, f, bound


def main_compute(path, pm, runtime):
    with open(os.path.join(ROOT, "data/runtimes", runtime + ".json")) as f:
        base = json.load(f)
    print("accelerator,model,tensor_parallel,config,tokens,tokens_per_expert,measured_us,"
          "dense_modelled_us,compute_frac,compute_bound")
    points = {}
    with open(path, newline="") as f, tempfile.TemporaryDirectory() as folder:
        for r in csv.DictReader(f):
            tpe = row_info(r)
            if tpe is None or r["config"] != "tuned":
                continue
            dense, frac, bound = compute_ratio(pm, r, base, folder)
            print("%s,%s,%s,%s,%s,%.2f,%s,%.1f,%s,%s" % (
                r["accelerator"], r["model"], r["tensor_parallel"], r["config"], r["tokens"],
                tpe, r["kernel_us"], dense, "" if frac is None else "%.3f" % frac,
                "yes" if bound else "no"))
            if bound:
                points.setdefault(r["accelerator"], []).append((tpe, round(frac, 2)))
    for acc, pts in points.items():
        print("# %s points: %s" % (acc, json.dumps(
            [{"tokens_per_expert": t, "compute_efficiency_frac": f} for t, f in pts])))


def main():
    args = [a for a in sys.argv[1:] if a != "--compute"]
    path = args[0] if args else os.path.join(ROOT, "data/kernels/fused-moe.csv")
    pm = args[1] if len(args) > 1 else os.path.join(ROOT, "build/src/cli/preserve-model")
    runtime = os.environ.get("MOE_RUNTIME", "vllm")
    if "--compute" in sys.argv[1:]:
        main_compute(path, pm, runtime)
        return
    print("accelerator,model,tensor_parallel,config,tokens,tokens_per_expert,measured_us,"
          "modelled_us,modelled_over_measured")
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            tpe = row_info(r)
            if tpe is None:
                continue
            mod = modelled_us(pm, r, runtime)
            meas = float(r["kernel_us"])
            print("%s,%s,%s,%s,%s,%.2f,%.1f,%.1f,%.3f" % (
                r["accelerator"], r["model"], r["tensor_parallel"], r["config"], r["tokens"],
                tpe, meas, mod, mod / meas))


if __name__ == "__main__":
    main()
