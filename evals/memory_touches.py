"""Choose :data:`~apiatlas.rag.review.touches.NEAR_DUPLICATE_SCORE` on the dev memory sets.

``python -m apiatlas.evals.memory_touches`` replays each dev team history in order: every memory,
as it is written, is compared with the memories written before it, and each earlier one at least
the threshold similar is flagged as one it almost repeats. A flag is right when the new memory is
the one the team superseded it with (``supersedes`` in the dataset), the closest thing to a
duplicate the sets label. The chosen threshold is the lowest of :data:`GRID` at which every flag
on the dev sets together is right; the validation set is scored beside it, never chosen on, and
test sets are not read.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from apiatlas.config import Settings
from apiatlas.evals.dataset import VALIDATION, Dataset, load_dataset
from apiatlas.rag.memory.model import Memory
from apiatlas.rag.runtime.embeddings import load_embeddings

DEV = Path(__file__).resolve().parent / "datasets" / "dev"
GRID = tuple(round(0.70 + 0.05 * i, 2) for i in range(6))
"""The thresholds tried: 0.70 to 0.95 by 0.05."""


@dataclass
class Flags:
    """Flags at one threshold: right ones, all, and the superseding memories of the set."""

    right: int = 0
    flagged: int = 0
    superseding: int = 0

    def add(self, other: Flags) -> Flags:
        return Flags(self.right + other.right, self.flagged + other.flagged,
                     self.superseding + other.superseding)

    @property
    def precision(self) -> float | None:
        return self.right / self.flagged if self.flagged else None


def _similarities(dataset: Dataset, embeddings: Embeddings) -> np.ndarray:
    now = datetime.now(timezone.utc)
    texts = [
        Memory(id="m", project="p", kind=m.kind, text=m.text, steps=m.steps, refs=m.refs,
               created_at=now, valid_from=now).search_text()
        for m in dataset.memories
    ]  # fmt: skip
    vectors = np.asarray(embeddings.embed_documents(texts), dtype=np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors @ vectors.T


def flags(dataset: Dataset, similarity: np.ndarray, threshold: float) -> Flags:
    """The flags of ``dataset``'s replay at ``threshold``."""
    position = {m.key: i for i, m in enumerate(dataset.memories) if m.key}
    out = Flags()
    for i, memory in enumerate(dataset.memories):
        before = position.get(memory.supersedes) if memory.supersedes else None
        out.superseding += before is not None
        for j in np.flatnonzero(similarity[i, :i] >= threshold):
            out.flagged += 1
            out.right += int(j) == before
    return out


def choose(dev: dict[str, dict[float, Flags]]) -> float | None:
    """The lowest threshold at which every dev flag is right (``None``: none is)."""
    for t in GRID:
        pooled = Flags()
        for per_threshold in dev.values():
            pooled = pooled.add(per_threshold[t])
        if pooled.flagged and pooled.precision == 1.0:
            return t
    return None


def calibrate(embeddings: Embeddings, folder: Path = DEV) -> tuple[float | None, str]:
    """The chosen threshold and a short Markdown table of every memory set of ``folder``."""
    dev: dict[str, dict[float, Flags]] = {}
    validation: dict[str, dict[float, Flags]] = {}
    for path in sorted(folder.glob("*.yaml")):
        dataset = load_dataset(path)
        if not any(m.supersedes for m in dataset.memories):
            continue
        similarity = _similarities(dataset, embeddings)
        split = validation if dataset.name in VALIDATION else dev
        split[dataset.name] = {t: flags(dataset, similarity, t) for t in GRID}
    chosen = choose(dev)
    lines = ["| set | split | " + " | ".join(f"{t:.2f}" for t in GRID) + " |",
             "| --- | --- | " + " | ".join("---" for _ in GRID) + " |"]
    for split, sets in (("dev", dev), ("validation", validation)):
        for name, per in sets.items():
            cells = " | ".join(
                f"{f.right}/{f.flagged} of {f.superseding}" for f in (per[t] for t in GRID)
            )
            lines.append(f"| {name} | {split} | {cells} |")
    lines.append("")
    lines.append("Cells: right flags / all flags, of the memories that supersede one; chosen: "
                 + ("none" if chosen is None else f"{chosen:.2f}"))
    return chosen, "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    """Print the table and the chosen threshold."""
    argparse.ArgumentParser(description=__doc__).parse_args(argv)
    _, table = calibrate(load_embeddings(Settings()))
    print(table)


if __name__ == "__main__":
    main()
