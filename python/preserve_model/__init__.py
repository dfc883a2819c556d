"""preserve_model: the PRESERVE performance model (libpreserve_model) from Python.

An analytical model of tensor-parallel LLM inference: for a model, an accelerator, a device
count, a batch and a sequence length, how long inference takes serially, with a fused
GEMM+allreduce, and with PRESERVE prefetching weights and the KV cache into L2 during the
allreduces. A thin layer over the C library's public API; every number comes from it.

    >>> import preserve_model as pm
    >>> r = pm.estimate("llama70b", batch=8)
    >>> r["speedup"]["preserve_vs_serial"]
    >>> s = pm.sweep("llama70b", l2="8MiB:256MiB:8MiB")
    >>> s["l2_capacity_MiB"], s["preserve_request_s"]          # numpy arrays
    >>> step = pm.StepModel("llama70b", mode="preserve")
    >>> step.decode_time(16383)                                # seconds
    >>> pm.explain("llama70b")["windows"]["window_bytes"]      # bytes prefetched per collective

Scenarios are named as the CLI names them (a bundled name such as "llama70b", or a path to a
JSON file). Overrides are the CLI's: the shortcuts model, accelerator, cluster, devices, ep,
batch and seq (--model, --accelerator, --cluster, --devices, --ep, --batch, --seq) as keyword
arguments, and any field by its
dotted path in a dict, as --set: overrides={"accelerator.l2_capacity_MiB": 104}.

Load and model errors raise preserve_model.Error, whose attributes file, path (the JSON path),
line, column, status and message say where and what.
"""

import json
import math
import numbers
import os

import numpy as np

from . import _core
from ._core import Error

__all__ = ["Error", "StepModel", "estimate", "sweep", "serve", "burst", "search", "search_mix",
           "search_merge", "disagg", "disagg_codesign", "DISAGG_POOLS", "optimize", "footprint",
           "load_lengths", "explain", "timeline", "PHASES", "SERVE_RULES", "OBJECTIVES",
           "SEARCH_OBJECTIVES", "MODES", "data_dir", "version", "SHORTCUTS", "SWEEP_SHORTCUTS"]

#: The keyword shortcuts and the path each one sets (the CLI's --model, --batch ...).
SHORTCUTS = {
    "model": "model",
    "accelerator": "accelerator",
    "cluster": "cluster",
    "devices": "cluster.devices",
    "ep": "cluster.expert_parallel",
    "pp": "cluster.pipeline_parallel",
    "dp": "cluster.data_parallel",
    "sp": "cluster.sequence_parallel",
    "dp_attention": "cluster.attention_data_parallel",
    "batch": "workload.batch",
    "seq": "workload.seq_len",
}


def data_dir():
    """The bundled data directory the library reads (PRESERVE_MODEL_DATA overrides it)."""
    return _core.data_dir()


def version():
    """The library version, e.g. "0.1.0"."""
    return _core.version()


