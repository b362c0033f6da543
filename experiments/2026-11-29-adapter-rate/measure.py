"""The query adapter's step size, ``ADAPTER_RATE``, measured on dev by the adapter's own
objective (issue 35). The adapter is off (``evals/train.py``: ``ADAPTER``), so no shipped answer
depends on it; this completes the record of the fitting procedure's settings.

    .venv/bin/python experiments/2026-11-29-adapter-rate/measure.py HOMES RATE...

``HOMES`` holds the dev datasets' training homes (``make train``'s). As
``python -m apiatlas.evals.train --sweep`` does, it builds every dev dataset's pools (the
validation sets included) and prints, per step size, the out-of-fold top1 of the card
similarity alone, each API's adapter fitted on the other dev APIs at the shipped rank and
penalty, with the APIs it helps and hurts against no adapter. No test set is read.
"""

from __future__ import annotations

import sys
from pathlib import Path
from unittest.mock import patch

import numpy as np

from apiatlas.config import Settings
from apiatlas.evals import adapter_fit
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DEV, EXCLUDED, collect
from apiatlas.rag.runtime.embeddings import load_embeddings, model_id


def main(homes: Path, rates: list[float]) -> None:
    every = [load_dataset(f) for f in dataset_files(DEV) if f.stem not in EXCLUDED]
    model = model_id(load_embeddings(Settings()))
    examples = collect(every, homes)
    base = adapter_fit.card_top1(examples, model, None)
    print(f"unadapted: mean top1 {np.mean(list(base.values())):.3f}", flush=True)
    for rate in rates:
        with patch.object(adapter_fit, "ADAPTER_RATE", rate):
            scores = adapter_fit.card_top1(
                examples, model, adapter_fit.adapters_out_of_fold(examples, model))
        better = sum(scores[n] > base[n] for n in base)
        worse = sum(scores[n] < base[n] for n in base)
        print(f"rate {rate}: mean top1 {np.mean(list(scores.values())):.3f} "
              f"(better on {better}, worse on {worse})", flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]), [float(r) for r in sys.argv[2:]])
