"""The confidence model on dev: training dev out of fold, validation by the model of all training
dev sets, each feature group switched off, with and without the Platt step (issue 52).

    .venv/bin/python experiments/2026-12-01-confidence/run.py HOMES [OUT.txt]

HOMES: dataset homes (``make train``'s ``.apiatlas/train`` works); the pools are cached in
HOMES/confidence-pools.pkl. Reads dev datasets only: the test sets are scored by ``apiatlas
eval`` alone.
"""

from __future__ import annotations

import math
import pickle
import sys
from collections.abc import Sequence
from pathlib import Path

from apiatlas.evals import train
from apiatlas.evals.confidence import (
    CONFIDENCE_C, confidence_rows, first_is_expected, fit_confidence, masked_rows,
)
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.metrics import calibration_error as ece

GROUPS = {
    "probabilities": ("p_first", "p_second", "margin"),
    "competitors": ("family", "pool"),
    "answer model": ("p_answer",),
    "dense similarities": ("card", "card_margin", "card_gap", "about", "about_margin", "name"),
    "agreement": ("agree", "text_rr"),
    "lexical coverage": ("coverage", "coverage_head"),
    "resource and kind": ("first_resource", "first_kind", "kind_on_subject"),
    "unknown words": ("unknown_share", "unmatched_share"),
    "explicit": ("explicit",),
}


def pools(homes: Path) -> tuple[list[train.Example], list[train.Example]]:
    cache = homes / "confidence-pools.pkl"
    if cache.exists():
        return pickle.loads(cache.read_bytes())
    training = train.collect(train.dev_datasets(), homes)
    validation = [load_dataset(f) for f in dataset_files(train.DEV, train.VALIDATION)]
    both = (training, train.collect(validation, homes))
    cache.write_bytes(pickle.dumps(both))
    return both


def stage(examples: Sequence[train.Example]) -> dict[str, object]:
    """What the shipped training computes before the confidence model, on the training sets."""
    fit = lambda exs: train.fit_candidates(exs, train.DISABLED)  # noqa: E731
    oof = train.out_of_fold(examples, fit, train.DISABLED)
    rows = train.answer_rows(examples, oof)
    p_answer = train.answers_out_of_fold(examples, rows, train.ANSWER_FEATURES)
    model = train.train(examples, train.DISABLED)
    answered = [ex.pool.explicit or p >= model.answer_threshold
                for ex, p in zip(examples, p_answer, strict=True)]
    return {"oof": oof, "p_answer": p_answer, "answered": answered, "model": model}


def validation_inputs(model, examples):  # noqa: ANN001, ANN201
    probs = [model.scores(ex.pool) for ex in examples]
    p_answer, answered = [], []
    for ex, p in zip(examples, probs, strict=True):
        d = model.decide(ex.pool)
        p_answer.append(d.answer_probability)
        answered.append(d.answer)
    return probs, p_answer, answered


def summary(name: str, conf: Sequence[float], right: Sequence[bool], answered: Sequence[bool],
            answerable: Sequence[bool], threshold: float) -> str:
    sure = [c >= threshold and a for c, a in zip(conf, answered, strict=True)]
    ans = [i for i, a in enumerate(answerable) if a]
    una = [i for i, a in enumerate(answerable) if not a]
    chosen = [i for i in ans if sure[i]]
    precision = sum(right[i] for i in chosen) / len(chosen) if chosen else float("nan")
    coverage = len(chosen) / len(ans) if ans else float("nan")
    una_answered = sum(sure[i] for i in una) / len(una) if una else float("nan")
    e = ece(list(conf), list(right))
    auc = _auc(conf, right)
    return (f"{name:<34} precision {precision:.3f} coverage {coverage:.3f} "
            f"unanswerable_answered {una_answered:.3f} ece {e:.3f} auc {auc:.3f} "
            f"precision@0.40 {_precision_at(conf, right, answered, answerable, 0.4):.3f}")


def _precision_at(conf: Sequence[float], right: Sequence[bool], answered: Sequence[bool],
                  answerable: Sequence[bool], coverage: float) -> float:
    """Precision of the most confident answers that cover ``coverage`` of the answerable cases
    (unanswerable ones among them count as wrong)."""
    order = sorted((i for i, a in enumerate(answered) if a), key=lambda i: -conf[i])
    wanted = math.ceil(coverage * sum(answerable))
    taken, covered = [], 0
    for i in order:
        if covered >= wanted:
            break
        taken.append(i)
        covered += answerable[i]
    return sum(right[i] for i in taken) / len(taken) if taken else float("nan")


def _auc(conf: Sequence[float], right: Sequence[bool]) -> float:
    pos = [c for c, r in zip(conf, right, strict=True) if r]
    neg = [c for c, r in zip(conf, right, strict=True) if not r]
    if not pos or not neg:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in pos for n in neg)
    return wins / (len(pos) * len(neg))


def variant(off: Sequence[str], training, staged, validation, val_inputs, calibrate=True,  # noqa: ANN001, ANN201
            c=CONFIDENCE_C):
    fitted = fit_confidence(training, staged["oof"], staged["p_answer"], staged["answered"],
                            c=c, calibrate=calibrate, off=off)
    probs, p_answer, answered = val_inputs
    vrows = masked_rows(confidence_rows(validation, probs, p_answer), off)
    vconf = [fitted.model.probability(r) for r in vrows]
    vright = [first_is_expected(ex, p) for ex, p in zip(validation, probs, strict=True)]
    return (fitted.oof, fitted.right, fitted.threshold), (vconf, vright, answered)


def main(argv: Sequence[str]) -> int:
    homes = Path(argv[0])
    out = Path(argv[1]) if len(argv) > 1 else None
    training, validation = pools(homes)
    staged = stage(training)
    val_inputs = validation_inputs(staged["model"], validation)
    lines = [f"training dev: {len(training)} cases; validation: {len(validation)} cases"]
    t_answerable = [ex.case.answerable for ex in training]
    v_answerable = [ex.case.answerable for ex in validation]
    runs = [("all features (shipped)", (), True, CONFIDENCE_C),
            ("all features, no Platt step", (), False, CONFIDENCE_C)]
    runs += [(f"all features, C={c}", (), True, c) for c in (0.03, 0.3, 1.0)]
    runs += [(f"without {g}", fs, True, CONFIDENCE_C) for g, fs in GROUPS.items()]
    for name, off, calibrate, c in runs:
        (oof, right, t), (vconf, vright, vanswered) = variant(
            off, training, staged, validation, val_inputs, calibrate, c)
        lines.append(f"{name}: threshold {t}")
        lines.append("  " + summary("training dev (out of fold)", oof, right,
                                    staged["answered"], t_answerable, t))
        lines.append("  " + summary("validation", vconf, vright, vanswered, v_answerable, t))
    text = "\n".join(lines)
    print(text)
    if out is not None:
        out.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
