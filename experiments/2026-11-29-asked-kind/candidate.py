"""The learned asked kind as a candidate feature: does it move the ranking? Dev only.

    python experiments/2026-11-29-asked-kind/candidate.py WRITTEN_ALL POOLS QUESTION_FOLDER...

Arguments as for ``answer.py`` (without ``HOMES``). Every candidate's vector gets one more
feature, the classifier's probability of the candidate's kind; the candidate model is fitted as
``make train`` fits it (the shipped groups, out of fold on the eight training sets, validation
by the model of all eight), once with the feature and once with it at 0.
"""

from __future__ import annotations

import copy
import gzip
import json
import pickle
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from answer import unanswerable  # this folder's answer.py
from run import card_kind  # this folder's run.py
from apiatlas.evals.encoder.quick import onnx_embed
from apiatlas.evals.train import DISABLED, fit_linear
from apiatlas.graph.signatures import endpoint_key
from apiatlas.rag.ranking.features import FEATURES
from apiatlas.rag.ranking.model import masked

NAMES = (*FEATURES, "asked")


def augment(examples, classifier, embed, on: bool):
    """Copies of ``examples`` whose candidate vectors end with the learned-kind feature."""
    rows = classifier.predict_proba(embed([e.case.question for e in examples]))
    out = []
    for example, row in zip(examples, rows):
        p = dict(zip(classifier.classes_, map(float, row)))
        copied = copy.copy(example)
        copied.pool = copy.copy(example.pool)
        copied.pool.vectors = [[*v, p.get(r.kind, 0.0) if on else 0.0]
                               for r, v in zip(example.pool.refs, example.pool.vectors)]
        out.append(copied)
    return out


def vector(v):
    return masked(v[:-1], DISABLED) + [v[-1]]


def fit(examples):
    rows, ys = [], []
    for ex in examples:
        for v, label in zip(ex.pool.vectors, ex.labels):
            if label is not None:
                rows.append(vector(v))
                ys.append(label)
    return fit_linear(np.array(rows), np.array(ys), NAMES)


def figures(examples, probabilities) -> str:
    top1, acceptable, recall = [], [], []
    for e, p in zip(examples, probabilities):
        if not e.case.answerable or not p:
            continue
        order = sorted(range(len(p)), key=lambda i: -p[i])
        keys = [endpoint_key(e.pool.refs[i].signature) for i in order]
        expected = set(e.case.expected)
        top1.append(keys[0] in expected)
        acceptable.append(keys[0] in expected | set(e.case.acceptable))
        recall.append(bool(set(keys[:5]) & expected))
    return (f"{np.mean(top1):.3f}/{np.mean(acceptable):.3f}/{np.mean(recall):.3f} "
            f"({sum(top1)})")


def main() -> None:
    with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f:
        pairs = [json.loads(line) for line in f]
    embed = onnx_embed(None)
    queries = [p["query"] for p in pairs]
    labels = [card_kind(p["endpoint"], p["positive"]) for p in pairs]
    for question, kind in unanswerable(sys.argv[3:]):
        queries.append(question)
        labels.append(kind)
    classifier = LogisticRegression(max_iter=2000).fit(embed(queries), labels)
    _, train_ex, _, val_ex = pickle.loads(Path(sys.argv[2]).read_bytes())
    for on in (False, True):
        training = augment(train_ex, classifier, embed, on)
        validation = augment(val_ex, classifier, embed, on)
        oof: list[list[float]] = [[] for _ in training]
        for name in sorted({e.dataset for e in training}):
            model = fit([e for e in training if e.dataset != name])
            for i, e in enumerate(training):
                if e.dataset == name:
                    oof[i] = [model.probability(vector(v)) for v in e.pool.vectors]
        full = fit(training)
        scored = [[full.probability(vector(v)) for v in e.pool.vectors] for e in validation]
        print("asked feature" if on else "shipped", "training sets (out of fold)",
              figures(training, oof), "validation", figures(validation, scored),
              "coefficient", full.coef[-1])


if __name__ == "__main__":
    main()
