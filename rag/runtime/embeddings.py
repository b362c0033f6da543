"""Embedding models: the packaged local encoder (offline, default) or OpenAI (optional extra).

The local model runs with ONNX Runtime (:mod:`apiatlas.rag.runtime.onnx_minilm`: the packaged
ONNX file, no torch). One instance is shared by the whole
process: every caller of :func:`load_embeddings` with ``embeddings == "local"`` gets the same
object, created on first use under a lock.

That instance keeps its recent single-text vectors (:class:`QueryCachedEmbeddings`): while the
agent answers one question, the project-memory search and the vector retriever both embed it,
and the second one is free.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from pathlib import Path
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np
from langchain_core.embeddings import Embeddings

from apiatlas.config import Settings
from apiatlas.errors import ConfigError, ModelError
from apiatlas.extras import missing_extra
from apiatlas.rag.runtime import onnx_minilm

if TYPE_CHECKING:
    from tokenizers import Tokenizer

LOCAL_MAX_TOKENS = 256
"""Token window of the local model; longer inputs are silently truncated by the model."""

LOCAL_DIMENSIONS = 384

QUERY_CACHE_SIZE = 256
"""Recent query vectors kept (about 3 MB): enough for every question in flight at once."""

_lock = threading.Lock()
_local: Embeddings | None = None


class QueryCachedEmbeddings(Embeddings):
    """A symmetric embedding model whose recent single-text vectors are kept in an LRU cache.

    One question is embedded more than once per answer: by the project-memory store's semantic
    search (LangGraph stores call ``embed_documents([question])``) and by the vector retriever
    (``embed_query(question)``). For a symmetric model, one that encodes queries and documents
    alike (the packaged MiniLM, with the same ``encode_kwargs`` for both), these are the same
    vector, so both calls share one cache entry. Batches of several texts (an ingest) pass
    through uncached.

    Args:
        inner: The model. It must be symmetric, or cached query vectors would stand in for
            document vectors.
        size: How many vectors to keep.
    """

    def __init__(self, inner: Embeddings, size: int = QUERY_CACHE_SIZE) -> None:
        self.inner = inner
        self.size = size
        self._cache: OrderedDict[str, tuple[float, ...]] = OrderedDict()
        self._cache_lock = threading.Lock()

    def clear(self) -> None:
        """Forget every cached vector."""
        with self._cache_lock:
            self._cache.clear()

    def embed_query(self, text: str) -> list[float]:
        """The vector of ``text``, from the cache when it was embedded recently."""
        return list(self._vector(text))

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Vectors of ``texts``; a single text goes through the cache (a store's query)."""
        if len(texts) == 1:
            return [list(self._vector(texts[0]))]
        return self.inner.embed_documents(texts)

    def _vector(self, text: str) -> tuple[float, ...]:
        with self._cache_lock:
            found = self._cache.get(text)
            if found is not None:
                self._cache.move_to_end(text)
                return found
        # Embedded outside the lock: concurrent questions must not wait on each other's model
        # call (two threads may embed one new text at once; both get the same vector).
        vector = tuple(self.inner.embed_query(text))
        with self._cache_lock:
            self._cache[text] = vector
            self._cache.move_to_end(text)
            while len(self._cache) > self.size:
                self._cache.popitem(last=False)
        return vector


class LazyEmbeddings(Embeddings):
    """Embeddings made on first use: a store that may never embed (listing project memory)
    is opened without loading a model.

    Args:
        factory: Returns the real embeddings (called once, on the first embed).
    """

    def __init__(self, factory: Callable[[], Embeddings]) -> None:
        self._factory = factory
        self._inner: Embeddings | None = None
        self._lock = threading.Lock()

    @property
    def inner(self) -> Embeddings:
        """The real embeddings (made now if not yet)."""
        if self._inner is None:
            with self._lock:
                if self._inner is None:
                    self._inner = self._factory()
        return self._inner

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        return self.inner.embed_query(text)


