"""Measure the ranker with and without more dev questions (the run behind this folder's README).

    python experiments/2026-11-26-more-dev-questions/measure.py [--extra]

With ``--extra``, each ``<name>.yaml`` here is appended in memory to the dev dataset of that
name (the committed files are not touched). Then, as ``python -m apiatlas.evals.ablation``
does: the dev pools are built with out-of-fold query adapters (``apiatlas.evals.train.stacked``),
each dev API is ranked by a ranker trained on the other dev APIs, and the validation sets by
the ranker and adapter trained on all of dev. No test set is read.

Prints, for dev (out of fold, the committed cases only) and validation: top1, top1 with
acceptable endpoints, recall@5, abstention and false abstention, first with the ranker's
answer decision, then always answering (the ranking alone).
"""

from __future__ import annotations

import argparse
from pathlib import Path

import yaml

from apiatlas.evals.ablation import _decide, ranking_metrics
from apiatlas.evals.dataset import Case, load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DATASETS, HOMES, VALIDATION, collect, dev_datasets, stacked, train

HERE = Path(__file__).resolve().parent
METRICS = ("top1", "top1_acceptable", "recall@5", "abstention_accuracy", "false_abstention")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--extra", action="store_true", help="add this folder's cases")
    args = parser.parse_args()
    datasets = dev_datasets()
    committed = {(d.name, c.id) for d in datasets for c in d.cases}
    if args.extra:
        for d in datasets:
            extra = HERE / f"{d.name}.yaml"
            if extra.is_file():
                raw = yaml.safe_load(extra.read_text(encoding="utf-8"))["cases"]
                d.cases = [*d.cases, *(Case.model_validate(c) for c in raw)]
    dev = stacked(datasets, HOMES)
    held = [load_dataset(f) for f in dataset_files(DATASETS / "dev", VALIDATION)]
    scored = collect(held, HOMES, {d.name: dev.adapter for d in held})
    full = train(dev.examples)
    for always in (False, True):
        rows: dict[str, list[dict[str, float | None]]] = {"dev": [], "validation": []}
        for name in sorted({ex.dataset for ex in dev.examples}):
            model = train([ex for ex in dev.examples if ex.dataset != name])
            mine = [ex for ex in dev.examples
                    if ex.dataset == name and (name, ex.case.id) in committed]
            scores, answers = _decide(model, mine)
            rows["dev"].append(ranking_metrics(mine, scores, [True] * len(mine) if always
                                               else answers))
        for name in sorted(VALIDATION):
            mine = [ex for ex in scored if ex.dataset == name]
            scores, answers = _decide(full, mine)
            rows["validation"].append(ranking_metrics(mine, scores, [True] * len(mine) if always
                                                      else answers))
        for split, per in rows.items():
            means = {m: sum(r[m] or 0.0 for r in per) / len(per) for m in METRICS}
            print(("always answering" if always else "answer decision").ljust(18), split.ljust(10),
                  " ".join(f"{m} {v:.3f}" for m, v in means.items()))
    print(f"answer threshold {full.answer_threshold}, primary threshold {full.primary_threshold}")


if __name__ == "__main__":
    main()
