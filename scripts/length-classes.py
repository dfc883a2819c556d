#!/usr/bin/env python3
"""Length classes of a request trace, for `serve --lengths`: a data/lengths/ file from a CSV of
requests (Azure LLM inference trace 2023: TIMESTAMP,ContextTokens,GeneratedTokens).

The requests are sorted by prompt length and cut into CLASSES groups of (nearly) equal count;
each group becomes a class whose input and output are the group's mean prompt and mean output
(rounded to a token) and whose share is its fraction of the requests. The trace's mean prompt and
mean output are kept (to rounding), and within a group of similar prompts the mean output keeps
most of the coupling between prompt and output length that the decode contexts depend on.

    scripts/length-classes.py TRACE.csv NAME "SOURCE TEXT" [CLASSES] > data/lengths/NAME.json
"""
import csv
import json
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


def main():
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
