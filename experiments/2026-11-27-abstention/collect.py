"""Collect the dev pools the ranker is trained on (out-of-fold adapters, as `make train` builds
them) and the validation pools as the agent builds them (the adapter fitted on the training dev
sets), and pickle them for the abstention experiments in this folder.

    .venv/bin/python experiments/2026-11-27-abstention/collect.py .apiatlas/abstention/pools.pkl

A second argument sets the encoder's window (``onnx_minilm.MAX_TOKENS``, 256 in the product):
``... pools-128.pkl 128`` embeds every text, cards included, at most 128 tokens long.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DEV, HOMES, VALIDATION, collect, dev_datasets, stacked


def main(out: Path) -> None:
    train_sets = dev_datasets()
    dev = stacked(train_sets, HOMES)
    validation = [load_dataset(f) for f in dataset_files(DEV, VALIDATION)]
    held = collect(validation, HOMES, {d.name: dev.adapter for d in validation})
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("wb") as f:
        pickle.dump({"train": dev.examples, "validation": held, "adapter": dev.adapter}, f)
    print(f"{len(dev.examples)} training-dev and {len(held)} validation examples -> {out}")


if __name__ == "__main__":
    if len(sys.argv) > 2:
        from apiatlas.rag.runtime import onnx_minilm

        onnx_minilm.MAX_TOKENS = int(sys.argv[2])
    main(Path(sys.argv[1]))
