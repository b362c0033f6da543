"""Document vectors kept by content hash: a text is embedded once per home and model.

An ingest embeds endpoint cards, guide chunks and the ranker's short per-endpoint texts. The
indexing API already skips documents it indexed before, but only per project and only for the
vector store: the same spec in a second project, or the ranker's index rebuilt after one endpoint
changed, embedded everything again. Here LangChain's ``CacheBackedEmbeddings`` sits in front of
the model for documents (questions pass straight through), over an ``EncoderBackedStore`` that
keys each text by the SHA-256 of the model's id and the text, and stores its vector as float32
bytes in one SQLite file (:class:`SqliteByteStore`).
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
from langchain_classic.embeddings import CacheBackedEmbeddings
from langchain_classic.storage import EncoderBackedStore
from langchain_core.embeddings import Embeddings
from langchain_core.stores import BaseStore

from apiatlas.errors import StoreError
from apiatlas.rag.runtime.embeddings import model_id

_SCHEMA = "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, value BLOB NOT NULL)"


class SqliteByteStore(BaseStore[str, bytes]):
    """A LangChain ``ByteStore`` in one SQLite file (WAL, so readers never wait on a writer).

    Args:
        path: The database file (created with its folder when missing).

    Raises:
        StoreError: The file cannot be opened or created.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
            self._conn.execute("PRAGMA journal_mode = WAL")
            self._conn.execute(_SCHEMA)
            self._conn.commit()
        except (OSError, sqlite3.Error) as e:
            raise StoreError(
                f"Could not open the embedding cache at {path}: {e}. Check that the folder is "
                "writable; the file is safe to delete (texts are embedded again)."
            ) from e

    def mget(self, keys: Sequence[str]) -> list[bytes | None]:
        """The values of ``keys`` (``None`` for a missing key), in order."""
        found: dict[str, bytes] = {}
        with self._lock:
            # In slices: SQLite limits the number of bound parameters per statement.
            for start in range(0, len(keys), 500):
                part = list(keys[start:start + 500])
                marks = ",".join("?" * len(part))
                rows = self._conn.execute(
                    f"SELECT key, value FROM entries WHERE key IN ({marks})", part
                ).fetchall()
                found.update((k, bytes(v)) for k, v in rows)
        return [found.get(key) for key in keys]

    def mset(self, key_value_pairs: Sequence[tuple[str, bytes]]) -> None:
        """Store every pair (replacing a value already there), in one transaction."""
        with self._lock, self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO entries (key, value) VALUES (?, ?)", key_value_pairs
            )

    def mdelete(self, keys: Sequence[str]) -> None:
        """Remove ``keys`` (missing ones are ignored)."""
        with self._lock, self._conn:
            self._conn.executemany("DELETE FROM entries WHERE key = ?", [(k,) for k in keys])

    def yield_keys(self, *, prefix: str | None = None) -> Iterator[str]:
        """Every key, or those starting with ``prefix``, in key order."""
        with self._lock:
            if prefix is None:
                rows = self._conn.execute("SELECT key FROM entries ORDER BY key").fetchall()
            else:
                rows = self._conn.execute(
                    "SELECT key FROM entries WHERE substr(key, 1, ?) = ? ORDER BY key",
                    (len(prefix), prefix),
                ).fetchall()
        yield from (row[0] for row in rows)

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()


def cached_embeddings(embeddings: Embeddings, store: BaseStore[str, bytes]) -> Embeddings:
    """``embeddings`` with its document vectors kept in ``store``, keyed by model and text.

    Vectors are kept as float32: exact for the local model (its output is float32), within
    float32 rounding for a remote one.
    """
    namespace = model_id(embeddings)

    def key(text: str) -> str:
        return hashlib.sha256(f"{namespace}\x00{text}".encode()).hexdigest()

    vectors: BaseStore[str, list[float]] = EncoderBackedStore(
        store,
        key,
        lambda vector: np.asarray(vector, dtype="<f4").tobytes(),
        lambda data: np.frombuffer(data, dtype="<f4").astype(float).tolist(),
    )
    return CacheBackedEmbeddings(embeddings, vectors)
