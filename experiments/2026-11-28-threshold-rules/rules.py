"""How stable are the ranker's two learned thresholds, and would another rule choose them more
stably at no cost on validation? Dev datasets only.

    .venv/bin/python experiments/2026-11-28-threshold-rules/rules.py CACHE.pkl [MODULE:NAME=VALUE ...]

The first run collects the pools as ``make train`` does (training dev sets stacked with
out-of-fold query adapters; the validation sets with the adapter of all training dev sets) and
pickles them to ``CACHE.pkl``; later runs read it. Each ``MODULE:NAME=VALUE`` sets a module
constant first (so the pools are those of a refit with that value).

For each rule it prints:
- the threshold it picks on the out-of-fold training-dev predictions (what ``make train`` does);
- its spread when one training dev set is left out (8 picks) and over 200 bootstrap resamples of
  the cases (seed 0): min, quartiles, max;
- at the picked threshold, the validation figures by the model fitted on all training dev sets.
"""

from __future__ import annotations

import importlib
import pickle
import random
import statistics
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

import apiatlas.evals.train as t
from apiatlas.evals import calibration as c
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.rag.ranking.model import ANSWER_FEATURES

BOOTSTRAP = 200


def pools(cache: Path) -> tuple[list[t.Example], list[t.Example]]:
    if cache.exists():
        return pickle.loads(cache.read_bytes())
    dev = t.stacked(t.dev_datasets())
    names = t.VALIDATION
    validation = [load_dataset(f) for f in dataset_files(t.DEV, names)]
    held = t.collect(validation, adapters={d.name: dev.adapter for d in validation})
    cache.write_bytes(pickle.dumps((dev.examples, held)))
    return dev.examples, held


# Primary-threshold rules: from the curve [(threshold, mean F1, mean precision)] and the number
# of answerable cases to a threshold.
Curve = list[tuple[float, float, float]]


def lowest_best(curve: Curve, cases: int) -> float:
    """``make train``'s rule: the lowest threshold with the best mean F1."""
    best = max(f1 for _, f1, _ in curve)
    return min(th for th, f1, _ in curve if f1 == best)


def highest_within_a_case(curve: Curve, cases: int) -> float:
    """The highest threshold whose mean F1 is within one case (1 / cases) of the best."""
    best = max(f1 for _, f1, _ in curve)
    return max(th for th, f1, _ in curve if f1 >= best - 1.0 / cases)


def smoothed(curve: Curve, cases: int) -> float:
    """The lowest threshold with the best mean F1 averaged over it and its two neighbours."""
    f1s = [f1 for _, f1, _ in curve]
    means = [statistics.fmean(f1s[max(0, i - 1):i + 2]) for i in range(len(f1s))]
    best = max(means)
    return min(th for (th, _, _), m in zip(curve, means, strict=True) if m == best)


def one_standard_error(examples: Sequence[t.Example], probs: Sequence[Sequence[float]]) -> float:
    """The one-standard-error rule, as ``make train`` now ships it
    (:func:`apiatlas.evals.calibration.primary_threshold`): the highest threshold whose mean F1
    is within one standard error of the best threshold's."""
    return c.primary_threshold(examples, probs)


PRIMARY_RULES: dict[str, Callable[[Curve, int], float]] = {
    "lowest best F1 (until 1013d26)": lowest_best,
    "highest within a case of the best (1013d26)": highest_within_a_case,
    "best F1 of 3-point means": smoothed,
}


# Answer-threshold rules: from out-of-fold answer probabilities and answerability.
def shipped_answer(p: Sequence[float], answerable: Sequence[bool]) -> float:
    """``make train``'s rule: best balanced accuracy with false abstention <= 0.05."""
    return c.answer_threshold(p, answerable)


def at_the_cap(p: Sequence[float], answerable: Sequence[bool]) -> float:
    """The highest threshold whose false abstention stays <= 0.05 (a quantile of the
    answerable cases' probabilities)."""
    positives = sorted(round(x, c.DECIMALS) for x, a in zip(p, answerable, strict=True) if a)
    allowed = int(c.MAX_FALSE_ABSTENTION * len(positives))
    return positives[allowed] if positives else 0.0


def bagged_answer(p: Sequence[float], answerable: Sequence[bool]) -> float:
    """The median of the shipped rule over 50 bootstrap resamples of the cases (seed 1)."""
    rng = random.Random(1)
    n = len(p)
    picks = []
    for _ in range(50):
        idx = [rng.randrange(n) for _ in range(n)]
        picks.append(c.answer_threshold([p[i] for i in idx], [answerable[i] for i in idx]))
    return statistics.median(picks)


ANSWER_RULES: dict[str, Callable[[Sequence[float], Sequence[bool]], float]] = {
    "best balanced accuracy, FA <= 0.05 (shipped)": shipped_answer,
    "highest with FA <= 0.05": at_the_cap,
    "median of 50 bootstrap picks": bagged_answer,
}


