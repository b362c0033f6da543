"""The resource matcher's semantic threshold (``rag/retrieval/resource_matcher.SEMANTIC_THRESHOLD``,
0.60, set for the packaged all-MiniLM-L6-v2) measured on the fine-tuned encoder: refit the ranker
on dev with another value, then run the agent over the dev datasets with both.

    .venv/bin/python experiments/2026-11-28-semantic-threshold/run.py VALUE OUT HOMES [NAME]

``NAME`` picks the value to change: ``semantic`` (the default, the threshold above) or
``lexical_pool`` (``rag/ranking/features.LEXICAL_POOL``, 20: how many endpoints each lexical and
dense field adds to the ranker's pool).

``OUT`` receives ``ranker.json`` and the eval's ``report.json``. ``HOMES`` is an eval ``--out``
whose dataset homes are reused (``--keep-homes``; ``apiatlas eval`` leaves them). The training
homes are ``.apiatlas/train``. Dev datasets only.
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from apiatlas.cli import main as cli
from apiatlas.evals import train
from apiatlas.evals.homes import dataset_files
from apiatlas.rag.ranking import features, model
from apiatlas.rag.retrieval.resource_matcher import ResourceMatcher


def run(value: float, out: Path, homes: Path, name: str = "semantic") -> None:
    out.mkdir(parents=True, exist_ok=True)
    if name == "semantic":
        ResourceMatcher.__init__.__kwdefaults__["threshold"] = value
    elif name == "lexical_pool":
        features.LEXICAL_POOL = int(value)
    else:
        raise SystemExit(f"unknown value {name}: semantic or lexical_pool")
    artifact = out / "ranker.json"
    train.main(["--out", str(artifact)])
    model.load_model.__wrapped__.__defaults__ = (artifact,)
    model.load_model.cache_clear()
    datasets = [str(f) for f in dataset_files(train.DEV)]
    code = cli(["eval", *datasets, "--strategies", "agent", "--out", str(homes), "--keep-homes"])
    if code:
        raise SystemExit(code)
    shutil.copy(homes / "report.json", out / "report.json")
    shutil.copy(homes / "report.md", out / "report.md")


if __name__ == "__main__":
    run(float(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3]), *sys.argv[4:5])
