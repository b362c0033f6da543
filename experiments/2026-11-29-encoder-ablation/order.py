"""Below the first candidate: the ranker's order against the card cosine's (shipped encoder).

    python experiments/2026-11-29-encoder-ablation/order.py HOMES OUT.json

HOMES is ``run.py``'s for the shipped encoder (``dev/`` and ``test/``). Three orders of each
pool, all with the ranker's answer decision: the ranker's (as shipped), the card cosine's, and
the ranker's first candidate followed by the others in the cosine's order. The training dev sets
are ranked out of fold, validation and test by the model of all training dev sets.
"""

import json
import sys
from pathlib import Path

from run import pools  # this folder's run.py (the script's folder is on sys.path)

from apiatlas.evals.ablation import ranking_metrics
from apiatlas.evals.train import DISABLED, VALIDATION, train
from apiatlas.rag.ranking.features import FEATURES
from apiatlas.rag.ranking.model import presented_order

LABELS = ("ranker", "cosine", "ranker first, then cosine")
CARD = FEATURES.index("card_dense")


def orders(model, ex) -> dict[str, list[int]]:
    """The pool's three orders of candidate positions, by label."""
    ranker = presented_order(ex.pool, model.scores(ex.pool))
    cosine = sorted(range(len(ex.pool.refs)),
                    key=lambda i: (-ex.pool.vectors[i][CARD], ex.pool.refs[i].key))
    first = ranker[:1] + [i for i in cosine if i != ranker[0]] if ranker else []
    return dict(zip(LABELS, (ranker, cosine, first), strict=True))


def as_scores(order: list[int], size: int) -> list[float]:
    """Scores that sort into ``order`` (the earliest highest)."""
    scores = [0.0] * size
    for place, i in enumerate(order):
        scores[i] = float(size - place)
    return scores


def main() -> None:
    homes, out = Path(sys.argv[1]), Path(sys.argv[2])
    _, _, train_sets, held, tests, _ = pools(homes)
    others = held + tests
    names = sorted({ex.dataset for ex in train_sets})
    groups = [([ex for ex in train_sets if ex.dataset == n],
               train([ex for ex in train_sets if ex.dataset != n], DISABLED)) for n in names]
    full = train(train_sets, DISABLED)
    groups += [([ex for ex in others if ex.dataset == n], full)
               for n in sorted({ex.dataset for ex in others})]
    results: dict[str, dict] = {label: {} for label in LABELS}
    for examples, model in groups:
        answers = [model.decide(ex.pool).answer for ex in examples]
        ordered = [orders(model, ex) for ex in examples]
        for label in LABELS:
            scores = [as_scores(o[label], len(ex.pool.refs))
                      for o, ex in zip(ordered, examples, strict=True)]
            results[label][examples[0].dataset] = ranking_metrics(examples, scores, answers)
    splits = {**{ex.dataset: "dev" for ex in train_sets},
              **{ex.dataset: "dev" if ex.dataset in VALIDATION else "test" for ex in others}}
    out.write_text(json.dumps({"encoder": "shipped", "splits": splits, "results": results},
                              indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
