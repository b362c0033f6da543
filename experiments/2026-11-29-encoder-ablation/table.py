"""Means by split of ``run.py``'s outputs, one row per encoder and variant.

    python experiments/2026-11-29-encoder-ablation/table.py LABEL=OUT.json ...

Splits: the training dev sets (out of fold for the learned ranker), validation (DocuSign, Figma,
Intercom: dev, never trained on), test (scored only).
"""

import json
import sys

from apiatlas.evals.train import VALIDATION

KEYS = ("top1", "top1_acceptable", "recall@5", "abstention_accuracy", "false_abstention")


def means(per: dict, names: list[str]) -> str:
    cells = []
    for key in KEYS:
        values = [per[n][key] for n in names if per[n][key] is not None]
        cells.append(f"{sum(values) / len(values):.3f}" if values else "-")
    return " / ".join(cells)


print("| encoder | variant | training dev (8) | validation (3, dev) | test (4) |")
print("| --- | --- | --- | --- | --- |")
for arg in sys.argv[1:]:
    label, _, path = arg.partition("=")
    data = json.loads(open(path, encoding="utf-8").read())
    splits = data["splits"]
    groups = ([n for n in splits if splits[n] == "dev" and n not in VALIDATION],
              [n for n in splits if n in VALIDATION],
              [n for n in splits if splits[n] == "test"])
    for variant, per in data["results"].items():
        print(f"| {label} | {variant} | " + " | ".join(means(per, sorted(g)) for g in groups)
              + " |")
