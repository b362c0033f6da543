"""Fit the ranker (candidate and answer models, thresholds) on the training dev sets, on the v3
corpus questions, or on both, and score every dev pool of ``collect.py`` by a model that never
saw its API. Dev only: no test set is read.

    .venv/bin/python experiments/2026-11-29-corpus-ranker/fit.py POOLS.pkl [--folds 5]

The corpus APIs are grouped into ``--folds`` folds (by sorted name), which also serve as the
folds ``train`` calibrates its thresholds on; each training dev set is its own fold.
"""

from __future__ import annotations

import argparse
import dataclasses
import pickle
from collections.abc import Sequence
from pathlib import Path

from sklearn.metrics import roc_auc_score

from apiatlas.evals.train import DISABLED, Example, train
from apiatlas.graph.signatures import endpoint_key
from apiatlas.rag.ranking.model import RankerModel


def folded(corpus: Sequence[Example], folds: int) -> list[Example]:
    names = sorted({ex.dataset for ex in corpus})
    fold = {name: f"corpus-{i % folds}" for i, name in enumerate(names)}
    return [dataclasses.replace(ex, dataset=fold[ex.dataset]) for ex in corpus]


def scored(model: RankerModel, examples: Sequence[Example]) -> list[tuple[Example, object]]:
    return [(ex, model.decide(ex.pool)) for ex in examples]


def metrics(rows: Sequence[tuple[Example, object]]) -> str:
    """top1, top1 with acceptable, recall@5 and abstention in the order the agent presents (the
    ranker's ``decide``: an endpoint the question names comes first). When this was written,
    ``evals.ablation.ranking_metrics`` ordered by probability alone; it now takes ``presented``."""
    top1 = lenient = recall = answerable = abstained = false_abst = unanswerable = 0.0
    probs, labels = [], []
    for ex, d in rows:
        ranked = [endpoint_key(r.signature) for r, _ in d.ranked] if d.answer else []
        probs.append(d.answer_probability)
        labels.append(int(ex.case.answerable))
        if not ex.case.answerable:
            unanswerable += 1
            abstained += not ranked
            continue
        answerable += 1
        expected = set(ex.case.expected)
        false_abst += not ranked
        top1 += bool(ranked) and ranked[0] in expected
        lenient += bool(ranked) and ranked[0] in expected | set(ex.case.acceptable)
        recall += len(expected & set(ranked[:5])) / len(expected)
    auc = roc_auc_score(labels, probs) if 0 < sum(labels) < len(labels) else float("nan")
    return (f"top1 {top1 / answerable:.3f} ({int(top1)}/{int(answerable)}) "
            f"+acc {lenient / answerable:.3f} recall@5 {recall / answerable:.3f} "
            f"abstention {abstained / max(unanswerable, 1):.3f} ({int(abstained)}/"
            f"{int(unanswerable)}) false {false_abst / answerable:.3f} answer-AUC {auc:.3f}")


def out_of_fold(fitted: Sequence[Example], held: Sequence[Example]) -> list[tuple[Example, object]]:
    """``held`` scored fold by fold, each by a model fitted on ``fitted`` minus its fold."""
    out = []
    for name in sorted({ex.dataset for ex in held}):
        model = train([ex for ex in fitted if ex.dataset != name], DISABLED)
        out += scored(model, [ex for ex in held if ex.dataset == name])
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("pools", type=Path)
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--variants", default="dev,corpus,both")
    args = parser.parse_args()
    with args.pools.open("rb") as f:
        pools = pickle.load(f)
    dev, validation = pools["train"], pools["validation"]
    corpus = folded(pools["corpus"], args.folds)
    print(f"{len(dev)} training-dev, {len(validation)} validation, {len(corpus)} corpus examples "
          f"({len({ex.dataset for ex in pools['corpus']})} APIs in {args.folds} folds)")
    fits = {"dev": dev, "corpus": corpus, "both": [*dev, *corpus]}
    for variant in args.variants.split(","):
        fitted = fits[variant]
        model = train(fitted, DISABLED)
        print(f"\n## fitted on {variant}: answer threshold {model.answer_threshold}, "
              f"primary threshold {model.primary_threshold}", flush=True)
        print("validation (dev)    ", metrics(scored(model, validation)), flush=True)
        for label, part in (("training dev", dev), ("corpus v3", corpus)):
            inside = any(ex.dataset in {e.dataset for e in part} for ex in fitted)
            rows = out_of_fold(fitted, part) if inside else scored(model, part)
            how = "out of fold" if inside else "unseen"
            print(f"{label:<12} {how:<11}", metrics(rows), flush=True)


if __name__ == "__main__":
    main()