def spread(values: Sequence[float]) -> str:
    q = np.quantile(values, [0, 0.25, 0.5, 0.75, 1])
    return " / ".join(f"{v:.3f}" for v in q)


def primary_figures(examples: Sequence[t.Example], probs: Sequence[Sequence[float]],
                    threshold: float) -> tuple[float, float]:
    """Mean F1 and mean precision of the primary lists at ``threshold`` (answerable cases)."""
    scored = c.primary_scores(examples, probs)[threshold]
    return statistics.fmean(f for f, _ in scored), statistics.fmean(p for _, p in scored)


def abstention(examples: Sequence[t.Example], p: Sequence[float], threshold: float
               ) -> tuple[float, float]:
    """Share of unanswerable cases abstained on, share of answerable ones abstained on."""
    out = [not ex.pool.explicit and x < threshold for ex, x in zip(examples, p, strict=True)]
    neg = [o for o, ex in zip(out, examples, strict=True) if not ex.case.answerable]
    pos = [o for o, ex in zip(out, examples, strict=True) if ex.case.answerable]
    return sum(neg) / max(len(neg), 1), sum(pos) / max(len(pos), 1)


def patch(setting: str) -> None:
    """``MODULE:NAME=VALUE``: set a module constant (in the modules that bind it) before
    collecting, as ``../2026-11-28-graph-values/run.py`` does."""
    target, _, text = setting.partition("=")
    module_name, name = target.split(":")
    old = getattr(importlib.import_module(module_name), name)
    for loaded_name, loaded in list(sys.modules.items()):
        if loaded_name.startswith("apiatlas") and getattr(loaded, name, None) is old:
            setattr(loaded, name, type(old)(text))


def main(cache: Path) -> None:
    train, held = pools(cache)
    fit = t.fit_candidates
    oof = t.out_of_fold(train, fit)
    answerable = [ex.case.answerable for ex in train]
    rows = t.answer_rows(train, oof)
    p_oof = t.answers_out_of_fold(train, rows, ANSWER_FEATURES)
    candidate = fit(train)
    answer = t.fit_linear(rows, np.array(answerable).astype(int), ANSWER_FEATURES)
    held_probs = [[candidate.probability(v) for v in ex.pool.vectors] for ex in held]
    held_p = [answer.probability(r) for r in t.answer_rows(held, held_probs)]
    names = sorted({ex.dataset for ex in train})
    rng = random.Random(0)
    samples = [[rng.randrange(len(train)) for _ in train] for _ in range(BOOTSTRAP)]
    print(f"training dev: {len(train)} cases of {len(names)} sets; validation: {len(held)}")

    def curve_of(idx: Sequence[int]) -> tuple[Curve, int]:
        exs = [train[i] for i in idx]
        return c.primary_curve(exs, [oof[i] for i in idx]), sum(e.case.answerable for e in exs)

    leave_out = [[i for i, ex in enumerate(train) if ex.dataset != n] for n in names]
    print("\n## primary threshold")
    for label, rule in PRIMARY_RULES.items():
        pick = rule(*curve_of(range(len(train))))
        lo = [rule(*curve_of(idx)) for idx in leave_out]
        boot = [rule(*curve_of(idx)) for idx in samples]
        f1, precision = primary_figures(held, held_probs, pick)
        print(f"{label}: pick {pick:.2f}; leave-one-set-out {spread(lo)}; "
              f"bootstrap {spread(boot)}; validation mean F1 {f1:.4f}, precision {precision:.4f}")
    label = "one standard error of the best"
    pick = one_standard_error(train, oof)
    lo = [one_standard_error([train[i] for i in idx], [oof[i] for i in idx]) for idx in leave_out]
    boot = [one_standard_error([train[i] for i in idx], [oof[i] for i in idx])
            for idx in samples[:50]]
    f1, precision = primary_figures(held, held_probs, pick)
    print(f"{label}: pick {pick:.2f}; leave-one-set-out {spread(lo)}; "
          f"bootstrap (50) {spread(boot)}; validation mean F1 {f1:.4f}, precision {precision:.4f}")
    print("\n## answer threshold")
    for label, rule in ANSWER_RULES.items():
        pick = rule(p_oof, answerable)
        lo = [rule([p_oof[i] for i in idx], [answerable[i] for i in idx]) for idx in leave_out]
        boot = [rule([p_oof[i] for i in idx], [answerable[i] for i in idx])
                for idx in samples[:50 if label.startswith("median") else BOOTSTRAP]]
        train_abs, train_false = abstention(train, p_oof, pick)
        held_abs, held_false = abstention(held, held_p, pick)
        print(f"{label}: pick {pick:.4f}; leave-one-set-out {spread(lo)}; bootstrap "
              f"{spread(boot)}; training dev (oof) abstention {train_abs:.3f} / false "
              f"{train_false:.3f}; validation {held_abs:.3f} / {held_false:.3f}")


if __name__ == "__main__":
    for setting in sys.argv[2:]:
        patch(setting)
    main(Path(sys.argv[1]))
