#!/usr/bin/env python3
"""Prints a libFuzzer dictionary of the HuggingFace reader's vocabulary: every key and family
name the reader's sources spell (src/hf_family.c, read_model.c, read_attention.c,
read_fields.c) and every key and short string value of the HuggingFace configs in
tests/configs/hf*/ (one per supported family and more). scripts/fuzz.sh appends it to
fuzz/json.dict for the hf harness, so a mutation can write any family's keys.

Usage: scripts/hf-dict.py [ROOT]   (ROOT: the source tree, default this script's parent's)
"""
import glob
import json
import os
import re
import sys

root = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
words = set()
for name in ("hf_family.c", "read_model.c", "read_attention.c", "read_fields.c"):
    with open(os.path.join(root, "src", name), encoding="utf-8") as f:
        words.update(m.group(1) for m in re.finditer(r'"([a-z][a-z0-9_.-]{1,48})"', f.read()))


def walk(node):
    if isinstance(node, dict):
        for key, value in node.items():
            words.add(key)
            walk(value)
    elif isinstance(node, list):
        for value in node:
            walk(value)
    elif isinstance(node, str) and len(node) < 40:
        words.add(node)


for path in sorted(glob.glob(os.path.join(root, "tests", "configs", "hf*", "*.json"))):
    with open(path, encoding="utf-8") as f:
        walk(json.load(f))
print("# The HuggingFace reader's keys and family names (scripts/hf-dict.py)")
for w in sorted(words):
    if re.fullmatch(r"[A-Za-z0-9_.\- ]{2,48}", w):
        print('"\\"%s\\""' % w)
