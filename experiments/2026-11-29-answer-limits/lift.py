"""How many dev answers change when each of the composer's counts is set otherwise, and how
long the evidence a language model would read runs (issue 35).

    .venv/bin/python experiments/2026-11-29-answer-limits/lift.py HOMES [OUT.json]

``HOMES`` holds the dev datasets' homes as ``apiatlas eval --keep-homes`` left them (memories
recorded). The script asks every dev question with the shipped values, then once per variant
with one value set otherwise, and counts the answers whose text differs. It prints no question
text and reads no test dataset. The first pass also records each evidence item's length
before ``MAX_ITEM_CHARS`` cuts it (the evidence a chat model would be given for the answer).
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from unittest.mock import patch

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.evals.dataset import Dataset, load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DATASETS
from apiatlas.rag.agent import nodes
from apiatlas.rag.answer import composer, evidence, examples

VARIANTS: list[tuple[Any, str, int]] = [
    (composer, "ENDPOINT_PASSAGES", 1),  # the shipped value: a control
    (composer, "ENDPOINT_PASSAGES", 0), (composer, "ENDPOINT_PASSAGES", 2),
    (composer, "GUIDE_PASSAGES", 1), (composer, "GUIDE_PASSAGES", 3),
    (composer, "PROVIDERS_SHOWN", 1), (composer, "PROVIDERS_SHOWN", 3),
    (composer, "GUIDE_LINKS", 1), (composer, "GUIDE_LINKS", 3),
    (composer, "CODE_OVERRUN", 1), (composer, "CODE_OVERRUN", 4),
    (examples, "EXAMPLE_BODY_FIELDS", 1), (examples, "EXAMPLE_BODY_FIELDS", 5),
]


def answers(sets: list[tuple[Dataset, ApiAtlas]]) -> list[str]:
    return [atlas.ask(case.question, project=data.name).answer
            for data, atlas in sets for case in data.cases]


@contextmanager
def evidence_lengths(into: list[int]) -> Iterator[None]:
    """Gather each composed answer's evidence, recording item lengths before the cut."""
    compose: Callable[..., Any] = nodes.compose_answer
    cut = evidence._cut

    def recording(text: str) -> str:
        into.append(len(text))
        return cut(text)

    def composing(question: str, **kwargs: Any) -> Any:
        result = compose(question, **kwargs)
        kwargs.pop("related", None)
        evidence.gather_evidence(result, **kwargs)
        return result

    with patch.object(nodes, "compose_answer", composing), patch.object(evidence, "_cut", recording):
        yield


def main(homes: Path, out: Path | None) -> None:
    sets = []
    for path in dataset_files(DATASETS / "dev"):
        data = load_dataset(path)
        sets.append((data, ApiAtlas(Settings(home=homes / data.name, project=data.name))))
    lengths: list[int] = []
    with evidence_lengths(lengths):
        base = answers(sets)
    results: dict[str, Any] = {"answers": len(base)}
    for module, name, value in VARIANTS:
        with patch.object(module, name, value):
            other = answers(sets)
        changed = sum(a != b for a, b in zip(base, other, strict=True))
        results[f"{name} {getattr(module, name)} -> {value}"] = {"answers_changed": changed}
        print(name, value, changed, flush=True)
    limit = evidence.MAX_ITEM_CHARS
    results[f"MAX_ITEM_CHARS {limit}"] = {
        "items": len(lengths), "over": sum(n > limit for n in lengths),
        "median": statistics.median(lengths), "max": max(lengths),
        "over_half": sum(n > limit // 2 for n in lengths),
        "over_double": sum(n > 2 * limit for n in lengths)}
    print(json.dumps(results, indent=1))
    if out:
        out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
