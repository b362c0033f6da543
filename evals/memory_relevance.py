"""Fit the memory relevance model (:mod:`apiatlas.rag.review.relevance`) on the dev memory sets.

``python -m apiatlas.evals.memory_relevance`` asks every memory and control case of the dev
memory sets (the dev datasets with memories, validation ones left out) and records, for each
memory the review is handed, its feature vector and whether the case expects it. Then:

1. a logistic model is fitted leaving one dev set out at a time, which gives every memory a
   probability from a model that never saw its team;
2. the threshold is the one of :data:`GRID` at which the most dev cases' citations are right
   out of fold: a memory case cites every memory it expects and no superseded one, a control
   (``expected_memories: []``) cites none. A memory forbidding the answer's first endpoint is
   cited whatever the model says, as at run time;
3. the model fitted on every dev set is written to ``rag/review/relevance.json``.

The validation sets are scored by that model, never fitted or chosen on; test sets are not read.
``--ablation`` fits again with each feature group left out and prints the same outcomes;
``--without GROUP --out FILE`` writes such a model (its group's coefficients are 0), for
``apiatlas eval`` to measure at the answer level.
Citations only: the first endpoint, which memory precedence also asks for, is measured by
``apiatlas eval``.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from apiatlas.config import Settings
from apiatlas.evals.calibration import fit_linear
from apiatlas.evals.dataset import VALIDATION, Dataset, load_dataset
from apiatlas.evals.homes import dataset_atlas
from apiatlas.evals.memories import load_memories
from apiatlas.graph.model import EndpointRef
from apiatlas.rag.agent import memory as agent_memory
from apiatlas.rag.ranking.model import Linear
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.review.precedence import MemoryView
from apiatlas.rag.review import relevance
from apiatlas.rag.review.relevance import RELEVANCE_FEATURES, RelevanceModel
from apiatlas.rag.runtime.embeddings import load_embeddings

DEV = Path(__file__).resolve().parent / "datasets" / "dev"
ROOT = Path(".apiatlas/memory-relevance")
GRID = tuple(round(0.05 * i, 2) for i in range(1, 20))
"""Thresholds tried: 0.05 to 0.95 by 0.05."""
C = 1.0
"""Inverse regularisation of the model: 0.1 and 0.3 lower memory-xero and validation out of fold,
3 and 10 change nothing (``experiments/2026-12-03-learned-relevance/results-c.txt``)."""
GROUPS: dict[str, tuple[str, ...]] = {
    "similarity": ("score", "semantic", "sem_rank", "ratio"),
    "words": ("lex_q", "lex_jacc", "path_q"),
    "graph": ("names_first", "names_presented", "no_refs", "forbids_first", "stance_first",
              "share_first"),
    "memory": ("importance", "supersedes", *(f for f in RELEVANCE_FEATURES if f.startswith("kind_"))),
}
"""Feature groups the ablation leaves out one at a time."""
_FORCED = RELEVANCE_FEATURES.index("forbids_first")


@dataclass
class Case:
    """One memory or control case as the review saw it.

    Attributes:
        dataset: Dataset name.
        expected: Ids of the memories the case expects (empty: a control).
        superseded: Ids of the dataset's superseded memories.
        ids: The memories handed to the review.
        rows: Their feature vectors (:data:`RELEVANCE_FEATURES`).
        answered_alone: Citations of an answer given by a team procedure alone (no review ran).
    """

    dataset: str
    expected: list[str]
    superseded: list[str]
    ids: list[str] = field(default_factory=list)
    rows: list[list[float]] = field(default_factory=list)
    answered_alone: list[str] | None = None


def memory_sets(folder: Path = DEV) -> tuple[list[Path], list[Path]]:
    """The dev memory datasets to fit on, and the validation ones, by file."""
    fit, validation = [], []
    for path in sorted(folder.glob("*.yaml")):
        dataset = load_dataset(path)
        if dataset.memories:
            (validation if dataset.name in VALIDATION else fit).append(path)
    return fit, validation


@contextmanager
def _recording(seen: list[tuple[list[str], list[list[float]]]]) -> Iterator[None]:
    """Record what each review is handed; the answer then cites no memory (the model is what
    is being fitted), which changes nothing the review is handed."""
    original = agent_memory.relevant_views

    def record(views: Sequence[MemoryView], lookup: GraphLookup,
               related: Sequence[EndpointRef] = (), model: RelevanceModel | None = None,
               ) -> list[MemoryView]:
        seen.append(([v.memory.id for v in views],
                     [relevance.relevance_vector(v, lookup, views, related) for v in views]))
        return []

    agent_memory.relevant_views = record
    try:
        yield
    finally:
        agent_memory.relevant_views = original


def capture(dataset: Dataset, root: Path, embeddings: Embeddings) -> list[Case]:
    """Ask the dataset's memory and control cases and record what the review is handed."""
    cases: list[Case] = []
    with dataset_atlas(dataset, root, embeddings) as atlas:
        loaded = load_memories(atlas, dataset)
        superseded = [loaded.ids[k] for k in loaded.superseded]
        for case in dataset.cases:
            if case.expected_memories is None:
                continue
            seen: list[tuple[list[str], list[list[float]]]] = []
            with _recording(seen):
                result = atlas.ask(case.question, project=dataset.name)
            one = Case(dataset.name, [loaded.ids[k] for k in case.expected_memories], superseded)
            if seen:
                one.ids, one.rows = seen[-1]
            else:
                one.answered_alone = [c.uri.removeprefix("memory:") for c in result.citations
                                      if c.kind == "memory"]
            cases.append(one)
    return cases


