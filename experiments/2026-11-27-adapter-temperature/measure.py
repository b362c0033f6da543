"""The query adapter's softmax temperature, measured on dev (the run behind this folder's
README). Nothing in the library or the artifact changes.

    python experiments/2026-11-27-adapter-temperature/measure.py cards WORK 0.02 0.03 0.05 0.07 0.1 0.15
    python experiments/2026-11-27-adapter-temperature/measure.py pools WORK 0.07    # about 8 min
    python experiments/2026-11-27-adapter-temperature/measure.py run WORK 0.07      # seconds
    python experiments/2026-11-27-adapter-temperature/measure.py apis WORK 0.05 0.1 # seconds

``cards`` needs the pickled pools of ``../2026-11-26-ranker-features/measure.py pools WORK``
(the shipped temperature's): per temperature it fits the adapters again, out of fold on the
eight trained-on dev APIs and on all eight for the three validation APIs, and prints the top1
of the card similarity alone (the adapter's own objective; ``train.sweep`` measures the same).
``pools`` builds the dev and validation pools with adapters fitted at one temperature, as
``make train`` would, into ``WORK/t<temperature>/``; ``run`` refits the ranker on them and
prints what ``../2026-11-26-ranker-features/measure.py run`` prints for the shipped features;
``apis`` prints each API's top1 of the same runs, always answering.
No test set is read.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

import numpy as np

from apiatlas.evals import adapter_fit as A
from apiatlas.evals import train as T
from apiatlas.evals.ablation import ranking_metrics
from apiatlas.evals.train import Example
from apiatlas.rag.ranking.adapter import QueryAdapter

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "2026-11-26-ranker-features"))
import measure as features  # noqa: E402  (the sibling experiment's pools and scoring)


def card_top1(examples: list[Example], adapters: dict[str, QueryAdapter] | None) -> float:
    """Mean over datasets of :func:`apiatlas.evals.adapter_fit.card_top1`."""
    return float(np.mean(list(A.card_top1(examples, "m", adapters).values())))


def cards(work: Path, temperatures: list[float]) -> None:
    with (work / "pools.pkl").open("rb") as f:
        ex = pickle.load(f)
    dev, val = ex["dev"], ex["val"]
    print(f"unadapted: dev {card_top1(dev, None):.3f} validation {card_top1(val, None):.3f}")
    for t in temperatures:
        A.ADAPTER_TEMPERATURE = t
        oof = A.adapters_out_of_fold(dev, "m")
        full = A.fit_adapter(dev, "m")
        print(f"temperature {t}: dev out of fold {card_top1(dev, oof):.3f} validation "
              f"{card_top1(val, {name: full for name in T.VALIDATION}):.3f}", flush=True)


def main(argv: list[str]) -> None:
    step, work, temperatures = argv[0], Path(argv[1]), [float(t) for t in argv[2:]]
    if step == "cards":
        cards(work, temperatures)
        return
    for t in temperatures:
        folder = work / f"t{t}"
        if step == "pools":
            A.ADAPTER_TEMPERATURE = t
            folder.mkdir(parents=True, exist_ok=True)
            features.pools(folder)
        else:
            with (folder / "pools.pkl").open("rb") as f:
                ex = pickle.load(f)
            if step == "run":
                features.score(ex["dev"], ex["val"], f"adapter temperature {t}")
            else:
                print(f"adapter temperature {t}:", per_api(ex["dev"], ex["val"]), flush=True)


def per_api(dev: list[Example], val: list[Example]) -> str:
    """Each API's top1 always answering: dev out of fold, validation by the ranker of all dev."""
    full = T.train(dev)
    out = []
    for name in sorted({e.dataset for e in dev}) + sorted(T.VALIDATION):
        mine = [e for e in dev + val if e.dataset == name]
        model = full if name in T.VALIDATION else T.train([e for e in dev if e.dataset != name])
        scores = [model.scores(e.pool) for e in mine]
        out.append(f"{name} {ranking_metrics(mine, scores, [True] * len(mine))['top1']:.3f}")
    return ", ".join(out)


if __name__ == "__main__":
    main(sys.argv[1:])