def _text(value):
    """An override's value as the CLI's --set takes it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))
    if isinstance(value, str):
        return value
    raise TypeError(f"override values are str, int, float or bool (got {type(value).__name__})")


#: The shortcuts that are counts, read as the CLI's --batch, --devices and --ep read theirs.
_COUNT_SHORTCUTS = ("devices", "ep", "batch")


def _shortcut_text(key, value, name=None):
    """A shortcut's value as its CLI option takes it: a count is an integer, or text that
    starts with a decimal digit, as --batch refuses "0x10", "+4" and " 8"; names and seq as
    --set. name: the keyword an error names (the key's own by default)."""
    if key in _COUNT_SHORTCUTS:
        name = name or key
        if isinstance(value, bool) or not isinstance(value, (numbers.Integral, str)):
            raise TypeError(f"{name}: expected an integer (got {value!r})")
        text = str(int(value)) if isinstance(value, numbers.Integral) else value
        digits = text[1:] if text.startswith(".") else text
        if not digits[:1].isdigit() or not digits[:1].isascii() or digits[:2] in ("0x", "0X"):
            raise ValueError(f"{name}: expected a decimal integer (got {value!r})")
        return text
    if key in ("model", "accelerator", "cluster"):
        value = os.fspath(value) if isinstance(value, os.PathLike) else value
    return _text(value)


def _overrides(overrides, shortcuts):
    """The "path=value" strings of overrides (a dict of paths, or "path=value" strings as
    --set takes them) and of the keyword shortcuts, in order."""
    if isinstance(overrides, str):
        overrides = [overrides]
    if isinstance(overrides, (list, tuple)):
        if not all(isinstance(o, str) for o in overrides):
            raise TypeError("overrides: a list holds \"path=value\" strings")
        out = list(overrides)
    elif overrides is None or isinstance(overrides, dict):
        out = [f"{key}={_text(value)}" for key, value in (overrides or {}).items()]
    else:
        raise TypeError("overrides: expected a dict {path: value}, a list of \"path=value\" "
                        f"strings or None (got {type(overrides).__name__})")
    for text in out:
        if "\0" in text:
            raise ValueError(f"overrides: a NUL character would cut {text!r} short")
    for key, value in shortcuts.items():
        if key not in SHORTCUTS:
            raise TypeError(
                f"unknown keyword '{key}' (shortcuts: {', '.join(SHORTCUTS)}; any other field "
                f"goes in overrides={{'path': value}}, e.g. 'accelerator.l2_capacity_MiB')")
        text = f"{SHORTCUTS[key]}={_shortcut_text(key, value)}"
        if "\0" in text:
            raise ValueError(f"{key}: a NUL character would cut {value!r} short")
        out.append(text)
    return out


def _path(name, value):
    """A config or data_dir argument: a str or an os.PathLike."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise TypeError(f"{name}: expected a str or a path (got {type(value).__name__})")


def _search_overrides(overrides, shortcuts):
    """_overrides for a search: a device count set for its scenario is refused, as the CLI
    refuses --devices there (each candidate gets its own tensor-parallel degree, tp, and the
    deployment its devices, budget: the count would bound nothing)."""
    out = _overrides(overrides, shortcuts)
    for text in out:
        if text.startswith("cluster.devices="):
            raise ValueError(f"{text} (devices=): a search gives each candidate its "
                             "tensor-parallel degree (tp; default 1, 2, 4... up to a node) "
                             "and the deployment its devices (budget)")
    return out


def _spec_overrides(spec_tokens, spec_accept, spec_draft, spec_mtp):
    """The "speculative" block's overrides of the speculative-decoding keywords, as the CLI's
    --spec-tokens, --spec-accept, --spec-draft and --spec-mtp write them (issue 45)."""
    given = [v is not None for v in (spec_tokens, spec_accept, spec_draft, spec_mtp)]
    if not any(given):
        return []
    out = ["speculative.source=command line (--spec-* options)"]
    if spec_tokens is not None:
        out.append("speculative.draft_tokens=" +
                   _shortcut_text('batch', spec_tokens, 'spec_tokens'))
    if spec_accept is not None:
        rates = spec_accept if isinstance(spec_accept, (list, tuple)) else [spec_accept]
        if not rates or not all(isinstance(a, numbers.Real) and not isinstance(a, bool)
                                for a in rates):
            raise TypeError(
                f"spec_accept: expected a rate or a list of rates (got {spec_accept!r})")
        out.append("speculative.acceptance=" + ",".join(repr(float(a)) for a in rates))
    if spec_draft is not None:
        out += ["speculative.method=draft_model",
                f"speculative.draft_model={_shortcut_text('model', spec_draft)}"]
    if spec_mtp is not None:
        out += ["speculative.method=mtp",
                "speculative.mtp_layers=" + _shortcut_text('batch', spec_mtp, 'spec_mtp')]
    return out


def estimate(config="llama70b", overrides=None, *, data_dir=None, spec_tokens=None,
             spec_accept=None, spec_draft=None, spec_mtp=None, **shortcuts):
    """Evaluates a scenario in the three modes: the report of `preserve-model --format json`.

    config: a bundled scenario name or a path. overrides: {dotted path: value}, or a list of
    "path=value" strings, as --set.
    shortcuts: model, accelerator, cluster, devices, ep, pp, dp, batch, seq. data_dir: the bundled
    data (default: data_dir()). Returns a dict with the keys tool, scenario, inputs,
    tpot_context_len, pipeline (stages, replicas, micro-batches, sends), modes
    (serial, fused, preserve: request_s, prefill_s, decode_s, tpot_s, tpot_mean_s,
    tokens_per_s, allreduce_algorithm, allreduce_decode_s, J_per_token, tokens_per_J ...),
    speedup, shard, memory (docs/output-format.md lists every key).
    Speculative decoding (issue 45): spec_tokens (drafted tokens k), spec_accept (a rate in
    [0, 1) or one per drafted position), spec_draft (a draft model of the same vocabulary) or
    spec_mtp (the target's MTP layers), as the CLI's --spec-* options; the report then has a
    "speculative" object (tokens_per_step, each mode's verify_step_s, draft_step_s,
    speedup_vs_plain).
    Raises Error for a load or model error.
    """
    ov = _overrides(overrides, shortcuts) + _spec_overrides(spec_tokens, spec_accept,
                                                            spec_draft, spec_mtp)
    return json.loads(_core.estimate_json(_path("config", config), ov,
                                          _path("data_dir", data_dir)))


def _axis_spec(name, value):
    """The --sweep text of one axis: True or None for its default range, a range string
    ("8MiB:256MiB:8MiB", "2k:64k:x2", "1,4,16"), or numbers in the column's unit."""
    if value is None or value is True:
        return name
    if isinstance(value, str):
        return f"{name}={value}"
    raw = np.asarray(value)
    if (isinstance(value, bool) or raw.dtype == bool or np.iscomplexobj(raw)
            or np.ma.isMaskedArray(value)):
        raise TypeError(f"{name}: expected a range string or real numbers (got {value!r})")
    values = np.atleast_1d(np.asarray(raw, dtype=float))
    if values.ndim != 1 or not values.size or not np.all(np.isfinite(values)):
        raise ValueError(f"{name}: expected a range string or finite numbers (got {value!r})")
    return f"{name}=" + ",".join(str(int(v)) if float(v).is_integer() and abs(v) < 2**53
                                else repr(float(v)) for v in values)


#: The shortcuts sweep() takes besides its axes (the others name axes there).
SWEEP_SHORTCUTS = ("model", "accelerator", "cluster")


def sweep(config="llama70b", overrides=None, *, data_dir=None, threads=0, **axes):
    """Evaluates a grid of up to four axes with the library's sweep engine.

    axes: l2, l2_bw, compute, hbm_bw, link_bw, devices, batch, seq, ep, each a range string as
    --sweep takes it ("8MiB:256MiB:8MiB", "1,4,16", "2k:64k:x2"), a sequence of numbers in the
    column's unit (l2_capacity_MiB: MiB, l2_bandwidth_TBps and hbm_bandwidth_TBps: TB/s,
    compute_TFLOPS: 10^12 op/s of the compute datatype, link_bandwidth_GBps: GB/s; units in a
    string are read as written: "900GBps"), or True for the default range (fitted to the
    scenario: devices up to its cluster's size, a range around its own value where the
    default misses it); in
    keyword order, the last varying fastest. model, accelerator and cluster are estimate()'s
    shortcuts (the other shortcuts' names are axes here: a fixed batch goes in overrides).
    overrides and data_dir as for estimate(); threads: 0 for every CPU, at most 256. A grid of
    more than 10,000,000 points is refused (its arrays would not fit; the CLI shards larger
    ones); Ctrl-C stops a sweep.

    Returns a dict of numpy arrays named as the sweep CSV's columns (the axis columns such as
    l2_capacity_MiB, then serial_request_s ... density_preserve_tokens_per_s_per_mm2, then
    error), one element per grid point in grid order: with two axes,
    a.reshape(len(first), len(second)) is the grid. Invalid points hold NaN and their message
    in error ("" for valid points); fits_hbm is a bool array, False where the weights and KV
    cache exceed the usable HBM (or the point is not valid). Once done, a UserWarning says how
    many points are invalid or exceed the HBM.
    """
    shortcuts = {name: axes.pop(name) for name in list(axes) if name in SWEEP_SHORTCUTS}
    if not axes:
        raise TypeError("sweep: name at least one axis, e.g. l2='8MiB:256MiB:8MiB'")
    specs = [_axis_spec(name, value) for name, value in axes.items()]
    names, data, errors = _core.sweep(_path("config", config), specs,
                                      _overrides(overrides, shortcuts), _path("data_dir", data_dir),
                                      _whole("threads", threads))
    table = np.frombuffer(data, dtype=np.float64).reshape(-1, len(names))
    out = {name: table[:, i].copy() for i, name in enumerate(names)}
    _flags(out, ("fits_hbm",))
    out["error"] = np.array(errors, dtype=object)
    return out


def _flags(out, names):
    """The 0/1 columns as numpy bools, as estimate() gives them (NaN, a point that is not
    valid, is False: its error says why)."""
    for name in names:
        if name in out:
            out[name] = out[name] == 1


#: The scheduling rules serve() takes (pm_serve_rule).
SERVE_RULES = ("decode_first", "prefill_first")
#: The arrival patterns serve() takes (pm_serve_arrival).
SERVE_ARRIVALS = ("staggered", "wave")


def load_lengths(name, data_dir=None):
    """A lengths file (data/lengths/NAME.json, or a path): a served workload's distribution of
    request lengths. Returns a dict: name, classes (a list of (input_tokens, output_tokens,
    share)), source. Raises Error for a load error (the file, the JSON path, what was
    expected)."""
    got_name, classes, source = _core.lengths_load(_path("name", name),
                                                   _path("data_dir", data_dir))
    return {"name": got_name, "classes": classes, "source": source}


def _length_classes(lengths, data_dir):
    """serve()'s and search()'s lengths: None, a lengths file's name or path, or a sequence of
    (input_tokens, output_tokens, share) classes; the classes, checked, or None."""
    if lengths is None:
        return None
    if isinstance(lengths, (str, os.PathLike)):
        return load_lengths(lengths, data_dir)["classes"]
    lengths = [tuple(c) for c in lengths]
    if not lengths:
        raise ValueError("lengths: expected at least one (input_tokens, output_tokens, share) "
                         "class (got none; None: the scenario's lengths)")
    for c in lengths:
        if len(c) != 3 or not all(isinstance(v, (int, np.integer)) and not isinstance(v, bool)
                                  for v in c[:2]) or \
                not isinstance(c[2], numbers.Real) or isinstance(c[2], bool):
            raise TypeError(f"lengths: expected (input_tokens, output_tokens, share) classes, "
                            f"counts and a number, or a lengths file's name (got {c!r})")
    return lengths


def _whole(name, value, lo=None, what="an integer"):
    """value as an int (>= lo where given; else the library says the range): a count, never a
    bool, a float or text (True was 1, 2.7 was 2). what: the errors' word for it."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name}: expected {what} (got {value!r})")
    if lo is not None and value < lo:
        raise ValueError(f"{name}: expected {what} >= {lo} (got {value!r})")
    return int(value)


def _check_counts(counts):
    """Checks the counts of a served call in place: None (but for chunk) becomes 0, the
    scenario's; a count given must be an int >= 1."""
    for name, value in counts.items():
        if value is None and name != "chunk":
            counts[name] = 0
        else:
            _whole(name, value, 1, "a count")


_SERVE_CONCURRENCY = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


def serve(config="llama70b", concurrency=_SERVE_CONCURRENCY, overrides=None, *,
          chunk=2048, rule="decode_first", ttft_limit=0.0, tpot_limit=0.0, input_tokens=None,
          output_tokens=None, data_dir=None, arrival="staggered", rate=None, lengths=None,
          spec_tokens=None, spec_accept=None, spec_draft=None, spec_mtp=None, **shortcuts):
    """A served workload's steady state over concurrency: the `serve` command's numbers.

    Closed-loop clients, `concurrency` sequences in flight (a sequence of counts >= 1), each
    request input_tokens in and output_tokens out (None: the scenario's prompt and decode
    steps), at most `chunk` tokens a step, under `rule` ("decode_first": chunked prefill;
    "prefill_first": whole prompts first), the requests "staggered" (a served population) or in
    a "wave" (a benchmark's clients at fixed lengths, sent and ended together; prefill_first
    only). rate (requests/s, a sequence): an open loop at each rate instead of the concurrencies
    (each mode's sequences in flight found: MODE_in_flight; MODE_saturated where the mode cannot
    serve the rate, its latencies NaN). lengths: a distribution of request lengths instead of
    input_tokens and output_tokens: a lengths file's name or path (load_lengths), or a sequence
    of at most 8 (input_tokens, output_tokens, share) classes (staggered; TTFT and TPOT are then
    the requests' means). ttft_limit
    and tpot_limit (seconds, 0: none) decide
    goodput. overrides, data_dir and the shortcuts as for estimate(). spec_tokens, spec_accept,
    spec_draft, spec_mtp: speculative decoding as for estimate() (each decode step a verify step
    of k + 1 tokens a sequence beside the draft's k steps, a request decoding in (output - 1) / E
    steps).

    Returns a dict of numpy arrays named as the serve CSV's columns (docs/output-format.md):
    concurrency, then per mode MODE_tokens_per_s_per_device, MODE_tokens_per_s_per_user,
    MODE_ttft_s, MODE_tpot_s, MODE_tpot_max_s, MODE_e2e_s, MODE_requests_per_s,
    MODE_goodput_tokens_per_s_per_device, MODE_tokens_per_s_per_mm2, MODE_tokens_per_s_per_usd,
    MODE_J_per_token (NaN without the accelerator's data), then decode_sequences, prefilling,
    prefill_steps, mixed_step_frac, budget_bound, kv_bytes_per_device, fits_hbm,
    max_concurrency. Raises Error for a load or model error.
    """
    if rule not in SERVE_RULES:
        raise ValueError(f"rule: expected one of {', '.join(SERVE_RULES)} (got {rule!r})")
    if arrival not in SERVE_ARRIVALS:
        raise ValueError(f"arrival: expected one of {', '.join(SERVE_ARRIVALS)} (got {arrival!r})")
    if rate is not None and concurrency is not _SERVE_CONCURRENCY:
        raise ValueError("concurrency and rate: not both (rate serves an open loop at each rate "
                         "instead of the concurrencies)")
    what = "rate" if rate is not None else "concurrency"
    given = rate if rate is not None else concurrency
    raw = np.asarray(given)
    if raw.dtype == bool or np.iscomplexobj(raw):
        raise TypeError(f"{what}: expected real numbers (got {given!r})")
    conc = np.atleast_1d(np.asarray(raw, dtype=float))
    if conc.ndim != 1 or not conc.size or not np.all(np.isfinite(conc)):
        raise ValueError(f"{what}: expected finite numbers (got {given!r})")
    if rate is None and not np.all(conc == np.floor(conc)):
        raise ValueError(f"concurrency: expected whole counts of sequences (got {concurrency!r})")
    if rate is not None and not np.all(conc > 0):
        raise ValueError(f"rate: expected request rates > 0 (got {rate!r})")
    # None: the scenario's lengths (0 in the call below); a length given must be a count >= 1.
    counts = {"chunk": chunk, "input_tokens": input_tokens, "output_tokens": output_tokens}
    _check_counts(counts)
    lengths = _length_classes(lengths, data_dir)
    names, data = _core.serve(_path("config", config), [float(c) for c in conc], int(chunk),
                              SERVE_RULES.index(rule), float(ttft_limit), float(tpot_limit),
                              int(counts["input_tokens"]), int(counts["output_tokens"]),
                              _overrides(overrides, shortcuts)
                              + _spec_overrides(spec_tokens, spec_accept, spec_draft, spec_mtp),
                              _path("data_dir", data_dir),
                              SERVE_ARRIVALS.index(arrival), rate is not None,
                              None if lengths is None else [(int(a), int(b), float(c))
                                                            for a, b, c in lengths])
    table = np.frombuffer(data, dtype=np.float64).reshape(-1, len(names))
    out = {name: table[:, i].copy() for i, name in enumerate(names)}
    _flags(out, ("fits_hbm", "budget_bound", "serial_saturated", "fused_saturated",
                 "preserve_saturated"))
    return out


def burst(config="llama70b", requests=(64,), overrides=None, *, chunk=2048, rule="decode_first",
          max_running=None, input_tokens=None, output_tokens=None, data_dir=None, **shortcuts):
    """Bursts of requests sent at once (a benchmark at request rate inf): `serve --burst`'s
    numbers.

    Each count of `requests` (a sequence of counts >= 1) is a burst: every request input_tokens
    in and output_tokens out (None: the scenario's prompt and decode steps) sent at t = 0, at
    most max_running running at once per scheduler (None: no runtime limit; the HBM limits them
    too) under `rule` and `chunk` tokens a step, served as a transient (pm_burst_compute). The
    run ends when the last request ends. overrides, data_dir and the shortcuts as for
    estimate().

    Returns a dict of numpy arrays named as the burst CSV's columns (docs/output-format.md):
    requests, then per mode MODE_ttft_s, MODE_tpot_s, MODE_e2e_s, MODE_makespan_s,
    MODE_tokens_per_s, MODE_tokens_per_s_per_device, then admitted, max_running,
    max_concurrency, hbm_binds (bool), micro_batches, waves, steps, weight_bytes_per_device.
    Raises Error for a load or model error (a distribution of lengths is not modelled).
    """
    if rule not in SERVE_RULES:
        raise ValueError(f"rule: expected one of {', '.join(SERVE_RULES)} (got {rule!r})")
    counts = {"chunk": chunk, "input_tokens": input_tokens, "output_tokens": output_tokens,
              "max_running": max_running}
    _check_counts(counts)
    req = [int(n) for n in _counts("requests", requests)]
    names, data = _core.burst(_path("config", config), req, int(chunk), SERVE_RULES.index(rule),
                              int(counts["input_tokens"]), int(counts["output_tokens"]),
                              float(counts["max_running"]), _overrides(overrides, shortcuts),
                              _path("data_dir", data_dir))
    table = np.frombuffer(data, dtype=np.float64).reshape(-1, len(names))
    out = {name: table[:, i].copy() for i, name in enumerate(names)}
    _flags(out, ("hbm_binds",))
    return out


#: The objectives search() takes (pm_search_objective), in the library's order.
SEARCH_OBJECTIVES = ("device", "mm2", "usd", "joule")
#: The columns of a search candidate (search()'s best and front), in _core's order.
_SEARCH_COLUMNS = ("tp", "pp", "ep", "dp", "chunk", "hw0", "hw1", "concurrency", "ttft_s", "tpot_s",
                   "tokens_per_s_per_user", "tokens_per_s_per_device", "tokens_per_s_deployment",
                   "tokens_per_s_per_mm2", "tokens_per_s_per_usd", "tokens_per_J", "objective",
                   "prefill_tp", "prefill_instances", "decode_tp", "decode_instances")
#: A disaggregated candidate's pools (all 0 for a co-located one): search(disagg=True)'s keys.
_SEARCH_POOLS = ("prefill_tp", "prefill_instances", "decode_tp", "decode_instances")


def _counts(name, values, lo=1):
    """A sequence of whole counts >= lo as floats, or TypeError/ValueError naming it."""
    raw = np.atleast_1d(np.asarray(values))
    if raw.dtype == bool or not np.issubdtype(raw.dtype, np.number) or raw.ndim != 1:
        raise TypeError(f"{name}: expected a sequence of counts (got {values!r})")
    v = raw.astype(float)
    if not np.all(np.isfinite(v)) or not np.all(v == np.floor(v)) or not np.all(v >= lo):
        raise ValueError(f"{name}: expected whole counts >= {lo} (got {values!r})")
    return [float(x) for x in v]


def search(config="llama70b", concurrency=tuple(2 ** i for i in range(11)), overrides=None, *,
           budget=0, tp=None, pp=None, ep=None, chunks=(512, 1024, 2048, 4096, 8192), hardware=(),
           ttft_limit=0.0, tpot_limit=0.0, min_user_rate=0.0, objective="device",
           rule="decode_first", arrival="staggered", input_tokens=None, output_tokens=None,
           lengths=None, exhaustive=False, threads=0, data_dir=None, spec_tokens=None,
           spec_accept=None, spec_draft=None, spec_mtp=None, shard=None, disagg=False,
           link_bandwidth=0.0, link_latency=0.0, layer_streamed=True, max_load=0.9,
           **shortcuts):
    """The best deployment per mode under latency limits: the `search` command's answer.

    The space: each tensor-parallel degree of tp (None: 1, 2, 4... up to a node and the
    budget), each count of pipeline stages of pp (None: 1; a replica is tp x pp devices,
    served as serve() serves stages), each expert-parallel rank count of ep (None: the
    scenario's), with budget > 0 the data-parallel replicas that fill that many devices
    (budget / (tp x pp)), each chunk budget of
    chunks, each point of the hardware axes (at most two specs as --sweep takes them,
    "l2=48MiB,96MiB"), each concurrency (sequences in flight per replica), served as serve()
    serves (rule, arrival, input_tokens, output_tokens, lengths). The candidates within
    ttft_limit, tpot_limit (seconds) and min_user_rate (tokens/s per user; 0: none) compete on
    objective ("device", "mm2", "usd" or "joule"). exhaustive: no pruning (the same answer).
    spec_tokens, spec_accept, spec_draft and spec_mtp: speculative decoding, as for serve().
    shard=(k, n): only the k-th (1-based) of n slices of the groups (deployments x chunk
    budgets x hardware points, in the space's order), as the CLI's --shard K/N;
    search_merge() of the n shards' results, in order, is the whole search's answer.
    disagg=True (the CLI's --disagg; needs a budget): disaggregated deployments too, each split
    of the budget into x prefill instances of TP p and y decode instances of TP d (p, d from
    tp), served as disagg() serves them at each concurrency (sequences per decode instance)
    over the link of link_bandwidth (bytes/s per prefill device; 0: the cluster's inter-node
    link and its latency, else disagg()'s 25 GB/s and 50 us) and link_latency (s),
    layer_streamed, a prefill instance loaded at
    most max_load; their candidates have the keys layout ("P<x>xTP<p>+D<y>xTP<d>", or
    "colocated"), prefill_tp, prefill_instances, decode_tp, decode_instances, and tp 0, pp 1,
    dp 1 (figures the whole deployment's), chunk 0.

    Returns a dict: points, evaluated, pruned, not_served (decode-first points whose
    concurrency reaches the chunk budget, or a wave's prompts over one step: outside what is
    served), invalid_deployments, first_invalid, shard ((k,
    n), (1, 1) unsharded), space (the arguments as given but shard and threads: what
    search_merge checks its shards share), and modes: {mode: {found, binds (the limit that
    stops the best serving more: "tpot", "ttft",
    "tokens_per_user", "hbm", "chunk_budget", "objective_peak", "space_edge"), best (a dict of
    the candidate's numbers, None when nothing meets the limits), front (a dict of numpy
    arrays: the Pareto front of the objective against tokens/s per user, by rising per-user
    rate)}}. The candidates' keys: tp, pp, ep (1 for a dense model), dp, chunk, the hardware axes'
    columns (l2_capacity_MiB...), concurrency, ttft_s, tpot_s, tokens_per_s_per_user,
    tokens_per_s_per_device, tokens_per_s_deployment, tokens_per_s_per_mm2,
    tokens_per_s_per_usd, tokens_per_J, objective. Raises Error for a load or model error.
    Where the answer's chip cannot be built (a hardware axis growing the die past the reticle,
    a mode's best at such a point) a UserWarning says so, as the CLI's warnings do.
    """
    # What identifies the search a shard is of (search_merge's check): every argument but the
    # shard and the threads, as given.
    space = repr({k: v for k, v in locals().items() if k not in ("shard", "threads")})
    if objective not in SEARCH_OBJECTIVES:
        raise ValueError(f"objective: expected one of {', '.join(SEARCH_OBJECTIVES)} "
                         f"(got {objective!r})")
    if rule not in SERVE_RULES:
        raise ValueError(f"rule: expected one of {', '.join(SERVE_RULES)} (got {rule!r})")
    if arrival not in SERVE_ARRIVALS:
        raise ValueError(f"arrival: expected one of {', '.join(SERVE_ARRIVALS)} (got {arrival!r})")
    if isinstance(hardware, str):
        hardware = [hardware]
    hardware = list(hardware)
    for name, value in (("budget", budget), ("threads", threads)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise TypeError(f"{name}: expected a count >= 0 (got {value!r})")
    lens = {"input_tokens": input_tokens, "output_tokens": output_tokens}
    for name, value in lens.items():
        if value is None:
            lens[name] = 0
        elif isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name}: expected a count >= 1 (got {value!r})")
    lengths = _length_classes(lengths, data_dir)
    shard_index, shard_count = _shard(shard)
    _limits(ttft_limit, tpot_limit, min_user_rate)
    raw = _core.search(_path("config", config), _counts("concurrency", concurrency),
                       _counts("chunks", chunks), [] if tp is None else _counts("tp", tp),
                       [] if ep is None else _counts("ep", ep), hardware, int(budget),
                       float(ttft_limit), float(tpot_limit), float(min_user_rate),
                       SEARCH_OBJECTIVES.index(objective), SERVE_RULES.index(rule),
                       SERVE_ARRIVALS.index(arrival), int(lens["input_tokens"]),
                       int(lens["output_tokens"]), bool(exhaustive), int(threads),
                       _search_overrides(overrides, shortcuts)
                       + _spec_overrides(spec_tokens, spec_accept, spec_draft, spec_mtp),
                       _path("data_dir", data_dir),
                       None if lengths is None else [(int(a), int(b), float(c))
                                                     for a, b, c in lengths],
                       shard_index, shard_count, None if pp is None else _counts("pp", pp),
                       bool(disagg), float(link_bandwidth), float(link_latency),
                       bool(layer_streamed), float(max_load))
    points, evaluated, pruned, not_served, invalid, first, hw_names, per_mode = raw

    def named(table):
        out = {}
        for i, col in enumerate(_SEARCH_COLUMNS):
            if col in ("hw0", "hw1"):
                k = int(col[2])
                if k < len(hw_names):
                    out[hw_names[k]] = table[:, i].copy()
            elif disagg or col not in _SEARCH_POOLS:
                out[col] = table[:, i].copy()
        for col in ("tp", "pp", "ep", "dp", "chunk") + (_SEARCH_POOLS if disagg else ()):
            out[col] = out[col].astype(np.int64)
        if disagg:
            out["layout"] = np.array([_core.layout(int(a), int(b), int(c), int(d)) for a, b, c, d
                                      in zip(out["prefill_instances"], out["prefill_tp"],
                                             out["decode_instances"], out["decode_tp"])],
                                     dtype=object)
        return out

    result = {"points": points, "evaluated": evaluated, "pruned": pruned,
              "not_served": not_served, "invalid_deployments": invalid,
              "first_invalid": first, "modes": {},
              "shard": (shard_index + 1, shard_count) if shard_count else (1, 1),
              "space": space}
    for mode, (found, binds, best, front) in zip(MODES, per_mode):
        b = named(np.frombuffer(best, dtype=np.float64).reshape(1, -1))
        result["modes"][mode] = {
            "found": found, "binds": binds if found else None,
            "best": {k: v[0] if k == "layout" else v[0].item() for k, v in b.items()}
                    if found else None,
            "front": named(np.frombuffer(front, dtype=np.float64)
                           .reshape(-1, len(_SEARCH_COLUMNS)))}
    return result

def search_mix(members, concurrency=tuple(2 ** i for i in range(11)), overrides=None, *,
               budget=0, tp=None, pp=None, ep=None, chunks=(512, 1024, 2048, 4096, 8192),
               hardware=(),
               ttft_limit=0.0, tpot_limit=0.0, min_user_rate=0.0, objective="device",
               rule="decode_first", arrival="staggered", exhaustive=False, threads=0,
               data_dir=None, disagg=False, link_bandwidth=0.0, link_latency=0.0,
               layer_streamed=True, max_load=0.9, **shortcuts):
    """The chip that serves a weighted mix of models and workloads best: `search --mix`.

    members: a sequence of (config, share) or (config, share, lengths): each member's scenario
    (its model; every member on the same accelerator), its share of the output tokens (> 0,
    normalised) and its lengths as serve() takes them (None: the scenario's own). Each member
    is searched as search() searches (the same space: tp, pp (None: one stage), ep, budget,
    chunks, concurrency; the same limits and objective; overrides apply to every member) at each
    point of the hardware axes, and the mix's objective there is
    1 / sum(share / member's objective): one chip design's fleet, each member on its own best
    deployment. disagg=True (the CLI's --disagg; needs a budget): each member's disaggregated
    deployments too, as search(disagg=True) has them (link_bandwidth, link_latency,
    layer_streamed, max_load alike), so a member's best may be a prefill and a decode pool.

    Returns a dict: points, evaluated, pruned, not_served, invalid_deployments (summed over
    the members' searches), hardware ({column: numpy array of the points' values}, the last
    axis fastest),
    and modes: {mode: {found, best (the best point's index, None when no point serves every
    member), mix_objective (numpy array per point, NaN where some member meets no limit),
    missing_member (int array: the first such member's index, -1 none), members (a list per
    member of dicts of numpy arrays per point: the candidate's keys as search()'s best, pp
    among them, NaN where the member found none; with disagg also layout (an object array:
    "P<x>xTP<p>+D<y>xTP<d>" or "colocated", None where the member found none), prefill_tp,
    prefill_instances, decode_tp and decode_instances (0 for a co-located best))}}. Raises
    Error for a load or model error,
    ValueError for a mix the library refuses (members on different accelerators: Error). Where
    the chip cannot be built (a hardware axis growing the die past the reticle, a mode's best at
    such a point) a UserWarning says so, as search()'s.
    """
    members = [tuple(m) for m in members]
    for m in members:
        if len(m) not in (2, 3) or not isinstance(m[0], (str, os.PathLike)):
            raise TypeError(f"members: expected (config, share) or (config, share, lengths) "
                            f"(got {m!r})")
    if objective not in SEARCH_OBJECTIVES:
        raise ValueError(f"objective: expected one of {', '.join(SEARCH_OBJECTIVES)} "
                         f"(got {objective!r})")
    if rule not in SERVE_RULES or arrival not in SERVE_ARRIVALS:
        raise ValueError(f"rule, arrival: expected one of {', '.join(SERVE_RULES)} and of "
                         f"{', '.join(SERVE_ARRIVALS)} (got {rule!r}, {arrival!r})")
    hardware = [hardware] if isinstance(hardware, str) else list(hardware)
    for name, value in (("budget", budget), ("threads", threads)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 0:
            raise TypeError(f"{name}: expected a count >= 0 (got {value!r})")
    lengths = []
    for m in members:
        lens = _length_classes(m[2] if len(m) == 3 else None, data_dir)
        lengths.append(None if lens is None else [(int(a), int(b), float(c))
                                                  for a, b, c in lens])
    _limits(ttft_limit, tpot_limit, min_user_rate)
    raw = _core.search_mix([_path("config", m[0]) for m in members],
                           [float(m[1]) for m in members], lengths,
                           _counts("concurrency", concurrency), _counts("chunks", chunks),
                           [] if tp is None else _counts("tp", tp),
                           [] if ep is None else _counts("ep", ep), hardware, int(budget),
                           float(ttft_limit), float(tpot_limit), float(min_user_rate),
                           SEARCH_OBJECTIVES.index(objective), SERVE_RULES.index(rule),
                           SERVE_ARRIVALS.index(arrival), bool(exhaustive), int(threads),
                           _search_overrides(overrides, shortcuts), _path("data_dir", data_dir),
                           None if pp is None else _counts("pp", pp), bool(disagg),
                           float(link_bandwidth), float(link_latency), bool(layer_streamed),
                           float(max_load))
    candidates, evaluated, pruned, not_served, invalid, hw_names, hw_values, per_mode = raw
    hw = np.frombuffer(hw_values, dtype=np.float64).reshape(-1, max(len(hw_names), 1))
    n_points = len(np.frombuffer(per_mode[0][2], dtype=np.float64))
    result = {"points": candidates, "evaluated": evaluated, "pruned": pruned,
              "not_served": not_served, "invalid_deployments": invalid,
              "hardware": {name: hw[:, a].copy() for a, name in enumerate(hw_names)},
              "modes": {}}
    keep = [i for i, c in enumerate(_SEARCH_COLUMNS)
            if c not in ("hw0", "hw1") + (() if disagg else _SEARCH_POOLS)]
    for mode, (found, best, obj, missing, rows) in zip(MODES, per_mode):
        table = np.frombuffer(rows, dtype=np.float64).reshape(n_points, len(members),
                                                              len(_SEARCH_COLUMNS))
        per_member = []
        for i in range(len(members)):
            got = table[:, i, _SEARCH_COLUMNS.index("objective")] > 0
            d = {}
            for j in keep:
                col = table[:, i, j].copy()
                col[~got] = np.nan
                d[_SEARCH_COLUMNS[j]] = col
            if disagg:
                d["layout"] = np.array(
                    [_core.layout(*(int(d[k][p]) for k in ("prefill_instances", "prefill_tp",
                                                           "decode_instances", "decode_tp")))
                     if got[p] else None for p in range(n_points)], dtype=object)
            per_member.append(d)
        result["modes"][mode] = {
            "found": found, "best": best if found else None,
            "mix_objective": np.frombuffer(obj, dtype=np.float64).copy(),
            "missing_member": np.frombuffer(missing, dtype=np.float64).astype(np.int64),
            "members": per_member}
    return result

def _limits(ttft_limit, tpot_limit, min_user_rate):
    """The search's limits, each finite and >= 0 (0: none): a NaN or negative one would read
    as none."""
    for name, value in (("ttft_limit", ttft_limit), ("tpot_limit", tpot_limit),
                        ("min_user_rate", min_user_rate)):
        v = float(value)
        if not (v >= 0 and math.isfinite(v)):
            raise ValueError(f"{name}: expected a finite number >= 0 (0: none; got {value!r})")


def _shard(shard):
    """(index, count) of _core.search from search()'s shard=(k, n) (None: the whole space)."""
    if shard is None:
        return 0, 0
    try:
        k, n = shard
    except (TypeError, ValueError):
        raise TypeError(f"shard: expected (k, n) (got {shard!r})") from None
    for v in (k, n):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)):
            raise TypeError(f"shard: expected whole counts (got {shard!r})")
    if not 1 <= k <= n:
        raise ValueError(f"shard: expected 1 <= k <= n (got {shard!r})")
    return int(k) - 1, int(n)


def _front_order(front, order):
    """The indices of a front's rows by falling per-user rate, then falling objective, then
    `order` (the space's order), as pm_search_merge sorts them."""
    return np.lexsort((order, -front["objective"], -front["tokens_per_s_per_user"]))


def search_merge(results):
    """The whole search's answer from the results of search(..., shard=(k, n)) for k = 1..n,
    given in shard order, as pm_search_merge merges the CLI's shards: the counts added, the
    first invalid deployment's error kept, each mode's best the first of the highest objective
    (then tokens/s per user) in the space's order (with the limit that binds it), each front
    the Pareto front of the
    shards' fronts (ties broken by the space's order, so the first of equals is kept).
    Refuses (ValueError) shards that are not 1/n to n/n once each in order, or not of one
    search (their arguments differ)."""
    results = list(results)
    if not results:
        raise ValueError("search_merge: expected the results of one or more shards")
    # The shards of one search, each once, in order (as the CLI's merge checks its files).
    for i, r in enumerate(results):
        if not isinstance(r, dict) or "shard" not in r or "space" not in r:
            raise ValueError(f"search_merge: result {i + 1} is not a search() result")
    n = results[0]["shard"][1]
    got = [r["shard"] for r in results]
    if got != [(k, n) for k in range(1, n + 1)]:
        raise ValueError(f"search_merge: expected the shards 1/{n} to {n}/{n} once each, in "
                         f"order (got {', '.join(f'{k}/{m}' for k, m in got)})")
    for k, r in enumerate(results[1:], 2):
        if r["space"] != results[0]["space"]:
            raise ValueError(f"search_merge: shard {k}/{n} is of another search than shard "
                             f"1/{n} (its arguments differ)")
    out = {k: sum(r[k] for r in results) for k in ("points", "evaluated", "pruned",
                                                    "not_served", "invalid_deployments")}
    out["shard"] = (1, 1)
    out["space"] = results[0]["space"]
    out["first_invalid"] = next((r["first_invalid"] for r in results if r["first_invalid"]),
                                results[0]["first_invalid"])
    out["modes"] = {}
    for mode in MODES:
        parts = [r["modes"][mode] for r in results]
        best = None
        for p in parts:
            key = (lambda q: (q["best"]["objective"], q["best"]["tokens_per_s_per_user"]))
            if p["found"] and (best is None or key(p) > key(best)):
                best = p
        cols = parts[0]["front"].keys()
        front = {c: np.concatenate([p["front"][c] for p in parts]) for c in cols}
        order = np.arange(len(front["objective"]))  # shard order, then each front's own
        keep, top = [], -np.inf
        for i in _front_order(front, order):
            if front["objective"][i] > top:
                top = front["objective"][i]
                keep.append(i)
        keep = np.array(keep[::-1], dtype=np.int64)
        out["modes"][mode] = {
            "found": best is not None, "binds": best["binds"] if best else None,
            "best": best["best"] if best else None,
            "front": {c: v[keep] for c, v in front.items()}}
    return out


#: The pools of a disaggregated deployment, in the library's order (pm_disagg_pool).
DISAGG_POOLS = ("prefill", "decode")


def _disagg_workload(input_tokens, output_tokens, rate, max_instances, max_load, link_bandwidth,
                     link_latency, layer_streamed, instances, ttft_limit, tpot_limit):
    """The workload tuple of _core.disagg, its values checked."""
    for name, value in (("input_tokens", input_tokens), ("output_tokens", output_tokens)):
        if value is not None and (isinstance(value, bool) or
                                  not isinstance(value, (int, np.integer)) or value < 1):
            raise ValueError(f"{name}: expected a count >= 1 or None (got {value!r})")
    if instances is None:
        instances = (0, 0)
    if isinstance(instances, (str, bytes)) or not hasattr(instances, "__len__") or \
            len(instances) != 2 or \
            any(isinstance(v, bool) or not isinstance(v, (int, np.integer)) for v in instances) or \
            (not all(v >= 1 for v in instances) and tuple(instances) != (0, 0)):
        raise ValueError(f"instances: expected (prefill, decode) counts >= 1 (got {instances!r})")
    _whole("max_instances", max_instances, 1)
    if not isinstance(layer_streamed, (bool, np.bool_)):
        raise TypeError(f"layer_streamed: expected True (streamed layer by layer) or False "
                        f"(sent whole) (got {layer_streamed!r})")
    # None is the cluster's link (NaN below); a NaN of the caller's is no link at all
    for name, value in (("link_bandwidth", link_bandwidth), ("link_latency", link_latency)):
        if value is not None and math.isnan(float(value)):
            raise ValueError(f"{name}: expected a number or None for the prefill cluster's "
                             f"(got {value!r})")
    return (int(input_tokens or 0), int(output_tokens or 0), float(rate or 0.0),
            int(max_instances), float(max_load),
            math.nan if link_bandwidth is None else float(link_bandwidth),
            math.nan if link_latency is None else float(link_latency),
            bool(layer_streamed), int(instances[0]), int(instances[1]), float(ttft_limit),
            float(tpot_limit))


def disagg(prefill, decode, concurrency=(0,), *, prefill_overrides=None,
           decode_overrides=None, input_tokens=None, output_tokens=None, rate=None,
           max_instances=64, max_load=0.9, link_bandwidth=None, link_latency=None,
           layer_streamed=True, instances=None, ttft_limit=0.0, tpot_limit=0.0, chunk=None,
           data_dir=None, spec_tokens=None, spec_accept=None, spec_draft=None, spec_mtp=None):
    """A disaggregated deployment: the `disagg` command's numbers (pm_disagg_compute), beside
    the co-located deployment on each pool's chip (pm_disagg_colocated).

    prefill and decode: the pools' scenarios (names or paths; the same model and KV datatype:
    no default, as the CLI's --prefill-config and --decode-config), each with its overrides (as
    estimate()'s). concurrency: sequences per decode instance at full load, a sequence (0: the
    most its HBM holds). input_tokens and output_tokens (None: the prefill scenario's prompt
    and decode steps). rate (requests/s): the fewest instances serving it; None: the instance
    ratio of the most throughput per device (up to max_instances per pool); instances=(x, y):
    fixed counts. max_load: a prefill instance's most load (0.9, aiconfigurator).
    link_bandwidth (bytes/s per prefill device) and link_latency (s): the KV link between the
    pools (None: the prefill cluster's inter-node link where it names one, else
    inference-sim's 25 GB/s and 50 us, as the CLI's defaults); layer_streamed or whole.
    ttft_limit, tpot_limit (s, 0: none) decide goodput. chunk: the co-located deployments'
    tokens per step (None: 2048, the CLI's --chunk default). spec_tokens, spec_accept,
    spec_draft, spec_mtp: speculative decoding in both pools, as estimate()'s (the decode pool
    verifies k + 1 tokens a step beside the draft's steps, the prefill pool computes the draft's
    cache of the prompt too; the pools must speculate alike).

    Returns a dict of numpy arrays named as the disagg CSV's columns (docs/output-format.md):
    kv_bytes_per_request, transfer_bytes_per_device, decode_concurrency, ..., then per mode
    MODE_ttft_s, MODE_tpot_s, ..., MODE_tokens_per_s_per_mm2, ..., MODE_saturated, then
    colocated_CHIP_chip_MODE_FIELD (CHIP prefill or decode; FIELD tokens_per_s_per_device,
    tokens_per_s_per_user, tokens_per_s_per_mm2, ttft_s, tpot_s; NaN where the co-located
    deployment does not fit). Raises Error for a load or model error (its path names the key:
    "decode.model", ...).
    """
    conc = _counts("concurrency", concurrency, lo=0)  # whole sequences, as the CLI's
    if not conc:
        raise ValueError(f"concurrency: expected one or more counts (got {concurrency!r})")
    chunk = 0 if chunk is None else _whole("chunk", chunk, lo=1)
    w = _disagg_workload(input_tokens, output_tokens, rate, max_instances, max_load,
                         link_bandwidth, link_latency, layer_streamed, instances, ttft_limit,
                         tpot_limit)
    sp = _spec_overrides(spec_tokens, spec_accept, spec_draft, spec_mtp)
    names, data = _core.disagg(_path("prefill", prefill), _path("decode", decode),
                               [float(c) for c in conc], w, _overrides(prefill_overrides, {}) + sp,
                               _overrides(decode_overrides, {}) + sp, _path("data_dir", data_dir),
                               chunk)
    table = np.frombuffer(data, dtype=np.float64).reshape(-1, len(names))
    return {name: table[:, i].copy() for i, name in enumerate(names)}


def disagg_codesign(prefill, decode, pool="decode", spec="l2=8MiB:256MiB:x2",
                    decode_concurrency=0, *, prefill_overrides=None,
                    decode_overrides=None, input_tokens=None, output_tokens=None, rate=None,
                    max_instances=64, max_load=0.9, link_bandwidth=None, link_latency=None,
                    layer_streamed=True, instances=None, ttft_limit=0.0, tpot_limit=0.0,
                    data_dir=None, spec_tokens=None, spec_accept=None, spec_draft=None,
                    spec_mtp=None):
    """Co-design (pm_disagg_codesign): one pool's chip swept along spec ("l2=...", "l2_bw=...",
    "compute=...", "hbm_bw=..."), the other pool as given; the other arguments as disagg().
    A die over the reticle at some of the axis's values is said (a UserWarning), and so is a
    best over the reticle or with more bandwidth than the chip's (hbm_bw and l2_bw move no die
    area: the density took that bandwidth as free).

    Returns a dict: "column" (the axis's column, e.g. l2_capacity_MiB), "values" (numpy, in its
    unit), "best" (the index of the pool's most PRESERVE tokens/s per mm2, None when no value
    meets the limits, as search()'s best; the CLI's JSON null) and
    "points" (disagg()'s columns, a row per value; NaN where the point makes no deployment).
    """
    if pool not in DISAGG_POOLS:
        raise ValueError(f"pool: expected one of {', '.join(DISAGG_POOLS)} (got {pool!r})")
    w = _disagg_workload(input_tokens, output_tokens, rate, max_instances, max_load,
                         link_bandwidth, link_latency, layer_streamed, instances, ttft_limit,
                         tpot_limit)
    sp = _spec_overrides(spec_tokens, spec_accept, spec_draft, spec_mtp)
    column, values, best, names, data = _core.disagg_codesign(
        _path("prefill", prefill), _path("decode", decode), DISAGG_POOLS.index(pool), spec, w,
        float(decode_concurrency), _overrides(prefill_overrides, {}) + sp,
        _overrides(decode_overrides, {}) + sp, _path("data_dir", data_dir))
    table = np.frombuffer(data, dtype=np.float64).reshape(-1, len(names))
    return {"column": column, "values": np.frombuffer(values, dtype=np.float64).copy(),
            "best": best if best >= 0 else None,
            "points": {name: table[:, i].copy() for i, name in enumerate(names)}}


#: The objectives optimize() takes (pm_objective), in the library's order.
OBJECTIVES = ("mm2", "usd", "joule")
#: The modes of every result, in the library's order.
MODES = ("serial", "fused", "preserve")


def optimize(config="llama70b", axis="l2", overrides=None, *, objective="mm2", data_dir=None,
             **shortcuts):
    """Per mode, the value of one design axis that maximises an objective: the `--optimize`
    command's search (a continuous axis: a log grid of 1 % steps at most (at least 33 points:
    pm_optimize_grid_points), then GSL's Brent minimiser to
    1e-3; the counts pp, dp and split: every value, ties to the smaller value).

    axis: "l2", "l2_bw", "compute", "hbm_bw" or "link_bw" (the axis's default sweep range),
    "pp", "dp" or "split" (the axis's own range in the scenario), or "AXIS=LO:HI" as
    --optimize takes it ("l2=1MiB:1024MiB", "split=1:20"; bare numbers in the column's unit).
    objective: "mm2" (tokens/s per mm2, the density), "usd" (tokens/s per dollar of the
    devices) or "joule" (tokens per joule). overrides, data_dir and the shortcuts as for
    estimate().

    Returns the --optimize JSON's keys (docs/output-format.md): axis, column, objective,
    objective_column, lo, hi, evaluations, fits_hbm, and modes: {mode: {best, objective,
    bracket_lo, bracket_hi, brent_iterations, at_edge ("lo", "hi" or None)}}, values in the
    column's unit; for a count also tie_rel_tol, skipped, first_skipped ({value, error} or
    None) and each mode's ties and fits_hbm. A best at the range's end with the objective still
    rising, a die over the reticle, a tie, values refused or a best that does not fit the HBM
    is a UserWarning. Raises Error for a bad axis or a load or model error.
    """
    if objective not in OBJECTIVES:
        raise ValueError(f"objective: expected one of {', '.join(OBJECTIVES)} (got {objective!r})")
    if not isinstance(axis, str):
        raise TypeError(f"axis: expected a string such as 'l2' or 'l2=1MiB:1024MiB' (got {axis!r})")
    goal = OBJECTIVES.index(objective)
    name, column, objective_column, lo, hi, evaluations, fits, modes, count = _core.optimize(
        _path("config", config), axis, goal, _overrides(overrides, shortcuts),
        _path("data_dir", data_dir))
    keys = ("best", "objective", "bracket_lo", "bracket_hi", "brent_iterations", "at_edge")
    if count is not None:
        keys += ("ties", "fits_hbm")
    out = {"axis": name, "column": column, "objective": objective,
           "objective_column": objective_column, "lo": lo, "hi": hi, "evaluations": evaluations,
           "fits_hbm": fits}
    if count is not None:
        tie, skipped, value, error = count
        out.update(tie_rel_tol=tie, skipped=skipped,
                   first_skipped=None if value is None else {"value": value, "error": error})
    out["modes"] = {m: dict(zip(keys, v)) for m, v in zip(MODES, modes)}
    return out


def footprint(config="llama70b", devices=(1, 2, 4, 8, 16), overrides=None, *, ep=0,
              data_dir=None, **shortcuts):
    """What one layer takes per device against the device count: the `footprint` command's
    rows (the paper's Fig 2), at the whole sequence cached.

    devices: the device counts (--devices-list); ep: the expert-parallel degree of every row
    (--ep; 0: experts over every device where the scenario uses expert parallelism and they
    divide, else tensor-parallel). overrides, data_dir and the shortcuts as for estimate().

    Returns a dict of numpy arrays named as the footprint JSON's row keys: devices,
    attn_weight_bytes, kv_bytes, attn_weight_plus_kv_bytes, mlp_weight_bytes, kv_local_bytes,
    ideal_split (bools), and for a MoE model expert_parallel, moe_weight_bytes, moe_read_bytes,
    experts_read_per_step. Raises Error for an ep a row cannot split, or a load error.
    """
    if isinstance(ep, bool) or not isinstance(ep, (int, np.integer)) or ep < 0:
        raise ValueError(f"ep: expected a count >= 0 (got {ep!r})")
    counts = np.atleast_1d(np.asarray(devices))
    if counts.ndim != 1 or not counts.size or counts.dtype == bool or not np.issubdtype(
            counts.dtype, np.integer):
        raise TypeError(f"devices: expected device counts (got {devices!r})")
    moe, rows = _core.footprint(_path("config", config), [int(d) for d in counts], int(ep),
                                _overrides(overrides, shortcuts), _path("data_dir", data_dir))
    names = ("devices", "attn_weight_bytes", "kv_bytes", "mlp_weight_bytes", "kv_local_bytes",
             "expert_parallel", "moe_weight_bytes", "moe_read_bytes", "experts_read_per_step",
             "ideal_split")
    out = {name: np.array([r[i] for r in rows]) for i, name in enumerate(names)}
    out["attn_weight_plus_kv_bytes"] = out["attn_weight_bytes"] + out["kv_bytes"]
    if not moe:
        for name in ("expert_parallel", "moe_weight_bytes", "moe_read_bytes",
                     "experts_read_per_step"):
            del out[name]
    return out


#: The phases a step view (explain, timeline) takes (pm_phase), in the library's order.
PHASES = ("decode", "prefill")


def _phase_context(phase, context):
    """The library's phase and context (-1: the phase's default) of a view's arguments."""
    if phase not in PHASES:
        raise ValueError(f"phase: expected one of {', '.join(PHASES)} (got {phase!r})")
    if context is None:
        return PHASES.index(phase), -1
    if isinstance(context, bool) or not isinstance(context, (int, np.integer)):
        raise TypeError(f"context: expected a token count (got {context!r})")
    if context < 0:
        raise ValueError(f"context: expected a token count >= 0 (got {context!r})")
    return PHASES.index(phase), int(context)


def _columns(rows, names, dtypes):
    """A dict of numpy arrays, one per name, from rows of tuples (empty arrays of dtypes when
    there are no rows)."""
    return {name: np.array([r[i] for r in rows], dtype=dtype)
            for i, (name, dtype) in enumerate(zip(names, dtypes))}


def explain(config="llama70b", overrides=None, *, phase="decode", context=None, data_dir=None,
            stage=0, **shortcuts):
    """What PRESERVE prefetches under each collective and why each window stops: the `explain`
    command's report (`preserve-model explain --format json`).

    phase: "decode" or "prefill"; context: the cached tokens (decode) or the prompt (prefill),
    None for the tool's default (seq_len - 1, or the prompt). stage: the pipeline stage shown
    (0-based; the tool's --stage), at one micro-batch, its receive's window first. overrides,
    data_dir and the shortcuts as for estimate(). A step whose KV cache outgrows the HBM is a
    UserWarning.

    Returns the explain JSON's keys: tool, scenario, accelerator, phase, context,
    l2_window_bytes, stage, stages, first_layer, stage_layers, layers_shown,
    last_shown_is_layer, and windows, a dict of numpy arrays with one element per collective of
    the preserve graph shown: collective, kind ("allreduce", "all_to_all", "reduce_scatter",
    "all_gather", "receive"), comm_bytes, collective_s, window_bytes, stopped_at (the node's
    name, None
    where the window ended at the next collective), stopped_bytes (NaN there), stopped_routed,
    prefetch_busy_s, hidden (bools), and prefetches, a list (one per window) of dicts of numpy
    arrays consumer, what ("weights", "kv_cache", "routed_experts") and bytes. Raises Error
    for a load or model error.
    """
    ph, ctx = _phase_context(phase, context)
    scenario, accelerator, ctx, cap, shown, last, windows, st = _core.explain(
        _path("config", config), ph, ctx, _overrides(overrides, shortcuts),
        _path("data_dir", data_dir), _whole("stage", stage))
    names = ("collective", "kind", "comm_bytes", "collective_s", "prefetches", "window_bytes",
             "stopped_at", "stopped_bytes", "stopped_routed", "prefetch_busy_s", "hidden")
    dtypes = (str, str, float, float, object, float, object, float, bool, float, bool)
    rows = [w[:7] + (np.nan if w[7] is None else w[7],) + w[8:] for w in windows]
    out = _columns(rows, names, dtypes)
    out["prefetches"] = [_columns(w[4], ("consumer", "what", "bytes"), (str, str, float))
                         for w in windows]
    return {"tool": f"preserve-model {version()}", "scenario": scenario,
            "accelerator": accelerator, "phase": phase, "context": ctx, "l2_window_bytes": cap,
            "stage": st[0], "stages": st[1], "first_layer": st[2], "stage_layers": st[3],
            "layers_shown": shown, "last_shown_is_layer": last, "windows": out}


def timeline(config="llama70b", overrides=None, *, mode="preserve", compare=False,
             phase="decode", context=None, data_dir=None, stage=0, **shortcuts):
    """The two-stream schedule of one decoder layer (standing for every layer of its class):
    the `timeline` command's report (`preserve-model timeline --format json`).

    mode: "serial", "fused" or "preserve"; compare=True gives serial and preserve (the tool's
    --compare; mode is then not used). phase, context and stage as for explain() (a stage that
    waits on its input shows its first layer from the receive on); overrides, data_dir and the
    shortcuts as for estimate().

    Returns the timeline JSON's keys: tool, scenario, model, accelerator, devices, phase,
    context, and modes, a list of one dict per mode: mode, stage, stages, layer (the layer
    shown), layer_s (the layer's time) and ops, a
    dict of numpy arrays with one element per operation that overlaps the layer: lane_index,
    lane ("compute", "collective", "prefetch"), node, kind, start_s and end_s (seconds from the
    layer's start; a prefetch issued under the previous layer starts before 0) and bytes.
    Raises Error for a load or model error.
    """
    if mode not in MODES:
        raise ValueError(f"mode: expected one of {', '.join(MODES)} (got {mode!r})")
    ph, ctx = _phase_context(phase, context)
    modes = ("serial", "preserve") if compare else (mode,)
    scenario, model, accelerator, devices, ctx, shown, stages = _core.timeline(
        _path("config", config), [MODES.index(m) for m in modes], ph, ctx,
        _overrides(overrides, shortcuts), _path("data_dir", data_dir),
        _whole("stage", stage))
    names = ("lane_index", "lane", "node", "kind", "start_s", "end_s", "bytes")
    dtypes = (int, str, str, str, float, float, float)
    return {"tool": f"preserve-model {version()}", "scenario": scenario, "model": model,
            "accelerator": accelerator, "devices": devices, "phase": phase, "context": ctx,
            "modes": [{"mode": m, "stage": stage, "stages": stages, "layer": layer,
                       "layer_s": layer_s, "ops": _columns(ops, names, dtypes)}
                      for m, layer_s, ops, layer in shown]}


class StepModel(_core.StepModel):
    """One scenario and mode prepared for many decode-step times (a serving simulator's query):
    preparing costs about one estimate, then a step costs well under a microsecond.

    StepModel(config="llama70b", mode="preserve", overrides=None, data_dir=None, **shortcuts)
    with overrides and shortcuts as for estimate(). decode_time(context_len) gives the seconds
    of one decode step with context_len cached tokens; decode_times(array) a numpy array.
    A time is given for any context, also one whose KV cache would not fit the HBM: max_context
    (the longest that fits, -1 when the weights alone do not, None when all do) and
    fits_hbm(context_len) say which do, by the rule of the estimate's fits_hbm; a UserWarning
    says so when the weights alone do not fit (at construction) and when a call's context
    does not (once per call).
    """

    def __init__(self, config="llama70b", mode="preserve", overrides=None, *, data_dir=None,
                 **shortcuts):
        super().__init__(_path("config", config), mode, _overrides(overrides, shortcuts),
                         _path("data_dir", data_dir))
        self._mode = mode

    @property
    def mode(self):
        """The mode the steps are timed in (read-only: a new mode is a new StepModel)."""
        return self._mode

    def decode_times(self, contexts):
        """The decode_time of each context length, as a numpy array of the same shape."""
        if np.ma.isMaskedArray(contexts):
            raise TypeError("contexts: a masked array (its masked values would be used)")
        arr = np.asarray(contexts)
        if arr.size and not np.issubdtype(arr.dtype, np.integer):
            raise TypeError(f"contexts: expected integers (got an array of {arr.dtype})")
        flat = super().decode_times(arr.ravel().tolist())
        return np.array(flat, dtype=np.float64).reshape(arr.shape)

    def fits_hbm(self, context_len):
        """Whether the weights and the KV cache at context_len fit the usable HBM."""
        if isinstance(context_len, bool) or not isinstance(context_len, (int, np.integer)):
            raise TypeError(f"context_len: expected an integer (got {context_len!r})")
        if context_len < 0:
            raise ValueError(f"context_len: expected >= 0 (got {context_len})")
        n = self.max_context
        return n is None or context_len <= n

