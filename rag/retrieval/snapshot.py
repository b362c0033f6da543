"""A project's corpus as the hybrid retriever reads it, kept beside the project.

Every document of the project with its stored vector and its :class:`LexicalIndex`, written
once per graph revision under ``<home>/derived`` (the ingest writes it), so that a process that
opens the project reads one file instead of reading the whole corpus out of the vector store and
tokenising it again. It answers both halves of a hybrid search:

- lexical: BM25 over the stored index;
- dense: exact cosine search over the stored vectors, for the embedded store (Chroma), whose
  engine would otherwise be imported and opened for every new process. A server store
  (pgvector) keeps searching itself.
"""

from __future__ import annotations

import io
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from apiatlas.files import load_or_build, revision_file, write_atomic
from apiatlas.rag.retrieval.dense import card_vectors
from apiatlas.rag.runtime.embeddings import model_id, unit_rows
from apiatlas.rag.retrieval.lexical import LexicalIndex, document_tokens
from apiatlas.rag.retrieval.topk import top_positions

CorpusReader = Callable[[str], tuple[list[Document], np.ndarray | Sequence[Sequence[float]]]]
"""``project -> (documents, their vectors)``, every stored document of the project in a stable
order, e.g. a partial of :func:`~apiatlas.rag.retrieval.dense.load_corpus_vectors`."""


@dataclass
class CorpusSnapshot:
    """The documents of a project (or one API of it), their vectors and lexical index.

    Attributes:
        docs: The documents, in ranking tie-break order, with ``id`` set.
        vectors: One row per document (float32): the vector as the store keeps it, so that
            what is read from here equals what is read from the store.
        lexical: BM25 statistics over the documents' :func:`document_tokens`.
    """

    docs: list[Document]
    vectors: np.ndarray
    lexical: LexicalIndex
    _unit: np.ndarray = field(init=False, repr=False)

    def __post_init__(self) -> None:
        self.vectors = np.asarray(self.vectors, dtype=np.float32)
        self._unit = unit_rows(self.vectors) if len(self.docs) else self.vectors

    @classmethod
    def build(
        cls, docs: list[Document], vectors: np.ndarray | Sequence[Sequence[float]]
    ) -> CorpusSnapshot:
        """Index ``docs``; ``vectors[i]`` is the stored vector of ``docs[i]``."""
        lexical = LexicalIndex.build([document_tokens(d) for d in docs])
        matrix = np.asarray(vectors, dtype=np.float32) if docs else np.zeros((0, 0), np.float32)
        return cls(docs, matrix.reshape(len(docs), -1) if docs else matrix, lexical)

    def __len__(self) -> int:
        return len(self.docs)

    def subset(self, api: str) -> CorpusSnapshot:
        """The documents of one API, with lexical statistics over those documents only."""
        keep = [i for i, doc in enumerate(self.docs) if doc.metadata.get("api") == api]
        return CorpusSnapshot(
            [self.docs[i] for i in keep], self.vectors[keep], self.lexical.subset(keep)
        )

    def nearest(self, query_vector: Sequence[float], k: int) -> list[tuple[Document, float]]:
        """The ``k`` documents most similar to ``query_vector`` (exact cosine), best first,
        ties in corpus order."""
        if not len(self.docs) or k <= 0 or not self.vectors.shape[1]:
            return []
        q = np.asarray(query_vector, dtype=np.float32)
        similarity = self._unit @ (q / (float(np.linalg.norm(q)) or 1.0))
        return [(self.docs[i], float(similarity[i])) for i in top_positions(similarity, k)]

    def card_vectors(self, api: str | None = None) -> dict[tuple[str, str, str], list[float]]:
        """The endpoint card heads' vectors, as
        :func:`~apiatlas.rag.retrieval.dense.load_card_vectors` reads them from the store."""
        return card_vectors([d.metadata for d in self.docs], self.vectors, api)

    def save(self, path: Path) -> None:
        """Write the snapshot to ``path``, atomically: one ``.npz`` of arrays and JSON (no
        pickles)."""
        docs = [[d.id, d.page_content, d.metadata] for d in self.docs]
        text = np.frombuffer(json.dumps(docs).encode("utf-8"), dtype=np.uint8)
        lexical = {f"lexical_{k}": v for k, v in self.lexical.arrays().items()}
        buffer = io.BytesIO()
        np.savez(buffer, docs=text, vectors=self.vectors, **lexical)
        write_atomic(path, buffer.getvalue())

    @classmethod
    def load(cls, path: Path) -> CorpusSnapshot:
        """Read a snapshot :meth:`save` wrote."""
        with np.load(path, allow_pickle=False) as data:
            rows = json.loads(data["docs"].tobytes().decode("utf-8"))
            vectors = data["vectors"]
            lexical = LexicalIndex.from_arrays(
                {k.removeprefix("lexical_"): data[k] for k in data.files
                 if k.startswith("lexical_")}
            )
        docs = [Document(page_content=text, metadata=meta, id=doc_id)
                for doc_id, text, meta in rows]
        return cls(docs, vectors, lexical)


