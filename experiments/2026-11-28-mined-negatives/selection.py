"""The ``selection`` block of the shipped encoder's provenance, from this experiment's scores.

    python experiments/2026-11-28-mined-negatives/selection.py OUT.json

Each variant's validation means and dense top1 per dev dataset (``quick score`` output in
``results/``), the variant chosen (the best mean validation top1), and round one's own
selection (the previous provenance's) kept under ``round_one``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from apiatlas.evals.encoder.quick import means
from apiatlas.evals.train import VALIDATION

HERE = Path(__file__).resolve().parent
ROUND_ONE = "09645d9"
VARIANTS = {
    "round one (no second round)": "scores-shipped.json",
    "round two: v1, rule-based negatives": "scores-r2-rule.json",
    "round two: v1, mined negatives, margin 0.95": "scores-r2-m95.json",
    "round two: v1, mined negatives, no filter": "scores-r2-top.json",
    "round two: v1 + v2, rule-based negatives": "scores-r2-v12.json",
}


def main() -> None:
    variants = {}
    for name, file in VARIANTS.items():
        scores = json.loads((HERE / "results" / file).read_text(encoding="utf-8"))
        variants[name] = {
            "validation": {k: round(v, 4) for k, v in means(scores, VALIDATION).items()},
            "dense_top1_by_dataset": {n: round(s["top1"], 4) for n, s in sorted(scores.items())},
        }
    chosen = max(variants, key=lambda n: variants[n]["validation"]["top1"])
    old = json.loads(subprocess.run(
        ["git", "show", f"{ROUND_ONE}:apiatlas/models/encoder/provenance.json"],
        capture_output=True, text=True, check=True).stdout)
    selection = {
        "chosen_on": "validation (dev): " + ", ".join(VALIDATION) + ", mean dense top1",
        "device": "cpu (2 cores)", "variants": variants, "chosen": chosen,
        "round_one": old["selection"],
    }
    Path(sys.argv[1]).write_text(json.dumps(selection, indent=1) + "\n", encoding="utf-8")
    print(chosen, variants[chosen]["validation"])


if __name__ == "__main__":
    main()
