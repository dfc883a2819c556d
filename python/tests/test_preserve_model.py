"""Tests of the Python module against the tool: the same report, the same sweep columns and
values, the step model against the estimate, and errors that say where and what.

meson test runs them with PYTHONPATH at the build's python/ folder, PRESERVE_MODEL_TOOL the
build's preserve-model and PRESERVE_MODEL_SOURCE the source tree.
"""

import csv
import io
import json
import math
import os
import subprocess
import warnings

import numpy as np
import pytest

import preserve_model as pm
from preserve_model import _core

TOOL = os.environ.get("PRESERVE_MODEL_TOOL", "preserve-model")
SOURCE = os.environ.get("PRESERVE_MODEL_SOURCE", os.path.join(os.path.dirname(__file__), "..", ".."))
DATA = os.path.join(SOURCE, "data")
# A model given one multi-token-prediction layer (num_nextn_predict_layers): the what-if the
# MTP tests of a Llama need (their checkpoints have none, and method "mtp" is refused there).
MTP1 = {"model.num_nextn_predict_layers": 1}


def tool(*args):
    """stdout of the tool run over the source tree's data."""
    env = dict(os.environ, PRESERVE_MODEL_DATA=DATA)
    return subprocess.run([TOOL, *args], env=env, check=True, capture_output=True, text=True).stdout


def tool_csv(*args):
    """The tool's CSV without its # lines: (header, rows)."""
    lines = [l for l in tool(*args).splitlines() if l and not l.startswith("#")]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    return rows[0], rows[1:]


# ---------------------------------------------------------------- estimate

CASES = [
    ("llama70b", {}, {}, []),
    ("llama8b", {"devices": 8}, {}, ["--devices", "8"]),
    ("qwen2-7b", {"batch": 16, "seq": 4096}, {}, ["--batch", "16", "--seq", "4096"]),
    ("llama70b", {"accelerator": "h100-sxm"}, {}, ["--accelerator", "h100-sxm"]),
    ("paper-dse", {}, {"accelerator.l2_capacity_MiB": 104},
     ["--set", "accelerator.l2_capacity_MiB=104"]),
    ("llama70b", {"seq": "32Ki"}, {"workload.batch": 2}, ["--seq", "32Ki", "--set", "workload.batch=2"]),
]


@pytest.mark.parametrize("config,shortcuts,overrides,args", CASES)
def test_estimate_is_the_tools_json(config, shortcuts, overrides, args):
    want = tool("--config", config, "--format", "json", *args)
    got = pm.estimate(config, overrides, data_dir=DATA, **shortcuts)
    assert got == json.loads(want)
    # the text itself, byte for byte: the library writes the tool's report
    ov = pm._overrides(overrides, shortcuts)
    assert _core.estimate_json(config, ov, DATA) == want


INT4 = {"model": "qwen2.5-7b-instruct-gptq-int4", "accelerator": "a10", "cluster": "pcie4-a10",
        "cluster.devices": 1, "workload.weight_dtype": "int4", "workload.act_dtype": "fp16",
        "workload.kv_dtype": "fp16", "workload.batch": 1}


def test_int4_weights_through_python():
    # GPTQ int4 (issue 45 item 5): the report is the tool's, and the weights by hand: 28 layers
    # x (233046016 x 0.515625 + 9216 B of QKV bias) + the fp16 embedding and LM head 2 x
    # 152064 x 3584 x 2 B = 5544849408 B a device
    args = [a for k, v in INT4.items() for a in ("--set", f"{k}={v}")]
    got = pm.estimate("llama70b-h100", INT4, data_dir=DATA)
    assert got == json.loads(tool("--config", "llama70b-h100", "--format", "json", *args))
    assert got["memory"]["weight_bytes_per_device"] == 5544849408
    # int4 is weights only: a KV cache in int4 is refused, naming the key
    with pytest.raises(pm.Error) as e:
        pm.estimate("llama70b-h100", dict(INT4, **{"workload.kv_dtype": "int4"}), data_dir=DATA)
    assert "kv_dtype" in str(e.value) and e.value.status == "PM_ERR_UNSUPPORTED"


def test_estimate_has_the_report_keys():
    r = pm.estimate("llama70b")
    assert set(r) == {"tool", "scenario", "inputs", "tpot_context_len", "pipeline", "modes",
                      "speedup", "shard", "memory", "moe", "area", "cost", "power", "warnings"}
    # the scenario as shipped warns of nothing; its package (issue 41) is a 665.6 mm2 compute
    # die beside a 52.2 mm2 I/O die, both under the reticle
    assert r["warnings"] == []
    assert not r["area"]["over_reticle"] and r["area"]["reticle_mm2"] == 858
    assert r["area"]["compute_dies"] == 1 and r["area"]["io_dies"] == 1
    assert r["area"]["compute_die_mm2"] == pytest.approx(665.6068, abs=1e-3)
    # a what-if over it is warned of: 0.34185 x 800 + 1.3325 x 512 + 14.9617 x 4 + 76.44 mm2
    big = pm.estimate("llama70b", {"accelerator.l2_capacity_MiB": 512})
    assert big["area"]["over_reticle"]
    assert big["area"]["largest_die_mm2"] == pytest.approx(1092.0068, abs=1e-3)
    assert any("over the 858 mm2 reticle" in w for w in big["warnings"])
    assert set(r["modes"]) == {"serial", "fused", "preserve"}
    assert r["inputs"]["batch"] == 4 and r["inputs"]["seq_len"] == 16384
    serial, preserve = r["modes"]["serial"], r["modes"]["preserve"]
    # every digit in the report (pm_json_number): the ratio of the printed times, to rounding
    assert r["speedup"]["preserve_vs_serial"] == pytest.approx(
        serial["request_s"] / preserve["request_s"], rel=1e-14)
    # byte counts are exact integers: llama3-70b's int8 KV cache at 16384 tokens, batch 4, on
    # 4 devices: 80 layers x 2 KV heads x 128 x 2 (K, V) x 4 x 16384 = 2684354560 bytes
    assert r["memory"]["kv_bytes_per_device"] == 80 * 2 * 128 * 2 * 4 * 16384
    # no runtime: the weights and KV may take the Ascend 910B's whole 64 GiB
    assert r["memory"]["hbm_usable_bytes_per_device"] == 64 * 2**30
    assert r["memory"]["allreduces_per_step"] == 2 * 80  # attention's and MLP's, per layer


def test_energy_per_token_has_one_name():
    """The energy per generated token is J_per_token in the report, MODE_J_per_token in the
    sweep's and the serve command's columns (issue 48: the report said energy_per_token_J)."""
    r = pm.estimate("llama70b")
    s = pm.sweep("llama70b", batch=[4])
    for m in pm.MODES:
        assert "energy_per_token_J" not in r["modes"][m]
        assert r["modes"][m]["J_per_token"] == s[f"{m}_J_per_token"][0], m
        assert r["modes"][m]["tokens_per_J"] == s[f"{m}_tokens_per_J"][0], m
    assert "preserve_J_per_token" in pm.serve("llama70b", concurrency=[4])


def test_prefill_power_and_clock_share():
    """The prefill's own power and the clock share the board power allows it (issue 47): 16
    prompts of 1,024 tokens of Llama-3-8B on one H100 draw more than its 700 W at the 45 nm MAC
    energies, so the share is below 1 and a warning says so; a 4-token prompt is within it."""
    base = {"workload.weight_dtype": "bf16", "workload.act_dtype": "bf16",
            "workload.kv_dtype": "bf16", "cluster": "nvlink4-nvswitch"}
    big = pm.estimate("llama8b", dict(base, **{"workload.prefill_frac": 1024 / 1025}),
                      accelerator="h100-sxm", devices=1, batch=16, seq=1025)
    for m in pm.MODES:
        r = big["modes"][m]
        assert r["prefill_power_W"] > 700
        assert 0.5 < r["prefill_clock_frac"] < 1
    assert any("the prefill's average power per device" in w for w in big["warnings"])
    small = pm.estimate("llama8b", dict(base, **{"workload.prefill_frac": 4 / 1024}),
                        accelerator="h100-sxm", devices=1, batch=1, seq=1024)
    assert all(small["modes"][m]["prefill_clock_frac"] == 1 for m in pm.MODES)


def test_a_cluster_of_another_platform_warns():
    with pytest.warns(UserWarning, match="cluster hccs-full-mesh is of platform ascend.*"
                      "its own cluster: nvlink4-nvswitch"):
        r = pm.estimate("llama70b", accelerator="h100-sxm")
    # the report carries it too, for a program that reads no stderr
    assert len(r["warnings"]) == 1 and r["warnings"][0].startswith(
        "cluster hccs-full-mesh is of platform ascend")


def test_the_tools_other_warnings_are_python_warnings():
    # The CLI's list (pm_scenario_warning): a checkpoint's stated weights that the run does not
    # model (gpt-oss's MXFP4 experts at the scenario's int8), and a sequence beyond the
    # model's trained context.
    gpt_oss = os.path.join(SOURCE, "tests", "configs", "hf", "gpt-oss-20b-config.json")
    with pytest.warns(UserWarning, match=r'weights are 4-bit floats .*quant_method "mxfp4"'
                      r".*modelled as int8.*below 8 bits only int4 integer weights are modelled"):
        pm.estimate("llama70b", model=gpt_oss, accelerator="h100-sxm",
                    cluster="nvlink4-nvswitch", devices=4)
    with pytest.warns(UserWarning, match=r"exceeds the model's max_position_embeddings 131072 "
                      r"\(model gpt-oss-20b-config\)"):
        pm.estimate("llama70b", model=gpt_oss, accelerator="h100-sxm",
                    cluster="nvlink4-nvswitch", devices=4, seq="256k")
    with pytest.warns(UserWarning, match="the seq axis reaches 262144 tokens"):
        pm.sweep("llama70b", {"cluster.devices": 4}, model=gpt_oss, accelerator="h100-sxm",
                 cluster="nvlink4-nvswitch", seq=[65536, 262144])


def test_a_sweep_warns_of_what_it_evaluates():
    # The scenario's 16K beyond a 4K context (phi3-medium) is not evaluated by a seq axis within
    # it: the sweep's list (pm_sweep_warning) leaves it out, and keeps its split over 4 devices.
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        pm.sweep("phi3-medium", seq=[1024, 2048])
    texts = [str(w.message) for w in got]
    assert not any("max_position_embeddings" in t for t in texts), texts
    assert any("does not split evenly over 4 devices" in t for t in texts), texts
    with pytest.warns(UserWarning, match="exceeds the model's max_position_embeddings 4096"):
        pm.sweep("phi3-medium", l2=[32, 64])


def test_an_estimate_beyond_the_hbm_warns_and_says_so_in_its_report():
    # llama3-70b at 1M tokens, batch 4, 4 devices: 80 x 2 x 2 x 128 x 4 x 2^20 B = 160 GiB of
    # KV beside 16.4 GiB of weights, against the Ascend 910B's 64 GiB.
    with pytest.warns(UserWarning, match=r"the weights and KV cache per device \(16.4 GiB \+ "
                      r"160 GiB\) exceed its 64 GiB of usable HBM"):
        r = pm.estimate("llama70b", seq=1048576)
    assert r["memory"]["fits_hbm"] is False
    assert r["warnings"] and r["warnings"][-1].startswith("the weights and KV cache per device")


