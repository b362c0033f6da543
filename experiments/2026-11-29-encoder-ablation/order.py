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

from apiatlas.evals.ablation import ranking_metrics
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DATASETS, DISABLED, VALIDATION, collect, dev_datasets, train
from apiatlas.rag.ranking.features import FEATURES
from apiatlas.rag.ranking.model import presented_order

homes, out = Path(sys.argv[1]), Path(sys.argv[2])
CARD = FEATURES.index("card_dense")
embedded: dict[str, list[float]] = {}
train_sets = collect(dev_datasets(), homes / "dev", embedded=embedded)
others = (collect([load_dataset(f) for f in dataset_files(DATASETS / "dev", VALIDATION)],
                  homes / "dev", embedded=embedded)
          + collect([load_dataset(f) for f in dataset_files(DATASETS / "test")],
                    homes / "test", embedded=embedded))


def orders(model, examples):
    """Per example: the answer decision and the three orders as score lists."""
    rows = []
    for ex in examples:
        ranker = presented_order(ex.pool, model.scores(ex.pool))
        cosine = sorted(range(len(ex.pool.refs)),
                        key=lambda i: (-ex.pool.vectors[i][CARD], ex.pool.refs[i].key))
        first_then_cosine = ranker[:1] + [i for i in cosine if i != ranker[0]] if ranker else []
        rows.append((model.decide(ex.pool).answer, ranker, cosine, first_then_cosine))
    return rows


def as_scores(order, size):
    """Scores that sort into ``order`` (the earliest highest)."""
    scores = [0.0] * size
    for place, i in enumerate(order):
        scores[i] = float(size - place)
    return scores


results: dict[str, dict] = {"ranker": {}, "cosine": {}, "ranker first, then cosine": {}}
names = sorted({ex.dataset for ex in train_sets})
groups = [([ex for ex in train_sets if ex.dataset == n],
           train([ex for ex in train_sets if ex.dataset != n], DISABLED)) for n in names]
full = train(train_sets, DISABLED)
groups += [([ex for ex in others if ex.dataset == n], full)
           for n in sorted({ex.dataset for ex in others})]
for examples, model in groups:
    rows = orders(model, examples)
    answers = [r[0] for r in rows]
    for k, label in enumerate(results, start=1):
        scores = [as_scores(r[k], len(ex.pool.refs)) for r, ex in zip(rows, examples, strict=True)]
        results[label][examples[0].dataset] = ranking_metrics(examples, scores, answers)
splits = {**{ex.dataset: "dev" for ex in train_sets},
          **{ex.dataset: "test" if ex.dataset not in VALIDATION else "dev" for ex in others}}
out.write_text(json.dumps({"encoder": "shipped", "splits": splits, "results": results},
                          indent=1) + "\n", encoding="utf-8")
