"""Means of ``run.py``'s ablation.json: validation (3 dev sets, never trained on) and the eight
training dev sets (out of fold), one row per variant.

    python experiments/2026-11-29-ranker-features/means.py OUT/ablation.json
"""

import json
import sys

VALIDATION = ("docusign", "figma", "intercom")
KEYS = ("top1", "top1_acceptable", "recall@5", "abstention_accuracy", "false_abstention")


def mean(per: dict, names: list[str], key: str) -> str:
    xs = [per[n][key] for n in names if per[n][key] is not None]
    return f"{sum(xs) / len(xs):.3f}" if xs else "-"


results = json.load(open(sys.argv[1]))
print("| variant | validation top1 / +acc / r@5 / abst / false | dev 8 (out of fold) top1 / +acc / r@5 / abst / false |")
print("| --- | --- | --- |")
for name, per in results.items():
    dev = [n for n in per if n not in VALIDATION]
    cells = [" / ".join(mean(per, list(names), k) for k in KEYS) for names in (VALIDATION, dev)]
    print(f"| {name} | {cells[0]} | {cells[1]} |")
