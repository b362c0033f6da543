"""How often the question's shape rules fire on the dev questions, and the singular rule's
guards on the dev specs' words (issue 35).

    .venv/bin/python experiments/2026-11-29-shapes/count.py [OUT.json]

- Operation-id shapes (``rag/question/intent.py``: camelCase or PascalCase, snake_case of two
  parts or more): the tokens each question yields, and how many are an operation id of the
  dataset's APIs (case-insensitive); the operation ids a question spells out as a word that the
  shapes miss; the same with snake_case of three parts or more, and with camelCase only.
- Bare paths (``PATH_LETTERS``): the ``/paths`` kept and dropped at 1, 2 and 3 letters in a row,
  and how many kept ones are an endpoint's path.
- The phone shape (``rag/ranking/lookups.py``): how many questions hold a phone number in
  international form, at its 5 inner digits and at 3 and 8.
- ``singular()``'s guards (``graph/words.py``: ``SHORTEST_PLURAL`` 4, ``SHORTEST_IES`` 5): over
  the distinct words of the dev specs' paths, operation ids, summaries, tags and schema names,
  the words whose singular changes at other values (those words are printed: they are the
  specs' own).

Counts only; no question text is printed and no test dataset is read.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any
from unittest.mock import patch

from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DATASETS
from apiatlas.graph import words
from apiatlas.graph.words import singular, split_words
from apiatlas.ingest import Sources, load
from apiatlas.rag.question import intent

SNAKE_3 = re.compile(r"\b[a-z]+(?:_[a-z0-9]+){2,}\b")  # three parts or more
CAMEL_ONLY = re.compile(r"\b[a-z]+(?:[A-Z][a-z0-9]*)+\b")  # no PascalCase
PHONE = {n: re.compile(rf"\+\d[\d -]{{{n},}}\d") for n in (3, 5, 8)}


def op_id_counts(questions: list[tuple[str, set[str]]]) -> dict[str, int]:
    found = real = missed = asking = 0
    for text, op_ids in questions:
        _, ids, _ = intent._mentions(text)
        found += len(ids)
        real += sum(i.lower() in op_ids for i in ids)
        asking += bool(ids)
        spelled = {w.lower() for w in re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)} & op_ids
        missed += len(spelled - {i.lower() for i in ids})
    return {"questions with a token": asking, "tokens": found, "operation ids": real,
            "operation ids spelled out and missed": missed}


def path_counts(questions: list[tuple[str, set[str]]], paths: dict[str, set[str]],
                names: list[str]) -> dict[str, int]:
    kept = real = 0
    for (text, _), name in zip(questions, names, strict=True):
        endpoints, _, _ = intent._mentions(text)
        bare = [e.path for e in endpoints if e.method is None]
        kept += len(bare)
        real += sum(p in paths[name] for p in bare)
    return {"bare paths kept": kept, "an endpoint's path": real}


def spec_words(specs: list[Any]) -> set[str]:
    out: set[str] = set()
    for spec in specs:
        for ep in spec.endpoints:
            texts = [ep.path, ep.operation_id, ep.summary, *ep.tags]
            out.update(w for t in texts for w in split_words(t or "") if w.isalpha())
        for name in spec.schemas:
            out.update(w for w in split_words(name) if w.isalpha())
    return out


def main(out: Path | None) -> None:
    questions: list[tuple[str, set[str]]] = []
    names: list[str] = []
    paths: dict[str, set[str]] = {}
    vocabulary: set[str] = set()
    for path in dataset_files(DATASETS / "dev"):
        data = load_dataset(path)
        loaded = load(Sources(openapi=data.sources.openapi))
        op_ids = {ep.operation_id.lower() for s in loaded.specs for ep in s.endpoints
                  if ep.operation_id}
        paths[data.name] = {intent.normalise_path(ep.path) for s in loaded.specs
                            for ep in s.endpoints}
        vocabulary |= spec_words(loaded.specs)
        for case in data.cases:
            questions.append((case.question, op_ids))
            names.append(data.name)
    results: dict[str, Any] = {"questions": len(questions), "spec words": len(vocabulary)}
    results["operation-id shapes, shipped"] = op_id_counts(questions)
    with patch.object(intent, "_SNAKE_OP", SNAKE_3):
        results["snake_case of 3 parts or more"] = op_id_counts(questions)
    with patch.object(intent, "_CAMEL", CAMEL_ONLY):
        results["camelCase only (no PascalCase)"] = op_id_counts(questions)
    for letters in (1, 2, 3):
        with patch.object(intent, "PATH_LETTERS", letters):
            results[f"PATH_LETTERS {letters}"] = path_counts(questions, paths, names)
    results["questions with a phone number, by the shape's inner run (shipped 5)"] = {
        str(n): sum(bool(rx.search(t)) for t, _ in questions) for n, rx in PHONE.items()}
    base = {w: singular(w) for w in sorted(vocabulary)}
    for name, value in (("SHORTEST_PLURAL", 3), ("SHORTEST_PLURAL", 5),
                        ("SHORTEST_IES", 4), ("SHORTEST_IES", 6)):
        with patch.object(words, name, value):
            changed = {w: (base[w], singular(w)) for w in base if singular(w) != base[w]}
        results[f"{name} {value}"] = {"words changed": len(changed), "words": changed}
    print(json.dumps(results, indent=1))
    if out:
        out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
