"""Abstention on the pickled pools of collect.py: each answer feature's AUC (answerable vs not)
on the training dev sets (out of fold) and on validation, and the answer model's abstention and
false abstention with its dev-chosen threshold; then the same with candidate features added.

    .venv/bin/python experiments/2026-11-27-abstention/analyse.py .apiatlas/abstention/pools.pkl \
        [--dense] [--kinds] [--rules .apiatlas/abstention/kind_rules.json]

``--dense``: the pool's card similarities (z-score, gaps, maxima); ``--kinds``: the best
candidate of the asked operation kind; ``--rules``: kind_rules.py's five rules, one at a time.
"""

from __future__ import annotations

import argparse
import json
import pickle
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from apiatlas.evals.train import (
    Example, answer_rows, answer_threshold, answers_out_of_fold, fit_candidates, fit_linear,
    out_of_fold,
)
from apiatlas.rag.ranking.features import FEATURES
from apiatlas.rag.ranking.model import ANSWER_FEATURES

Extra = Callable[[Example, Sequence[float]], list[float]]
"""Added question-level features of one example, given its candidate probabilities."""

KIND_ANY, KIND_FIRST, CARD, RESOURCE = (FEATURES.index(n) for n in (
    "kind_any", "kind_first", "card_dense", "resource_match"))


def auc(scores: Sequence[float], positive: Sequence[bool]) -> float:
    pos = [s for s, p in zip(scores, positive) if p]
    neg = [s for s, p in zip(scores, positive) if not p]
    wins = sum((a > b) + 0.5 * (a == b) for a in pos for b in neg)
    return wins / max(len(pos) * len(neg), 1)


def evaluate(train: list[Example], held: list[Example], label: str,
             extra: Extra | None = None, extra_names: Sequence[str] = ()) -> None:
    """Fit the answer model on the shipped features plus ``extra``'s, print its abstention on
    both parts, then each added feature's AUC (every feature's when nothing is added)."""
    oof = out_of_fold(train, fit_candidates)
    full = fit_candidates(train)
    probs = [[full.probability(v) for v in ex.pool.vectors] for ex in held]
    rows_t, rows_h = answer_rows(train, oof), answer_rows(held, probs)
    if extra is not None:
        rows_t = np.hstack([rows_t, [extra(ex, p) for ex, p in zip(train, oof)]])
        rows_h = np.hstack([rows_h, [extra(ex, p) for ex, p in zip(held, probs)]])
    names = [*ANSWER_FEATURES, *extra_names]
    y_t = np.array([ex.case.answerable for ex in train])
    y_h = np.array([ex.case.answerable for ex in held])
    p_t = np.array(answers_out_of_fold(train, rows_t, names))
    t = answer_threshold(list(p_t), list(y_t))
    model = fit_linear(rows_t, y_t.astype(int), names)
    p_h = np.array([model.probability(r) for r in rows_h])

    def rates(examples: list[Example], p: np.ndarray, y: np.ndarray) -> str:
        explicit = np.array([ex.pool.explicit for ex in examples])
        abstain = (p < t) & ~explicit
        return (f"abst {abstain[~y].mean():.2f} false {abstain[y].mean():.3f} "
                f"AUC {auc(list(p), list(y)):.3f}")

    print(f"{label:40s} threshold {t:.3f} | dev oof {rates(train, p_t, y_t)} | "
          f"validation {rates(held, p_h, y_h)}")
    for i, name in enumerate(names):
        if name in extra_names or not extra_names:
            print(f"  {name:16s} AUC dev {auc(rows_t[:, i], y_t):.3f} "
                  f"validation {auc(rows_h[:, i], y_h):.3f}")


def pool_dense(ex: Example, probs: Sequence[float]) -> list[float]:
    if not len(ex.query) or not len(ex.cards):
        return [0.0] * 5
    sims = np.sort(ex.cards @ ex.query)[::-1]
    z = (sims[0] - sims.mean()) / (sims.std() + 1e-6)
    gap = sims[0] - sims[1] if len(sims) > 1 else 0.0
    gap5 = sims[0] - sims[min(4, len(sims) - 1)]
    top_sim = float(ex.cards[int(np.argmax(probs))] @ ex.query)
    return [float(z), float(gap), float(gap5), top_sim, float(sims[0])]


def kind_features(ex: Example, probs: Sequence[float]) -> list[float]:
    v = ex.pool.vectors
    if not v:
        return [0.0] * 5
    top = max(probs)
    kind_p = max((p for p, x in zip(probs, v) if x[KIND_ANY]), default=0.0)
    first_p = max((p for p, x in zip(probs, v) if x[KIND_FIRST]), default=0.0)
    card = max(x[CARD] for x in v)
    kind_card = max((x[CARD] for x in v if x[KIND_ANY]), default=0.0)
    subject_kind = max((x[RESOURCE] for x in v if x[KIND_ANY]), default=0.0)
    subject = max(x[RESOURCE] for x in v)
    return [top - kind_p, top - first_p, card - kind_card, kind_card, subject - subject_kind]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pools", type=Path)
    parser.add_argument("--dense", action="store_true")
    parser.add_argument("--kinds", action="store_true")
    parser.add_argument("--rules", type=Path)
    args = parser.parse_args()
    with args.pools.open("rb") as f:
        data = pickle.load(f)
    train, held = data["train"], data["validation"]
    evaluate(train, held, "current")
    if args.dense:
        evaluate(train, held, "with pool dense", pool_dense,
                 ("card_z", "card_gap", "card_gap5", "top_card", "max_card"))
    if args.kinds:
        evaluate(train, held, "kinds", kind_features,
                 ("kind_gap", "first_gap", "card_kind_gap", "kind_card", "subj_kind_gap"))
    if args.rules:
        rules = json.loads(args.rules.read_text(encoding="utf-8"))
        for rule in ("v1", "v2", "v3", "v4", "v5"):
            evaluate(train, held, f"+ {rule}",
                     lambda ex, _, r=rule: [float(rules[f"{ex.dataset}|{ex.case.question}"][r])],
                     (rule,))


if __name__ == "__main__":
    main()
