"""Backward elimination of the ranker's signal groups on dev, from ``run.py``'s cached pools.

    python experiments/2026-11-29-ranker-features/eliminate.py OUT [--adapter]

Starts from every group on; each round switches off the group whose removal gains the most
expected-top1 cases, pooled over the dev sets (the eight training sets out of fold and the three
validation sets ranked by the model of all eight), and stops when no removal gains at least
``MARGIN`` cases. Ties go to the smaller model. No test set is read.
"""

from __future__ import annotations

import argparse
import pickle
from pathlib import Path

from apiatlas.evals.ablation import evaluate
from apiatlas.rag.ranking.features import GROUPS

MARGIN = 2
"""Cases a removal must gain: two runs differing in one noisy case are not a decision."""


def cases(examples, per: dict) -> tuple[int, int]:
    """Pooled (expected top1, lenient top1) counts over every dev set."""
    top1 = lenient = 0
    for name in per:
        n = sum(1 for ex in examples if ex.dataset == name and ex.case.answerable)
        top1 += round((per[name]["top1"] or 0.0) * n)
        lenient += round((per[name]["top1_acceptable"] or 0.0) * n)
    return top1, lenient


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out", type=Path)
    parser.add_argument("--adapter", action="store_true", help="pools built with the adapter")
    args = parser.parse_args()
    dev_examples, dev_plain, scored, plain = pickle.loads((args.out / "examples.pkl").read_bytes())
    dev, held = (dev_examples, scored) if args.adapter else (dev_plain, plain)
    every = dev + held
    off: tuple[str, ...] = ()
    best = cases(every, evaluate(dev, held, off))
    print(f"all groups on: top1 cases {best[0]}, lenient {best[1]}", flush=True)
    while True:
        trials = {}
        for group in GROUPS:
            if group not in off:
                trials[group] = cases(every, evaluate(dev, held, (*off, group)))
                print(f"  without {group}: {trials[group]}", flush=True)
        group = max(trials, key=lambda g: trials[g])
        if trials[group][0] < best[0] + MARGIN:
            break
        off, best = (*off, group), trials[group]
        print(f"off: {off} -> {best}", flush=True)
    print(f"chosen: off {list(off)}, top1 cases {best[0]}, lenient {best[1]}")


if __name__ == "__main__":
    main()
