#!/usr/bin/env python3
"""End-to-end validation of the disaggregated deployment (`preserve-model disagg`, issue 45 item 5)
against published measurements of prefill/decode-disaggregated engines.

Every row of data/validation/disagg-e2e.csv (columns below) whose status is `ok` (or
`decode_only`, below) goes through `preserve-model disagg --format csv` with the row's pools
(model, accelerator, cluster, devices per instance = tensor parallel, runtime and datatypes on
top of the llama70b-h100 scenario, as scripts/validate-disagg.sh builds them), the row's
instance counts (--prefill-instances, --decode-instances), lengths (--input, --output) and
closed-loop concurrency (the row's total concurrency over the decode instances: --concurrency
per decode instance). The mode is `serial` (engines run a plain allreduce after each GEMM).
Each measured metric is set beside the prediction with the signed relative error
(predicted / measured - 1):

  ttft_ms                         serial_ttft_s (prefill, the prefill queue's wait, the transfer)
  tpot_ms, itl_ms                 serial_tpot_s
  output_tokens_per_s             serial_tokens_per_s_per_device x serial_devices
  total_tokens_per_s_per_device   serial_tokens_per_s_per_device x (input + output) / output

Rows with status `not_modelled` are printed with their reason (the `note`) and not run: the model
cannot represent them (hardware or models not bundled, DP attention, setups the source leaves
unstated) and they are never forced into a scenario. A row with status `ok` must name every pool
field, both instance counts, the lengths and a concurrency (the tool has no open-loop arrival
process in fixed-count mode).

A row with status `decode_only` runs as an `ok` row but compares only its decode metrics
(tpot_ms, itl_ms): its other metrics are printed `not_modelled` with the note (e.g. a TTFT that
is the wait in a queue growing through the run, which the steady state does not model). Its
concurrency is the decode batch the source's own numbers give (Little's law: output tokens/s x
ITL = sequences decoding), stated in the note; it must have tpot_ms or itl_ms.

A row with status `latency_only` runs as an `ok` row but compares only its latencies (ttft_ms,
tpot_ms, itl_ms): its throughputs are printed `not_modelled` with the note (an open-loop run at
a fixed request rate below the deployment's capacity: its throughput is the arrival rate times
the output length, not what the closed-loop steady state predicts). Its concurrency is the
number of requests in the system by Little's law (rate x mean E2E latency), stated in the note;
it must have ttft_ms, tpot_ms or itl_ms.

Usage: python3 scripts/validate-disagg-e2e.py [BUILD_DIR]
  BUILD_DIR   the meson build directory (default build); the tool is BUILD_DIR/src/cli/preserve-model
              unless PM names it
  VALIDATION_CSV=FILE   validate another file of the same columns
Prints CSV: id,metric,measured,predicted,error_pct,status,note.
Exit status: 0, or 2 when the file is malformed (every problem is printed) or the tool fails.
"""
import csv
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLUMNS = ["id", "model", "prefill_accelerator", "prefill_cluster", "prefill_devices",
           "prefill_instances", "decode_accelerator", "decode_cluster", "decode_devices",
           "decode_instances", "runtime", "weight_dtype", "act_dtype", "kv_dtype", "input_tokens",
           "output_tokens", "concurrency", "rate_req_per_s", "ttft_ms", "tpot_ms", "itl_ms",
           "output_tokens_per_s", "total_tokens_per_s_per_device", "statistic", "status",
           "source", "note"]
METRICS = ["ttft_ms", "tpot_ms", "itl_ms", "output_tokens_per_s", "total_tokens_per_s_per_device"]
DECODE_METRICS = ["tpot_ms", "itl_ms"]
LATENCY_METRICS = ["ttft_ms", "tpot_ms", "itl_ms"]
COMPARED = {"ok": METRICS, "decode_only": DECODE_METRICS, "latency_only": LATENCY_METRICS}
INTEGERS = ["prefill_devices", "prefill_instances", "decode_devices", "decode_instances",
            "input_tokens", "output_tokens", "concurrency"]
OK_REQUIRED = ["model", "prefill_accelerator", "prefill_cluster", "decode_accelerator",
               "decode_cluster", "runtime", "weight_dtype", "act_dtype", "kv_dtype"] + INTEGERS
STATUSES = {"ok", "decode_only", "latency_only", "not_modelled"}
RUN = set(COMPARED)  # the statuses that go through the tool
STATISTICS = {"mean", "median"}


def fail(message):
    """Prints the message and exits 2 (a malformed file or a failing tool)."""
    print(message, file=sys.stderr)
    sys.exit(2)


