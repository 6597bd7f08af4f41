#!/usr/bin/env python3
"""Strips a results document to what a comparison of runs reads, for the test fixtures under
tests/data/history/: the timed records only (a geometry sweep's simulated-only points dropped),
each without its simulated misses, model predictions and counters. Timing, same-run reference
and everything else are kept as measured. Writes gzip-compressed JSON.

Usage: scripts/history-fixture.py IN.json OUT.json.gz
"""
import gzip
import json
import sys

src, dst = sys.argv[1], sys.argv[2]
with open(src) as f:
    doc = json.load(f)
records = [r for r in doc["records"] if r.get("timing")]
for r in records:
    r["simulated"] = None
    r["counters"] = None
    r.pop("model", None)
doc["records"] = records
with gzip.open(dst, "wt", compresslevel=9) as f:
    json.dump(doc, f, separators=(",", ":"))
