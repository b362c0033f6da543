"""A dataset's project memory in an eval run: record it, then read citations back as its keys.

Cases name memories by the dataset's keys (``expected_memories``); answers cite them by id
(``memory:<id>``). :func:`load_memories` records the dataset's memories in its project, in order
(a ``supersedes`` entry supersedes the memory it names), and returns the key <-> id mapping.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from apiatlas.atlas import ApiAtlas
from apiatlas.errors import UsageError
from apiatlas.evals.dataset import Dataset
from apiatlas.rag.memory.store import ROOT
from apiatlas.rag.answer.result import Citation

STALE_LIMIT = 10_000
"""Most memories per namespace removed from a previous run (far above any dataset)."""


@dataclass
class DatasetMemories:
    """The memories recorded for one dataset.

    Attributes:
        ids: Dataset key -> memory id (memories without a key are recorded but not named).
        superseded: Keys of the memories a newer one of the dataset replaced.
    """

    ids: dict[str, str] = field(default_factory=dict)
    superseded: list[str] = field(default_factory=list)

    def cited(self, citations: Sequence[Citation]) -> list[str]:
        """The memories ``citations`` cite, as dataset keys in citation order.

        A cited memory the dataset did not name (no key, or not recorded by this run) keeps its
        ``memory:<id>`` form, so a report shows it rather than dropping it.
        """
        keys = {memory_id: key for key, memory_id in self.ids.items()}
        out: list[str] = []
        for citation in citations:
            if citation.kind != "memory":
                continue
            memory_id = citation.uri.removeprefix("memory:")
            label = keys.get(memory_id, citation.uri)
            if label not in out:
                out.append(label)
        return out


def clear_memories(atlas: ApiAtlas, project: str) -> int:
    """Remove every memory version of ``project`` left by an earlier run; return how many.

    An embedded eval home is always new, but a memory server (``PostgresStore``) keeps earlier
    runs: their memories would answer alongside this run's and cite ids no case expects.
    """
    store = atlas.memory_store
    removed = 0
    for namespace in store.list_namespaces(prefix=(ROOT, project), limit=STALE_LIMIT):
        for item in store.search(namespace, limit=STALE_LIMIT):
            store.delete(namespace, item.key)
            removed += 1
    return removed


def load_memories(atlas: ApiAtlas, dataset: Dataset) -> DatasetMemories:
    """Record ``dataset.memories`` in the dataset's project (after its ingest, before its cases).

    Through the facade, so each memory is linked in the graph to the endpoints its refs name.

    Raises:
        UsageError: A memory is rejected (the dataset loader checks the same rules first, so
            this means a dataset built in code without :func:`load_dataset`).
    """
    loaded = DatasetMemories()
    if not dataset.memories:
        return loaded
    clear_memories(atlas, dataset.name)
    memory = atlas.memory(dataset.name)
    for entry in dataset.memories:
        if entry.supersedes is not None:
            old = loaded.ids.get(entry.supersedes)
            if old is None:
                raise UsageError(
                    f"dataset {dataset.name!r}: a memory supersedes {entry.supersedes!r}, which "
                    "is not the key of an earlier memory; list the memory it replaces first"
                )
            recorded = memory.supersede(
                old, entry.text, kind=entry.kind, refs=entry.refs, steps=entry.steps,
                importance=entry.importance, author=entry.author, source=entry.source,
            )
            loaded.superseded.append(entry.supersedes)
        else:
            recorded = memory.remember(
                entry.text, kind=entry.kind, refs=entry.refs, steps=entry.steps,
                importance=entry.importance, author=entry.author, source=entry.source,
            )
        if entry.key is not None:
            loaded.ids[entry.key] = recorded.id
    return loaded
