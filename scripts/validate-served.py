#!/usr/bin/env python3
"""Validation of the served-workload model (`preserve-model serve`, issue 43) against published
measurements of real engines at fixed input and output lengths and a stated concurrency.

Every row of data/validation/gpu-served.csv (columns below) whose status is `ok` goes through
`preserve-model serve --format csv`, the prediction is set beside the measurement, and the signed
relative error (predicted / measured - 1) is printed per row, then summarised.

The scenario of a row, as scripts/validate-gpu.sh builds a static one: the row's model,
accelerator, cluster, devices (tensor parallel), runtime and datatypes on top of the llama8b
scenario; a sequence of I + O tokens of which I are prompt (`--seq I+O`, `workload.prefill_frac`
I / (I + O): the serve command sends seq x prefill_frac prompt tokens and returns the rest, the
first from the prefill); closed-loop clients at the row's concurrency; the row's chunk budget and
scheduling rule; a row naming a lengths file (column `lengths`, data/lengths/) draws its requests
from that distribution (`--lengths NAME`) instead, its input_tokens and output_tokens the
benchmark's nominal lengths. The mode is `serial`: engines run a plain allreduce after each GEMM and do not
prefetch into L2 (the baseline validate-gpu.sh compares with). fp8 and int8 engines reduce their
partial sums in 16 bits (workload.allreduce_dtype=fp16), as in validate-gpu.sh.

  output_tokens_per_s   the instance's output tokens/s: serial_tokens_per_s_per_device x devices
  ttft_ms               serial_ttft_s (mean time to first token)
  tpot_ms, itl_ms       serial_tpot_s: the mean time per output token after the first (genai-perf's
                        and AIPerf's inter-token latency is this quotient per request)
  e2e_s                 serial_e2e_s

An empty chunk_budget_tokens takes the engine's default named in the row's note: 8192 for the
TensorRT-LLM runtime (in-flight batching without chunked context: whole prompts beside the decode
tokens, up to max_num_tokens), else the tool's default (2048, vLLM V1's max_num_batched_tokens).

Statuses in the output: `ok`; `exceeds-hbm` (the model says the sequences' KV cache and the
weights do not fit the HBM at this concurrency: the engine queues or preempts, which the steady
state does not model); `refused` (the CLI refused the row: its message is printed); and the CSV's
own `not_modelled` and `refused` rows, kept with their reason and not run. The summary counts only
`ok` rows. Percentiles are nearest-rank (the p-th of n sorted values is the ceil(p n)-th).

Usage: python3 scripts/validate-served.py [BUILD_DIR]
  BUILD_DIR   the meson build directory (default build); the tool is BUILD_DIR/src/cli/preserve-model
              unless PM names it
  VALIDATION_CSV=FILE   validate another file of the same columns
  VALIDATE_SET="K=V ..."   more --set overrides for every row
  VALIDATE_ARRIVAL=A    serve --arrival A for every row (staggered, the default, or wave: the
                        clients of a fixed-length closed loop send and end together)
  VALIDATE_CHUNK=N      the chunk budget of every row instead of the row's or the engine's
  VALIDATE_OUT=FILE     also write the per-row results as CSV
Exit status: 0, or 2 when the file is malformed (every problem is printed) or the tool is missing.
"""
import csv
import math
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COLUMNS = ["id", "model", "accelerator", "cluster", "devices", "parallel", "engine", "runtime",
           "weight_dtype", "act_dtype", "kv_dtype", "concurrency", "input_tokens", "output_tokens",
           "chunk_budget_tokens", "rule", "metric", "statistic", "measured", "status", "source",
           "note", "lengths"]
METRICS = {"output_tokens_per_s", "ttft_ms", "tpot_ms", "itl_ms", "e2e_s"}
STATISTICS = {"mean", "median"}
STATUSES = {"ok", "not_modelled", "refused"}
RULES = {"decode_first", "prefill_first"}
DTYPES = {"int8", "fp8", "bf16", "fp16", "fp32", "int4"}
# The chunk budget an engine runs when the source states none (see the docstring).
DEFAULT_CHUNK = {"trtllm": 8192}
TOOL_DEFAULT_CHUNK = 2048


