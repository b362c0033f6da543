"""What the definition phrase lengths and the distinctive operation id's length change in the
dev knowledge graphs (issue 35).

    .venv/bin/python experiments/2026-11-29-alias-limits/count.py [OUT.json]

Loads every dev dataset's specs and guides with the product's loaders and builds their graph
batches (:func:`~apiatlas.graph.build.builder.build_api_batch`, ``build_docs_batch``, and the
guides' DESCRIBES links, :func:`~apiatlas.graph.build.linker.link`), once with the shipped
values and once per variant. It counts the resources whose aliases differ, the guide sections
whose definitions or mentions differ, and the DESCRIBES links that differ. A variant that
changes none of these cannot change an answer on dev. Reads no question and no test dataset.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DATASETS
from apiatlas.graph.build import linker, resources
from apiatlas.graph.build.builder import build_api_batch, build_docs_batch
from apiatlas.ingest import Loaded, Sources, docs_scope_name, load

R = resources
PATTERNS = ("_PAREN_DEF", "_INLINE_DEF", "_ARE_DEF")
# The identifier pattern before DISTINCTIVE_ID_CHARS was named: a control.
OLD_IDENT = re.compile(r"\b[A-Za-z][A-Za-z0-9_]{5,}\b")
NEVER = re.compile(r"(?!)")  # matches nothing: how much the definitions give at all
VARIANTS: list[tuple[str, list[tuple[Any, str, Any]]]] = [
    ("control: the identifier pattern as it was", [(linker, "_IDENT", OLD_IDENT)]),
    ("reference: no definitions read at all", [(R, p, NEVER) for p in PATTERNS]),
    ("ALIAS_CHARS (1, 40)", [(R, "ALIAS_CHARS", (1, 40))]),
    ("ALIAS_CHARS (3, 40)", [(R, "ALIAS_CHARS", (3, 40))]),
    ("ALIAS_CHARS (2, 20)", [(R, "ALIAS_CHARS", (2, 20))]),
    ("ALIAS_CHARS (2, 80)", [(R, "ALIAS_CHARS", (2, 80))]),
    ("SUBJECT_WORDS 2", list(zip([R] * 3, PATTERNS, R.definition_patterns(subject_words=2)))),
    ("SUBJECT_WORDS 5", list(zip([R] * 3, PATTERNS, R.definition_patterns(subject_words=5)))),
    ("ALIAS_WORDS 2", list(zip([R] * 3, PATTERNS, R.definition_patterns(alias_words=2)))),
    ("ALIAS_WORDS 5", list(zip([R] * 3, PATTERNS, R.definition_patterns(alias_words=5)))),
    ("PAREN_ALIAS_CHARS 40", list(zip([R] * 3, PATTERNS, R.definition_patterns(paren_chars=40)))),
    ("PAREN_ALIAS_CHARS 200",
     list(zip([R] * 3, PATTERNS, R.definition_patterns(paren_chars=200)))),
    ("ARE_ALIAS_WORDS 2", list(zip([R] * 3, PATTERNS, R.definition_patterns(are_words=2)))),
    ("ARE_ALIAS_WORDS 6", list(zip([R] * 3, PATTERNS, R.definition_patterns(are_words=6)))),
    ("DISTINCTIVE_ID_CHARS 4", [(linker, "DISTINCTIVE_ID_CHARS", 4)]),
    ("DISTINCTIVE_ID_CHARS 8", [(linker, "DISTINCTIVE_ID_CHARS", 8)]),
]


@contextmanager
def patched(changes: list[tuple[Any, str, Any]]) -> Iterator[None]:
    with ExitStack() as stack:
        for module, name, value in changes:
            old = getattr(module, name)
            setattr(module, name, value)
            stack.callback(setattr, module, name, old)
        yield


def facts(name: str, loaded: Loaded) -> dict[str, Any]:
    """Resource aliases, section definitions and mentions, and DESCRIBES links of one project."""
    batches = [build_api_batch(spec, project=name) for spec in loaded.specs]
    batches += [build_docs_batch(pages, project=name, name=scope)
                for scope, pages in sorted(loaded.pages.items())]
    nodes = [n for b in batches for n in b.nodes]
    sections = [n for n in nodes if n.label == "DocSection"]
    endpoints = [n for n in nodes if n.label == "Endpoint"]
    links = linker.link(sections, endpoints)
    return {
        "aliases": {n.key: tuple(n.props.get("aliases", ())) for n in nodes
                    if n.label == "Resource"},
        "definitions": {n.key: tuple(n.props.get("definitions", ())) for n in sections},
        "mentions": {n.key: tuple(n.props.get("mentions", ())) for n in sections},
        "links": {(e.src, e.dst) for e in links},
    }


def differences(base: dict[str, Any], other: dict[str, Any]) -> dict[str, int]:
    out = {key: sum(base[key].get(k) != other[key].get(k) for k in base[key].keys()
                    | other[key].keys()) for key in ("aliases", "definitions", "mentions")}
    out["links"] = len(base["links"] ^ other["links"])
    return out


def main(out: Path | None) -> None:
    projects: dict[str, Loaded] = {}
    for path in dataset_files(DATASETS / "dev"):
        data = load_dataset(path)
        if data.name == "sample-memory":  # the sample's sources again
            continue
        projects[data.name] = load(Sources(openapi=data.sources.openapi, docs=data.sources.docs))
    base = {name: facts(name, loaded) for name, loaded in projects.items()}
    results: dict[str, Any] = {"shipped": {
        "resources": sum(len(b["aliases"]) for b in base.values()),
        "resources with aliases": sum(bool(a) for b in base.values()
                                      for a in b["aliases"].values()),
        "sections": sum(len(b["definitions"]) for b in base.values()),
        "sections with definitions": sum(bool(d) for b in base.values()
                                         for d in b["definitions"].values()),
        "links": sum(len(b["links"]) for b in base.values())}}
    for label, changes in VARIANTS:
        with patched(changes):
            per = {name: differences(base[name], facts(name, loaded))
                   for name, loaded in projects.items()}
        total = {key: sum(p[key] for p in per.values()) for key in next(iter(per.values()))}
        results[label] = {"total": total,
                          "projects": {n: p for n, p in per.items() if any(p.values())}}
        print(label, total, flush=True)
    print(json.dumps(results, indent=1))
    if out:
        out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
