"""Validation and training-dev means of ``quick score`` outputs, one line each.

    python experiments/2026-11-28-mined-negatives/means.py SCORES.json ...
"""

import json
import sys

from apiatlas.evals.encoder.quick import means
from apiatlas.evals.train import VALIDATION

for path in sys.argv[1:]:
    result = json.load(open(path, encoding="utf-8"))
    rest = tuple(n for n in result if n not in VALIDATION)
    for label, names in (("validation", tuple(VALIDATION)), ("training dev", rest)):
        found = means(result, names)
        print(path, label, " ".join(f"{k} {v:.3f}" for k, v in found.items()))
