"""``python -m apiatlas.evals.lookups``: calibrate on dev how far apart a named value and the
resource it names may be (:data:`~apiatlas.rag.ranking.lookups.WINDOW`), and show the lookup
step on and off.

Runs the agent over every dev dataset once per window (0 switches the lookup step off), and
prints the dev means of the figures the step moves. The window kept is the one with the best
``top1``, then the best ``ordered_pairs`` (the smallest window on a tie).
With ``--test``, the test datasets are then run with the step off and at the packaged window,
to report only: nothing is chosen from them.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Sequence
from pathlib import Path

from apiatlas.evals.homes import dataset_files
from apiatlas.evals.runner import run_eval
from apiatlas.evals.train import DATASETS, DEV
from apiatlas.rag.ranking import lookups

WINDOWS = (0, 1, 2, 3, 4, 5)
SHOWN = ("top1", "top1_acceptable", "recall@5", "all_expected@10", "ordered_pairs")
OUT = Path(".apiatlas") / "lookups"


def means(files: Sequence[Path], window: int, out: Path) -> dict[str, float]:
    """The agent's mean of each :data:`SHOWN` figure over ``files``, at ``window``."""
    packaged = lookups.WINDOW
    lookups.WINDOW = window
    try:
        report = run_eval(files, strategies="agent", out_dir=out, keep_homes=True, progress=False)
    finally:
        lookups.WINDOW = packaged
    rows = [metrics["agent"] for metrics in report.results.values()]
    return {k: statistics.mean(r[k] or 0.0 for r in rows) for k in SHOWN}


def chosen(results: dict[int, dict[str, float]]) -> int:
    """The window with the best top1, then the best ordered_pairs; the smallest on a tie."""
    return max(results, key=lambda w: (results[w]["top1"], results[w]["ordered_pairs"], -w))


def _row(label: str, figures: dict[str, float]) -> str:
    return f"| {label} | " + " | ".join(f"{figures[k]:.3f}" for k in SHOWN) + " |"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=OUT, help="where the dataset homes are kept")
    parser.add_argument("--test", action="store_true", help="also report the test datasets")
    args = parser.parse_args(argv)
    header = "| window | " + " | ".join(SHOWN) + " |\n|" + " --- |" * (len(SHOWN) + 1)
    dev = {w: means(dataset_files(DEV), w, args.out / "dev") for w in WINDOWS}
    print(f"dev (agent means over {len(dataset_files(DEV))} datasets; window 0 = lookups off)")
    print(header)
    for window, figures in dev.items():
        print(_row(str(window), figures))
    best = chosen(dev)
    print(f"\nchosen on dev: WINDOW = {best} (packaged: {lookups.WINDOW})")
    if args.test:
        test = dataset_files(DATASETS / "test")
        print(f"\ntest, report only (agent means over {len(test)} datasets)")
        print(header)
        for window in (0, lookups.WINDOW):
            print(_row(str(window), means(test, window, args.out / "test")))
    return 0 if best == lookups.WINDOW else 1


if __name__ == "__main__":
    raise SystemExit(main())
