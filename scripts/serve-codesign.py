#!/usr/bin/python3
"""The joint optimum of the chunk budget and the L2 size at a TPOT limit (issue 43, item 7):
for each L2 size and chunk budget, the most output tokens/s per device any concurrency reaches
with its mean TPOT within the limit and its cache within the HBM, per mode.

Usage (from a build tree): PYTHONPATH=build/python scripts/serve-codesign.py [SCENARIO]
    [--tpot-ms 50] [--l2 48,96,192,384] [--chunks 512,1024,2048,4096,8192]"""
import argparse

import numpy as np

import preserve_model as pm

MODES = ("serial", "fused", "preserve")


def best(config, l2_mib, chunk, tpot_s, overrides):
    conc = np.unique(np.round(np.geomspace(1, 1024, 41)))
    ov = dict(overrides, **{"accelerator.l2_capacity_MiB": l2_mib})
    f = pm.serve(config, concurrency=conc, chunk=chunk, overrides=ov)
    out = {}
    for m in MODES:
        ok = (f[f"{m}_tpot_s"] <= tpot_s) & (f["fits_hbm"] > 0)
        t = np.where(ok, f[f"{m}_tokens_per_s_per_device"], 0.0)
        i = int(np.argmax(t))
        out[m] = (t[i], conc[i] if t[i] > 0 else 0)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", nargs="?", default="llama70b")
    ap.add_argument("--tpot-ms", type=float, default=50.0)
    ap.add_argument("--l2", default="48,96,192,384")
    ap.add_argument("--chunks", default="512,1024,2048,4096,8192")
    ap.add_argument("--set", action="append", default=[], help="PATH=VALUE, as the CLI's")
    a = ap.parse_args()
    overrides = dict(s.split("=", 1) for s in a.set)
    l2s = [float(x) for x in a.l2.split(",")]
    chunks = [int(x) for x in a.chunks.split(",")]
    print(f"# {a.scenario}: best tokens/s per device at mean TPOT <= {a.tpot_ms:g} ms "
          f"(concurrency in brackets), per L2 size and chunk budget")
    print("l2_MiB,chunk," + ",".join(f"{m}_tokens_per_s_per_device,{m}_concurrency" for m in MODES))
    overall = {m: (0.0, None) for m in MODES}
    for l2 in l2s:
        for c in chunks:
            r = best(a.scenario, l2, c, a.tpot_ms / 1e3, overrides)
            print(f"{l2:g},{c}," + ",".join(f"{r[m][0]:.1f},{r[m][1]:.0f}" for m in MODES))
            for m in MODES:
                if r[m][0] > overall[m][0]:
                    overall[m] = (r[m][0], (l2, c, r[m][1]))
    for m in MODES:
        t, where = overall[m]
        print(f"# {m}: best {t:.1f} tokens/s per device" +
              (f" at L2 {where[0]:g} MiB, chunk {where[1]}, concurrency {where[2]:.0f}" if where else ""))


if __name__ == "__main__":
    main()
