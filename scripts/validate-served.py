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

Parallel serving (issue 44 item 6): a file whose header adds the columns `pp`, `ep`,
`dp_attention` and `rate_req_per_s` (data/validation/parallel-serving.csv) runs each row with
--pp PP, --ep EP and --dp-attention as it names them, the row's `parallel` the label they make
(TP4xPP2, TP8xEP8+DPattn); a row with a rate runs the open loop (--rate R) instead of closed-loop
clients (its concurrency empty), and the tool's `saturated` at that rate is the status
`saturated`. output_tokens_per_s multiplies the per-device rate by every device (TP x PP);
output_tokens_per_s_per_device is the tool's per-device rate, input_tokens_per_s_per_device that
rate x input / output (each request's prompt tokens per output token).
A file whose header adds `burst_requests` too may give a row that instead of a concurrency or a
rate: a burst of that many requests sent at once (a benchmark at request rate inf with no max
concurrency), run as `serve --burst N` (pm_burst_compute: the requests admitted up to what the
HBM holds, served as a transient); its ttft_ms, tpot_ms, e2e_s and output_tokens_per_s are the
burst's means and its output over the makespan.
A `refused` row is run too: the tool must still refuse it (else the status `runs-now`, whose
row's status is stale). Rows that are not `ok` may leave the fields their source does not state
empty (concurrency, lengths, datatypes the tool has no name for, e.g. fp4).

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
PARALLEL_COLUMNS = COLUMNS + ["pp", "ep", "dp_attention", "rate_req_per_s"]
BURST_COLUMNS = PARALLEL_COLUMNS + ["burst_requests"]
METRICS = {"output_tokens_per_s", "ttft_ms", "tpot_ms", "itl_ms", "e2e_s",
           "output_tokens_per_s_per_device", "input_tokens_per_s_per_device"}
STATISTICS = {"mean", "median"}
# Statistics a row the tool does not run may state (the tool predicts means).
OTHER_STATISTICS = {"p90", "unstated"}
STATUSES = {"ok", "not_modelled", "refused"}
RULES = {"decode_first", "prefill_first"}
DTYPES = {"int8", "fp8", "bf16", "fp16", "fp32", "int4"}
# Datatypes a row the tool does not run may name (the source's, which the tool has no type for).
OTHER_DTYPES = {"fp4"}
# The chunk budget an engine runs when the source states none (see the docstring).
DEFAULT_CHUNK = {"trtllm": 8192}
TOOL_DEFAULT_CHUNK = 2048


def positive_int(text):
    v = int(text)
    if v < 1:
        raise ValueError("not positive")
    return v


def positive_number(text):
    v = float(text)
    if not (v > 0 and math.isfinite(v)):
        raise ValueError("not a finite positive number")
    return v


def parallel_label(r):
    """The parallelism a row's columns make: TP4, TP4xPP2, TP8xEP8+DPattn."""
    label = "TP%s" % r["devices"]
    if r["pp"] > 1:
        label += "xPP%d" % r["pp"]
    if r["ep"] > 1:
        label += "xEP%d" % r["ep"]
    if r["dp_attention"]:
        label += "+DPattn"
    return label


def parse_numbers(r, where, problems):
    """Converts the row's numeric fields in place, appending each problem. A row the tool does
    not run may leave devices, concurrency and the lengths empty (None)."""
    runs = r["status"] in ("ok", "refused")
    for key in ("devices", "concurrency", "input_tokens", "output_tokens"):
        if not r[key] and (not runs or key == "concurrency"):
            r[key] = None
            continue
        try:
            r[key] = positive_int(r[key])
        except ValueError:
            problems.append("%s: %s must be a positive integer (got %r)" % (where, key, r[key]))
    for key, conv in (("chunk_budget_tokens", positive_int), ("pp", positive_int),
                      ("ep", positive_int), ("rate_req_per_s", positive_number),
                      ("burst_requests", positive_int)):
        default = 1 if key in ("pp", "ep") else None
        try:
            r[key] = conv(r[key]) if r[key] else default
        except ValueError:
            problems.append("%s: %s must be empty or positive (got %r)" % (where, key, r[key]))
            r[key] = default
    if r["dp_attention"] not in ("", "0", "1"):
        problems.append("%s: dp_attention must be empty, 0 or 1" % where)
    r["dp_attention"] = r["dp_attention"] == "1"
    try:
        r["measured"] = positive_number(r["measured"])
    except ValueError:
        problems.append("%s: measured must be a finite number > 0 (got %r)" % (where, r["measured"]))
    loads = [k for k in ("concurrency", "rate_req_per_s", "burst_requests") if r[k] is not None]
    if runs and len(loads) != 1:
        problems.append("%s: an %s row needs one of a concurrency, a rate_req_per_s or a "
                        "burst_requests (got %s)" % (where, r["status"], loads or "none"))


def row_problems(r, where):
    """The problems of one row (its numbers converted in place)."""
    problems = []
    for key in ("model", "accelerator", "cluster", "runtime", "engine", "source"):
        if not r[key]:
            problems.append("%s: empty %s" % (where, key))
    parse_numbers(r, where, problems)
    allowed_dtypes = DTYPES if r["status"] == "ok" else DTYPES | OTHER_DTYPES
    if r["status"] == "not_modelled":
        allowed_dtypes = allowed_dtypes | {""}
    for key in ("weight_dtype", "act_dtype", "kv_dtype"):
        if r[key] not in allowed_dtypes:
            problems.append("%s: %s %r is not one of %s" % (where, key, r[key], sorted(allowed_dtypes)))
    statistics = STATISTICS if r["status"] == "ok" else STATISTICS | OTHER_STATISTICS
    checks = (("metric", METRICS), ("statistic", statistics), ("status", STATUSES), ("rule", RULES))
    for key, allowed in checks:
        if r[key] not in allowed:
            problems.append("%s: %s %r is not one of %s" % (where, key, r[key], sorted(allowed)))
    if r["status"] != "ok" and not r["note"]:
        problems.append("%s: a %s row needs its reason in the note" % (where, r["status"]))
    if r["parallel"] and r["devices"] and r["parallel"] != parallel_label(r):
        problems.append("%s: parallel %r does not match its columns (%s)"
                        % (where, r["parallel"], parallel_label(r)))
    return problems


def read_rows(path):
    """The file's rows, or exits 2 naming every malformed one."""
    problems = []
    with open(path, newline="") as f:
        lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
    reader = csv.reader(lines)
    header = next(reader, None)
    if header not in (COLUMNS, PARALLEL_COLUMNS, BURST_COLUMNS):
        problems.append("header: expected %s (or with %s), got %s"
                        % (",".join(COLUMNS), ",".join(BURST_COLUMNS[len(COLUMNS):]), header))
        report_and_exit(path, problems)
    rows, seen = [], set()
    for n, fields in enumerate(reader, start=2):
        where = "row %d" % n
        if len(fields) != len(header):
            problems.append("%s: %d fields, not %d (no field may hold a comma)"
                            % (where, len(fields), len(header)))
            continue
        r = dict(zip(header, fields))
        for key in BURST_COLUMNS[len(COLUMNS):]:
            r.setdefault(key, "")
        where = "row %d (%s)" % (n, r["id"])
        if not r["id"] or r["id"] in seen:
            problems.append("%s: empty or repeated id" % where)
        seen.add(r["id"])
        problems += row_problems(r, where)
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
            r["lengths"], r["pp"], r["ep"], r["dp_attention"], r["rate_req_per_s"] is not None,
            r["burst_requests"] is not None)


def load_point(r):
    """The row's load: its burst's requests, its request rate (open loop) or its concurrency."""
    if r["burst_requests"] is not None:
        return r["burst_requests"]
    return r["rate_req_per_s"] if r["rate_req_per_s"] is not None else r["concurrency"]


def load_text(r):
    """The row's load as printed: its concurrency, r=RATE for a request rate, - for none."""
    if r["burst_requests"] is not None:
        return "b=%d" % r["burst_requests"]
    if r["rate_req_per_s"] is not None:
        return "r=%g" % r["rate_req_per_s"]
    return "-" if r["concurrency"] is None else str(r["concurrency"])


def chunk_of(r):
    if os.environ.get("VALIDATE_CHUNK"):
        return int(os.environ["VALIDATE_CHUNK"])
    if r["chunk_budget_tokens"]:
        return r["chunk_budget_tokens"]
    return DEFAULT_CHUNK.get(r["runtime"], TOOL_DEFAULT_CHUNK)


def setup_command(pm, key, points):
    """The serve command line of one setup at its loads."""
    model, acc, cluster, dev, runtime, wd, ad, kd, i, o, chunk, rule, lengths, pp, ep, dpa, rate, burst = key
    seq = i + o
    cmd = [pm, "serve", "--config", "llama8b", "--model", model, "--accelerator", acc,
           "--set", "cluster=" + cluster, "--devices", str(dev), "--set", "runtime=" + runtime,
           "--seq", str(seq), "--set", "workload.prefill_frac=%.17g" % (i / seq),
           "--set", "workload.weight_dtype=" + wd, "--set", "workload.act_dtype=" + ad,
           "--set", "workload.kv_dtype=" + kd,
           "--burst" if burst else "--rate" if rate else "--concurrency",
           ",".join("%g" % c for c in sorted(points)),
           "--chunk", str(chunk), "--rule", rule, "--format", "csv"]
    if pp > 1:
        cmd += ["--pp", str(pp)]
    if ep > 1:
        cmd += ["--ep", str(ep)]
    if dpa:
        cmd += ["--dp-attention"]
    if ad in ("fp8", "int8"):
        cmd += ["--set", "workload.allreduce_dtype=fp16"]
    for kv in os.environ.get("VALIDATE_SET", "").split():
        cmd += ["--set", kv]
    if os.environ.get("VALIDATE_ARRIVAL"):
        cmd += ["--arrival", os.environ["VALIDATE_ARRIVAL"]]
    if lengths:
        cmd += ["--lengths", lengths]
    return cmd


def run_setup(pm, key, points):
    """{load: CSV row as a dict} for one scenario, or raises RuntimeError(message)."""
    i, o, lengths, rate, burst = key[8], key[9], key[12], key[16], key[17]
    p = subprocess.run(setup_command(pm, key, points), capture_output=True, text=True)
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
        out[float(rec["requests" if burst else "request_rate_per_s" if rate else "concurrency"])] = rec
    return out


def predict(metric, rec, r):
    per_device = float(rec["serial_tokens_per_s_per_device"])
    if metric == "output_tokens_per_s":
        return per_device * r["devices"] * r["pp"]
    if metric == "output_tokens_per_s_per_device":
        return per_device
    if metric == "input_tokens_per_s_per_device":
        return per_device * r["input_tokens"] / r["output_tokens"]
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
    return "%s %s %s %s %d/%d" % (r["model"], r["accelerator"], parallel_label(r), r["weight_dtype"],
                                  r["input_tokens"], r["output_tokens"])


def run_groups(pm, rows):
    """{setup key: its results or the tool's refusal} for the rows the tool runs (ok and refused)."""
    groups = {}
    for r in rows:
        if r["status"] in ("ok", "refused"):
            groups.setdefault(setup_key(r), set()).add(load_point(r))
    results = {}
    for key, points in groups.items():
        try:
            results[key] = run_setup(pm, key, points)
        except RuntimeError as e:
            results[key] = str(e)
    return results


def evaluate(r, results):
    """One row's result: its prediction, error and status (and why)."""
    res = {"row": r, "predicted": None, "error": None, "status": r["status"], "why": ""}
    if r["status"] == "not_modelled":
        res["why"] = r["note"]
        return res
    got = results[setup_key(r)]
    if r["status"] == "refused":
        if isinstance(got, str):
            res["why"] = got
        else:
            res["status"], res["why"] = "runs-now", "the tool no longer refuses this row: its status is stale"
        return res
    if isinstance(got, str):
        res["status"], res["why"] = "refused", got
        return res
    rec = got.get(float(load_point(r)))
    if rec is None:
        res["status"], res["why"] = "refused", "no point at this load"
        return res
    p = predict(r["metric"], rec, r)
    res["predicted"], res["error"] = p, p / r["measured"] - 1
    if rec.get("fits_hbm") in ("0", "false"):
        res["status"] = "exceeds-hbm"
        res["why"] = ("the sequences' KV cache and the weights exceed the HBM "
                      "(at most %s sequences fit): the engine queues" % rec["max_concurrency"])
    elif rec.get("serial_saturated") == "1":
        res["status"], res["why"] = "saturated", "the model saturates below this request rate"
    return res


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
    pm = os.environ.get("PM") or os.path.join(build, "src", "cli", "preserve-model")
    if not (os.path.isfile(pm) and os.access(pm, os.X_OK)):
        print("validate-served.py: %s is not an executable (build it, or set PM)" % pm, file=sys.stderr)
        sys.exit(2)
    path = os.environ.get("VALIDATION_CSV") or os.path.join(ROOT, "data", "validation", "gpu-served.csv")
    rows = read_rows(path)
    results = run_groups(pm, rows)
    out = [evaluate(r, results) for r in rows]

    print("# preserve-model served validation: %s, rows of %s" % (pm, os.path.relpath(path, ROOT)))
    print("%-52s %-19s %5s %12s %12s %8s  %s" % ("id", "metric", "conc", "measured", "model",
                                                 "error", "status"))
    for res in out:
        r = res["row"]
        err = "%+7.1f%%" % (100 * res["error"]) if res["error"] is not None else "       -"
        pred = "%12.4g" % res["predicted"] if res["predicted"] is not None else "%12s" % "-"
        line = "%-52s %-19s %5s %12.4g %s %s  %s" % (r["id"], r["metric"], load_text(r),
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
    for lab in sorted({parallel_label(res["row"]) for res in ok}):
        print("  parallel %s: %s" % (lab, stats([res["error"] for res in ok
                                                 if parallel_label(res["row"]) == lab])))
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
                w.writerow([r["id"], r["metric"], load_text(r), "%.6g" % r["measured"],
                            "" if res["predicted"] is None else "%.6g" % res["predicted"],
                            "" if res["error"] is None else "%.4f" % res["error"],
                            res["status"], res["why"]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
