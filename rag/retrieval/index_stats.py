"""What one vector-index update changed: light enough for the ingest report to import without
the vector stores."""

from __future__ import annotations

from pydantic import BaseModel


class IndexStats(BaseModel):
    """What one :meth:`~apiatlas.rag.retrieval.dense.VectorIndex.index` call changed in the
    vector store."""

    num_added: int = 0
    num_updated: int = 0
    num_skipped: int = 0
    num_deleted: int = 0

    @property
    def changed(self) -> bool:
        """True when anything was added, updated or deleted."""
        return bool(self.num_added or self.num_updated or self.num_deleted)
