"""A linear verifier on the shipped encoder's vectors: does the top candidate do what the question
asks? Features of a (question, card) pair: the cosine and the elementwise product of the two
unit vectors (384 values), fitted by logistic regression on build.py's corpus pairs, then read
on the dev pools as an answer feature (as score.py does for the cross-encoder).

    .venv/bin/python experiments/2026-11-28-verifier/linear.py PAIRS POOLS [--vectors FILE.npz]
        [--c 0.1]

Dev sets only: training dev out of fold, validation by the model of all training dev sets.
"""

from __future__ import annotations

import argparse
import gzip
import json
import pickle
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from apiatlas.config import Settings
from apiatlas.rag.runtime.embeddings import load_embeddings

sys.path.insert(0, str(Path(__file__).resolve().parent))
from score import probabilities  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "2026-11-27-abstention"))
from analyse import auc, evaluate  # noqa: E402


def pair_features(q: np.ndarray, c: np.ndarray) -> np.ndarray:
    return np.hstack([(q * c).sum(-1, keepdims=True), q * c])


def corpus_vectors(rows: list[dict], cache: Path | None) -> tuple[np.ndarray, np.ndarray]:
    if cache and cache.exists():
        data = np.load(cache)
        return data["q"], data["c"]
    embeddings = load_embeddings(Settings())
    questions = sorted({r["question"] for r in rows})
    cards = sorted({r["card"] for r in rows})
    qv = dict(zip(questions, (embeddings.embed_query(q) for q in questions), strict=True))
    cv = dict(zip(cards, embeddings.embed_documents(cards), strict=True))
    q = np.asarray([qv[r["question"]] for r in rows], dtype=np.float32)
    c = np.asarray([cv[r["card"]] for r in rows], dtype=np.float32)
    if cache:
        np.savez(cache, q=q, c=c)
    return q, c


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("pairs", type=Path)
    p.add_argument("pools", type=Path)
    p.add_argument("--vectors", type=Path)
    p.add_argument("--c", type=float, default=0.1)
    a = p.parse_args()
    with gzip.open(a.pairs, "rt", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f]
    q, c = corpus_vectors(rows, a.vectors)
    y = np.asarray([r["label"] for r in rows])
    apis = sorted({r["api"] for r in rows})
    held = {api for i, api in enumerate(apis) if i % 5 == 0}
    mask = np.asarray([r["api"] not in held for r in rows])
    x = pair_features(q, c)
    check = LogisticRegression(C=a.c, max_iter=2000).fit(x[mask], y[mask])
    s = check.decision_function(x[~mask])
    cos = x[~mask, 0]
    truth = list(y[~mask] == 1)
    print(f"corpus, a fifth of the APIs held out: verifier AUC {auc(list(s), truth):.3f}, "
          f"cosine alone {auc(list(cos), truth):.3f}")
    model = LogisticRegression(C=a.c, max_iter=2000).fit(x, y)
    with a.pools.open("rb") as f:
        data = pickle.load(f)
    train, held_out = data["train"], data["validation"]
    probs = probabilities(train, held_out)
    feature = {}
    for ex, pr in zip([*train, *held_out], probs, strict=True):
        if not pr or not len(ex.cards):
            feature[id(ex)] = [0.0, 0.0]
            continue
        order = np.argsort(-np.asarray(pr))[:3]
        qv = ex.query / (np.linalg.norm(ex.query) or 1.0)
        scores = model.decision_function(pair_features(qv[None, :], ex.cards[order]))
        feature[id(ex)] = [float(scores[0]), float(scores.max())]
    for part, exs in (("training dev", train), ("validation", held_out)):
        yy = [ex.case.answerable for ex in exs]
        print(f"{part}: verifier top1 AUC {auc([feature[id(e)][0] for e in exs], yy):.3f}, "
              f"max of top 3 {auc([feature[id(e)][1] for e in exs], yy):.3f}")
    evaluate(train, held_out, "current")
    evaluate(train, held_out, "+ linear verifier", lambda ex, _: feature[id(ex)],
             ("lin_top1", "lin_max"))


if __name__ == "__main__":
    main()
