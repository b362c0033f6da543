"""The hybrid retriever's recall of expected endpoints within its first k distinct endpoints,
on the dev questions of a full eval report (issue 35: the retriever's ``k`` default, 8).

    .venv/bin/python experiments/2026-11-29-answer-limits/retriever_k.py REPORT.json

``REPORT.json`` is an ``apiatlas eval`` report with the ``hybrid`` strategy, whose ranked list
holds the distinct endpoints of the retriever's first 20 documents. Reads no test case.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from apiatlas.evals.train import VALIDATION
from apiatlas.graph.signatures import endpoint_key

KS = (1, 3, 5, 8, 10, 20)


def main(report_path: Path) -> None:
    report = json.loads(report_path.read_text(encoding="utf-8"))
    dev = {n for n, d in report["datasets"].items() if d["split"] == "dev"}
    cases = [c for c in report["cases"]
             if c["strategy"] == "hybrid" and c["answerable"] and c["dataset"] in dev]
    for split, mine in (("validation", [c for c in cases if c["dataset"] in VALIDATION]),
                        ("training dev", [c for c in cases if c["dataset"] not in VALIDATION])):
        row = []
        for k in KS:
            found = []
            for c in mine:
                expected = {endpoint_key(e) for e in c["expected"]}
                found.append(len(expected & {endpoint_key(e) for e in c["ranked"][:k]})
                             / len(expected))
            row.append(f"@{k} {statistics.mean(found):.3f}")
        print(f"{split} ({len(mine)} answerable): " + ", ".join(row))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
