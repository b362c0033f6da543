"""A graph store that fails at question time degrades the agent to the vector route."""

from __future__ import annotations

from pathlib import Path

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.graph.sqlite_store import SqliteGraphStore
from apiatlas.rag.agent import build_agent, run_agent
from apiatlas.rag.context import AgentContext
from apiatlas.sample import write_sample_api


def test_unavailable_graph_answers_from_vectors(tmp_path: Path) -> None:
    sample = write_sample_api(tmp_path / "sample")
    settings = Settings(home=tmp_path / "home", project="degraded")
    with ApiAtlas(settings) as atlas:
        atlas.ingest(openapi=[sample / "openapi.yaml"], docs=[sample / "guides"])
        broken = SqliteGraphStore(tmp_path / "other.sqlite")
        broken.close()  # every query now raises StoreError, as an unreachable server does
        agent = build_agent(store=broken, vector_retriever=atlas.retriever,
                            embeddings=atlas.embeddings)

        result = run_agent(agent, "How do I add a new warehouse location?",
                           context=AgentContext(project="degraded"))

    assert "degraded: graph unavailable" in result.route
    assert result.route[-2:] == ["vector_fallback", "compose"]
    assert "knowledge graph is unavailable" in result.answer
    assert ("POST", "/v2/locations") in [(e.method, e.path) for e in result.endpoints]
    assert all(c.uri.startswith(str(sample)) for c in result.citations)
    assert result.citations