def positive_int(text):
    v = int(text)
    if v < 1:
        raise ValueError("not positive")
    return v


def read_rows(path):
    """The file's rows, or exits 2 naming every malformed one."""
    problems = []
    with open(path, newline="") as f:
        lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
    reader = csv.reader(lines)
    header = next(reader, None)
    if header != COLUMNS:
        problems.append("header: expected %s, got %s" % (",".join(COLUMNS), header))
        report_and_exit(path, problems)
    rows, seen = [], set()
    for n, fields in enumerate(reader, start=2):
        where = "row %d" % n
        if len(fields) != len(COLUMNS):
            problems.append("%s: %d fields, not %d (no field may hold a comma)"
                            % (where, len(fields), len(COLUMNS)))
            continue
        r = dict(zip(COLUMNS, fields))
        where = "row %d (%s)" % (n, r["id"])
        if not r["id"] or r["id"] in seen:
            problems.append("%s: empty or repeated id" % where)
        seen.add(r["id"])
        for key in ("model", "accelerator", "cluster", "runtime", "engine", "source"):
            if not r[key]:
                problems.append("%s: empty %s" % (where, key))
        for key in ("devices", "concurrency", "input_tokens", "output_tokens"):
            try:
                r[key] = positive_int(r[key])
            except ValueError:
                problems.append("%s: %s must be a positive integer (got %r)" % (where, key, r[key]))
        if r["chunk_budget_tokens"]:
            try:
                r["chunk_budget_tokens"] = positive_int(r["chunk_budget_tokens"])
            except ValueError:
                problems.append("%s: chunk_budget_tokens must be empty or a positive integer" % where)
        else:
            r["chunk_budget_tokens"] = None
        for key in ("weight_dtype", "act_dtype", "kv_dtype"):
            if r[key] not in DTYPES:
                problems.append("%s: %s %r is not one of %s" % (where, key, r[key], sorted(DTYPES)))
        checks = (("metric", METRICS), ("statistic", STATISTICS), ("status", STATUSES),
                  ("rule", RULES))
        for key, allowed in checks:
            if r[key] not in allowed:
                problems.append("%s: %s %r is not one of %s" % (where, key, r[key], sorted(allowed)))
        try:
            r["measured"] = float(r["measured"])
            if not (r["measured"] > 0 and math.isfinite(r["measured"])):
                raise ValueError
        except ValueError:
            problems.append("%s: measured must be a finite number > 0 (got %r)" % (where, r["measured"]))
        if r["status"] != "ok" and not r["note"]:
            problems.append("%s: a %s row needs its reason in the note" % (where, r["status"]))
        if r["parallel"] and r["parallel"] != "TP%s" % r["devices"]:
            problems.append("%s: parallel %r does not match devices %s (tensor parallel only)"
                            % (where, r["parallel"], r["devices"]))
        rows.append(r)
    if problems:
        report_and_exit(path, problems)
    return rows


def report_and_exit(path, problems):
    for p in problems:
        print("%s: %s" % (os.path.relpath(path, ROOT), p), file=sys.stderr)
    sys.exit(2)


def setup_key(r):
    return (r["model"], r["accelerator"], r["cluster"], r["devices"], r["runtime"], r["weight_dtype"],
            r["act_dtype"], r["kv_dtype"], r["input_tokens"], r["output_tokens"], chunk_of(r), r["rule"],
            r["lengths"])


def chunk_of(r):
    if os.environ.get("VALIDATE_CHUNK"):
        return int(os.environ["VALIDATE_CHUNK"])
    if r["chunk_budget_tokens"]:
        return r["chunk_budget_tokens"]
    return DEFAULT_CHUNK.get(r["runtime"], TOOL_DEFAULT_CHUNK)


