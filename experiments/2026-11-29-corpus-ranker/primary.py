"""The primary-threshold grid and ``PRESENTED`` measured on the pools of ``collect.py`` (dev only):
the threshold ``train`` would choose from a finer grid that reaches 0.99, and the primary list's
F1 and precision at each threshold on the training dev sets (out of fold) and the validation
sets (the model of all training dev sets).

    .venv/bin/python experiments/2026-11-29-corpus-ranker/primary.py POOLS.pkl
"""

from __future__ import annotations

import pickle
import statistics
import sys
from functools import partial
from pathlib import Path

from apiatlas.evals import calibration
from apiatlas.evals.train import DISABLED, fit_candidates, out_of_fold
from apiatlas.graph.signatures import endpoint_key
from apiatlas.rag.ranking.model import masked

GRIDS = {"shipped 0.05..0.95": [round(0.05 * i, 2) for i in range(1, 20)],
         "0.05..0.99 by 0.01": [round(0.01 * i, 2) for i in range(5, 100)]}


def curve(examples, probabilities, grid):
    rows = {}
    for t in grid:
        f1, precision = [], []
        for ex, probs in zip(examples, probabilities, strict=True):
            if not ex.case.answerable or not probs:
                continue
            wanted = set(ex.case.expected) | set(ex.case.acceptable)
            order = sorted(range(len(probs)), key=lambda i: -probs[i])[:calibration.PRESENTED]
            hits = [endpoint_key(ex.pool.refs[i].signature) in wanted for i in order]
            chosen = [0] + [i for i in range(1, len(order)) if probs[order[i]] >= t]
            right = sum(hits[i] for i in chosen)
            p, r = right / len(chosen), min(right / max(len(set(ex.case.expected)), 1), 1.0)
            f1.append(2 * p * r / (p + r) if right else 0.0)
            precision.append(p)
        rows[t] = (f1, precision)
    return rows


def chosen(rows):
    means = {t: statistics.fmean(f) for t, (f, _) in rows.items()}
    best = max(means, key=lambda t: (means[t], -t))
    f = rows[best][0]
    error = statistics.stdev(f) / len(f) ** 0.5
    return max(t for t, m in means.items() if m >= means[best] - error), best


def main(path: Path) -> None:
    with path.open("rb") as f:
        pools = pickle.load(f)
    dev, validation = pools["train"], pools["validation"]
    fit = partial(fit_candidates, disabled=DISABLED)
    oof = out_of_fold(dev, fit, DISABLED)
    model = fit(dev)
    held = [[model.probability(masked(v, DISABLED)) for v in ex.pool.vectors] for ex in validation]
    for presented in (3, 5, 10):
        calibration.PRESENTED = presented
        for name, grid in GRIDS.items():
            train_rows, val_rows = curve(dev, oof, grid), curve(validation, held, grid)
            pick, best = chosen(train_rows)
            show = sorted({pick, best, 0.5, 0.9, 0.95, *grid[-4:]} & set(grid))
            print(f"PRESENTED {presented}, grid {name}: chosen {pick} (best mean F1 at {best})")
            for t in show:
                tf, tp = train_rows[t]
                vf, vp = val_rows[t]
                print(f"  t={t:.2f}  training dev oof F1 {statistics.fmean(tf):.3f} precision "
                      f"{statistics.fmean(tp):.3f} | validation F1 {statistics.fmean(vf):.3f} "
                      f"precision {statistics.fmean(vp):.3f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
