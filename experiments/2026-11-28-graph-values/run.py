"""One hand-set constant measured on dev: refit the ranker with another value, then run the agent
over the 12 dev datasets with both (as ``../2026-11-28-semantic-threshold/run.py`` does for the
resource matcher's threshold).

    .venv/bin/python experiments/2026-11-28-graph-values/run.py MODULE:NAME VALUE OUT HOMES [RANKER]

``MODULE:NAME`` is a module-level constant, e.g. ``apiatlas.rag.retrieval.graph:QUALIFIER_WEIGHT``.
It is set in that module and in every loaded ``apiatlas`` module that imported it by name (the
same name bound to the same object), and the script prints each module it set. ``VALUE`` is
converted to the constant's own type; a tuple is read as a Python literal, and a new ``WEIGHTS``
of ``apiatlas.graph.fts`` is also written into the embedded store's full-text SQL. ``OUT``
receives ``ranker.json`` and the eval's ``report.json``; ``HOMES`` is an eval ``--out`` whose
dataset homes are reused (``--keep-homes``). The training homes are ``.apiatlas/train``, or
``$TRAIN_HOMES`` when set: for a value read at ingest, both are empty folders, so that the
training and the eval homes are ingested with it. Dev datasets only. With ``RANKER``, an
existing ``ranker.json``, the agent runs with it instead of a refit (to tell what a value does
to the ranking from what the refit's thresholds do). A pydantic field of the constant's module
named after it in lower case (``RRF_K``: ``HybridRetriever.rrf_k``) takes the value as its
default too. ``$STRATEGIES`` (default ``agent``) names the eval's strategies, e.g. ``hybrid``
for the fusion's values, which no ranker reads.
"""

from __future__ import annotations

import ast
import importlib
import os
import shutil
import sys
from pathlib import Path

import apiatlas.rag.agent.graph  # noqa: F401  (loads every module the agent imports)
from apiatlas.cli import main as cli
from apiatlas.evals import train
from apiatlas.evals.homes import dataset_files
from apiatlas.rag.ranking import model


def patch(target: str, text: str) -> list[str]:
    """Set ``MODULE:NAME`` to ``text`` (as the constant's type) wherever it is bound."""
    module_name, name = target.split(":")
    old = getattr(importlib.import_module(module_name), name)
    new = ast.literal_eval(text) if isinstance(old, (tuple, bool)) else type(old)(text)
    if (module_name, name) == ("apiatlas.graph.fts", "WEIGHTS"):
        # The embedded store's full-text query has the weights written into its SQL text.
        from apiatlas.graph.sqlite import queries

        before = ", ".join(map(str, old))
        assert before in queries.FTS_SEARCH
        queries.FTS_SEARCH = queries.FTS_SEARCH.replace(before, ", ".join(map(str, new)))
    patched = []
    for loaded_name, loaded in sorted(sys.modules.items()):
        if loaded_name.startswith("apiatlas") and getattr(loaded, name, None) is old:
            setattr(loaded, name, new)
            patched.append(loaded_name)
    for model_class in _models(importlib.import_module(module_name)):
        # A pydantic field named after the constant whose default it is (``RRF_K`` -> ``rrf_k``).
        field = model_class.model_fields.get(name.lower())
        if field is not None and field.default == old:
            field.default = new
            model_class.model_rebuild(force=True)
            patched.append(f"{model_class.__name__}.{name.lower()}")
    return patched


def _models(module: object) -> list[type]:
    """The pydantic models defined in ``module``."""
    from pydantic import BaseModel

    return [v for v in vars(module).values() if isinstance(v, type) and issubclass(v, BaseModel)
            and v.__module__ == getattr(module, "__name__", None)]


def run(target: str, value: str, out: Path, homes: Path, ranker: Path | None = None) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name in patch(target, value):
        print(f"set {target.split(':')[1]} = {value} in {name}", flush=True)
    artifact = out / "ranker.json"
    if ranker is None:
        homes_arg = ["--homes", os.environ["TRAIN_HOMES"]] if os.environ.get("TRAIN_HOMES") else []
        train.main(["--out", str(artifact), *homes_arg])
    else:
        shutil.copy(ranker, artifact)
    model.load_model.__wrapped__.__defaults__ = (artifact,)
    model.load_model.cache_clear()
    datasets = [str(f) for f in dataset_files(train.DEV)]
    strategies = os.environ.get("STRATEGIES", "agent")
    code = cli(["eval", *datasets, "--strategies", strategies, "--out", str(homes), "--keep-homes"])
    if code:
        raise SystemExit(code)
    shutil.copy(homes / "report.json", out / "report.json")
    shutil.copy(homes / "report.md", out / "report.md")


if __name__ == "__main__":
    run(sys.argv[1], sys.argv[2], Path(sys.argv[3]), Path(sys.argv[4]),
        Path(sys.argv[5]) if len(sys.argv) > 5 else None)
