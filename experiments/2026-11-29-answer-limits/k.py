"""What the answer's ``k`` default (5 endpoints) shows on the dev questions against other
values (issue 35).

    .venv/bin/python experiments/2026-11-29-answer-limits/k.py HOMES [OUT.json]

``HOMES`` holds the dev datasets' homes (``apiatlas eval --keep-homes``). Every dev question
is asked at each ``k``; for the answerable ones the script reports the share of expected
endpoints the answer presents (primary, prerequisites and related, as the eval reads them),
the share of answers that present all of them, how many endpoints an answer presents and
what share of those are expected or acceptable (0 for an abstention). It prints no question
text and reads no test dataset.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DATASETS, VALIDATION
from apiatlas.graph.signatures import endpoint_key

KS = (1, 3, 5, 8, 10)


def main(homes: Path, out: Path | None) -> None:
    sets = []
    for path in dataset_files(DATASETS / "dev"):
        data = load_dataset(path)
        sets.append((data, ApiAtlas(Settings(home=homes / data.name, project=data.name))))
    results: dict[str, Any] = {}
    for k in KS:
        rows: dict[str, list[tuple[float, float, int, float]]] = {"validation": [], "training dev": []}
        for data, atlas in sets:
            split = "validation" if data.name in VALIDATION else "training dev"
            for case in data.cases:
                if not case.answerable:
                    continue
                result = atlas.ask(case.question, project=data.name, k=k)
                shown = [] if result.abstained else list(dict.fromkeys(
                    endpoint_key(f"{e.method} {e.path}") for e in result.endpoints))
                expected = {endpoint_key(e) for e in case.expected}
                wanted = expected | {endpoint_key(e) for e in case.acceptable}
                found = len(expected & set(shown)) / len(expected)
                right = len(wanted & set(shown)) / len(shown) if shown else 0.0
                rows[split].append((found, float(found == 1.0), len(shown), right))
        results[f"k {k}"] = {
            split: {"cases": len(r), "recall": round(statistics.mean(x[0] for x in r), 3),
                    "all_expected": round(statistics.mean(x[1] for x in r), 3),
                    "presented_median": statistics.median(x[2] for x in r),
                    "presented_mean": round(statistics.mean(x[2] for x in r), 2),
                    "precision": round(statistics.mean(x[3] for x in r), 3)}
            for split, r in rows.items()}
        print(k, json.dumps(results[f"k {k}"]), flush=True)
    if out:
        out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
