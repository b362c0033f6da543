"""The agent's mean dev figures of eval reports, grouped as `../2026-11-28-one-bm25/compare.py`
groups them: dev (the nine dev sets outside validation, sample-memory included) and validation
(DocuSign, Figma, Intercom). Test sets are skipped.

    .venv/bin/python experiments/2026-11-28-semantic-threshold/means.py REPORT.json [...]

``STRATEGY=hybrid`` (or another strategy the reports ran) averages that strategy instead of the
agent; metrics a strategy does not have print as 0.
"""

from __future__ import annotations

import json
import os
import sys

from apiatlas.evals.train import VALIDATION

METRICS = ("top1", "top1_acceptable", "recall@5", "primary_precision", "abstention_accuracy",
           "false_abstention")
DEV = ("box", "kubernetes", "openai", "sample", "sample-memory", "sendgrid", "slack", "twilio",
       "xero")


def main(files: list[str]) -> None:
    for file in files:
        results = json.load(open(file, encoding="utf-8"))["results"]
        for label, names in (("dev", DEV), ("validation", VALIDATION)):
            rows = [results[n][os.environ.get("STRATEGY", "agent")] for n in names]
            means = {m: sum(r.get(m) or 0.0 for r in rows) / len(rows) for m in METRICS}
            print(f"{file} {label} ({len(rows)}): "
                  + "; ".join(f"{m} {v:.3f}" for m, v in means.items()))


if __name__ == "__main__":
    main(sys.argv[1:])
