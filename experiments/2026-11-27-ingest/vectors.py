"""Item 7 of issue 33 on dev: the ranker with three vectors per endpoint (card, name, about)
against one (the card's), on pools collected with cards embedded at 256 or 128 tokens
(collect.py). Training dev sets out of fold; validation by the model of all training dev sets.

    .venv/bin/python experiments/2026-11-27-abstention/vectors.py \
        .apiatlas/abstention/pools.pkl .apiatlas/abstention/pools-128.pkl
"""

from __future__ import annotations

import dataclasses
import pickle
import sys

from apiatlas.evals.ablation import evaluate
from apiatlas.evals.train import VALIDATION, Example
from apiatlas.rag.ranking.features import FEATURES, GROUPS

METRICS = ("top1", "top1_acceptable", "recall@5", "abstention_accuracy", "false_abstention")


OFF = [FEATURES.index(f) for g in ("dense:name", "dense:about") for f in GROUPS[g]]


def without_name_and_about(examples: list[Example]) -> list[Example]:
    """``examples`` as if the name and about vectors were never embedded: their features read
    0 for the candidate model and for the answer model's best-of features alike."""
    out = []
    for ex in examples:
        vectors = [[0.0 if i in OFF else x for i, x in enumerate(v)] for v in ex.pool.vectors]
        pool = dataclasses.replace(ex.pool, vectors=vectors)
        out.append(dataclasses.replace(ex, pool=pool))
    return out


def main(paths: list[str]) -> None:
    for path in paths:
        data = pickle.load(open(path, "rb"))
        one = (without_name_and_about(data["train"]), without_name_and_about(data["validation"]))
        for label, train, held, disabled in (
            ("three vectors", data["train"], data["validation"], ()),
            ("one vector, candidate model only", data["train"], data["validation"],
             ("dense:name", "dense:about")),
            ("one vector (never embedded)", *one, ()),
        ):
            per = evaluate(train, held, disabled)
            line = []
            for part, names in (("training dev", [n for n in per if n not in VALIDATION]),
                                ("validation", list(VALIDATION))):
                cells = []
                for metric in METRICS:
                    values = [per[n][metric] for n in names if per[n][metric] is not None]
                    cells.append(f"{metric} {sum(values) / len(values):.3f}")
                line.append(f"{part}: " + ", ".join(cells))
            print(f"{path} {label}\n  " + "\n  ".join(line), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
