"""Coverage weighted by FTS5's idf instead of ``FieldIndex.rarity``'s: one idf, or two? Dev only.

    python experiments/2026-11-29-coverage-idf/run.py POOLS HOMES

``POOLS`` is ``../2026-11-29-ranker-features/run.py``'s ``examples.pkl`` (the dev pools without
the adapter: the eight training sets and validation); ``HOMES`` the dev datasets' ingested homes
it was built from. For each pool member the coverage features (``cov_all``, ``cov_head``) are
computed again from the dataset's stored field index, once with each term weighted by
``log(1 + N / df)``, the weight the pools were built with (a check: it must give the cached
values), and once by :func:`apiatlas.graph.fts.idf`, which the library uses since. The ranker
is refitted and scored as ``make ablation`` does.
"""

from __future__ import annotations

import copy
import math
import pickle
import sys
from pathlib import Path

from apiatlas.evals.ablation import evaluate
from apiatlas.evals.train import DISABLED, VALIDATION
from apiatlas.graph import fts
from apiatlas.rag.ranking.features import FEATURES
from apiatlas.rag.ranking.fields import FieldIndex, terms

COVERAGE = {"cov_all": None, "cov_head": ("name", "path")}


def index_of(home: Path) -> FieldIndex:
    found = sorted((home / "derived").glob("fields-*.npz"))
    if len(found) != 1:
        raise SystemExit(f"{home}: expected one stored field index, found {len(found)}")
    return FieldIndex.load(found[0])


def recomputed(examples, indexes, weight) -> tuple[list, int]:
    """Copies of ``examples`` with coverage recomputed under ``weight``, and how many cached
    values differed by more than 1e-9."""
    out, differ = [], 0
    for ex in examples:
        index = indexes[ex.dataset]
        index.rarity = weight.__get__(index)  # the instance's own weighting
        index._words.clear()
        query = terms(ex.case.question)
        positions = index.positions(r.key for r in ex.pool.refs)
        copied = copy.copy(ex)
        copied.pool = copy.copy(ex.pool)
        copied.pool.vectors = [list(v) for v in ex.pool.vectors]
        for name, fields in COVERAGE.items():
            values = (index.coverages(query, positions.values()) if fields is None
                      else index.coverages(query, positions.values(), fields))
            i = FEATURES.index(name)
            for vector, ref in zip(copied.pool.vectors, copied.pool.refs):
                new = values[positions[ref.key]]
                differ += abs(vector[i] - new) > 1e-9
                vector[i] = new
        out.append(copied)
    return out, differ


def classic_weight(self, term: str) -> float:
    df = self._document_frequency.get(term, 0)
    return math.log(1.0 + len(self.endpoints) / df) if df else 0.0


def fts_weight(self, term: str) -> float:
    df = self._document_frequency.get(term, 0)
    return fts.idf(len(self.endpoints), df) if df else 0.0


def main() -> None:
    _, train_ex, _, val_ex = pickle.loads(Path(sys.argv[1]).read_bytes())
    homes = Path(sys.argv[2])
    indexes = {name: index_of(homes / name) for name in {e.dataset for e in train_ex + val_ex}}
    for label, weight in (("log(1 + N/df), as the pools were built", classic_weight),
                          ("FTS5's idf", fts_weight)):
        tr, d1 = recomputed(train_ex, indexes, weight)
        va, d2 = recomputed(val_ex, indexes, weight)
        result = evaluate(tr, va, DISABLED)
        print(f"\n{label}: {d1 + d2} coverage values differ from the cached pools")
        for group, names in (("training sets (out of fold)", sorted({e.dataset for e in tr})),
                             ("validation", VALIDATION)):
            means = {}
            for m in ("top1", "top1_acceptable", "recall@5", "abstention_accuracy",
                      "false_abstention"):
                values = [result[n][m] for n in names if result[n][m] is not None]
                means[m] = sum(values) / max(1, len(values))
            print(f"  {group}: " + ", ".join(f"{m} {v:.3f}" for m, v in means.items()))
            print("   " + " ".join(f"{n} {result[n]['top1']:.3f}" for n in names))


if __name__ == "__main__":
    main()
