"""Abstention on the pickled pools of collect.py: each answer feature's AUC (answerable vs not)
on the training dev sets (out of fold) and on validation, and the answer model's abstention and
false abstention with its dev-chosen threshold.

    .venv/bin/python experiments/2026-11-27-abstention/analyse.py .apiatlas/abstention/pools.pkl
"""

from __future__ import annotations

import pickle
import sys
from collections.abc import Callable, Sequence

import numpy as np

from apiatlas.evals.train import (
    Example, answer_rows, answer_threshold, fit_candidates, fit_linear, out_of_fold,
)
from apiatlas.rag.ranking.model import ANSWER_FEATURES


def auc(scores: Sequence[float], positive: Sequence[bool]) -> float:
    pos = [s for s, p in zip(scores, positive) if p]
    neg = [s for s, p in zip(scores, positive) if not p]
    wins = sum((a > b) + 0.5 * (a == b) for a in pos for b in neg)
    return wins / max(len(pos) * len(neg), 1)


def evaluate(train: list[Example], held: list[Example], extra: Callable | None = None,
             names: Sequence[str] = ANSWER_FEATURES, label: str = "") -> None:
    oof = out_of_fold(train, fit_candidates)
    full = fit_candidates(train)
    probs = [[full.probability(v) for v in ex.pool.vectors] for ex in held]
    rows_t = answer_rows(train, oof)
    rows_h = answer_rows(held, probs)
    if extra is not None:
        rows_t = np.hstack([rows_t, np.array([extra(ex, p) for ex, p in zip(train, oof)])])
        rows_h = np.hstack([rows_h, np.array([extra(ex, p) for ex, p in zip(held, probs)])])
    keep = [i for i, n in enumerate(list(ANSWER_FEATURES) + list(EXTRA_NAMES)) if n in names]
    rows_t, rows_h = rows_t[:, keep], rows_h[:, keep]
    chosen = [n for i, n in enumerate(list(ANSWER_FEATURES) + list(EXTRA_NAMES)) if i in keep]
    y_t = np.array([ex.case.answerable for ex in train])
    y_h = np.array([ex.case.answerable for ex in held])
    p_oof = np.zeros(len(train))
    for name in sorted({ex.dataset for ex in train}):
        inside = np.array([ex.dataset != name for ex in train])
        m = fit_linear(rows_t[inside], y_t[inside].astype(int), chosen)
        for i in np.flatnonzero(~inside):
            p_oof[i] = m.probability(rows_t[i])
    t = answer_threshold(list(p_oof), list(y_t))
    model = fit_linear(rows_t, y_t.astype(int), chosen)
    p_h = np.array([model.probability(r) for r in rows_h])
    explicit_t = np.array([ex.pool.explicit for ex in train])
    explicit_h = np.array([ex.pool.explicit for ex in held])

    def rates(p, y, explicit):
        abstain = (p < t) & ~explicit
        return abstain[~y].mean(), abstain[y].mean()

    a_t, f_t = rates(p_oof, y_t, explicit_t)
    a_h, f_h = rates(p_h, y_h, explicit_h)
    print(f"{label:40s} threshold {t:.3f} | dev oof abst {a_t:.2f} false {f_t:.3f} "
          f"AUC {auc(p_oof, y_t):.3f} | validation abst {a_h:.2f} false {f_h:.3f} "
          f"AUC {auc(p_h, y_h):.3f}")
    return rows_t, rows_h, y_t, y_h, chosen


EXTRA_NAMES: tuple[str, ...] = ()


def main(path: str) -> None:
    data = pickle.load(open(path, "rb"))
    train, held = data["train"], data["validation"]
    rows_t, rows_h, y_t, y_h, chosen = evaluate(train, held, label="current")
    for i, name in enumerate(chosen):
        print(f"  {name:16s} AUC dev {auc(rows_t[:, i], y_t):.3f} "
              f"validation {auc(rows_h[:, i], y_h):.3f}")


if __name__ == "__main__":
    main(sys.argv[1])


