"""Score the dev pools (``../2026-11-27-abstention/collect.py``) with a verifier of train.py:
the verifier's logit of the ranker's top candidates, each feature's AUC (answerable scored
higher), and the answer model's abstention with the verifier's features added, by
``analyse.evaluate`` (threshold chosen out of fold on training dev, false abstention <= 0.05).
Dev sets only: training dev out of fold, validation by the model of all training dev sets.

    .venv/bin/python experiments/2026-11-28-verifier/score.py POOLS MODEL [--top 3] \
        [--tokens 224] [--cache FILE.json]
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
from pathlib import Path

import numpy as np
import torch
from transformers import AutoTokenizer

from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DEV, Example, fit_candidates, out_of_fold
from apiatlas.loaders.cards import card_text
from apiatlas.loaders.openapi import load_openapi

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "2026-11-27-abstention"))
from analyse import auc, evaluate  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))
from train import Verifier  # noqa: E402


def cards_of(dataset_name: str) -> dict[tuple[str, str], str]:
    """(method, path) -> card text of a dev dataset's specs."""
    [file] = [f for f in dataset_files(DEV) if f.stem == dataset_name]
    found: dict[tuple[str, str], str] = {}
    for source in load_dataset(file).sources.openapi:
        for spec in load_openapi(source, api=dataset_name):
            for e in spec.endpoints:
                found.setdefault((e.method, e.path), card_text(spec, e))
    return found


def probabilities(train: list[Example], held: list[Example]) -> list[list[float]]:
    oof = out_of_fold(train, fit_candidates)
    full = fit_candidates(train)
    return [*oof, *([full.probability(v) for v in ex.pool.vectors] for ex in held)]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("pools", type=Path)
    p.add_argument("model", type=Path)
    p.add_argument("--top", type=int, default=3)
    p.add_argument("--tokens", type=int, default=224)
    p.add_argument("--cache", type=Path)
    a = p.parse_args()
    with a.pools.open("rb") as f:
        data = pickle.load(f)
    train, held = data["train"], data["validation"]
    examples = [*train, *held]
    probs = probabilities(train, held)
    cards: dict[str, dict[tuple[str, str], str]] = {}
    todo: list[tuple[str, str, str]] = []
    tops: list[list[int]] = []
    for ex, pr in zip(examples, probs, strict=True):
        if ex.dataset not in cards:
            cards[ex.dataset] = cards_of(ex.dataset)
        order = list(np.argsort(-np.asarray(pr))[:a.top]) if pr else []
        tops.append(order)
        for i in order:
            ref = ex.pool.refs[i]
            todo.append((ex.case.question, cards[ex.dataset][(ref.method, ref.path)],
                         f"{ex.dataset}|{ex.case.id}|{ref.key}"))
    scores: dict[str, float] = {}
    if a.cache and a.cache.exists():
        scores = json.loads(a.cache.read_text())
    missing = [t for t in todo if t[2] not in scores]
    if missing:
        tokenizer = AutoTokenizer.from_pretrained(a.model)
        model = Verifier.load(a.model)
        with torch.no_grad():
            for s in range(0, len(missing), 64):
                chunk = missing[s:s + 64]
                enc = tokenizer([c[0] for c in chunk], [c[1] for c in chunk],
                                truncation="only_second", max_length=a.tokens, padding=True,
                                return_tensors="pt")
                logits = model(**enc).tolist()
                scores.update({c[2]: float(v) for c, v in zip(chunk, logits, strict=True)})
        if a.cache:
            a.cache.write_text(json.dumps(scores))
    feature: dict[int, list[float]] = {}
    top_of = {id(ex): order for ex, order in zip(examples, tops, strict=True)}
    for ex, order in zip(examples, tops, strict=True):
        s = [scores[f"{ex.dataset}|{ex.case.id}|{ex.pool.refs[i].key}"] for i in order]
        s += [-10.0] * (a.top - len(s))
        feature[id(ex)] = [s[0], max(s), s[0] - max(s[1:], default=-10.0)]
    for part, exs in (("training dev", train), ("validation", held)):
        y = [ex.case.answerable for ex in exs]
        top1 = [feature[id(ex)][0] for ex in exs]
        best = [feature[id(ex)][1] for ex in exs]
        print(f"{part}: verifier top1 AUC {auc(top1, y):.3f}, max of top {a.top} "
              f"AUC {auc(best, y):.3f}")
        firsts = [top_of[id(ex)][0] for ex in exs if top_of[id(ex)]]
        right = [ex.labels[i] == 1 for ex, i in zip(
            (ex for ex in exs if top_of[id(ex)]), firsts, strict=True)]
        print(f"  (ranker top1 right on {sum(right)} of {len(right)})")
    evaluate(train, held, "current")
    evaluate(train, held, "+ verifier", lambda ex, _: feature[id(ex)],
             ("ver_top1", "ver_max", "ver_gap"))
    evaluate(train, held, "+ verifier top1 only", lambda ex, _: feature[id(ex)][:1],
             ("ver_top1",))


if __name__ == "__main__":
    main()
