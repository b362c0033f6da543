"""The query adapter: a small learned map on question embeddings, for the ranker's dense features.

A developer's question and the spec's text describing the endpoint that answers it are worded
differently ("wipe their record" against "Permanently deletes a contact"). The adapter moves the
question's vector towards the endpoints such questions turn out to want:
``q -> normalise(q + up @ (down @ q))``, a residual of low rank on top of the frozen embedding
model, trained by ``make train`` on the dev questions (:func:`apiatlas.evals.adapter_fit.fit_adapter`).
It is read with the ranker's artifact and applies only to vectors of the model it was trained for.
Endpoint vectors are never changed, so an adapter needs no re-ingest.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

DECIMALS = 5
"""Decimals kept in the artifact: enough for the scores, short enough to stay byte-stable."""


@dataclass(frozen=True, eq=False)
class QueryAdapter:
    """A low-rank residual map on the question vectors of one embedding model.

    Attributes:
        model: Id of the embedding model it was trained for
            (:func:`~apiatlas.rag.runtime.embeddings.model_id`).
        up: ``(dimension, rank)`` matrix.
        down: ``(rank, dimension)`` matrix.
    """

    model: str
    up: np.ndarray
    down: np.ndarray

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, QueryAdapter):
            return NotImplemented
        return (self.model == other.model and np.array_equal(self.up, other.up)
                and np.array_equal(self.down, other.down))

    __hash__ = None  # type: ignore[assignment]  # mutable arrays inside

    def apply(self, vector: Sequence[float], model: str) -> list[float]:
        """``vector`` adapted, when it comes from the adapter's model; otherwise unchanged."""
        if model != self.model or len(vector) != self.up.shape[0]:
            return list(vector)
        q = np.asarray(vector, dtype=np.float64)
        adapted = q + self.up @ (self.down @ q)
        norm = float(np.linalg.norm(adapted))
        return (adapted / norm).tolist() if norm > 0 else list(vector)

    def to_json(self) -> dict[str, Any]:
        """The JSON form stored in the artifact: one line of numbers per matrix row."""
        row = lambda values: " ".join(f"{v:.{DECIMALS}f}" for v in values)  # noqa: E731
        return {"model": self.model, "up": [row(r) for r in self.up],
                "down": [row(r) for r in self.down]}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> QueryAdapter:
        """Read :meth:`to_json` output back."""
        matrix = lambda rows: np.array([[float(x) for x in r.split()] for r in rows])  # noqa: E731
        return cls(model=str(data["model"]), up=matrix(data["up"]), down=matrix(data["down"]))

    def rounded(self) -> QueryAdapter:
        """The adapter as the artifact stores it (so training and scoring use the same one)."""
        return QueryAdapter.from_json(self.to_json())