class CorpusCache:
    """One :class:`CorpusSnapshot` per project, current with the graph's revision of it.

    The ingest calls :meth:`rebuild` after it changed the vectors; another process notices
    that ingest through the revision, which moves whenever the specs or guides (the sources of
    both the graph and the vectors) changed.

    Args:
        read: Reads a project's documents and vectors out of the vector store (only when no
            current snapshot is in memory or on disk).
        revision: The graph store's revision of a project.
        embeddings: The vector store's embedding model. With it, the hybrid retriever searches
            the snapshot's vectors instead of asking the vector store (for embedded stores; a
            server store is better left to search itself); files are keyed by its id, so
            another model's vectors are never read back.
        folder: Where snapshots are kept (``<home>/derived``); memory only when ``None``.
    """

    def __init__(
        self,
        read: CorpusReader,
        revision: Callable[[str], str],
        *,
        embeddings: Embeddings | None = None,
        folder: Path | None = None,
    ) -> None:
        self.read = read
        self.revision = revision
        self.embeddings = embeddings
        self.folder = folder
        self.model = model_id(embeddings) if embeddings is not None else "none"
        self._lock = threading.Lock()
        self._snapshots: dict[tuple[str, str | None], tuple[str, CorpusSnapshot]] = {}

    def get(self, project: str, api: str | None = None) -> CorpusSnapshot:
        """The snapshot of ``project`` (``api`` only, when given), current with the graph."""
        revision = self.revision(project)
        with self._lock:
            found = self._snapshots.get((project, api))
            if found is not None and found[0] == revision:
                return found[1]
            # Under the lock: concurrent first questions would each read the whole corpus.
            whole = self._project(project, revision)
            self._snapshots[(project, None)] = (revision, whole)
            if api is None:
                return whole
            part = whole.subset(api)
            self._snapshots[(project, api)] = (revision, part)
            return part

    def rebuild(self, project: str) -> CorpusSnapshot:
        """Read the project's corpus again and replace its snapshot (after an ingest)."""
        revision = self.revision(project)
        with self._lock:
            for key in [key for key in self._snapshots if key[0] == project]:
                del self._snapshots[key]
            whole = self._project(project, revision, fresh=True)
            self._snapshots[(project, None)] = (revision, whole)
            return whole

    def clear(self) -> None:
        """Forget the snapshots held in memory (the files stay)."""
        with self._lock:
            self._snapshots.clear()

    def _project(self, project: str, revision: str, *, fresh: bool = False) -> CorpusSnapshot:
        return load_or_build(
            revision_file(self.folder, "corpus", project, revision, self.model),
            CorpusSnapshot.load,
            lambda: CorpusSnapshot.build(*self.read(project)),
            CorpusSnapshot.save,
            fresh=fresh,
        )
