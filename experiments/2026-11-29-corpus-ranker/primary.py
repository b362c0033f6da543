"""The primary-threshold grid and ``PRESENTED`` measured on the pools of ``collect.py`` (dev only):
the threshold ``train`` would choose from a finer grid that reaches 0.99, and the primary list's
F1 and precision at each threshold on the training dev sets (out of fold) and the validation
sets (the model of all training dev sets). The figures are ``evals.calibration``'s own.

    .venv/bin/python experiments/2026-11-29-corpus-ranker/primary.py POOLS.pkl
"""

from __future__ import annotations

import pickle
import sys
from functools import partial
from pathlib import Path

from apiatlas.evals import calibration
from apiatlas.evals.train import DISABLED, fit_candidates, out_of_fold
from apiatlas.rag.ranking.model import masked

GRIDS = {"shipped 0.05..0.95": calibration.PRIMARY_GRID,
         "0.05..0.99 by 0.01": tuple(round(0.01 * i, 2) for i in range(5, 100))}


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
            train_curve = {t: (f, p) for t, f, p in calibration.primary_curve(dev, oof, grid)}
            val_curve = {t: (f, p) for t, f, p in calibration.primary_curve(validation, held, grid)}
            pick = calibration.primary_threshold(dev, oof, grid)
            best = max(train_curve, key=lambda t: (train_curve[t][0], -t))
            show = sorted({pick, best, 0.5, 0.9, 0.95, *grid[-4:]} & set(grid))
            print(f"PRESENTED {presented}, grid {name}: chosen {pick} (best mean F1 at {best})")
            for t in show:
                (tf, tp), (vf, vp) = train_curve[t], val_curve[t]
                print(f"  t={t:.2f}  training dev oof F1 {tf:.3f} precision {tp:.3f} | "
                      f"validation F1 {vf:.3f} precision {vp:.3f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