def _masked(rows: np.ndarray, off: Sequence[str]) -> np.ndarray:
    keep = np.array([name not in off for name in RELEVANCE_FEATURES], dtype=float)
    return rows * keep


def _fit(cases: Sequence[Case], off: Sequence[str]) -> Linear:
    rows = [r for c in cases for r in c.rows]
    y = np.array([float(i in c.expected) for c in cases for i in c.ids])
    return fit_linear(_masked(np.array(rows), off), y, RELEVANCE_FEATURES, C)


def cited(case: Case, model: Linear, threshold: float, off: Sequence[str] = ()) -> set[str]:
    """The memories the case's answer cites under ``model`` at ``threshold``."""
    if case.answered_alone is not None:
        return set(case.answered_alone)
    out = set()
    for memory_id, row in zip(case.ids, case.rows, strict=True):
        vector = _masked(np.array([row]), off)[0]
        if model.probability(vector) >= threshold or row[_FORCED]:
            out.add(memory_id)
    return out


def outcome(cases: Sequence[Case], citations: Sequence[set[str]]) -> dict[str, float | None]:
    """Memory cases right, controls clean, memories cited per answer, and all cases right."""
    memory = [set(c.expected) <= got and not got & set(c.superseded)
              for c, got in zip(cases, citations, strict=True) if c.expected]
    controls = [not got for c, got in zip(cases, citations, strict=True) if not c.expected]
    mean = lambda xs: round(float(np.mean(xs)), 3) if len(xs) else None  # noqa: E731
    return {"memory_cases": mean(memory), "controls_clean": mean(controls),
            "cited_mean": mean([len(g) for g in citations]), "right": mean(memory + controls)}


@dataclass
class Fitted:
    """The fit's model, threshold and out-of-fold citations."""

    model: Linear
    threshold: float
    oof: dict[str, list[set[str]]]


def fit(by_set: dict[str, list[Case]], off: Sequence[str] = ()) -> Fitted:
    """Leave-one-set-out fits, the threshold chosen on their pooled citations, the full model."""
    held = {name: _fit([c for n, cs in by_set.items() if n != name for c in cs], off)
            for name in by_set}
    pooled = [c for cs in by_set.values() for c in cs]

    def right_at(t: float) -> float:
        got = [cited(c, held[n], t, off) for n, cs in by_set.items() for c in cs]
        return outcome(pooled, got)["right"] or 0.0

    threshold = max(GRID, key=lambda t: (right_at(t), -abs(t - 0.5)))
    oof = {n: [cited(c, held[n], threshold, off) for c in cs] for n, cs in by_set.items()}
    return Fitted(_fit(pooled, off), threshold, oof)


def report(dev: dict[str, list[Case]], validation: dict[str, list[Case]], fitted: Fitted,
           off: Sequence[str] = (), label: str = "as shipped") -> list[str]:
    """One line per set: out of fold for dev, the full model for validation."""
    lines = [f"{label}: threshold {fitted.threshold}"]
    for name, cases in dev.items():
        lines.append(f"  dev {name:18} {_fmt(outcome(cases, fitted.oof[name]))}")
    for name, cases in validation.items():
        got = [cited(c, fitted.model, fitted.threshold, off) for c in cases]
        lines.append(f"  validation {name:11} {_fmt(outcome(cases, got))}")
    return lines


def _fmt(figures: dict[str, float | None]) -> str:
    return "  ".join(f"{k} {v}" for k, v in figures.items())


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="where the dataset homes go")
    parser.add_argument("--out", type=Path, default=relevance.ARTIFACT)
    parser.add_argument("--ablation", action="store_true", help="each feature group left out")
    parser.add_argument("--without", choices=sorted(GROUPS), default=None,
                        help="fit and write the model with this feature group left out")
    args = parser.parse_args(argv)
    off = GROUPS[args.without] if args.without else ()
    embeddings = load_embeddings(Settings())
    fit_paths, validation_paths = memory_sets()
    dev = {p.stem: capture(load_dataset(p), args.root, embeddings) for p in fit_paths}
    validation = {p.stem: capture(load_dataset(p), args.root, embeddings)
                  for p in validation_paths}
    fitted = fit(dev, off)
    print("\n".join(report(dev, validation, fitted, off,
                           f"without {args.without}" if off else "as shipped")))
    if args.ablation:
        for group, names in GROUPS.items():
            print("\n".join(report(dev, validation, fit(dev, names), names,
                                   f"without {group}")))
    shipped = RelevanceModel(fitted.model, fitted.threshold)
    data = {**shipped.to_json(), "fitted_on": sorted(dev)}
    args.out.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {args.out} (fitted on {', '.join(sorted(dev))})")


if __name__ == "__main__":
    main()
