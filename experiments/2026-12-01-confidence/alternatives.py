"""Two alternatives to the shipped confidence model, on the same pools (dev only):

- disagreement among the leave-one-API-out candidate models: the share of the models trained
  without an API (and, for a training set, without it too) that put the same endpoint first;
- a gradient-boosted model (scikit-learn, depth 3) on the shipped features.

    .venv/bin/python experiments/2026-12-01-confidence/alternatives.py HOMES

HOMES holds the pools run.py cached.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
from sklearn.ensemble import HistGradientBoostingClassifier

import run
from apiatlas.evals import train
from apiatlas.evals.confidence import confidence_rows, first_is_expected
from apiatlas.rag.ranking.model import masked, presented_order


def first(model, ex):  # noqa: ANN001, ANN201
    probs = [model.probability(masked(v, train.DISABLED)) for v in ex.pool.vectors]
    order = presented_order(ex.pool, probs)
    return order[0] if order else None


def main(homes: Path) -> None:
    training, validation = run.pools(homes)
    staged = run.stage(training)
    fit = lambda exs: train.fit_candidates(exs, train.DISABLED)  # noqa: E731
    names = sorted({ex.dataset for ex in training})
    held = {d: fit([e for e in training if e.dataset != d]) for d in names}
    inner = {(d, e): fit([x for x in training if x.dataset not in (d, e)])
             for d in names for e in names if e != d}
    full = fit(training)

    def agreement(ex, main_model, ensemble):  # noqa: ANN001, ANN202
        top = first(main_model, ex)
        return np.mean([first(m, ex) == top for m in ensemble])

    t_agree = [agreement(ex, held[ex.dataset], [inner[(ex.dataset, e)] for e in names
                                                 if e != ex.dataset]) for ex in training]
    v_agree = [agreement(ex, full, list(held.values())) for ex in validation]
    t_right = [first_is_expected(ex, p) for ex, p in zip(training, staged["oof"], strict=True)]
    probs, p_answer, _ = run.validation_inputs(staged["model"], validation)
    v_right = [first_is_expected(ex, p) for ex, p in zip(validation, probs, strict=True)]
    print(f"model disagreement: AUC training dev {run._auc(t_agree, t_right):.3f}, validation "
          f"{run._auc(v_agree, v_right):.3f}; all agree on {np.mean(np.array(t_agree) == 1):.2f}"
          f" / {np.mean(np.array(v_agree) == 1):.2f} of the questions")
    rows = confidence_rows(training, staged["oof"], staged["p_answer"])
    vrows = confidence_rows(validation, probs, p_answer)
    y, groups = np.array(t_right, dtype=int), np.array([ex.dataset for ex in training])
    boosted = lambda: HistGradientBoostingClassifier(  # noqa: E731
        max_depth=3, max_iter=100, learning_rate=0.05, min_samples_leaf=10, random_state=0)
    oof = np.zeros(len(y))
    for d in names:
        inside = groups != d
        oof[~inside] = boosted().fit(rows[inside], y[inside]).predict_proba(rows[~inside])[:, 1]
    vconf = boosted().fit(rows, y).predict_proba(vrows)[:, 1]
    print(f"gradient boosting: AUC training dev (out of fold) {run._auc(oof, t_right):.3f}, "
          f"validation {run._auc(vconf, v_right):.3f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