def row_problems(row):
    """The problems of one row (an empty list when it is well formed)."""
    bad = []
    for key in INTEGERS:
        if row[key] and not (row[key].isdigit() and int(row[key]) >= 1):
            bad.append(f"{key}: expected an integer >= 1, got {row[key]!r}")
    for key in METRICS + ["rate_req_per_s"]:
        if row[key]:
            try:
                if float(row[key]) <= 0:
                    raise ValueError
            except ValueError:
                bad.append(f"{key}: expected a positive number, got {row[key]!r}")
    if not any(row[m] for m in METRICS):
        bad.append("no measured metric")
    if row["status"] not in STATUSES:
        bad.append(f"status: expected one of {sorted(STATUSES)}, got {row['status']!r}")
    if row["statistic"] not in STATISTICS:
        bad.append(f"statistic: expected one of {sorted(STATISTICS)}, got {row['statistic']!r}")
    if not row["source"]:
        bad.append("source: empty")
    if row["status"] in ("not_modelled", "decode_only", "latency_only") and not row["note"]:
        bad.append(f"{row['status']} without a reason in note")
    if row["status"] in COMPARED and not any(row[m] for m in COMPARED[row["status"]]):
        bad.append(f"{row['status']} without any of {', '.join(COMPARED[row['status']])}")
    if row["status"] in RUN:
        bad += [f"{key}: empty in an {row['status']} row" for key in OK_REQUIRED if not row[key]]
        if row["concurrency"].isdigit() and row["decode_instances"].isdigit() and \
                int(row["concurrency"]) % int(row["decode_instances"]):
            bad.append("concurrency: not a multiple of decode_instances")
    return bad


def load(path):
    """The rows of the file, or exits 2 printing every problem."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames != COLUMNS:
            fail(f"{path}:1: expected the columns {','.join(COLUMNS)}")
        rows, problems = list(reader), []
    for line, row in enumerate(rows, start=2):
        if None in row or None in row.values():
            problems.append(f"{path}:{line}: expected {len(COLUMNS)} fields")
            continue
        problems += [f"{path}:{line}: {p}" for p in row_problems(row)]
    if problems:
        fail("\n".join(problems))
    return rows


def pool_args(row, pool):
    """The --POOL-config and --POOL-set options of one pool."""
    sets = {"model": row["model"], "accelerator": row[pool + "_accelerator"],
            "cluster": row[pool + "_cluster"], "cluster.devices": row[pool + "_devices"],
            "runtime": row["runtime"], "workload.weight_dtype": row["weight_dtype"],
            "workload.act_dtype": row["act_dtype"], "workload.kv_dtype": row["kv_dtype"]}
    args = [f"--{pool}-config", "llama70b-h100"]
    for key, value in sets.items():
        args += [f"--{pool}-set", f"{key}={value}"]
    return args


def predict(pm, row):
    """The tool's serial prediction of each metric of a row that runs (decode_only: its decode
    metrics only; latency_only: its latencies only)."""
    per_instance = int(row["concurrency"]) // int(row["decode_instances"])
    cmd = [pm, "disagg", *pool_args(row, "prefill"), *pool_args(row, "decode"),
           "--input", row["input_tokens"], "--output", row["output_tokens"],
           "--concurrency", str(per_instance), "--prefill-instances", row["prefill_instances"],
           "--decode-instances", row["decode_instances"], "--format", "csv"]
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode != 0:
        fail(f"{row['id']}: preserve-model failed: {run.stderr.strip()}")
    lines = [line for line in run.stdout.splitlines() if line and not line.startswith("#")]
    out = dict(zip(lines[0].split(","), lines[1].split(",")))
    per_device = float(out["serial_tokens_per_s_per_device"])
    tokens = int(row["input_tokens"]) + int(row["output_tokens"])
    predicted = {"ttft_ms": float(out["serial_ttft_s"]) * 1e3,
            "tpot_ms": float(out["serial_tpot_s"]) * 1e3,
            "itl_ms": float(out["serial_tpot_s"]) * 1e3,
            "output_tokens_per_s": per_device * float(out["serial_devices"]),
            "total_tokens_per_s_per_device": per_device * tokens / int(row["output_tokens"])}
    return {m: v for m, v in predicted.items() if m in COMPARED[row["status"]]}


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    pm = os.environ.get("PM", os.path.join(build, "src", "cli", "preserve-model"))
    path = os.environ.get("VALIDATION_CSV",
                          os.path.join(ROOT, "data", "validation", "disagg-e2e.csv"))
    os.environ.setdefault("PRESERVE_MODEL_DATA", os.path.join(ROOT, "data"))
    rows = load(path)
    if any(r["status"] in RUN for r in rows) and not os.access(pm, os.X_OK):
        fail(f"{pm}: the tool is missing (build it, or name it with PM)")
    out = csv.writer(sys.stdout, lineterminator="\n")
    out.writerow(["id", "metric", "measured", "predicted", "error_pct", "status", "note"])
    for row in rows:
        predicted = predict(pm, row) if row["status"] in RUN else {}
        for metric in (m for m in METRICS if row[m]):
            measured = float(row[metric])
            if metric in predicted:
                p = predicted[metric]
                out.writerow([row["id"], metric, row[metric], f"{p:.4g}",
                              f"{100 * (p / measured - 1):+.1f}", "ok", ""])
            else:
                out.writerow([row["id"], metric, row[metric], "", "", "not_modelled",
                              row["note"]])


if __name__ == "__main__":
    main()
