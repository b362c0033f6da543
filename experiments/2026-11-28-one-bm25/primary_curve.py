"""The primary threshold's mean F1 and mean precision on dev, out of fold, at each threshold of the
grid ``make train`` searches; then the ranker trained as ``make train`` trains it, written to
``/tmp/diag/ranker.json`` (not over the shipped one).

    python experiments/2026-11-28-one-bm25/primary_curve.py
"""

from __future__ import annotations

from pathlib import Path

import apiatlas.evals.train as t

_chosen = t.primary_threshold


def traced(examples, probabilities):  # noqa: ANN001, ANN201
    cases = []
    for ex, probs in zip(examples, probabilities, strict=True):
        if not ex.case.answerable or not probs:
            continue
        wanted = set(ex.case.expected) | set(ex.case.acceptable)
        order = sorted(range(len(probs)), key=lambda i: -probs[i])[:t.PRESENTED]
        hits = [t.endpoint_key(ex.pool.refs[i].signature) in wanted for i in order]
        cases.append(([probs[i] for i in order], hits, len(set(ex.case.expected))))
    for threshold in [round(0.05 * i, 2) for i in range(1, 20)]:
        f1s, precisions = [], []
        for probs, hits, n_expected in cases:
            chosen = [0] + [i for i in range(1, len(probs)) if probs[i] >= threshold]
            right = sum(hits[i] for i in chosen)
            precision, recall = right / len(chosen), min(right / max(n_expected, 1), 1.0)
            f1s.append(2 * precision * recall / (precision + recall) if right else 0.0)
            precisions.append(precision)
        print(f"threshold {threshold:.2f} mean F1 {sum(f1s) / len(f1s):.4f} "
              f"mean precision {sum(precisions) / len(precisions):.4f} cases {len(cases)}",
              flush=True)
    return _chosen(examples, probabilities)


if __name__ == "__main__":
    t.primary_threshold = traced
    Path("/tmp/diag").mkdir(exist_ok=True)
    t.main(["--out", "/tmp/diag/ranker.json"])
