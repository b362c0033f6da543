"""A graph or memory store that fails at question time degrades the agent; it does not crash."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.graph.sqlite.store import SqliteGraphStore
from apiatlas.rag.agent.graph import build_agent, run_agent
from apiatlas.rag.agent.context import AgentContext
from apiatlas.rag.memory.backends import close_memory_store, open_memory_store
from tests.integration.conftest import SAMPLE_PROJECT as PROJECT, SampleHome

QUESTION = "How do I add a new warehouse location?"


@pytest.fixture(scope="module")
def sample(sample_home: SampleHome) -> Path:
    return sample_home.sample


@pytest.fixture(scope="module")
def atlas(sample_home: SampleHome) -> Iterator[ApiAtlas]:
    with ApiAtlas(Settings(home=sample_home.home, project=PROJECT)) as atlas:
        yield atlas


def test_unavailable_graph_answers_from_vectors(
    atlas: ApiAtlas, sample: Path, tmp_path: Path
) -> None:
    broken = SqliteGraphStore(tmp_path / "other.sqlite")
    broken.close()  # every query now raises StoreError, as an unreachable server does
    agent = build_agent(store=broken, vector_retriever=atlas.retriever,
                        embeddings=atlas.embeddings)

    result = run_agent(agent, QUESTION, context=AgentContext(project=PROJECT))

    assert result.notes[-1:] == ["degraded: graph unavailable"]
    assert result.route[-3:] == ["rank", "review", "compose"]
    assert "knowledge graph is unavailable" in result.answer
    assert ("POST", "/v2/locations") in [(e.method, e.path) for e in result.endpoints]
    assert all(c.uri.startswith(str(sample)) for c in result.citations)
    assert result.citations


def test_unavailable_memory_answers_from_the_docs_and_says_so(
    atlas: ApiAtlas, tmp_path: Path
) -> None:
    memory = open_memory_store(Settings(home=tmp_path), atlas.embeddings)
    close_memory_store(memory)  # its connection is gone, as a dead Postgres's would be
    agent = build_agent(store=atlas.graph, vector_retriever=atlas.retriever,
                        embeddings=atlas.embeddings, memory=memory)

    result = run_agent(agent, QUESTION, context=AgentContext(project=PROJECT))

    assert result.route[0] == "memory" and result.notes == ["degraded: memory unavailable"]
    assert "knowledge_graph" in result.route
    assert "project memory could not be read" in result.answer
    assert [(e.method, e.path) for e in result.endpoints][0] == ("POST", "/v2/locations")
    assert result.memories == []
