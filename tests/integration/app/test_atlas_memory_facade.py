"""The facade's project memory: linked to the graph, re-linked by ingest, closed with the atlas."""

from __future__ import annotations

from pathlib import Path

import pysqlite3.dbapi2 as sqlite
import pytest
from langchain_core.embeddings import Embeddings

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.rag.runtime.embeddings import load_embeddings
from apiatlas.rag.memory.backends import close_memory_store, open_memory_store
from apiatlas.sample import sample_spec_path


@pytest.fixture(scope="module")
def embeddings() -> Embeddings:
    return load_embeddings(Settings())


def test_memory_recorded_before_ingest_follows_the_new_graph(
    tmp_path: Path, embeddings: Embeddings
) -> None:
    with ApiAtlas(Settings(home=tmp_path, project="facade"), embeddings=embeddings) as atlas:
        memory = atlas.memory()
        decision = memory.remember(
            "We create locations with v2; v1 drops the timezone",
            kind="decision", refs=["POST /v2/locations"],
        )  # fmt: skip
        assert memory.missing_refs(decision) == ["POST /v2/locations"]  # no graph yet

        atlas.ingest(openapi=[sample_spec_path()])
        memory = atlas.memory()
        assert memory.missing_refs(decision) == []
        [endpoint] = atlas.graph.resolve_signatures("facade", ["POST /v2/locations"])[
            "POST /v2/locations"
        ]
        assert [m.id for m in memory.about([endpoint.key])] == [decision.id]
        assert atlas.memory(project="other").about([endpoint.key]) == []
    assert atlas.settings.memory_path.is_file()


def test_close_closes_the_memory_store_it_opened(tmp_path: Path, embeddings: Embeddings) -> None:
    atlas = ApiAtlas(Settings(home=tmp_path), embeddings=embeddings)
    store = atlas.memory_store
    assert atlas.memory_store is store  # opened once
    atlas.close()
    with pytest.raises(sqlite.ProgrammingError):
        store.conn.execute("SELECT 1")  # type: ignore[attr-defined]


def test_an_injected_memory_store_stays_open(tmp_path: Path, embeddings: Embeddings) -> None:
    settings = Settings(home=tmp_path)
    store = open_memory_store(settings, embeddings)
    try:
        with ApiAtlas(settings, embeddings=embeddings, memory_store=store) as atlas:
            kept = atlas.memory().remember("Injected stores belong to their caller", kind="fact")
        assert store.get(("apiatlas", "default", "memories"), kept.id) is not None
    finally:
        close_memory_store(store)

