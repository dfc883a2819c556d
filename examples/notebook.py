# %% [markdown]
# # PRESERVE's design space from Python
#
# What a notebook does with the `preserve_model` module: two of the paper's design-space
# figures (arXiv 2501.08192) and a serving-style per-step query, each from a few calls.
# Run it as a script (`python3 examples/notebook.py [FIGURE.png]`, with the module on
# PYTHONPATH: `build/python` in a build tree, the prefix's site-packages once installed) or
# paste the cells into Jupyter. The numbers are the library's; this file only draws.
#
# - Fig 10: PRESERVE's speedup over the serial baseline as tensor parallelism scales out, per
#   model (the paper: the speedup rises up to 32 devices and falls beyond).
# - Fig 7: throughput density (tokens/s per mm2 of die, all devices) against the L2 capacity,
#   without and with prefetching (the paper: with prefetching it keeps rising to ~104 MB).
# - Per decode step: how one step's time grows with the context, per mode (StepModel).

# %%
import sys

import matplotlib

if __name__ == "__main__" and "ipykernel" not in sys.modules:
    matplotlib.use("Agg")  # a script writes a file; a notebook shows the figure inline
import matplotlib.pyplot as plt
import numpy as np

import preserve_model as pm

SCENARIO = "paper-dse"  # the bundled design-space preset: Ascend 910B-like devices on a ring
MODELS = ["llama3-8b", "llama3-70b", "qwen2-7b", "qwen2-72b", "phi3-small", "phi3-medium"]
MODES = ["serial", "fused", "preserve"]
out = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith("-") else "notebook.png"

base = pm.estimate(SCENARIO)
inputs = base["inputs"]
title = (f"scenario {SCENARIO}: {inputs['model']} on {inputs['accelerator']} x {inputs['devices']}, "
         f"batch {inputs['batch']}, sequence {inputs['seq_len']} (preserve-model {pm.version()})")

fig, (ax10, ax7, axstep) = plt.subplots(1, 3, figsize=(16, 4.8), constrained_layout=True)
fig.suptitle(title)

# %% [markdown]
# ## Fig 10: speedup against the device count
# One sweep per model over devices = 1, 2, 4 ... 128 (the scenario shards heads ideally, so
# the device count may exceed the head count).

# %%
for model in MODELS:
    s = pm.sweep(SCENARIO, {"model": model}, devices="1:128:x2")
    ok = s["error"] == ""
    ax10.plot(s["devices"][ok], s["speedup_preserve_vs_serial"][ok], marker="o", label=model)
ax10.set_xscale("log", base=2)
ax10.set_xticks([1, 2, 4, 8, 16, 32, 64, 128], ["1", "2", "4", "8", "16", "32", "64", "128"])
ax10.axhline(1.0, color="grey", lw=0.8, ls=":")
ax10.set_xlabel("devices (tensor parallel)")
ax10.set_ylabel("PRESERVE speedup over serial (x)")
ax10.set_title("Fig 10: speedup vs devices")
ax10.legend(fontsize=8)

# %% [markdown]
# ## Fig 7: throughput density against the L2 capacity
# The accelerator's die grows with its L2 (7 nm SRAM area), so without prefetching a larger L2
# only costs area, while PRESERVE turns it into speed up to a point.

# %%
s = pm.sweep(SCENARIO, l2="8MiB:256MiB:8MiB")
for mode in ("serial", "preserve"):
    density = s[f"density_{mode}_tokens_per_s_per_mm2"]
    line, = ax7.plot(s["l2_capacity_MiB"], density, label=mode)
    best = int(np.nanargmax(density))
    ax7.plot(s["l2_capacity_MiB"][best], density[best], "*", ms=12, color=line.get_color())
    ax7.annotate(f"{s['l2_capacity_MiB'][best]:.0f} MiB", (s["l2_capacity_MiB"][best], density[best]),
                 textcoords="offset points", xytext=(6, 6), fontsize=8)
ax7.margins(y=0.12)  # room for the labels of the best points
ax7.set_xlabel("L2 capacity (MiB)")
ax7.set_ylabel("throughput density (tokens/s/mm$^2$)")
ax7.set_title("Fig 7: density vs L2 (best marked)")
ax7.legend(fontsize=8)

# %% [markdown]
# ## One decode step, as a serving simulator asks
# StepModel prepares a scenario and mode once; each step time then costs well under a
# microsecond, so whole request traces can be timed.

# %%
contexts = np.arange(1024, inputs["seq_len"], 512)
for mode, style in zip(MODES, ["-", "--", "-"]):
    step = pm.StepModel(SCENARIO, mode)
    step_ms = step.decode_times(contexts) * 1e3
    axstep.plot(contexts / 1024, step_ms, style, label=mode)
axstep.set_xlabel("context (Ki tokens)")
axstep.set_ylabel("one decode step (ms)")
axstep.set_title("per-step time vs context")
axstep.legend(fontsize=8)

# %%
fig.savefig(out, dpi=110)
print(f"wrote {out}")