def run_setup(pm, key, concurrencies):
    """{concurrency: CSV row as a dict} for one scenario, or raises RuntimeError(message)."""
    model, acc, cluster, dev, runtime, wd, ad, kd, i, o, chunk, rule, lengths = key
    seq = i + o
    cmd = [pm, "serve", "--config", "llama8b", "--model", model, "--accelerator", acc,
           "--set", "cluster=" + cluster, "--devices", str(dev), "--set", "runtime=" + runtime,
           "--seq", str(seq), "--set", "workload.prefill_frac=%.17g" % (i / seq),
           "--set", "workload.weight_dtype=" + wd, "--set", "workload.act_dtype=" + ad,
           "--set", "workload.kv_dtype=" + kd,
           "--concurrency", ",".join(str(c) for c in sorted(concurrencies)),
           "--chunk", str(chunk), "--rule", rule, "--format", "csv"]
    if ad in ("fp8", "int8"):
        cmd += ["--set", "workload.allreduce_dtype=fp16"]
    for kv in os.environ.get("VALIDATE_SET", "").split():
        cmd += ["--set", kv]
    if os.environ.get("VALIDATE_ARRIVAL"):
        cmd += ["--arrival", os.environ["VALIDATE_ARRIVAL"]]
    if lengths:
        cmd += ["--lengths", lengths]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        msg = (p.stderr.strip().splitlines() or ["exit status %d" % p.returncode])[0]
        raise RuntimeError(msg)
    comments = [ln for ln in p.stdout.splitlines() if ln.startswith("#")]
    data = [ln for ln in p.stdout.splitlines() if ln and not ln.startswith("#")]
    # The tool states the lengths it ran: they must be the row's exactly (a distribution's
    # classes, or the one prompt and output).
    stated = None
    for ln in comments:
        m = re.search(r"prompts of (\d+) tokens, (\d+) out", ln)
        if m:
            stated = (int(m.group(1)), int(m.group(2)))
        elif ln.startswith("# lengths (in:out x share):"):
            stated = "classes"
    if stated != ("classes" if lengths else (i, o)):
        raise RuntimeError("the tool ran %s prompt/output tokens, not %s" %
                           (stated, lengths or "%d/%d" % (i, o)))
    out = {}
    for rec in csv.DictReader(data):
        out[float(rec["concurrency"])] = rec
    return out


def predict(metric, rec, devices):
    if metric == "output_tokens_per_s":
        return float(rec["serial_tokens_per_s_per_device"]) * devices
    if metric == "ttft_ms":
        return float(rec["serial_ttft_s"]) * 1e3
    if metric in ("tpot_ms", "itl_ms"):
        return float(rec["serial_tpot_s"]) * 1e3
    return float(rec["serial_e2e_s"])


def rank(n, p):
    return max(1, math.ceil(n * p - 1e-9))


def stats(errors):
    a = sorted(abs(e) for e in errors)
    b = sorted(errors)
    n = len(a)
    if n == 0:
        return "points 0"
    inside = sum(1 for e in errors if abs(e) <= 0.25) / n
    return ("points %d  median_abs_error %.3f  p90_abs_error %.3f  median_error %+.3f  within_25pct %.2f"
            % (n, a[rank(n, 0.5) - 1], a[rank(n, 0.9) - 1], b[rank(n, 0.5) - 1], inside))


