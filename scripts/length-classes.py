#!/usr/bin/env python3
"""Length classes of a request trace, for `serve --lengths`: a data/lengths/ file from a CSV of
requests (Azure LLM inference trace 2023: TIMESTAMP,ContextTokens,GeneratedTokens).

The requests are sorted by prompt length and cut into CLASSES groups of (nearly) equal count;
each group becomes a class whose input and output are the group's mean prompt and mean output
(rounded to a token) and whose share is its fraction of the requests. The trace's mean prompt and
mean output are kept (to rounding), and within a group of similar prompts the mean output keeps
most of the coupling between prompt and output length that the decode contexts depend on.

    scripts/length-classes.py TRACE.csv NAME "SOURCE TEXT" [CLASSES] > data/lengths/NAME.json

A benchmark's synthetic lengths drawn uniformly and independently (SGLang's bench_serving
--dataset-name random: each prompt and output length an integer uniform in
[max(floor(L x ratio), 1), L]) are cut exactly instead: the prompt range into IN_BINS and the
output range into OUT_BINS intervals of equal count, a class per pair, its share the product of
the intervals' (each 1 / (IN_BINS x OUT_BINS)), its lengths the intervals' means rounded half up.

    scripts/length-classes.py --uniform IN_LO IN_HI OUT_LO OUT_HI IN_BINS OUT_BINS NAME "SOURCE"
"""
import csv
import json
import math
import sys


def classes_of(rows, k):
    rows = sorted(rows)
    n = len(rows)
    out = []
    for i in range(k):
        part = rows[i * n // k:(i + 1) * n // k]
        if not part:
            continue
        out.append({
            "input_tokens": max(1, round(sum(r[0] for r in part) / len(part))),
            "output_tokens": max(1, round(sum(r[1] for r in part) / len(part))),
            "share": round(len(part) / n, 6),
        })
    return out


def bins(lo, hi, k):
    """k intervals of equal count over the integers lo..hi: (mean, share) each."""
    n = hi - lo + 1
    out = []
    for i in range(k):
        a, b = lo + i * n // k, lo + (i + 1) * n // k - 1
        out.append(((a + b) / 2, (b - a + 1) / n))
    return out


def uniform(args):
    in_lo, in_hi, out_lo, out_hi, in_bins, out_bins = (int(a) for a in args[:6])
    name, source = args[6:8]
    classes = []
    for i_mean, i_share in bins(in_lo, in_hi, in_bins):
        for o_mean, o_share in bins(out_lo, out_hi, out_bins):
            classes.append({"input_tokens": int(math.floor(i_mean + 0.5)),
                            "output_tokens": int(math.floor(o_mean + 0.5)),
                            "share": round(i_share * o_share, 6)})
    return {
        "kind": "lengths",
        "name": name,
        "description": "prompts uniform in %d..%d and outputs uniform in %d..%d tokens, "
                       "independent: %d x %d classes of equal count" % (in_lo, in_hi, out_lo,
                                                                       out_hi, in_bins, out_bins),
        "classes": classes,
        "source": source,
    }


def main():
    if len(sys.argv) == 10 and sys.argv[1] == "--uniform":
        json.dump(uniform(sys.argv[2:]), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    path, name, source = sys.argv[1:4]
    k = int(sys.argv[4]) if len(sys.argv) == 5 else 8
    with open(path, newline="") as f:
        rows = [(int(r["ContextTokens"]), int(r["GeneratedTokens"])) for r in csv.DictReader(f)]
    n = len(rows)
    doc = {
        "kind": "lengths",
        "name": name,
        "description": "%d requests in %d classes of equal count by prompt length; mean prompt "
                       "%.0f, mean output %.0f tokens" % (n, k, sum(r[0] for r in rows) / n,
                                                          sum(r[1] for r in rows) / n),
        "classes": classes_of(rows, k),
        "source": source,
    }
    json.dump(doc, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
