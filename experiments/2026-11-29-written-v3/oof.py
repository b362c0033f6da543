"""The shipped ranker's setting, ranking level, on dev only: the training sets out of fold and the
validation sets by the model of all training sets (the ablation's first row, no test set read).

    python experiments/2026-11-29-written-v3/oof.py HOMES OUT.json

HOMES holds the training homes ingested with the encoder in ``apiatlas/models/encoder``.
"""

import json
import sys
from pathlib import Path

from apiatlas.evals.ablation import evaluate
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import (
    ADAPTER, DATASETS, DISABLED, VALIDATION, collect, dev_datasets, stacked,
)

homes, out = Path(sys.argv[1]), Path(sys.argv[2])
dev = stacked(dev_datasets(), homes)
held = [load_dataset(f) for f in dataset_files(DATASETS / "dev", VALIDATION)]
adapters = {d.name: dev.adapter for d in held} if ADAPTER else None
scored = collect(held, homes, adapters)
result = evaluate(dev.examples if ADAPTER else dev.plain, scored, DISABLED)
out.write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
for label, names in (("training (oof)", sorted(set(result) - set(VALIDATION))),
                     ("validation", sorted(VALIDATION))):
    keys = ("top1", "top1_acceptable", "recall@5")
    print(label, " / ".join(f"{sum(result[n][k] or 0 for n in names) / len(names):.3f}"
                            for k in keys))
