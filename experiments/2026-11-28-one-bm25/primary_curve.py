"""The primary threshold's mean F1 and mean precision on dev, out of fold, at each threshold of the
grid ``make train`` searches (:func:`apiatlas.evals.calibration.primary_curve`); then the ranker trained
as ``make train`` trains it, written to ``/tmp/diag/ranker.json`` (not over the shipped one).

    python experiments/2026-11-28-one-bm25/primary_curve.py
"""

from __future__ import annotations

from pathlib import Path

import apiatlas.evals.train as t
from apiatlas.evals.calibration import primary_curve

_chosen = t.primary_threshold


def traced(examples, probabilities):  # noqa: ANN001, ANN201
    answerable = sum(ex.case.answerable for ex in examples)
    for threshold, f1, precision in primary_curve(examples, probabilities):
        print(f"threshold {threshold:.2f} mean F1 {f1:.4f} mean precision {precision:.4f} "
              f"cases {answerable}", flush=True)
    return _chosen(examples, probabilities)


if __name__ == "__main__":
    t.primary_threshold = traced
    Path("/tmp/diag").mkdir(exist_ok=True)
    t.main(["--out", "/tmp/diag/ranker.json"])