def unit_rows(
    vectors: Sequence[Sequence[float]] | np.ndarray, dtype: type = np.float32
) -> np.ndarray:
    """``vectors`` as a matrix of unit rows (a zero row stays zero; no rows gives shape (0, 0))."""
    matrix = np.asarray(vectors, dtype=dtype)
    if matrix.ndim != 2:
        matrix = matrix.reshape(len(matrix), -1) if matrix.size else matrix.reshape(0, 0)
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def model_id(embeddings: Embeddings) -> str:
    """A name for the model behind ``embeddings`` (through the query and document caches): what
    files of its vectors are keyed by, so that another model never reads them."""
    inner = embeddings
    while True:  # through every wrapper: document cache, query cache, lazy loading
        wrapped = getattr(inner, "underlying_embeddings", None) or getattr(inner, "inner", None)
        if not isinstance(wrapped, Embeddings):
            break
        inner = wrapped
    found = getattr(inner, "model_id", None) or getattr(inner, "model", None)
    return str(found or type(inner).__name__)


def settings_model_id(settings: Settings) -> str:
    """What :func:`model_id` gives for ``settings``' embeddings, without loading the model."""
    if settings.embeddings == "local":
        return onnx_minilm.weights_id(onnx_minilm.model_dir())
    return settings.openai_model


def known_dimensions(settings: Settings) -> int | None:
    """The vector size of ``settings``' embeddings when known without embedding anything."""
    if settings.embeddings == "local":
        return LOCAL_DIMENSIONS
    return _OPENAI_DIMENSIONS.get(settings.openai_model)


_OPENAI_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


def load_embeddings(settings: Settings) -> Embeddings:
    """Return the embedding model selected by ``settings.embeddings``.

    Args:
        settings: ``embeddings`` picks ``local`` (the packaged encoder, cached per process)
            or ``openai`` (``settings.openai_model``; needs ``apiatlas[openai]``).

    Returns:
        A LangChain ``Embeddings``. Local vectors are L2-normalised, 384 dimensions.

    Raises:
        ConfigError: ``openai`` was asked for but ``langchain-openai`` is not installed.
        ModelError: The model could not be loaded.
    """
    if settings.embeddings == "local":
        return _local_embeddings()
    if settings.embeddings == "openai":
        return _openai_embeddings(settings.openai_model)
    raise ConfigError(
        f"embeddings={settings.embeddings!r} is not supported: use 'local' or 'openai'."
    )


def local_tokenizer() -> Tokenizer:
    """The local model's own tokenizer (``tokenizers.Tokenizer``, no truncation or padding), for
    counting tokens against :data:`LOCAL_MAX_TOKENS` without loading the model.

    Raises:
        ModelError: The local model is not installed.
    """
    found = onnx_minilm.tokenizer()
    found.no_truncation()
    found.no_padding()
    return found


def _local_embeddings() -> Embeddings:
    global _local
    # Double-checked so that concurrent first callers load the model once, later ones never lock.
    if _local is not None:
        return _local
    with _lock:
        if _local is None:
            _local = QueryCachedEmbeddings(_build_local())
        return _local


def _build_local() -> Embeddings:
    return onnx_minilm.OnnxEmbeddings(onnx_minilm.onnx_path(), onnx_minilm.model_dir())


def torch_embeddings(path: Path) -> Embeddings:
    """The model folder ``path`` through sentence-transformers and torch (what its ONNX export is
    checked against in ``make bench`` and the tests; the ``train`` extra); never used to answer.

    Raises:
        ModelError: The model or sentence-transformers could not be loaded.
    """
    try:
        from langchain_huggingface import HuggingFaceEmbeddings
    except ImportError as e:
        raise ModelError(f"sentence-transformers is not installed ({e})") from e
    try:
        return HuggingFaceEmbeddings(
            model_name=str(path),
            # local_files_only keeps sentence-transformers from ever reaching the Hub.
            model_kwargs={"device": "cpu", "local_files_only": True},
            encode_kwargs={"normalize_embeddings": True},
        )
    except Exception as e:  # the loader raises OSError, ValueError, RuntimeError...
        raise ModelError(f"Could not load the local embedding model from {path}: {e}.") from e


def _openai_embeddings(model: str) -> Embeddings:
    try:
        from langchain_openai import OpenAIEmbeddings
    except ImportError as e:
        raise missing_extra("openai", "OpenAI embeddings (or use APIATLAS_EMBEDDINGS=local)", e) from e
    try:
        return OpenAIEmbeddings(model=model)
    except Exception as e:  # missing API key surfaces here as a pydantic/OpenAI error
        raise ModelError(
            f"Could not create OpenAI embeddings {model!r}: {e}. Set OPENAI_API_KEY, "
            "or use APIATLAS_EMBEDDINGS=local."
        ) from e