def setup_label(r):
    return "%s %s x%d %s %d/%d" % (r["model"], r["accelerator"], r["devices"], r["weight_dtype"],
                                   r["input_tokens"], r["output_tokens"])


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    pm = os.environ.get("PM") or os.path.join(build, "src", "cli", "preserve-model")
    if not (os.path.isfile(pm) and os.access(pm, os.X_OK)):
        print("validate-served.py: %s is not an executable (build it, or set PM)" % pm, file=sys.stderr)
        sys.exit(2)
    path = os.environ.get("VALIDATION_CSV") or os.path.join(ROOT, "data", "validation", "gpu-served.csv")
    rows = read_rows(path)

    groups = {}
    for r in rows:
        if r["status"] == "ok":
            groups.setdefault(setup_key(r), set()).add(r["concurrency"])
    results = {}
    for key, concs in groups.items():
        try:
            results[key] = run_setup(pm, key, concs)
        except RuntimeError as e:
            results[key] = str(e)

    out = []
    for r in rows:
        res = {"row": r, "predicted": None, "error": None, "status": r["status"], "why": ""}
        if r["status"] != "ok":
            res["why"] = r["note"]
        else:
            got = results[setup_key(r)]
            if isinstance(got, str):
                res["status"], res["why"] = "refused", got
            else:
                rec = got.get(float(r["concurrency"]))
                if rec is None:
                    res["status"], res["why"] = "refused", "no point at this concurrency"
                else:
                    p = predict(r["metric"], rec, r["devices"])
                    res["predicted"], res["error"] = p, p / r["measured"] - 1
                    if rec["fits_hbm"] in ("0", "false"):
                        res["status"] = "exceeds-hbm"
                        res["why"] = ("the sequences' KV cache and the weights exceed the HBM "
                                      "(at most %s sequences fit): the engine queues" % rec["max_concurrency"])
        out.append(res)

    print("# preserve-model served validation: %s, rows of %s" % (pm, os.path.relpath(path, ROOT)))
    print("%-52s %-19s %5s %12s %12s %8s  %s" % ("id", "metric", "conc", "measured", "model",
                                                 "error", "status"))
    for res in out:
        r = res["row"]
        err = "%+7.1f%%" % (100 * res["error"]) if res["error"] is not None else "       -"
        pred = "%12.4g" % res["predicted"] if res["predicted"] is not None else "%12s" % "-"
        line = "%-52s %-19s %5d %12.4g %s %s  %s" % (r["id"], r["metric"], r["concurrency"],
                                                     r["measured"], pred, err, res["status"])
        if res["status"] not in ("ok",):
            line += " (" + res["why"][:100] + ")"
        print(line)

    ok = [res for res in out if res["status"] == "ok"]
    print()
    print("summary (status ok; signed error = model / measured - 1; below 0 the model is fast)")
    print("  all: " + stats([res["error"] for res in ok]))
    for m in sorted({res["row"]["metric"] for res in ok}):
        print("  metric %s: %s" % (m, stats([res["error"] for res in ok if res["row"]["metric"] == m])))
    for a in sorted({res["row"]["accelerator"] for res in ok}):
        print("  accelerator %s: %s" % (a, stats([res["error"] for res in ok
                                                  if res["row"]["accelerator"] == a])))
    labels = []
    for res in ok:
        lab = setup_label(res["row"])
        if lab not in labels:
            labels.append(lab)
    for lab in labels:
        for m in ("output_tokens_per_s", "ttft_ms", "itl_ms", "tpot_ms"):
            errs = [res["error"] for res in ok
                    if setup_label(res["row"]) == lab and res["row"]["metric"] == m]
            if errs:
                print("  setup %s, %s: %s" % (lab, m, stats(errs)))
    counts = {}
    for res in out:
        counts[res["status"]] = counts.get(res["status"], 0) + 1
    print("  rows %d: %s" % (len(out), ", ".join("%s %d" % kv for kv in sorted(counts.items()))))

    dest = os.environ.get("VALIDATE_OUT")
    if dest:
        with open(dest, "w", newline="") as f:
            w = csv.writer(f)
            w.writerow(["id", "metric", "concurrency", "measured", "predicted", "error", "status", "why"])
            for res in out:
                r = res["row"]
                w.writerow([r["id"], r["metric"], r["concurrency"], "%.6g" % r["measured"],
                            "" if res["predicted"] is None else "%.6g" % res["predicted"],
                            "" if res["error"] is None else "%.4f" % res["error"],
                            res["status"], res["why"]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