def pool_dense(ex: Example, probs: Sequence[float]) -> list[float]:
    if not len(ex.query) or not len(ex.cards):
        return [0.0] * 5
    sims = np.sort(ex.cards @ ex.query)[::-1]
    z = (sims[0] - sims.mean()) / (sims.std() + 1e-6)
    gap = sims[0] - sims[1] if len(sims) > 1 else 0.0
    gap5 = sims[0] - sims[min(4, len(sims) - 1)]
    order = np.argsort(probs)[::-1]
    top_sim = float(ex.cards[order[0]] @ ex.query)
    return [float(z), float(gap), float(gap5), top_sim, float(sims[0])]


def explore(path: str) -> None:
    global EXTRA_NAMES
    data = pickle.load(open(path, "rb"))
    train, held = data["train"], data["validation"]
    EXTRA_NAMES = ("card_z", "card_gap", "card_gap5", "top_card", "max_card")
    rows_t, rows_h, y_t, y_h, chosen = evaluate(
        train, held, pool_dense, list(ANSWER_FEATURES) + list(EXTRA_NAMES), "with pool dense")
    for i, name in enumerate(chosen[len(ANSWER_FEATURES):], len(ANSWER_FEATURES)):
        print(f"  {name:16s} AUC dev {auc(rows_t[:, i], y_t):.3f} "
              f"validation {auc(rows_h[:, i], y_h):.3f}")


from apiatlas.rag.ranking.features import FEATURES as CF  # noqa: E402

KIND_ANY, KIND_FIRST, CARD, RES, OWN = (CF.index(n) for n in (
    "kind_any", "kind_first", "card_dense", "resource_match", "resource_own"))


def kind_features(ex: Example, probs: Sequence[float]) -> list[float]:
    v = ex.pool.vectors
    if not v:
        return [0.0] * 6
    asked = any(x[KIND_ANY] for x in v) or True
    top = max(probs)
    kind_p = max((p for p, x in zip(probs, v) if x[KIND_ANY]), default=0.0)
    first_p = max((p for p, x in zip(probs, v) if x[KIND_FIRST]), default=0.0)
    card = max(x[CARD] for x in v)
    kind_card = max((x[CARD] for x in v if x[KIND_ANY]), default=0.0)
    subj_kind = max((x[RES] for x in v if x[KIND_ANY]), default=0.0)
    subj = max(x[RES] for x in v)
    return [top - kind_p, top - first_p, card - kind_card, kind_card, subj - subj_kind,
            float(asked)]


def explore_kinds(path: str) -> None:
    global EXTRA_NAMES
    data = pickle.load(open(path, "rb"))
    train, held = data["train"], data["validation"]
    EXTRA_NAMES = ("kind_gap", "first_gap", "card_kind_gap", "kind_card", "subj_kind_gap",
                   "asked")
    rows_t, rows_h, y_t, y_h, chosen = evaluate(
        train, held, kind_features, list(ANSWER_FEATURES) + list(EXTRA_NAMES)[:-1], "kinds")
    for i, name in enumerate(chosen[len(ANSWER_FEATURES):], len(ANSWER_FEATURES)):
        print(f"  {name:16s} AUC dev {auc(rows_t[:, i], y_t):.3f} "
              f"validation {auc(rows_h[:, i], y_h):.3f}")


def explore_rules(path: str, rules_path: str) -> None:
    import json
    global EXTRA_NAMES
    rules = json.load(open(rules_path))
    data = pickle.load(open(path, "rb"))
    train, held = data["train"], data["validation"]
    EXTRA_NAMES = ("v1", "v2", "v3", "v4", "v5")

    def extra(ex: Example, probs: Sequence[float]) -> list[float]:
        found = rules[f"{ex.dataset}|{ex.case.question}"]
        return [float(found[n]) for n in EXTRA_NAMES]

    for name in EXTRA_NAMES:
        evaluate(train, held, extra, list(ANSWER_FEATURES) + [name], f"+ {name}")
