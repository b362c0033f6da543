"""The ranker's signals re-decided on a new encoder: dev only (validation + the training dev
sets out of fold), no test set is collected.

Run from the repository root with the encoder under test copied over
apiatlas/models/encoder/model.onnx and homes ingested with it:

    python experiments/2026-11-29-ranker-features/run.py --homes H --validation-homes V --out O
"""

from __future__ import annotations

import argparse
import json
import pickle
from pathlib import Path

from apiatlas.evals.ablation import evaluate, markdown, ranking_metrics
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DATASETS, VALIDATION, collect, dev_datasets, stacked
from apiatlas.rag.ranking.features import FEATURES, GROUPS

DENSE = ("dense:name", "dense:about", "dense:card")
KEEP = {
    "dense + coverage only": (*DENSE, "coverage"),
    "dense + coverage + text + graph": (*DENSE, "coverage", "text", "graph"),
    "no lexical fields": tuple(g for g in GROUPS if not g.startswith("lexical:")),
}


def variants() -> dict[str, tuple[str, ...]]:
    """Every group on, then each group off in turn (``make ablation``'s variants before it
    started from the shipped setting)."""
    out = {"learned (all signals)": ()}
    out.update({f"without {group}": (group,) for group in GROUPS})
    out["one dense vector (the card's; no name or about vector)"] = ("dense:name", "dense:about")
    return out


def card_alone(examples):
    """Every pool ordered by the card's cosine alone, always answering (dense within the pool)."""
    i = FEATURES.index("card_dense")
    return ranking_metrics(examples, [[v[i] for v in ex.pool.vectors] for ex in examples],
                           [True] * len(examples))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--homes", type=Path, required=True)
    parser.add_argument("--validation-homes", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    cache = args.out / "examples.pkl"
    if cache.exists():
        dev_examples, dev_plain, scored, plain = pickle.loads(cache.read_bytes())
    else:
        dev = stacked(dev_datasets(), args.homes)
        held = [load_dataset(f) for f in dataset_files(DATASETS / "dev", VALIDATION)]
        embedded: dict[str, list[float]] = {}
        scored = collect(held, args.validation_homes, {d.name: dev.adapter for d in held},
                         embedded)
        plain = collect(held, args.validation_homes, embedded=embedded)
        dev_examples, dev_plain = dev.examples, dev.plain
        args.out.mkdir(parents=True, exist_ok=True)
        cache.write_bytes(pickle.dumps((dev_examples, dev_plain, scored, plain)))
    runs = variants()
    runs.update({name: tuple(g for g in GROUPS if g not in keep) for name, keep in KEEP.items()})
    results = {name: evaluate(dev_examples, scored, off) for name, off in runs.items()}
    # The same variants on pools built without the query adapter.
    results.update({f"no adapter, {name}": evaluate(dev_plain, plain, off)
                    for name, off in runs.items()})
    cards = {}
    for name in sorted({ex.dataset for ex in dev_plain + plain}):
        cards[name] = card_alone([ex for ex in dev_plain + plain if ex.dataset == name])
    results["card cosine alone (no learning)"] = cards
    splits = {ex.dataset: "dev" for ex in dev_examples + scored}
    (args.out / "ablation.md").write_text(markdown(results, splits) + "\n", encoding="utf-8")
    (args.out / "ablation.json").write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")
    print(markdown(results, splits))


if __name__ == "__main__":
    main()
