"""Issue 52, item 2: "operations removed from the spec" as negatives for the confidence model.

Each answerable training dev case is asked again as if its API lacked every endpoint the case
expects or accepts: those candidates leave the pool, and the features that compare a candidate
with the API's best (dense gaps and ranks, text and graph ranks, the lexical and graph scores'
normalisation) are read again over what is left. The candidate and answer probabilities come
from the models that never saw the case's API. The confidence model is then fitted with these
negatives (label 0) beside the real cases, and scored on validation as run.py does.

    .venv/bin/python experiments/2026-12-01-confidence/removed.py HOMES
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

import run
from apiatlas.evals import train
from apiatlas.evals.calibration import fit_linear
from apiatlas.evals.confidence import (
    CONFIDENCE_C, answer_threshold, confidence_rows, first_is_expected, logit, platt, scaled,
)
from apiatlas.evals.dataset import Case
from apiatlas.graph.signatures import endpoint_key
from apiatlas.rag.ranking.confidence import CONFIDENCE_FEATURES
from apiatlas.rag.ranking.features import DENSE_FIELDS, FEATURES, FIELDS, Pool
from apiatlas.rag.ranking.model import ANSWER_FEATURES, answer_vector, masked, presented_order

I = {n: i for i, n in enumerate(FEATURES)}
RANKED = [f"{n}_dense_rr" for n in DENSE_FIELDS] + ["text_rr", "graph_rr"]


def removed(ex: train.Example) -> train.Example | None:
    wanted = set(ex.case.expected) | set(ex.case.acceptable)
    gone = [i for i, r in enumerate(ex.pool.refs) if endpoint_key(r.signature) in wanted]
    kept = [i for i in range(len(ex.pool.refs)) if i not in gone]
    if not gone or not kept or ex.pool.explicit:
        return None
    vectors = [list(ex.pool.vectors[i]) for i in kept]
    for name in RANKED:  # a rank moves up by the removed endpoints ranked above it
        j = I[name]
        removed_ranks = [round(1 / ex.pool.vectors[g][j]) for g in gone if ex.pool.vectors[g][j] > 0]
        for v in vectors:
            if v[j] > 0:
                rank = round(1 / v[j])
                v[j] = 1.0 / max(1, rank - sum(r < rank for r in removed_ranks))
    for name in DENSE_FIELDS:  # the gap to the best endpoint left
        j, gap = I[f"{name}_dense"], I[f"{name}_dense_gap"]
        best = max(v[j] for v in vectors)
        for v in vectors:
            v[gap] = best - v[j]
    for j in [I[f"lex_{n}"] for n in FIELDS] + [I["graph_score"]]:  # normalised by the best left
        top = max(v[j] for v in vectors)
        if top > 0:
            for v in vectors:
                v[j] = min(v[j] / top, 1.0)
    pool = Pool(refs=[ex.pool.refs[i] for i in kept], vectors=vectors,
                unknown_share=ex.pool.unknown_share, unmatched_share=ex.pool.unmatched_share)
    case = Case(id=f"{ex.case.id}-removed", question=ex.case.question, answerable=False)
    return dataclasses.replace(ex, case=case, pool=pool, labels=[0] * len(kept))


def main(homes: Path) -> None:
    training, validation = run.pools(homes)
    staged = run.stage(training)
    names = sorted({ex.dataset for ex in training})
    fit = lambda exs: train.fit_candidates(exs, train.DISABLED)  # noqa: E731
    held = {d: fit([e for e in training if e.dataset != d]) for d in names}
    rows = train.answer_rows(training, staged["oof"])
    answerable = np.array([ex.case.answerable for ex in training]).astype(int)
    held_answer = {d: fit_linear(rows[[e.dataset != d for e in training]],
                                 answerable[[e.dataset != d for e in training]], ANSWER_FEATURES)
                   for d in names}
    extra, extra_p, extra_a = [], [], []
    for ex in training:
        if not ex.case.answerable:
            continue
        neg = removed(ex)
        if neg is None:
            continue
        probs = [held[ex.dataset].probability(masked(v, train.DISABLED)) for v in neg.pool.vectors]
        order = presented_order(neg.pool, probs)
        pa = held_answer[ex.dataset].probability(answer_vector(
            neg.pool, [probs[i] for i in order], neg.pool.vectors[order[0]]))
        extra.append(neg); extra_p.append(probs); extra_a.append(pa)
    threshold_answer = staged["model"].answer_threshold
    print(f"{len(extra)} removed-operation negatives from {sum(answerable)} answerable cases; "
          f"the answer model abstains on {sum(p < threshold_answer for p in extra_a)}")
    probs_v, pa_v, answered_v = run.validation_inputs(staged["model"], validation)
    answer_model_with(training, staged, extra, extra_p, validation, probs_v)
    v_answerable = [ex.case.answerable for ex in validation]
    for weight in (0.0, 0.25, 0.5, 1.0):
        examples = list(training) + extra
        probabilities = list(staged["oof"]) + extra_p
        p_answer = list(staged["p_answer"]) + extra_a
        x = confidence_rows(examples, probabilities, p_answer)
        right = [first_is_expected(e, p) for e, p in zip(examples, probabilities, strict=True)]
        y = np.array(right, dtype=int)
        # weight: how many of the negatives enter the fit, as a share (the first ones by case)
        n_extra = int(round(weight * len(extra)))
        keep = np.array([True] * len(training) + [i < n_extra for i in range(len(extra))])
        full = fit_linear(x[keep], y[keep], CONFIDENCE_FEATURES, CONFIDENCE_C)
        logits = np.zeros(len(training))
        for d in names:
            inside = keep & np.array([e.dataset != d for e in examples])
            model = fit_linear(x[inside], y[inside], CONFIDENCE_FEATURES, CONFIDENCE_C)
            for i in range(len(training)):
                if training[i].dataset == d:
                    logits[i] = logit(model, x[i])
        a, b = platt(logits, y[: len(training)])
        calibrated = scaled(full, a, b)
        oof = [1 / (1 + np.exp(-(a * z + b))) for z in logits]
        t = answer_threshold(oof, right[: len(training)], staged["answered"])
        vrows = confidence_rows(validation, probs_v, pa_v)
        vconf = [calibrated.probability(r) for r in vrows]
        vright = [first_is_expected(e, p) for e, p in zip(validation, probs_v, strict=True)]
        print(f"negatives {n_extra}: threshold {t}")
        print("  " + run.summary("training dev (out of fold)", oof, right[: len(training)],
                                 staged["answered"], [e.case.answerable for e in training], t))
        print("  " + run.summary("validation", vconf, vright, answered_v, v_answerable, t))


def answer_model_with(training, staged, extra, extra_p, validation, probs_v):  # noqa: ANN001, ANN201
    """The answer model fitted with the negatives too: its out-of-fold threshold, and its
    abstention and false abstention on validation."""
    examples = list(training) + extra
    rows = train.answer_rows(examples, list(staged["oof"]) + extra_p)
    y = np.array([e.case.answerable for e in examples]).astype(int)
    names = sorted({e.dataset for e in training})
    oof = np.zeros(len(examples))
    for d in names:
        inside = np.array([e.dataset != d for e in examples])
        model = fit_linear(rows[inside], y[inside], ANSWER_FEATURES)
        for i in np.flatnonzero(~inside):
            oof[i] = model.probability(rows[i])
    t = train.answer_threshold(list(oof), list(y.astype(bool)))
    model = fit_linear(rows, y, ANSWER_FEATURES)
    vrows = train.answer_rows(validation, probs_v)
    va = [e.pool.explicit or model.probability(r) >= t for e, r in zip(validation, vrows, strict=True)]
    una = [not a for a, e in zip(va, validation, strict=True) if not e.case.answerable]
    false = [not a for a, e in zip(va, validation, strict=True) if e.case.answerable]
    base = run.validation_inputs(staged["model"], validation)[2]
    b_una = [not a for a, e in zip(base, validation, strict=True) if not e.case.answerable]
    b_false = [not a for a, e in zip(base, validation, strict=True) if e.case.answerable]
    print(f"answer model with the negatives: threshold {t:.5f}; validation abstention "
          f"{np.mean(una):.3f} (shipped {np.mean(b_una):.3f}), false abstention "
          f"{np.mean(false):.3f} (shipped {np.mean(b_false):.3f})")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
