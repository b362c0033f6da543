"""The answer model alone fitted with the v3 corpus questions: the candidate model stays the one
fitted on the training dev sets (as shipped); the answer model is fitted on the training dev
sets' rows, the corpus rows, or both, and its threshold is calibrated out of fold on the same
rows (``calibration.answer_threshold``, false abstention at most 0.05). Dev only.

    .venv/bin/python experiments/2026-11-29-corpus-ranker/answer.py POOLS.pkl
"""

from __future__ import annotations

import pickle
import sys
from functools import partial
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from apiatlas.evals.calibration import answer_threshold
from apiatlas.evals.train import (
    DISABLED, answer_rows, answers_out_of_fold, fit_candidates, fit_linear, out_of_fold,
)
from apiatlas.rag.ranking.model import ANSWER_FEATURES, masked

sys.path.insert(0, str(Path(__file__).parent))
from fit import folded  # noqa: E402


def main(path: Path) -> None:
    with path.open("rb") as f:
        pools = pickle.load(f)
    dev, validation = pools["train"], pools["validation"]
    corpus = folded(pools["corpus"], 5)
    fit = partial(fit_candidates, disabled=DISABLED)
    candidate = fit(dev)

    def probs(exs):
        return [[candidate.probability(masked(v, DISABLED)) for v in ex.pool.vectors]
                for ex in exs]

    rows = {"dev": answer_rows(dev, out_of_fold(dev, fit, DISABLED)),
            "corpus": answer_rows(corpus, probs(corpus)),
            "validation": answer_rows(validation, probs(validation))}
    labels = {name: np.array([ex.case.answerable for ex in exs]).astype(int)
              for name, exs in (("dev", dev), ("corpus", corpus), ("validation", validation))}
    examples = {"dev": dev, "corpus": corpus}
    for fitted in (("dev",), ("corpus",), ("dev", "corpus")):
        x = np.vstack([rows[n] for n in fitted])
        y = np.concatenate([labels[n] for n in fitted])
        exs = [ex for n in fitted for ex in examples[n]]
        model = fit_linear(x, y, ANSWER_FEATURES)
        p_oof = answers_out_of_fold(exs, x, ANSWER_FEATURES)
        thresholds = {"its rows": answer_threshold(p_oof, list(y.astype(bool)))}
        if fitted[0] == "dev" and len(fitted) > 1:  # calibrated on the dev rows alone
            thresholds["dev rows"] = answer_threshold(p_oof[:len(dev)], list(labels["dev"] == 1))
        for calibrated, threshold in thresholds.items():
            report(fitted, calibrated, threshold, model, p_oof, rows, labels)


def report(fitted, calibrated, threshold, model, p_oof, rows, labels) -> None:
    print(f"answer model fitted on {' + '.join(fitted)}, threshold on {calibrated}: "
          f"{threshold}")
    for name in ("dev", "corpus", "validation"):
        if name in fitted:
            start = sum(len(rows[n]) for n in fitted[:fitted.index(name)])
            p = np.array(p_oof[start:start + len(rows[name])])
            how = "out of fold"
        else:
            p = np.array([model.probability(r) for r in rows[name]])
            how = "unseen"
        y_n = labels[name]
        abst = float(np.mean(p[y_n == 0] < threshold))
        false = float(np.mean(p[y_n == 1] < threshold))
        print(f"  {name:<10} {how:<11} AUC {roc_auc_score(y_n, p):.3f} abstention "
              f"{abst:.3f} ({int((p[y_n == 0] < threshold).sum())}/{int((y_n == 0).sum())}) "
              f"false {false:.3f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