def test_a_sweep_warns_of_what_its_arrays_hold():
    # Once done, as the tool says it: the points that are not valid (llama3-70b has 64 heads)
    # and those whose weights and KV cache exceed the HBM (1M tokens: 160 GiB of KV per device
    # beside 16.4 GiB of weights, against 64 GiB).
    with pytest.warns(UserWarning, match=r"1 of 2 points are not valid .*the first at devices "
                      r"128: .*128 devices exceed the model's 64 attention heads"):
        s = pm.sweep("llama70b", devices=[4, 128])
    assert s["error"][1] != "" and np.isnan(s["preserve_request_s"][1])
    with pytest.warns(UserWarning, match=r"fits_hbm 0 at 1 of 2 points \(the first at seq_len "
                      r"1048576\)"):
        s = pm.sweep("llama70b", seq=[16384, 1048576])
    # a flag is a bool array, as estimate()'s fits_hbm is a bool (issue 48: it was 1.0 / 0.0)
    assert s["fits_hbm"].dtype == np.bool_ and list(s["fits_hbm"]) == [True, False]
    with pytest.warns(UserWarning):
        bad = pm.sweep("llama70b", devices=[4, 128])
    assert list(bad["fits_hbm"]) == [True, False]  # not valid: False, its error says why
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        pm.sweep("llama70b", seq=[16384, 32768])
    assert not any("fits_hbm" in str(w.message) for w in got)


def test_sweep_takes_the_shortcuts_that_are_not_axes():
    # model, accelerator and cluster are estimate()'s shortcuts; the rest name axes.
    a = pm.sweep("llama70b", model="mixtral-8x7b", accelerator="h100-sxm",
                 cluster="nvlink4-nvswitch", l2=[32, 64])
    b = pm.sweep("llama70b", {"model": "mixtral-8x7b", "accelerator": "h100-sxm",
                              "cluster": "nvlink4-nvswitch"}, l2=[32, 64])
    assert np.array_equal(a["preserve_request_s"], b["preserve_request_s"])
    assert not np.array_equal(a["preserve_request_s"],
                              pm.sweep("llama70b", accelerator="h100-sxm",
                                       cluster="nvlink4-nvswitch", l2=[32, 64])["preserve_request_s"])
    assert pm.sweep("llama70b", ep=[1, 2], model="mixtral-8x7b")["expert_parallel"].tolist() == [1, 2]
    with pytest.raises(ValueError, match=r"expected 1 to 4 axes \(got 5\)"):
        pm.sweep("llama70b", l2=True, seq=True, batch=True, devices=True, hbm_bw=True)


def test_cluster_and_ep_shortcuts_are_the_clis():
    # --accelerator h100-sxm --cluster nvlink4-nvswitch --devices 4: no platform warning, and
    # the cluster's own name in the inputs; ep as --ep on a MoE model.
    r = pm.estimate("llama70b", accelerator="h100-sxm", cluster="nvlink4-nvswitch", devices=4)
    assert r["inputs"]["cluster"] == "nvlink4-nvswitch" and r["inputs"]["devices"] == 4
    m = pm.estimate("llama70b", model="mixtral-8x7b", ep=2)
    assert pm._overrides(None, {"ep": 2}) == ["cluster.expert_parallel=2"]
    assert m["moe"]["experts_read_per_step"] > 0


def test_shortcuts_and_arguments_are_checked_as_the_cli_checks_them(tmp_path):
    # A count shortcut is read as --batch reads it: no hexadecimal, sign or leading space.
    for bad in ("0x10", "+4", " 8"):
        with pytest.raises(ValueError, match="batch: expected a decimal integer"):
            pm.estimate("llama70b", batch=bad)
    for bad in (True, 1.5):
        with pytest.raises(TypeError, match="batch: expected an integer"):
            pm.estimate("llama70b", batch=bad)
    assert pm.estimate("llama70b", batch="8")["inputs"]["batch"] == 8
    # overrides of another type name the parameter; paths may be os.PathLike.
    for bad in ({"a", "b"}, 5, b"x=1"):
        with pytest.raises(TypeError, match="overrides"):
            pm.estimate("llama70b", bad)
    import pathlib
    assert pm.estimate(pathlib.Path("llama70b.json"),
                       data_dir=pathlib.Path(pm.data_dir()))["scenario"] == "llama70b"
    with pytest.raises(TypeError, match="config"):
        pm.estimate(42)


def test_seq_counts_k_as_1024():
    assert pm.estimate("llama70b", seq="16k")["inputs"]["seq_len"] == 16384


def test_a_quote_in_a_name_still_gives_json():
    r = pm.estimate("llama70b", {"model.name": 'say "hi" \\ now'})
    assert r["inputs"]["model"] == 'say "hi" \\ now'


def test_override_values_are_written_as_the_cli_takes_them():
    assert pm._overrides({"a.b": True, "c": 2, "d": 0.5, "e": "x"}, {"batch": 8}) == [
        "a.b=true", "c=2", "d=0.5", "e=x", "workload.batch=8"]
    assert pm._overrides(["workload.batch=8", "model=qwen2-7b"], {}) == [
        "workload.batch=8", "model=qwen2-7b"]
    assert pm.estimate("llama70b", ["workload.batch=8"]) == pm.estimate("llama70b", batch=8)
    with pytest.raises(TypeError, match="unknown keyword 'btach'"):
        pm.estimate("llama70b", btach=8)
    with pytest.raises(TypeError):
        pm.estimate("llama70b", {"workload.batch": [8]})


# ---------------------------------------------------------------- sweep

def test_sweep_columns_and_values_are_the_tools_csv():
    header, rows = tool_csv("--config", "llama70b", "--sweep", "l2=8MiB:64MiB:8MiB",
                            "--threads", "1")
    s = pm.sweep("llama70b", l2="8MiB:64MiB:8MiB", data_dir=DATA)
    assert list(s) == header
    assert all(isinstance(s[c], np.ndarray) and len(s[c]) == len(rows) for c in header)
    for j, column in enumerate(header[:-1]):
        want = np.array([float(r[j]) for r in rows])
        # the CSV holds 9 significant digits
        np.testing.assert_allclose(s[column], want, rtol=1e-8, err_msg=column)
    assert list(s["l2_capacity_MiB"]) == [8, 16, 24, 32, 40, 48, 56, 64]
    assert all(e == "" for e in s["error"])


def test_sweep_memory_and_split_columns():
    s = pm.sweep("llama70b", devices=[2, 4])
    # 2684354560 KV bytes on 4 devices (above), twice that on 2
    assert list(s["kv_bytes_per_device"]) == [2 * 2684354560, 2684354560]
    assert list(s["fits_hbm"]) == [1, 1] and list(s["allreduces_per_step"]) == [160, 160]
    np.testing.assert_allclose(s["allreduce_per_step_s"], 160 * s["allreduce_decode_s"], rtol=1e-15)
    for m in ("serial", "fused", "preserve"):
        np.testing.assert_allclose(s[m + "_prefill_s"] + s[m + "_decode_s"], s[m + "_request_s"],
                                   rtol=1e-12)


def test_sweep_grid_order_and_invalid_points():
    # llama3-70b has 64 heads: 128 devices is not a valid point
    s = pm.sweep("llama70b", devices=[2, 128], batch="1,4", threads=2)
    assert list(s["devices"]) == [2, 2, 128, 128]
    assert list(s["batch"]) == [1, 4, 1, 4]
    assert np.isfinite(s["preserve_request_s"][:2]).all()
    assert np.isnan(s["preserve_request_s"][2:]).all()
    assert "128 devices exceed" in s["error"][2] and s["error"][0] == ""
    grid = s["preserve_tokens_per_s"].reshape(2, 2)
    assert grid[0, 1] > grid[0, 0]  # batch 4 generates more tokens/s than batch 1


def test_sweep_same_whatever_the_thread_count():
    a = pm.sweep("llama70b", l2="8MiB:256MiB:8MiB", seq="2k:16k:x2", threads=1)
    b = pm.sweep("llama70b", l2="8MiB:256MiB:8MiB", seq="2k:16k:x2", threads=4)
    for c in a:
        if c != "error":
            np.testing.assert_array_equal(a[c], b[c])


def test_sweep_rejects_bad_axes():
    with pytest.raises(TypeError):
        pm.sweep("llama70b")
    with pytest.raises(pm.Error) as e:
        pm.sweep("llama70b", l3="1:2:1")
    assert e.value.status == "PM_ERR_VALUE"
    with pytest.raises(pm.Error):
        pm.sweep("llama70b", l2="64MiB:8MiB:8MiB")  # reversed range
    with pytest.raises(ValueError):
        pm.sweep("llama70b", l2=[float("nan")])


def test_sweep_refuses_what_it_cannot_hold_or_run():
    # The thread count the engine runs (256 at most; 0 is every CPU, negatives are no count).
    for threads in (257, -1):
        with pytest.raises(pm.Error, match="threads: expected 0"):
            pm.sweep("llama70b", l2="1,2", threads=threads)
    # An axis of more values than the CLI takes, and a grid whose arrays would not fit.
    with pytest.raises(pm.Error, match="more than 10000000 points"):
        pm.sweep("llama70b", l2="1B:1TB:1B")
    with pytest.raises(ValueError, match="more than 10000000 in one call") as e:
        pm.sweep("llama70b", l2="1:400:1", l2_bw="1:200:1", compute="1:200:1")
    # The size in GB is a number, not a raw "%.3g" (issue 42).
    assert "%" not in str(e.value) and "GB" in str(e.value)
    # Complex and true/false values are no axis values.
    with pytest.raises(TypeError):
        pm.sweep("llama70b", l2=np.array([1 + 2j]))
    with pytest.raises(TypeError):
        pm.sweep("llama70b", l2=[True, False])


def test_sweep_reads_a_bare_number_in_the_columns_unit_with_spaces_around():
    # "2 " is 2 MiB like "2", not 2 bytes (the unit parser's reading of a bare number).
    out = pm.sweep("llama70b", l2="1,2 ")
    np.testing.assert_array_equal(out["l2_capacity_MiB"], [1.0, 2.0])


