"""The memory relevance fit at several inverse regularisations (issue 54, item 2).

    .venv/bin/python experiments/2026-12-03-learned-relevance/sweep_c.py [C ...]

Captures the dev and validation memory sets once (as ``python -m apiatlas.evals.memory_relevance``
does), then fits and reports at each C. Nothing is written.
"""

from __future__ import annotations

import sys

from apiatlas.config import Settings
from apiatlas.evals import memory_relevance as mr
from apiatlas.evals.dataset import load_dataset
from apiatlas.rag.runtime.embeddings import load_embeddings


def main() -> None:
    values = [float(v) for v in sys.argv[1:]] or [0.1, 0.3, 1.0, 3.0, 10.0]
    embeddings = load_embeddings(Settings())
    fit_paths, validation_paths = mr.memory_sets()
    dev = {p.stem: mr.capture(load_dataset(p), mr.ROOT, embeddings) for p in fit_paths}
    validation = {p.stem: mr.capture(load_dataset(p), mr.ROOT, embeddings)
                  for p in validation_paths}
    for c in values:
        mr.C = c
        print("\n".join(mr.report(dev, validation, mr.fit(dev), label=f"C {c}")))


if __name__ == "__main__":
    main()