def test_sweep_stops_on_ctrl_c(tmp_path):
    # A sweep of minutes, interrupted after its start: KeyboardInterrupt, well before the end.
    script = tmp_path / "long.py"
    script.write_text("import time, preserve_model as pm\n"
                      "t = time.time()\n"
                      "try:\n"
                      "    pm.sweep('llama70b', l2='1:3000000:1', seq='1k,2k,4k')\n"
                      "    print('finished')\n"
                      "except KeyboardInterrupt:\n"
                      "    print('interrupted', time.time() - t)\n")
    import signal
    import sys
    import time
    p = subprocess.Popen([sys.executable, "-W", "ignore", str(script)], stdout=subprocess.PIPE,
                         text=True, env=dict(os.environ),
                         preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    time.sleep(3)
    p.send_signal(signal.SIGINT)
    out, _ = p.communicate(timeout=60)
    assert out.startswith("interrupted"), out


# ---------------------------------------------------------------- step model

def test_step_model_gives_the_estimates_tpot():
    r = pm.estimate("llama70b", batch=8)
    for mode in ("serial", "fused", "preserve"):
        m = pm.StepModel("llama70b", mode, batch=8)
        assert m.decode_time(r["tpot_context_len"]) == pytest.approx(
            r["modes"][mode]["tpot_s"], rel=1e-8)  # the report's 9 digits


def test_step_model_capacity_agrees_with_the_estimate():
    # llama70b at batch 8 on the bundled cluster: the estimate's fits_hbm at seq_len n is
    # max_context >= n, on both sides of the capacity.
    m = pm.StepModel("llama70b", batch=8)
    n = m.max_context
    assert isinstance(n, int) and n > 0
    for seq in (n, n + 1):
        r = pm.estimate("llama70b", batch=8, seq=seq)
        assert r["memory"]["fits_hbm"] == (seq <= n) == m.fits_hbm(seq)
    # HBM too small for the weights: -1, and no context fits.
    with pytest.warns(UserWarning, match="exceed its 1 GiB of usable HBM"):
        tiny = pm.StepModel("llama70b", overrides={"accelerator.hbm_capacity_GiB": 1})
    assert tiny.max_context == -1 and not tiny.fits_hbm(0)
    with pytest.raises(ValueError):
        m.fits_hbm(-1)
    for bad in (1.5, float("nan"), True):
        with pytest.raises(TypeError):
            m.fits_hbm(bad)
    # A step beyond the capacity is timed, and warned once per call.
    with pytest.warns(UserWarning, match=f"beyond max_context {n}"):
        m.decode_time(n + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m.decode_time(n)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        m.decode_times([1, n + 1, n + 2])
    assert len(w) == 1 and f"context_len {n + 2}" in str(w[0].message)


def test_step_model_vectorised_and_growing_with_context():
    m = pm.StepModel("llama70b")
    ctx = np.array([[1024, 2048], [4096, 8192]])
    t = m.decode_times(ctx)
    assert t.shape == (2, 2)
    assert t[0, 0] == m.decode_time(1024)
    assert np.all(np.diff(t.ravel()) >= 0)
    with pytest.raises(ValueError):
        m.decode_time(-1)
    with pytest.raises(TypeError):
        m.decode_times([1.5])
    with pytest.raises(TypeError):
        m.decode_time(True)
    with pytest.raises(TypeError):
        m.decode_times(np.ma.array([1, 2], mask=[0, 1]))
    with pytest.raises(ValueError, match="mode"):
        pm.StepModel("llama70b", "fastest")
    # A speculating scenario's decode step is its verify step, not a token's time: refused.
    with pytest.raises(pm.Error, match="speculative"):
        pm.StepModel("deepseek-v3-mtp", "serial")
    # The mode is the one the steps are timed in: not to be rewritten.
    with pytest.raises(AttributeError):
        m.mode = "serial"
    assert m.mode == "preserve"


# ---------------------------------------------------------------- errors

def test_errors_carry_file_path_and_message():
    assert issubclass(pm.Error, Exception)
    with pytest.raises(pm.Error) as e:
        pm.estimate("llama70b", batch=0)
    assert e.value.path == "$.workload.batch"
    assert e.value.status == "PM_ERR_RANGE"
    assert "must be in [1, 16777216] (got 0)" in e.value.message
    assert "$.workload.batch" in str(e.value)

    with pytest.raises(pm.Error) as e:
        pm.estimate("llama70b", devices=128)
    assert e.value.path == "$.cluster.devices"
    # the override that set the value, in the module's words (issue 48: it said --set)
    assert e.value.file == "override cluster.devices=128"
    assert "--set" not in str(e.value)
    with pytest.raises(pm.Error) as e:
        pm.sweep("llama70b", l2="8MiB:4MiB")
    assert e.value.file == "axis" and str(e.value).startswith("axis: l2=8MiB:4MiB: ")
    # a file of one kind given as another: the hint names the key (issue 48: it named the
    # CLI's --model and --config, which the module does not have)
    with pytest.raises(pm.Error) as e:
        pm.estimate(os.path.join(DATA, "models", "llama3-8b.json"))
    assert e.value.message.endswith("give it as the model (the override model=FILE)")
    with pytest.raises(pm.Error) as e:
        pm.estimate(model=os.path.join(DATA, "scenarios", "llama70b.json"))
    assert e.value.message.endswith("give it as the scenario (the scenario to load, not an "
                                    "override)")
    hf = os.path.join(SOURCE, "tests", "configs", "hf", "llama3-8b-config.json")
    with pytest.raises(pm.Error) as e:
        pm.estimate(model=hf, overrides={"model.rope_theta": 1})
    assert e.value.file == "override model.rope_theta=1"
    assert e.value.message.startswith('an override of "rope_theta" changes nothing')
    for bad in ({"config": os.path.join(DATA, "accelerators", "h100-sxm.json")},
                {"model": "llama3-8b", "overrides": {"model.no_such_key": 1}},
                {"model": hf, "overrides": {"model.rope_theta": 1}}):
        with pytest.raises(pm.Error) as e:
            pm.estimate(**bad)
        assert "--" not in e.value.message, e.value.message

    with pytest.raises(pm.Error) as e:
        pm.estimate("no-such-scenario")
    assert e.value.status == "PM_ERR_NOT_FOUND"
    assert "no bundled scenario" in e.value.message


def test_syntax_errors_give_line_and_column(tmp_path):
    bad = tmp_path / "bad.json"
    bad.write_text('{\n  "kind": "scenario",\n  "name": oops\n}\n')
    with pytest.raises(pm.Error) as e:
        pm.estimate(str(bad))
    assert e.value.file == str(bad)
    assert e.value.status == "PM_ERR_SYNTAX"
    assert (e.value.line, e.value.column) == (3, 11)
    with pytest.raises(pm.Error):
        pm.StepModel(str(bad))
    with pytest.raises(pm.Error):
        pm.sweep(str(bad), l2=True)


def test_a_missing_data_directory_names_the_variable():
    with pytest.raises(pm.Error, match="PRESERVE_MODEL_DATA"):
        pm.estimate("llama70b", data_dir="/nonexistent")


# ---------------------------------------------------------------- where the data is

def test_data_dir_in_the_build_tree_is_the_sources(monkeypatch):
    monkeypatch.delenv("PRESERVE_MODEL_DATA", raising=False)
    assert os.path.realpath(pm.data_dir()) == os.path.realpath(DATA)
    monkeypatch.setenv("PRESERVE_MODEL_DATA", "/some/where")
    assert pm.data_dir() == "/some/where"
    assert pm.version() == json.loads(tool("--format", "json"))["tool"].split()[-1]


def test_serve_matches_the_tool():
    """serve() gives the serve command's CSV, column for column (9 significant digits)."""
    got = pm.serve("llama70b-h100", concurrency=[1, 16, 256], chunk=4096)
    text = tool("serve", "--config", "llama70b-h100", "--concurrency", "1,16,256", "--chunk",
                "4096", "--format", "csv")
    rows = list(csv.DictReader(line for line in io.StringIO(text) if not line.startswith("#")))
    assert list(rows[0]) == list(got)
    for i, row in enumerate(rows):
        for name, value in row.items():
            assert float(value) == pytest.approx(got[name][i], rel=1e-8, nan_ok=True), name
    assert got["fits_hbm"].dtype == np.bool_ and got["budget_bound"].dtype == np.bool_


def test_serve_speculative_matches_the_tool():
    """serve()'s spec_* keywords are the CLI's --spec-* options (issue 45); k = 0 is plain."""
    # Llama-3-70B given one MTP layer (a what-if: its checkpoint has none, refused without)
    spec = dict(spec_tokens=3, spec_accept=0.7, spec_mtp=1, overrides=MTP1)
    got = pm.serve("llama70b-h100", concurrency=[1, 16], **spec)
    text = tool("serve", "--config", "llama70b-h100", "--concurrency", "1,16", "--spec-tokens",
                "3", "--spec-accept", "0.7", "--spec-mtp", "1", "--set",
                "model.num_nextn_predict_layers=1", "--format", "csv")
    rows = list(csv.DictReader(line for line in io.StringIO(text) if not line.startswith("#")))
    for i, row in enumerate(rows):
        assert float(row["preserve_tpot_s"]) == pytest.approx(got["preserve_tpot_s"][i], rel=1e-8)
    plain = pm.serve("llama70b-h100", concurrency=[1, 16])
    assert np.all(got["serial_tpot_s"] < plain["serial_tpot_s"])
    off = pm.serve("llama70b-h100", concurrency=[1, 16], spec_tokens=0, spec_accept=0.7,
                   spec_mtp=1, overrides=MTP1)
    with pytest.raises(pm.Error, match="1 MTP layer asked of a model with 0"):
        pm.serve("llama70b-h100", concurrency=[1], spec_tokens=3, spec_accept=0.7, spec_mtp=1)
    assert np.array_equal(off["serial_tpot_s"], plain["serial_tpot_s"])


def test_served_lengths_past_the_trained_context_warned():
    """A served request past the model's max_position_embeddings is warned of, as the tool
    does (Falcon-7B: 2048 positions; the longest class 1500 + 1000)."""
    classes = [(1000, 500, 0.5), (1500, 1000, 0.5)]
    with pytest.warns(UserWarning, match=r"1500 \+ 1000 tokens \(the longest class\) exceeds"):
        pm.serve("falcon7b", [1], lengths=classes)
    with pytest.warns(UserWarning, match="max_position_embeddings 2048"):
        pm.search("falcon7b", (1,), lengths=classes, budget=1)


def test_serve_dp_attention_matches_the_tool():
    """Issue 44: serve() takes dp_attention as the tool's --dp-attention (a mixed step is the
    busiest attention rank's share); with the ranks' own sequences the step is not the
    tensor-parallel group's."""
    got = pm.serve("qwen3-30b-a3b", concurrency=[1, 16], dp_attention=True)
    text = tool("serve", "--config", "qwen3-30b-a3b", "--concurrency", "1,16", "--dp-attention",
                "--format", "csv")
    rows = list(csv.DictReader(line for line in io.StringIO(text) if not line.startswith("#")))
    for i, row in enumerate(rows):
        assert float(row["preserve_tpot_s"]) == pytest.approx(got["preserve_tpot_s"][i], rel=1e-8)
    tp = pm.serve("qwen3-30b-a3b", concurrency=[1, 16])
    assert not np.array_equal(got["serial_tpot_s"], tp["serial_tpot_s"])


def test_serve_concurrency_one_is_the_estimate():
    """One sequence in flight is the static estimate at batch 1: the prefill is its TTFT."""
    est = pm.estimate("llama8b", batch=1)
    got = pm.serve("llama8b", concurrency=np.array([1]), chunk=1 << 20, batch=1)
    for m in ("serial", "fused", "preserve"):
        assert got[f"{m}_ttft_s"][0] == pytest.approx(est["modes"][m]["prefill_s"], rel=1e-12)
        assert isinstance(got[f"{m}_tokens_per_s_per_device"], np.ndarray)


def test_burst_matches_the_tool():
    """burst() gives serve --burst's CSV, column for column; a burst of one wave under
    prefill-first is serve()'s wave (its TTFT and TPOT), and what is refused is said."""
    got = pm.burst("llama70b-h100", requests=[64, 512], max_running=256)
    text = tool("serve", "--config", "llama70b-h100", "--burst", "64,512", "--max-running", "256",
                "--format", "csv")
    rows = list(csv.DictReader(line for line in io.StringIO(text) if not line.startswith("#")))
    assert list(rows[0]) == list(got)
    for i, row in enumerate(rows):
        for name, value in row.items():
            assert float(value) == pytest.approx(got[name][i], rel=1e-8, nan_ok=True), name
    assert got["hbm_binds"].dtype == np.bool_ and list(got["admitted"]) == [64, 256]
    one = pm.burst("llama8b", requests=[8], chunk=1 << 16, rule="prefill_first")
    wave = pm.serve("llama8b", concurrency=[8], chunk=1 << 16, rule="prefill_first",
                    arrival="wave")
    for m in ("serial", "fused", "preserve"):
        assert one[f"{m}_ttft_s"][0] == pytest.approx(wave[f"{m}_ttft_s"][0], rel=1e-12)
        assert one[f"{m}_tpot_s"][0] == pytest.approx(wave[f"{m}_tpot_s"][0], rel=1e-12)
    with pytest.raises(ValueError, match="max_running"):
        pm.burst(max_running=0)
    with pytest.raises(ValueError, match="requests"):
        pm.burst(requests=[0])
    with pytest.raises(pm.Error, match="chunk budget above the running sequences"):
        pm.burst(requests=[64], chunk=16)


def test_serve_wave_matches_the_tool():
    """arrival='wave' gives serve --arrival wave's numbers; the wave's TTFT exceeds the
    staggered state's (the prompts prefill together)."""
    got = pm.serve("llama8b", concurrency=[1, 8, 32], chunk=1 << 16, rule="prefill_first",
                   arrival="wave")
    text = tool("serve", "--config", "llama8b", "--concurrency", "1,8,32", "--chunk", "65536",
                "--rule", "prefill_first", "--arrival", "wave", "--format", "csv")
    rows = list(csv.DictReader(line for line in io.StringIO(text) if not line.startswith("#")))
    for i, row in enumerate(rows):
        assert float(row["serial_ttft_s"]) == pytest.approx(got["serial_ttft_s"][i], rel=1e-8)
    staggered = pm.serve("llama8b", concurrency=[8, 32], chunk=1 << 16, rule="prefill_first")
    assert np.all(got["serial_ttft_s"][1:] > staggered["serial_ttft_s"])
    with pytest.raises(ValueError, match="arrival"):
        pm.serve(arrival="together")


def test_serve_rate_matches_the_tool():
    """rate=[...] gives serve --rate's numbers: an open loop, each mode's sequences in flight,
    saturated flags as bools."""
    got = pm.serve("llama70b-h100", rate=[0.05, 2, 50])
    text = tool("serve", "--config", "llama70b-h100", "--rate", "0.05,2,50", "--format", "csv")
    rows = list(csv.DictReader(line for line in io.StringIO(text) if not line.startswith("#")))
    for i, row in enumerate(rows):
        for name in ("serial_ttft_s", "preserve_in_flight", "request_rate_per_s"):
            assert float(row[name]) == pytest.approx(got[name][i], rel=1e-8, nan_ok=True), name
    assert got["preserve_saturated"].dtype == np.bool_
    assert list(got["preserve_saturated"]) == [False, False, True]
    assert np.isnan(got["concurrency"]).all()
    with pytest.raises(ValueError, match="rate"):
        pm.serve(rate=[0])


def test_serve_lengths_match_the_tool():
    """lengths=[(in, out, share), ...] gives serve --lengths's numbers."""
    classes = [(4000, 100, 0.25), (500, 600, 0.75)]
    got = pm.serve("llama70b-h100", concurrency=[1, 16, 64], lengths=classes)
    text = tool("serve", "--config", "llama70b-h100", "--concurrency", "1,16,64", "--lengths",
                "4000:100:0.25,500:600:0.75", "--format", "csv")
    rows = list(csv.DictReader(line for line in io.StringIO(text) if not line.startswith("#")))
    for i, row in enumerate(rows):
        for name in ("serial_ttft_s", "preserve_tpot_s", "kv_bytes_per_device"):
            assert float(row[name]) == pytest.approx(got[name][i], rel=1e-8), name
    with pytest.raises(pm.Error, match="staggered requests only"):
        pm.serve(lengths=classes, arrival="wave", rule="prefill_first", chunk=65536)
    with pytest.raises(TypeError, match="lengths"):
        pm.serve(lengths=[(4000, 100)])


def test_serve_lengths_file_and_prefill_first():
    """lengths="azure-conv-2023" is the bundled file's classes, as --lengths NAME gives them,
    under prefill-first too; a bad name says which exist."""
    got = pm.load_lengths("azure-conv-2023")
    assert got["name"] == "azure-conv-2023" and len(got["classes"]) == 8
    assert "AzurePublicDataset" in got["source"]
    by_name = pm.serve("llama70b-h100", concurrency=[1, 64], lengths="azure-conv-2023",
                       rule="prefill_first", chunk=8192)
    by_classes = pm.serve("llama70b-h100", concurrency=[1, 64], lengths=got["classes"],
                          rule="prefill_first", chunk=8192)
    assert np.array_equal(by_name["preserve_tpot_s"], by_classes["preserve_tpot_s"])
    text = tool("serve", "--config", "llama70b-h100", "--concurrency", "1,64", "--lengths",
                "azure-conv-2023", "--rule", "prefill_first", "--chunk", "8192", "--format", "csv")
    rows = list(csv.DictReader(line for line in io.StringIO(text) if not line.startswith("#")))
    for i, row in enumerate(rows):
        assert float(row["fused_tpot_s"]) == pytest.approx(by_name["fused_tpot_s"][i], rel=1e-8)
    with pytest.raises(pm.Error, match="azure-conv-2023"):
        pm.load_lengths("no-such-lengths")


def test_serve_refuses():
    with pytest.raises(ValueError, match="rule"):
        pm.serve(rule="decode_frist")
    with pytest.raises(ValueError, match="concurrency"):
        pm.serve(concurrency=[1, float("nan")])
    with pytest.raises(TypeError, match="chunk"):
        pm.serve(chunk=2048.5)
    with pytest.raises(pm.Error, match="concurrency must be in"):
        pm.serve(concurrency=[0])
    # Issue 42: 1.5 sequences ran as a count; an input length of 0 became the scenario's.
    with pytest.raises(ValueError, match="whole counts"):
        pm.serve(concurrency=[1.5])
    with pytest.raises(ValueError, match="input_tokens: expected a count >= 1"):
        pm.serve(input_tokens=0)
    with pytest.raises(ValueError, match="output_tokens: expected a count >= 1"):
        pm.serve(output_tokens=np.int64(0))
    with pytest.raises(pm.Error, match="must hold the prompt"):
        pm.serve(rule="prefill_first", chunk=1024)


def test_nul_in_an_override_is_refused():
    """Issue 42: a NUL cut an override short silently (the C string ends there)."""
    with pytest.raises(ValueError, match="NUL"):
        pm.estimate("llama70b", {"workload.batch": "8\0 and more"})
    with pytest.raises(ValueError, match="NUL"):
        pm.estimate("llama70b", ["workload.batch=8\0"])
    with pytest.raises(ValueError, match="NUL"):
        pm.estimate("llama70b", model="llama3-8b\0")


def test_step_model_takes_numpy_integers():
    """Issue 42: decode_time refused np.int64 where fits_hbm took it."""
    step = pm.StepModel("llama8b", "preserve")
    assert step.decode_time(np.int64(1000)) == step.decode_time(1000)
    assert step.decode_time(np.int32(7)) == step.decode_time(7)
    with pytest.raises(TypeError):
        step.decode_time(1000.0)
    with pytest.raises(TypeError):
        step.decode_time(True)


def test_optimize_matches_the_tool():
    """optimize() gives the --optimize command's JSON (issue 48: the module lacked it)."""
    for args, kw in ((["--optimize", "l2"], {}),
                     (["--optimize", "l2=1MiB:1024MiB", "--objective", "usd"],
                      {"axis": "l2=1MiB:1024MiB", "objective": "usd"})):
        want = json.loads(tool("--config", "llama70b", "--format", "json", *args))
        with warnings.catch_warnings(record=True) as got_warnings:
            warnings.simplefilter("always")
            got = pm.optimize("llama70b", **kw)
        for key in ("axis", "column", "objective", "objective_column", "lo", "hi", "evaluations",
                    "fits_hbm"):
            assert got[key] == want[key], key
        for m in pm.MODES:
            for key, value in want["modes"][m].items():
                assert got["modes"][m][key] == pytest.approx(value, rel=1e-12), (m, key)
    # serial's density is best at the range's lower end and still rising there: said
    edge = pm.optimize("llama70b")
    assert edge["modes"]["serial"]["at_edge"] == "lo" and edge["modes"]["preserve"]["at_edge"] is None
    with pytest.warns(UserWarning, match=r"serial: the best l2_capacity_MiB is the range's lower "
                      r"end \(8\)"):
        pm.optimize("llama70b")
    # the errors name the axis, not a command-line option
    with pytest.raises(pm.Error, match=r"batch is a count the optimum search does not take"):
        pm.optimize(axis="batch")
    with pytest.raises(pm.Error, match=r"HI must be greater than LO"):
        pm.optimize(axis="l2=8MiB:4MiB")
    with pytest.raises(ValueError, match="objective: expected one of mm2, usd, joule"):
        pm.optimize(objective="tokens")


def test_optimize_counts_match_the_tool():
    """optimize() over pp, dp and split (issue 44 item 5) gives --optimize's JSON: the split's
    refused values skipped and counted, dp's flat densities a tie reported at the smallest."""
    pp2 = {"cluster": "hgx-h100-ib-ndr", "devices": 8, "pp": 2, "batch": 16}
    for axis, kw in (("split=78:81", pp2), ("dp=1:4", {})):
        sets = [a for k, v in kw.items() for a in (f"--{k}", str(v))]
        want = json.loads(tool("--config", "llama70b-h100", "--format", "json", "--optimize",
                               axis, *sets))
        with warnings.catch_warnings(record=True) as got_warnings:
            warnings.simplefilter("always")
            got = pm.optimize("llama70b-h100", axis, **kw)
        for key in ("axis", "column", "objective", "objective_column", "lo", "hi", "evaluations",
                    "fits_hbm", "tie_rel_tol", "skipped", "first_skipped"):
            assert got[key] == want[key], key
        for m in pm.MODES:
            assert set(got["modes"][m]) == set(want["modes"][m])
            for key, value in want["modes"][m].items():
                assert got["modes"][m][key] == pytest.approx(value, rel=1e-12), (m, key)
        assert got_warnings
    with pytest.warns(UserWarning, match=r"2 of the 4 values of last_stage_layers in \[78, 81\] "
                      r"were refused and skipped; the first, 80"):
        split = pm.optimize("llama70b-h100", "split=78:81", **pp2)
    assert split["skipped"] == 2 and split["first_skipped"]["value"] == 80
    assert "holds at most 79 of the 80 layers" in split["first_skipped"]["error"]
    with pytest.warns(UserWarning, match=r"preserve: 4 values of data_parallel in \[1, 4\] give "
                      r"the best density_tokens_per_s_per_mm2 within a relative 1e-09"):
        dp = pm.optimize("llama70b-h100", "dp=1:4")
    assert all(dp["modes"][m]["best"] == 1 and dp["modes"][m]["ties"] == 3 for m in pm.MODES)
    # a continuous axis has none of a count's keys
    assert "ties" not in pm.optimize("llama70b", "l2_bw")["modes"]["serial"]


def test_footprint_matches_the_tool():
    """footprint() gives the footprint command's JSON rows (issue 48: the module lacked it)."""
    for config, args, kw in (("llama70b", ["--devices-list", "1,4,16,128"], {"devices": [1, 4, 16, 128]}),
                             ("mixtral8x7b", ["--devices-list", "2,8", "--ep", "2"],
                              {"devices": [2, 8], "ep": 2})):
        want = json.loads(tool("footprint", "--config", config, "--format", "json", *args))["rows"]
        got = pm.footprint(config, **kw)
        assert set(got) == set(want[0]), config
        for i, row in enumerate(want):
            for key, value in row.items():
                assert got[key][i] == value, (config, i, key)
    # one layer's Llama3-70B attention on one device, int8: Q and O 8192 x 8192, K and V
    # 8192 x 1024 each = 2 x 67108864 + 2 x 8388608 = 150994944 bytes
    assert pm.footprint("llama70b", devices=[1])["attn_weight_bytes"][0] == 150994944
    assert pm.footprint("llama70b", devices=[128])["ideal_split"][0]  # 64 heads over 128
    with pytest.raises(pm.Error, match="expert"):
        pm.footprint("mixtral8x7b", devices=[3], ep=3)


def _same_columns(got, want_rows, where):
    """The module's dict of numpy arrays holds the tool's JSON rows, value for value (the JSON's
    numbers round-trip: equal, not close); a null is None in an object column, NaN in a
    float one."""
    assert set(got) == set(want_rows[0]), where
    for i, row in enumerate(want_rows):
        for key, value in row.items():
            if value is None:
                assert got[key][i] is None or math.isnan(got[key][i]), (where, i, key)
            elif key != "prefetches":
                assert got[key][i] == value, (where, i, key, got[key][i], value)


# Two pipeline stages of TP 8 on InfiniBand nodes (issue 44: a stage's views).
PP2 = ["--cluster", "hgx-h100-ib-ndr", "--pp", "2", "--devices", "8"]
PP2_KW = {"cluster": "hgx-h100-ib-ndr", "pp": 2, "devices": 8}


def test_explain_matches_the_tool():
    """explain() gives the explain command's JSON (issue 48: the module lacked it)."""
    for config, args, kw in (("llama70b", [], {}),
                             ("llama70b", ["--phase", "prefill", "--batch", "2"],
                              {"phase": "prefill", "batch": 2}),
                             ("mixtral8x7b", ["--context", "4k"], {"context": 4096}),
                             ("deepseek-v3-h200", [], {}),
                             ("llama70b-h100", PP2 + ["--stage", "1"], dict(PP2_KW, stage=1))):
        want = json.loads(tool("explain", "--config", config, "--format", "json", *args))
        got = pm.explain(config, **kw)
        assert set(got) == set(want), config
        for key, value in want.items():
            if key != "windows":
                assert got[key] == value, (config, key)
        windows = got["windows"]
        _same_columns(windows, want["windows"], config)
        assert windows["stopped_routed"].dtype == bool and windows["hidden"].dtype == bool
        assert len(windows["prefetches"]) == len(want["windows"])
        for i, w in enumerate(want["windows"]):
            if w["prefetches"]:
                _same_columns(windows["prefetches"][i], w["prefetches"], (config, i))
            else:
                assert all(len(a) == 0 for a in windows["prefetches"][i].values())
    # Llama3-70B on 4 devices, int8: the attention allreduce's window prefetches the MLP's
    # Gate, 8192 x 28672 / 4 = 58720256 bytes, and the MLP allreduce's the next layer's QKV,
    # 8192 x (64 / 4 + 2 x 8 / 4) x 128 = 20971520 bytes
    w = pm.explain("llama70b")["windows"]
    assert w["collective"][0] == "L0.AR.attn" and w["kind"][0] == "allreduce"
    assert w["prefetches"][0]["consumer"][0] == "L0.Gate"
    assert w["prefetches"][0]["bytes"][0] == 8192 * 28672 // 4
    assert w["prefetches"][1]["consumer"][0] == "L1.QKV"
    assert w["prefetches"][1]["bytes"][0] == 8192 * (64 // 4 + 2 * 8 // 4) * 128
    # Mixtral over tensor parallelism: the attention allreduce may not prefetch routed experts
    w = pm.explain("mixtral8x7b")["windows"]
    assert w["stopped_at"][0] == "L0.ExpertGate" and w["stopped_routed"][0]
    assert math.isnan(w["stopped_bytes"][1]) and w["stopped_at"][1] is None
    # one device: no collective, no window, empty columns of their types
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the weights do not fit one device's HBM
        none = pm.explain("llama70b", devices=1)["windows"]
    assert none["collective"].size == 0 and none["prefetches"] == []
    with pytest.raises(ValueError, match="phase: expected one of decode, prefill"):
        pm.explain(phase="generate")
    with pytest.raises(TypeError, match="context: expected a token count"):
        pm.explain(context=100.0)
    with pytest.raises(ValueError, match="context: expected a token count >= 0"):
        pm.explain(context=-1)
    with pytest.raises(pm.Error, match="nosuch"):
        pm.explain("nosuch")


def test_timeline_matches_the_tool():
    """timeline() gives the timeline command's JSON (issue 48: the module lacked it)."""
    for config, args, kw in (("llama70b", ["--compare"], {"compare": True}),
                             ("llama70b", ["--mode", "fused", "--phase", "prefill"],
                              {"mode": "fused", "phase": "prefill"}),
                             ("mixtral8x7b", [], {}),
                             ("deepseek-v3-h200", ["--context", "1000"], {"context": 1000}),
                             ("llama70b-h100", PP2 + ["--stage", "1", "--compare"],
                              dict(PP2_KW, stage=1, compare=True))):
        want = json.loads(tool("timeline", "--config", config, "--format", "json", *args))
        got = pm.timeline(config, **kw)
        assert set(got) == set(want), config
        for key, value in want.items():
            if key != "modes":
                assert got[key] == value, (config, key)
        assert [m["mode"] for m in got["modes"]] == [m["mode"] for m in want["modes"]]
        for g, w in zip(got["modes"], want["modes"]):
            assert set(g) == set(w) and g["layer_s"] == w["layer_s"], config
            assert (g["stage"], g["stages"], g["layer"]) == (w["stage"], w["stages"], w["layer"])
            _same_columns(g["ops"], w["ops"], (config, w["mode"]))
            assert g["ops"]["lane_index"].dtype.kind == "i"
    # Mixtral on 4 devices at the paper's point (batch 4, context 16383, int8): layer 1's KV
    # cache, prefetched under layer 0's last allreduce, is 4 sequences x 16383 tokens x 2 KV
    # heads per device (8 over 4) x 128 x (K, V) x 1 byte = 33552384 bytes, and starts before
    # the layer does
    ops = pm.timeline("mixtral8x7b")["modes"][0]["ops"]
    kv = list(ops["node"]).index("PF.L1.Attention")
    assert ops["lane"][kv] == "prefetch" and ops["bytes"][kv] == 4 * 16383 * 2 * 128 * 2
    assert ops["start_s"][kv] < 0
    # Stage 1 of 2 waits on stage 0's hidden states: its timeline opens with the receive, of
    # one micro-batch (llama70b-h100's batch over M = 2 micro-batches) x hidden 8192 x 2 bytes
    # (bf16), on the collective lane, and shows the stage's first layer, 40
    st = pm.timeline("llama70b-h100", stage=1, **PP2_KW)["modes"][0]
    b = pm.estimate("llama70b-h100", **PP2_KW)["pipeline"]["micro_batch"]
    assert st["layer"] == 40 and st["ops"]["node"][0] == "Recv"
    assert st["ops"]["lane"][0] == "collective" and st["ops"]["bytes"][0] == b * 8192 * 2
    with pytest.raises(pm.Error, match="stage 2: the plan has 2 stages"):
        pm.timeline("llama70b-h100", stage=2, **PP2_KW)
    with pytest.raises(ValueError, match="mode: expected one of serial, fused, preserve"):
        pm.timeline(mode="overlap")
    with pytest.raises(pm.Error, match="workload.batch"):
        pm.timeline(batch=0)


def test_sequence_parallel_through_the_key():
    """Issue 44: sp is the cluster key, as the tool's --sp: explain shows a reduce-scatter and
    an all-gather per allreduce; a value that is not a bool, or a MoE model, is refused naming
    the key."""
    on = pm.estimate("llama70b", sp=True)
    assert on == pm.estimate("llama70b", {"cluster.sequence_parallel": True})
    assert on != pm.estimate("llama70b")
    assert pm.estimate("llama70b", sp=False) == pm.estimate("llama70b")
    kinds = set(pm.explain("llama70b", sp=True)["windows"]["kind"])
    assert kinds == {"reduce_scatter", "all_gather"}
    with pytest.raises(pm.Error, match=r"\$\.cluster\.sequence_parallel"):
        pm.estimate("llama70b", sp=1)
    with pytest.raises(pm.Error, match="sequence_parallel"):
        pm.estimate("mixtral8x7b", sp=True)


def test_attention_data_parallel_through_the_key():
    """Issue 44: dp_attention is the cluster key, as the tool's --dp-attention: each device its
    own sequences' KV with every KV head (the same bytes as one KV head of every sequence on 4
    devices of Qwen3-30B-A3B's 4 KV heads), the attention weights whole; a dense model, or EP
    below the devices, is refused naming the key."""
    on = pm.estimate("qwen3-30b-a3b", dp_attention=True)
    assert on == pm.estimate("qwen3-30b-a3b", {"cluster.attention_data_parallel": True})
    off = pm.estimate("qwen3-30b-a3b")
    assert on != off
    assert on["memory"]["kv_bytes_per_device"] == off["memory"]["kv_bytes_per_device"]
    assert on["memory"]["weight_bytes_per_device"] > off["memory"]["weight_bytes_per_device"]
    with pytest.raises(pm.Error, match=r"\$\.cluster\.attention_data_parallel"):
        pm.estimate("llama70b", dp_attention=True)
    with pytest.raises(pm.Error, match="expert_parallel"):
        pm.estimate("qwen3-30b-a3b", dp_attention=True, ep=2)


def test_pipeline_and_replicas_through_the_keys():
    """Issue 44: pp and dp are the cluster keys, as the tool's --pp and --dp: replicas multiply
    the throughput and leave the latency; stages report their micro-batches and sends."""
    base = pm.estimate("llama405b-h200", cluster="hgx-h100-ib-ndr", batch=64)
    rep = pm.estimate("llama405b-h200", cluster="hgx-h100-ib-ndr", batch=64, dp=2)
    assert rep["modes"]["serial"]["tpot_s"] == base["modes"]["serial"]["tpot_s"]
    assert rep["modes"]["serial"]["tokens_per_s"] == 2 * base["modes"]["serial"]["tokens_per_s"]
    assert rep["pipeline"]["devices_total"] == 16
    pp = pm.estimate("llama405b-h200", {"cluster.pipeline_parallel": 4},
                     cluster="hgx-h100-ib-ndr", batch=64)
    assert pp == pm.estimate("llama405b-h200", cluster="hgx-h100-ib-ndr", batch=64, pp=4)
    assert pp["pipeline"]["stages"] == 4 and pp["pipeline"]["micro_batches"] == 4
    assert pp["pipeline"]["inter_node"] is True
    with pytest.raises(pm.Error, match="inter_node_bandwidth_Gbps"):
        pm.estimate("llama405b-h200", pp=4)


def test_search_best_is_the_served_maximum():
    """search()'s best per mode is the largest tokens/s per device that serve() finds within the
    limits over the same space (TP 4 and 8, one chunk budget, four concurrencies)."""
    conc = (1, 16, 64, 256)
    r = pm.search("llama70b-h100", conc, tp=(4, 8), chunks=(2048,), tpot_limit=0.03)
    for mode in pm.MODES:
        best = -1.0
        for tp in (4, 8):
            s = pm.serve("llama70b-h100", conc, chunk=2048, devices=tp)
            ok = (s["fits_hbm"]) & (s[f"{mode}_tpot_s"] <= 0.03)
            if ok.any():
                best = max(best, s[f"{mode}_tokens_per_s_per_device"][ok].max())
        got = r["modes"][mode]
        assert got["found"] and got["best"]["objective"] == best
        assert got["binds"] in ("tpot", "hbm", "space_edge", "objective_peak", "chunk_budget")
        front = got["front"]
        assert np.all(np.diff(front["tokens_per_s_per_user"]) > 0)
        assert np.all(np.diff(front["objective"]) < 0)


def test_search_speculates_as_serve_does():
    """spec_* keywords: the best is serve()'s maximum under the same speculation."""
    spec = dict(spec_tokens=2, spec_accept=0.7, spec_mtp=1, overrides=MTP1)
    conc = (1, 16, 64, 256)
    r = pm.search("llama70b-h100", conc, tp=(8,), chunks=(1024,), tpot_limit=0.03, **spec)
    s = pm.serve("llama70b-h100", conc, chunk=1024, devices=8, **spec)
    for mode in pm.MODES:
        ok = s["fits_hbm"] & (s[f"{mode}_tpot_s"] <= 0.03)
        assert r["modes"][mode]["best"]["objective"] == s[f"{mode}_tokens_per_s_per_device"][ok].max()


def test_search_pruned_is_exhaustive_and_hardware_columns():
    kw = dict(tp=(4, 8), chunks=(512, 2048), tpot_limit=0.02, hardware="l2=48MiB,192MiB")
    a = pm.search("llama70b", (1, 4, 16, 64, 256), **kw)
    b = pm.search("llama70b", (1, 4, 16, 64, 256), exhaustive=True, threads=1, **kw)
    assert a["evaluated"] + a["pruned"] == b["evaluated"] and b["pruned"] == 0
    for mode in pm.MODES:
        assert a["modes"][mode]["best"] == b["modes"][mode]["best"]
        assert "l2_capacity_MiB" in a["modes"][mode]["best"]
        for k, v in a["modes"][mode]["front"].items():
            assert np.array_equal(v, b["modes"][mode]["front"][k])


def test_search_warns_of_an_unbuildable_chip():
    # The 910B's die passes the reticle at 384 MiB of L2 (the CLI's warning, test_search.c):
    # PRESERVE's best per device is there, and said; per mm2 the bests are at 8 MiB.
    kw = dict(tp=(8,), chunks=(512,), budget=32, tpot_limit=0.05, hardware="l2=8MiB,384MiB")
    with pytest.warns(UserWarning) as said:
        r = pm.search("llama70b", (16, 64), **kw)
    notes = [str(w.message) for w in said]
    assert any("at 1 of the l2 axis's 2 values (from l2_capacity_MiB 384" in n for n in notes)
    assert r["modes"]["preserve"]["best"]["l2_capacity_MiB"] == 384
    assert any(n.startswith("preserve: the best is at l2_capacity_MiB 384, where the modelled "
                            "compute die is") for n in notes)
    assert not any(n.startswith("serial:") for n in notes)
    with pytest.warns(UserWarning) as said:
        pm.search_mix([("llama70b", 1), ("mixtral8x7b", 1)], concurrency=(16, 64), **kw)
    assert any(str(w.message).startswith("preserve: the best is at l2_capacity_MiB 384")
               for w in said)


def test_search_warns_of_free_bandwidth():
    # Per mm2 a best with more HBM bandwidth than the 910B's 1.6 TB/s took it for free (hbm_bw
    # moves no die area and no price): said per mode; per device, nothing.
    kw = dict(tp=(8,), chunks=(512,), budget=32, tpot_limit=0.05, hardware="hbm_bw=1TBps,4TBps")
    with pytest.warns(UserWarning) as said:
        r = pm.search("llama70b", (16, 64), objective="mm2", **kw)
    notes = [str(w.message) for w in said]
    assert r["modes"]["preserve"]["best"]["hbm_bandwidth_TBps"] == 4
    for mode in pm.MODES:
        assert any(n.startswith(f"{mode}: the best is at hbm_bandwidth_TBps 4, above the chip's "
                                "1.6,") and "took that bandwidth as free" in n for n in notes)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pm.search("llama70b", (16, 64), objective="device", **kw)
    with pytest.warns(UserWarning) as said:
        c = pm.disagg_codesign("llama70b-h100", "llama70b", "decode", "hbm_bw=1TBps,3TBps",
                               decode_concurrency=64,
                               decode_overrides={"workload": "decode-bf16"})
    assert c["values"][c["best"]] == 3
    assert any(str(w.message).startswith("preserve: the best is at hbm_bandwidth_TBps 3, above "
                                         "the chip's 1.6,") for w in said)
    # No value meets the limit (TPOT 40.32 ms at 256 MiB): best None, as the tool's JSON null;
    # it was -1, which indexed the last value, 256 MiB.
    none = pm.disagg_codesign("llama70b-h100", "llama70b", "decode", "l2=8MiB:256MiB:x2", 64,
                              decode_overrides={"workload": "decode-bf16"}, tpot_limit=0.04)
    assert none["best"] is None


def test_search_pipeline_stages():
    """pp=[...]: a candidate of two stages is serve()'s steady state with pp=2 at its
    concurrency (TP 4 x PP 2 = 8 devices, 32 / 8 = 4 replicas); pp=[1] is the search without
    a pp list; the candidates carry pp."""
    kw = dict(tp=(4,), chunks=(2048,), budget=32)
    r = pm.search("llama70b-h100", (16,), pp=[2], **kw)
    s = pm.serve("llama70b-h100", (16,), chunk=2048, devices=4, pp=2)
    for mode in pm.MODES:
        best = r["modes"][mode]["best"]
        assert (best["tp"], best["pp"], best["dp"]) == (4, 2, 4)
        assert best["objective"] == s[f"{mode}_tokens_per_s_per_device"][0]
        assert best["tpot_s"] == s[f"{mode}_tpot_s"][0]
        assert r["modes"][mode]["front"]["pp"].dtype == np.int64
    a = pm.search("llama70b-h100", (1, 16, 64), **kw)
    b = pm.search("llama70b-h100", (1, 16, 64), pp=[1], **kw)
    for mode in pm.MODES:
        assert a["modes"][mode]["best"] == b["modes"][mode]["best"]
        assert a["modes"][mode]["best"]["pp"] == 1
    with pytest.raises(ValueError, match="pp"):
        pm.search("llama70b-h100", (16,), pp=[0], **kw)
    bad = pm.search("llama70b-h100", (16,), pp=[2], tp=(8,), chunks=(2048,), budget=32)
    assert bad["invalid_deployments"] == 1 and "inter-node link" in bad["first_invalid"]


def test_search_refusals():
    with pytest.raises(ValueError, match="objective"):
        pm.search(objective="watt")
    # a device count for the scenario bounds no candidate's tensor-parallel degree: refused
    with pytest.raises(ValueError, match="each candidate its tensor-parallel degree"):
        pm.search("llama70b-h100", (4,), devices=4)
    with pytest.raises(ValueError, match="each candidate its tensor-parallel degree"):
        pm.search_mix([("llama70b-h100", 1)], (4,), {"cluster.devices": 4})
    with pytest.raises(ValueError, match="concurrency"):
        pm.search(concurrency=(0, 4))
    with pytest.raises(pm.Error, match="hardware axis"):
        pm.search(hardware="devices=1,2")
    r = pm.search("llama70b-h100", (1, 2), tpot_limit=1e-4)
    assert not r["modes"]["preserve"]["found"] and r["modes"]["preserve"]["best"] is None
    # a NaN, negative or infinite limit read as "none" (the unlimited best): refused
    for key, bad in (("tpot_limit", float("nan")), ("ttft_limit", -1.0),
                     ("min_user_rate", float("inf"))):
        with pytest.raises(ValueError, match=key):
            pm.search("llama70b-h100", (4,), tp=(8,), chunks=(512,), **{key: bad})
        with pytest.raises(ValueError, match=key):
            pm.search_mix([("llama70b-h100", 1)], (4,), tp=(8,), chunks=(512,), **{key: bad})


def test_search_disagg_candidates_are_disaggs():
    """search(disagg=True): 8192-token prompts, 256 out, TPOT <= 20 ms on 16 H100s: serial's
    best is 2 prefill instances of TP 4 and one decode instance of TP 8 at 16 sequences (the
    co-located steps carrying prompt chunks miss the limit), and its figures are disagg()'s for
    the same pools and link (NDR's 400 Gb/s and 10 us, given here; the cluster's by default);
    without disagg the keys of the pools are absent; shards merge."""
    kw = dict(tp=(4, 8), chunks=(2048,), budget=16, tpot_limit=0.02, input_tokens=8192,
              output_tokens=256, disagg=True, overrides={"cluster": "hgx-h100-ib-ndr"})
    conc = (8, 16)  # above 16 the prefill pool bounds it: the same rate, TPOT within 1e-11
    r = pm.search("llama70b-h100", conc, **kw)
    best = r["modes"]["serial"]["best"]
    assert best["layout"] == "P2xTP4+D1xTP8"
    assert (best["prefill_instances"], best["prefill_tp"], best["decode_instances"],
            best["decode_tp"], best["tp"], best["dp"], best["concurrency"]) == (2, 4, 1, 8, 0, 1, 16)
    d = pm.disagg("llama70b-h100", "llama70b-h100", [16], instances=(2, 1), input_tokens=8192,
                  output_tokens=256, link_bandwidth=50e9, link_latency=10e-6,
                  prefill_overrides={"cluster": "hgx-h100-ib-ndr", "cluster.devices": 4},
                  decode_overrides={"cluster": "hgx-h100-ib-ndr", "cluster.devices": 8})
    for key in ("ttft_s", "tpot_s", "tokens_per_s_per_device"):
        assert best[key] == d[f"serial_{key}"][0]
    given = pm.search("llama70b-h100", conc, link_bandwidth=50e9, link_latency=10e-6, **kw)
    assert given["modes"]["serial"]["best"] == best
    front = r["modes"]["preserve"]["front"]
    assert front["layout"].dtype == object and front["decode_tp"].dtype == np.int64
    assert all(x == "colocated" or x.startswith("P") for x in front["layout"])
    plain = pm.search("llama70b-h100", conc, **{**kw, "disagg": False, "tpot_limit": 0.05})
    assert "layout" not in plain["modes"]["serial"]["best"]
    assert "prefill_tp" not in plain["modes"]["serial"]["front"]
    parts = [pm.search("llama70b-h100", conc, shard=(k, 3), **kw) for k in (1, 2, 3)]
    got = pm.search_merge(parts)
    for mode in pm.MODES:
        assert got["modes"][mode]["best"] == r["modes"][mode]["best"]
        for col in r["modes"][mode]["front"]:
            np.testing.assert_array_equal(got["modes"][mode]["front"][col],
                                          r["modes"][mode]["front"][col])
    with pytest.raises(pm.Error, match="device budget"):
        pm.search("llama70b-h100", conc, **{**kw, "budget": 0})


def test_search_mix_is_the_harmonic_mean_of_the_members_searches():
    # Shares 1 and 3: a quarter of the tokens at o_a and three quarters at o_b take
    # 0.25 / o_a + 0.75 / o_b devices per token/s (o_a = 100, o_b = 300 would give 200).
    space = dict(concurrency=(1, 4, 16), tp=(1, 2), chunks=(512, 2048), tpot_limit=0.03)
    r = pm.search_mix([("llama8b", 1, [(4096, 128, 1)]), ("mistral7b", 3, [(512, 512, 1)])],
                      hardware="l2=16MiB,96MiB", **space)
    assert list(r["hardware"]["l2_capacity_MiB"]) == [16.0, 96.0]
    for p, l2 in enumerate(("16MiB", "96MiB")):
        a = pm.search("llama8b", hardware=f"l2={l2}", lengths=[(4096, 128, 1)], **space)
        b = pm.search("mistral7b", hardware=f"l2={l2}", lengths=[(512, 512, 1)], **space)
        for mode in pm.MODES:
            oa = a["modes"][mode]["best"]["objective"]
            ob = b["modes"][mode]["best"]["objective"]
            m = r["modes"][mode]
            assert m["mix_objective"][p] == pytest.approx(1 / (0.25 / oa + 0.75 / ob), rel=1e-12)
            assert m["members"][0]["objective"][p] == oa
            assert m["members"][1]["tp"][p] == b["modes"][mode]["best"]["tp"]
            assert m["missing_member"][p] == -1
    for mode in pm.MODES:
        m = r["modes"][mode]
        assert m["best"] == int(np.argmax(m["mix_objective"]))


def test_search_mix_takes_pipeline_stages():
    # Llama-3-70B (share 1) and Llama-3-8B (share 3) on 8 H100s, TP 4 x PP 1 or 2: the 70B's
    # best is TP 4 x PP 2 x DP 1 (256 sequences within 100 ms; PP 1 stops at 64), the 8B's
    # TP 4 x PP 1 x DP 2; each member's row is its own search's best with the same pp list, and
    # the mix 1 / (0.25 / o_70B + 0.75 / o_8B). Without pp the 70B's row has one stage.
    h100 = {"accelerator": "h100-sxm", "cluster": "nvlink4-nvswitch"}
    space = dict(concurrency=(16, 64, 256), budget=8, tp=(4,), chunks=(2048,), tpot_limit=0.1)
    lens = [(2048, 256, 1)]
    r = pm.search_mix([("llama70b-h100", 1, lens), ("llama8b", 3, lens)], overrides=h100,
                      pp=(1, 2), **space)
    one = pm.search_mix([("llama70b-h100", 1, lens), ("llama8b", 3, lens)], overrides=h100,
                        **space)
    a = pm.search("llama70b-h100", overrides=h100, pp=(1, 2), lengths=lens, **space)
    b = pm.search("llama8b", overrides=h100, pp=(1, 2), lengths=lens, **space)
    for mode in pm.MODES:
        m = r["modes"][mode]
        for i, (want, pp, dp) in enumerate(((a, 2, 1), (b, 1, 2))):
            best = want["modes"][mode]["best"]
            for key in ("tp", "pp", "dp", "chunk", "concurrency", "objective"):
                assert m["members"][i][key][0] == best[key]
            assert (m["members"][i]["pp"][0], m["members"][i]["dp"][0]) == (pp, dp)
        oa = a["modes"][mode]["best"]["objective"]
        ob = b["modes"][mode]["best"]["objective"]
        assert m["mix_objective"][0] == pytest.approx(1 / (0.25 / oa + 0.75 / ob), rel=1e-12)
        assert one["modes"][mode]["members"][0]["pp"][0] == 1
        assert one["modes"][mode]["mix_objective"][0] < m["mix_objective"][0]


def test_search_mix_takes_disaggregated_deployments():
    """search_mix(disagg=True): Llama-3-70B on 16 H100s (NDR between the nodes), TP 4 or 8, one
    member alone on 8192-token prompts, 256 out, TPOT <= 20 ms is its own search(disagg=True):
    serial's best 2 prefill instances of TP 4 and one decode instance of TP 8 at 16 sequences,
    its layout, pools and objective; a second member (share 3) on 2048 in and out, whose best
    at TPOT <= 20 ms too is its own search's, joins by 1 / (0.25 / o_a + 0.75 / o_b). Without
    disagg the members have no layout key."""
    kw = dict(tp=(4, 8), chunks=(2048,), budget=16, tpot_limit=0.02,
              overrides={"cluster": "hgx-h100-ib-ndr"})
    conc = (8, 16)
    long_, even = [(8192, 256, 1)], [(2048, 2048, 1)]
    one = pm.search_mix([("llama70b-h100", 1, long_)], conc, disagg=True, **kw)
    a = pm.search("llama70b-h100", conc, lengths=long_, disagg=True, **kw)
    for mode in pm.MODES:
        got, best = one["modes"][mode]["members"][0], a["modes"][mode]["best"]
        for key in ("layout", "prefill_tp", "prefill_instances", "decode_tp",
                    "decode_instances", "tp", "dp", "concurrency", "objective"):
            assert got[key][0] == best[key], (mode, key)
        # the mix's 1 / (1 / o): two roundings
        assert one["modes"][mode]["mix_objective"][0] == pytest.approx(best["objective"],
                                                                       rel=1e-15)
    serial = one["modes"]["serial"]["members"][0]
    assert (serial["layout"][0], serial["concurrency"][0]) == ("P2xTP4+D1xTP8", 16)
    two = pm.search_mix([("llama70b-h100", 1, long_), ("llama70b-h100", 3, even)], conc,
                        disagg=True, **kw)
    b = pm.search("llama70b-h100", conc, lengths=even, disagg=True, **kw)
    for mode in pm.MODES:
        oa = a["modes"][mode]["best"]["objective"]
        ob = b["modes"][mode]["best"]["objective"]
        m = two["modes"][mode]
        assert m["mix_objective"][0] == pytest.approx(1 / (0.25 / oa + 0.75 / ob), rel=1e-12)
        assert m["members"][1]["layout"][0] == b["modes"][mode]["best"]["layout"]
    plain = pm.search_mix([("llama70b-h100", 1, even)], conc, **kw)
    assert "layout" not in plain["modes"]["serial"]["members"][0]
    with pytest.raises(pm.Error, match="device budget"):
        pm.search_mix([("llama70b-h100", 1, long_)], conc, disagg=True, **{**kw, "budget": 0})


def test_search_mix_refusals():
    with pytest.raises(TypeError, match="members"):
        pm.search_mix([("llama8b",)])
    with pytest.raises(pm.Error, match="one chip design"):
        pm.search_mix([("llama8b", 1), ("llama70b-h100", 1)], concurrency=(1,))
    r = pm.search_mix([("llama8b", 1), ("mistral7b", 1)], concurrency=(1, 2), tpot_limit=1e-6)
    m = r["modes"]["preserve"]
    assert not m["found"] and m["best"] is None and m["missing_member"][0] == 0
    assert np.isnan(m["mix_objective"][0]) and np.isnan(m["members"][0]["objective"][0])

# ---------------------------------------------------------------- disagg (issue 45)

def test_disagg_returns_the_columns_as_arrays():
    r = pm.disagg("llama70b-h100", "llama70b", [16, 64],
                  decode_overrides={"workload": "decode-bf16"}, input_tokens=2048,
                  output_tokens=512)
    assert list(r["decode_concurrency"]) == [16.0, 64.0]
    # Llama-3-70B in bf16: 80 x 2 x 8 x 128 x 2 bytes a position, 2048 positions.
    assert r["kv_bytes_per_request"][0] == 80 * 2 * 8 * 128 * 2 * 2048
    for mode in pm.MODES:
        ttft = r[f"{mode}_ttft_s"]
        parts = r[f"{mode}_prefill_s"] + r[f"{mode}_queue_s"] + r[f"{mode}_transfer_s"]
        assert np.allclose(ttft, parts, rtol=1e-12)
        assert np.all(r[f"{mode}_tokens_per_s_per_mm2"] > 0)


def test_disagg_link_defaults_to_the_prefill_clusters():
    """The KV link by default: the prefill cluster's inter-node link where it names one (NDR:
    400 Gb/s = 50 GB/s and 10 us), else inference-sim's 25 GB/s and 50 us, as the CLI's (the
    module took 25 GB/s everywhere). Whole transfers, each of the 8 prefill devices sending an
    eighth of 80 x 2 x 8 x 128 x 2 x 2048 bytes, alone on the link at one request/s."""
    kw = dict(decode_overrides={"workload": "decode-bf16"}, input_tokens=2048, output_tokens=256,
              layer_streamed=False, rate=1.0)
    per_device = 80 * 2 * 8 * 128 * 2 * 2048 / 8
    ndr = pm.disagg("llama70b-h100", "llama70b", [16],
                    prefill_overrides={"cluster": "hgx-h100-ib-ndr"}, **kw)
    plain = pm.disagg("llama70b-h100", "llama70b", [16], **kw)
    given = pm.disagg("llama70b-h100", "llama70b", [16], link_latency=1e-6,
                      prefill_overrides={"cluster": "hgx-h100-ib-ndr"}, **kw)
    for mode in pm.MODES:
        assert ndr[f"{mode}_transfer_s"][0] == pytest.approx(10e-6 + per_device / 50e9, rel=1e-12)
        assert plain[f"{mode}_transfer_s"][0] == pytest.approx(50e-6 + per_device / 25e9,
                                                               rel=1e-12)
        assert given[f"{mode}_transfer_s"][0] == pytest.approx(1e-6 + per_device / 50e9,
                                                               rel=1e-12)


def test_disagg_nan_link_refused():
    """A NaN link of the caller's is refused: NaN stood for "the cluster's" inside, so
    link_bandwidth=nan gave the default 25 GB/s link's answer."""
    for key in ("link_bandwidth", "link_latency"):
        with pytest.raises(ValueError, match=key):
            pm.disagg("llama70b-h100", "llama70b-h100", [16], **{key: float("nan")})


def test_disagg_warns_past_the_trained_context():
    """8000 + 8000 tokens on Llama-2-70B (max_position_embeddings 4096): a UserWarning, as
    serve() and the disagg command say it."""
    ov = {"model": "llama2-70b"}
    with pytest.warns(UserWarning, match="8000 \\+ 8000 tokens exceeds the model's "
                                         "max_position_embeddings 4096"):
        pm.disagg("llama70b-h100", "llama70b-h100", [4], prefill_overrides=ov,
                  decode_overrides=ov, input_tokens=8000, output_tokens=8000)


def test_disagg_concurrency_is_whole():
    """Sequences in flight are whole, as the CLI's --concurrency (2.5 ran as a fluid 2.5)."""
    with pytest.raises(ValueError, match="concurrency"):
        pm.disagg("llama70b-h100", "llama70b", [4, 2.5],
                  decode_overrides={"workload": "decode-bf16"})


def test_disagg_codesign_names_each_pools_best():
    c = pm.disagg_codesign("llama70b-h100", "llama70b", "decode", "l2=8MiB,64MiB,256MiB", 64,
                           decode_overrides={"workload": "decode-bf16"})
    assert c["column"] == "l2_capacity_MiB"
    assert list(c["values"]) == [8.0, 64.0, 256.0]
    d = c["points"]["preserve_decode_tokens_per_s_per_mm2"]
    assert c["best"] == int(np.argmax(d))
    # The swept pool's chip past the reticle is said (the 910B's modelled die at 512 MiB), as
    # the CLI's codesign warns; 8 to 256 MiB warns of nothing (above).
    with pytest.warns(UserWarning, match=r"over the 858 mm2 reticle at 1 of the l2 axis's 2 "
                                         r"values \(from l2_capacity_MiB 512"):
        pm.disagg_codesign("llama70b-h100", "llama70b", "decode", "l2=8MiB,512MiB", 64,
                           decode_overrides={"workload": "decode-bf16"})


def test_disagg_refuses_different_models_naming_the_key():
    with pytest.raises(pm.Error) as e:
        pm.disagg("llama70b-h100", "llama8b")
    assert e.value.path == "decode.model"
    with pytest.raises(ValueError):
        pm.disagg_codesign("llama70b-h100", "llama70b", pool="both")


def test_disagg_has_the_colocated_deployments_beside_it():
    """The CLI's colocated_* columns (the module lacked them): on each pool's chip, the
    co-located deployment at the disaggregated one's decode concurrency, decode-first, `chunk`
    tokens a step (2048 by default, the CLI's --chunk), under the same limits: serve()'s
    figures. A chunk of 8 under 16 sequences is raised to 17 (their decodes and a prompt token).
    The pools have no default (disagg() named two that refuse together)."""
    kw = dict(input_tokens=2048, output_tokens=256, tpot_limit=0.05)
    dec = {"workload": "decode-bf16"}
    for chunk, served in ((None, 2048), (512, 512), (8, 17)):
        r = pm.disagg("llama70b-h100", "llama70b", [16], decode_overrides=dec, chunk=chunk, **kw)
        for chip, cfg, ov in (("prefill", "llama70b-h100", None), ("decode", "llama70b", dec)):
            s = pm.serve(cfg, [16], ov, chunk=served, **kw)
            for mode in pm.MODES:
                for f in ("tokens_per_s_per_device", "tokens_per_s_per_user",
                          "tokens_per_s_per_mm2", "ttft_s", "tpot_s"):
                    assert r[f"colocated_{chip}_chip_{mode}_{f}"][0] == s[f"{mode}_{f}"][0]
    # The CLI's columns, the same names and (to its 9 digits) values.
    head, rows = tool_csv("disagg", "--prefill-config", "llama70b-h100", "--decode-config",
                          "llama70b", "--decode-set", "workload=decode-bf16", "--concurrency",
                          "16", "--input", "2048", "--output", "256", "--tpot-limit", "50ms",
                          "--chunk", "8", "-f", "csv")
    co = [h for h in head if h.startswith("colocated_")]
    assert len(co) == 2 * 3 * 5 and co == [k for k in r if k.startswith("colocated_")]
    for h in co:
        assert float(rows[0][head.index(h)]) == pytest.approx(r[h][0], rel=1e-8)
    with pytest.raises(TypeError, match="chunk"):
        pm.disagg("llama70b-h100", "llama70b", [16], decode_overrides=dec, chunk=2048.0)
    with pytest.raises(ValueError, match="chunk"):
        pm.disagg("llama70b-h100", "llama70b", [16], decode_overrides=dec, chunk=0)
    with pytest.raises(TypeError):
        pm.disagg()

def test_disagg_speculates_in_both_pools():
    # One MTP layer drafting 2 at 0.5 accepted: E = 1 + 0.5 + 0.25 = 1.75 tokens a verify step;
    # the cache sent holds (80 + 1) layers x 2 x 8 x 128 x 2 bytes a position.
    kw = dict(input_tokens=1024, output_tokens=129, instances=(8, 1))
    plain = pm.disagg("llama70b-h100", "llama70b-h100", [16], **kw)
    spec = pm.disagg("llama70b-h100", "llama70b-h100", [16], spec_tokens=2, spec_accept=0.5,
                     spec_mtp=1, prefill_overrides=MTP1, decode_overrides=MTP1, **kw)
    assert spec["kv_bytes_per_request"][0] == 81 * 2 * 8 * 128 * 2 * 1024
    for mode in pm.MODES:
        # a request's 128 tokens take 128 / 1.75 steps: TPOT = step / 1.75 (the step itself
        # is the verify step plus the draft's, not a column: recovered from the decode rate)
        rate = spec[f"{mode}_requests_per_s"][0]
        step = 16 / (rate * 128 / 1.75)
        assert np.isclose(spec[f"{mode}_tpot_s"][0], step / 1.75, rtol=1e-12)
        assert spec[f"{mode}_tpot_s"][0] != plain[f"{mode}_tpot_s"][0]
    with pytest.raises(pm.Error) as e:
        pm.disagg("llama70b-h100", "llama70b-h100", decode_overrides={
            "speculative.draft_tokens": 2, "speculative.acceptance": 0.5,
            "speculative.method": "mtp", "speculative.mtp_layers": 1,
            "speculative.source": "test", "model.num_nextn_predict_layers": 1})
    assert e.value.path == "prefill.speculative"


# ---------------------------------------------------------------- speculative decoding (issue 45)

def test_speculation_keywords_are_the_tools_options():
    want = tool("--config", "llama70b-h100", "--format", "json", "--spec-tokens", "3",
                "--spec-accept", "0.9,0.5,0.2", "--spec-draft", "llama3-8b")
    got = pm.estimate("llama70b-h100", data_dir=DATA, spec_tokens=3, spec_accept=[0.9, 0.5, 0.2],
                      spec_draft="llama3-8b")
    assert got == json.loads(want)
    # Leviathan's expected tokens by hand: 1 + 0.9 + 0.45 + 0.09
    assert got["speculative"]["tokens_per_step"] == pytest.approx(2.44, rel=1e-15)


def test_speculation_refusal_names_the_key():
    with pytest.raises(pm.Error, match=r"\$\.speculative\.acceptance"):
        pm.estimate("llama70b", data_dir=DATA, spec_tokens=2, spec_accept=1.0, spec_mtp=1)
    # A keyword's own name, not the shortcut's rule it borrows ("batch: expected an integer").
    with pytest.raises(TypeError, match="^spec_tokens: expected an integer"):
        pm.estimate("deepseek-v3-mtp", data_dir=DATA, spec_tokens=2.0)
    with pytest.raises(TypeError, match="^spec_mtp: expected an integer"):
        pm.estimate("deepseek-v3-mtp", data_dir=DATA, spec_tokens=2, spec_accept=0.5,
                    spec_mtp=1.5)


def test_speculation_off_alone_is_the_plain_run():
    """spec_tokens=0 alone, on a scenario without a "speculative" block, is the plain run (it
    asked for an acceptance rate, which zero drafted tokens never read)."""
    assert pm.estimate("llama70b-h100", data_dir=DATA, spec_tokens=0) == \
        pm.estimate("llama70b-h100", data_dir=DATA)


def test_search_shards_merge_to_the_whole():
    """search(..., shard=(k, n)) over n slices of the groups, merged by search_merge in shard
    order, is the unsharded answer: counts, bests, binds and fronts, value for value (1, 2, 3
    and 5 shards of 12 groups: TP 4 and 8, two chunk budgets, three L2 sizes)."""
    kw = dict(tp=(4, 8), chunks=(512, 2048), tpot_limit=0.03, objective="mm2",
              hardware="l2=48MiB,96MiB,192MiB", threads=1)
    conc = (1, 8, 32, 64, 128)
    whole = pm.search("llama70b", conc, **kw)
    for n in (1, 2, 3, 5):
        parts = [pm.search("llama70b", conc, shard=(k, n), **kw) for k in range(1, n + 1)]
        assert sum(p["points"] for p in parts) == whole["points"]
        got = pm.search_merge(parts)
        for key in ("points", "evaluated", "pruned", "invalid_deployments", "first_invalid"):
            assert got[key] == whole[key]
        for mode in pm.MODES:
            a, b = got["modes"][mode], whole["modes"][mode]
            assert (a["found"], a["binds"], a["best"]) == (b["found"], b["binds"], b["best"])
            assert a["front"].keys() == b["front"].keys()
            for col in a["front"]:
                np.testing.assert_array_equal(a["front"][col], b["front"][col])
    # A shard alone is not the whole: its best can only be lower or equal.
    first = pm.search("llama70b", conc, shard=(1, 3), **kw)
    assert first["points"] < whole["points"]
    with pytest.raises(ValueError):
        pm.search("llama70b", conc, shard=(4, 3), **kw)
    with pytest.raises(TypeError):
        pm.search("llama70b", conc, shard=3, **kw)
    with pytest.raises(ValueError):
        pm.search_merge([])
    # Shards that are not one search's 1/n .. n/n once each in order are refused (they merged
    # into a plausible answer: another model's best, counts doubled, a shard taken as whole).
    parts = [pm.search("llama70b", conc, shard=(k, 2), **kw) for k in (1, 2)]
    other = pm.search("llama8b", conc, shard=(2, 2), **kw)
    assert pm.search_merge(parts)["space"] == whole["space"]
    for bad, what in (([parts[0], other], "another search"), ([parts[0], parts[0]], "once each"),
                      ([parts[1]], "once each"), (parts[::-1], "in order"),
                      ([whole, parts[1]], "once each"), ([{"points": 1}], "not a search")):
        with pytest.raises(ValueError, match=what):
            pm.search_merge(bad)


def test_inputs_the_tool_refuses_are_refused():
    """Values the CLI refuses were taken silently: concurrency beside rate (ignored), empty
    lengths (the scenario's), a share as text or a bool, a fractional max_instances (2.7 -> 2),
    layer_streamed="no" (True), and bools as counts (threads, stage, instances)."""
    with pytest.raises(ValueError, match="concurrency and rate: not both"):
        pm.serve("llama70b-h100", concurrency=[4], rate=[1])
    with pytest.raises(ValueError, match="lengths: expected at least one"):
        pm.serve("llama70b-h100", [1], lengths=[])
    with pytest.raises(ValueError, match="lengths: expected at least one"):
        pm.search_mix([("llama8b", 1, [])], concurrency=(1,))
    for share in ("1", True):
        with pytest.raises(TypeError, match="lengths: expected"):
            pm.serve("llama70b-h100", [1], lengths=[(100, 10, share)])
    dis = dict(decode_overrides={"workload": "decode-bf16"})
    with pytest.raises(TypeError, match="max_instances: expected an integer"):
        pm.disagg("llama70b-h100", "llama70b", [16], max_instances=2.7, **dis)
    with pytest.raises(TypeError, match="layer_streamed: expected True"):
        pm.disagg("llama70b-h100", "llama70b", [16], layer_streamed="no", **dis)
    with pytest.raises(ValueError, match="instances: expected"):
        pm.disagg("llama70b-h100", "llama70b", [16], instances=(True, True), **dis)
    with pytest.raises(TypeError, match="threads: expected an integer"):
        pm.sweep("llama8b", threads=True, batch=[1])
    with pytest.raises(TypeError, match="stage: expected an integer"):
        pm.explain("llama8b", stage=True)
    # what they were given as, taken
    assert pm.serve("llama70b-h100", [1], lengths=[(100, 10, 1)])["concurrency"][0] == 1
