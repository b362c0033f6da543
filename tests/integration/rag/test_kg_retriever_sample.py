"""KnowledgeGraphRetriever on the sample API in a real SQLite graph, with the real MiniLM."""

from __future__ import annotations

from pathlib import Path
from typing import Iterator

import pytest
from langchain_core.embeddings import Embeddings

from apiatlas.config import Settings
from apiatlas.graph.build.ingest import ingest_graph
from apiatlas.graph.model import Node, NodeLabel, ResourceInfo
from apiatlas.graph.sqlite.store import SqliteGraphStore
from apiatlas.loaders.docs import load_docs
from apiatlas.loaders.openapi import load_openapi
from apiatlas.rag.runtime.embeddings import load_embeddings
from apiatlas.rag.retrieval.graph import KnowledgeGraphRetriever
from apiatlas.sample import sample_guides_dir, sample_spec_path, write_sample_api

PROJECT = "kg"


@pytest.fixture(scope="session")
def embeddings() -> Embeddings:
    return load_embeddings(Settings())


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SqliteGraphStore]:
    graph = SqliteGraphStore(Path(tmp_path_factory.mktemp("kg")) / "graph.sqlite")
    ingest_graph(graph, PROJECT, specs=load_openapi(sample_spec_path()),
                 docs={"guides": load_docs(sample_guides_dir())})
    yield graph
    graph.close()


@pytest.fixture
def retriever(store: SqliteGraphStore, embeddings: Embeddings) -> KnowledgeGraphRetriever:
    return KnowledgeGraphRetriever(store=store, embeddings=embeddings, project=PROJECT, k=3)


def test_lookup_ranks_live_create_first_and_names_the_replacement(
    retriever: KnowledgeGraphRetriever,
) -> None:
    lookup = retriever.lookup("create a location", project=PROJECT)
    assert [p.signature for p in lookup.primary][:2] == ["POST /v2/locations", "POST /v1/locations"]
    assert lookup.primary[0].score > lookup.primary[1].score
    old = lookup.primary[1]
    assert old.deprecated and lookup.replacements[old.key].signature == "POST /v2/locations"
    assert [m.resource.name for m in lookup.matched_resources] == ["location"]


def test_semantic_match_catches_a_synonym_that_is_no_alias(
    retriever: KnowledgeGraphRetriever,
) -> None:
    lookup = retriever.lookup("create a quotation", project=PROJECT)
    assert lookup.matched_resources[0].how == "semantic"
    assert lookup.matched_resources[0].resource.name == "quote"
    assert lookup.primary[0].signature == "POST /v2/quotes"


def test_missing_resource_returns_nothing_but_alternatives(
    retriever: KnowledgeGraphRetriever,
) -> None:
    lookup = retriever.lookup("How do I create an invoice?", project=PROJECT)
    assert lookup.primary == [] and lookup.prerequisites == []
    assert lookup.unmatched_terms == ["invoice"]
    assert lookup.alternatives


def test_documents_are_cards_with_citation_metadata(retriever: KnowledgeGraphRetriever) -> None:
    docs = retriever.invoke("How do I create a shipment?", k=1)
    roles = [d.metadata["role"] for d in docs]
    assert roles[0] == "primary" and roles.count("primary") == 1
    assert "prerequisite" in roles
    first = docs[0]
    assert first.page_content.startswith("POST /v2/shipments — Create a shipment")
    assert first.metadata["pointer"] == "/paths/~1v2~1shipments/post"
    assert Path(first.metadata["source"]).is_file()
    assert {"key", "api", "method", "path", "score"} <= set(first.metadata)


def test_invoke_overrides_project_and_api(retriever: KnowledgeGraphRetriever) -> None:
    assert retriever.invoke("create a location", project="nobody") == []
    assert retriever.invoke("create a location", api="some-other-api") == []


class _CountingStore(SqliteGraphStore):
    """The real SQLite store, counting how often the resource list and the guide sections are
    read."""

    resource_reads = 0
    section_reads = 0

    def resources(self, project: str, *, api: str | None = None) -> list[ResourceInfo]:
        self.resource_reads += 1
        return super().resources(project, api=api)

    def nodes(self, project: str, label: NodeLabel, *, scope: str | None = None) -> list[Node]:
        self.section_reads += label == "DocSection"
        return super().nodes(project, label, scope=scope)


def test_resource_cache_follows_re_ingests_by_any_connection(
    tmp_path: Path, embeddings: Embeddings
) -> None:
    root = write_sample_api(tmp_path / "api")
    spec_path = next(root.rglob("openapi.yaml"))
    graph = _CountingStore(tmp_path / "graph.sqlite")
    writer = SqliteGraphStore(tmp_path / "graph.sqlite")  # another process's connection
    try:
        ingest_graph(writer, PROJECT, specs=load_openapi(spec_path))
        retriever = KnowledgeGraphRetriever(store=graph, embeddings=embeddings, project=PROJECT)
        for question in ("list all shipments", "create a location", "list all pallets"):
            retriever.lookup(question, project=PROJECT)
        ingest_graph(writer, PROJECT, specs=load_openapi(spec_path))  # unchanged: a no-op
        assert retriever.lookup("list all pallets", project=PROJECT).primary == []
        assert graph.resource_reads == 1
        spec_path.write_text(spec_path.read_text().replace(
            "Shipments (also called parcels,", "Shipments (also called pallets, parcels,"
        ))  # fmt: skip
        ingest_graph(writer, PROJECT, specs=load_openapi(spec_path))
        lookup = retriever.lookup("list all pallets", project=PROJECT)
        assert [p.signature for p in lookup.primary][:1] == ["GET /v2/shipments"]
        assert graph.resource_reads == 2
    finally:
        writer.close()
        graph.close()


def test_a_guide_s_definition_names_a_resource_until_the_guide_drops_it(
    tmp_path: Path, embeddings: Embeddings
) -> None:
    guides = tmp_path / "guides"
    guides.mkdir()
    page = guides / "glossary.md"
    page.write_text("# Glossary\n\nCarriers are the hauling firms that move your goods.\n")
    spec = load_openapi(sample_spec_path())
    graph = SqliteGraphStore(tmp_path / "graph.sqlite")
    try:
        ingest_graph(graph, PROJECT, specs=spec, docs={"guides": load_docs(guides)})
        retriever = KnowledgeGraphRetriever(store=graph, embeddings=embeddings, project=PROJECT)
        carrier = next(r for r in retriever.matchers.resources(graph, PROJECT, None)
                       if r.name == "carrier")
        assert "hauling firm" in carrier.aliases
        lookup = retriever.lookup("list all hauling firms", project=PROJECT)
        match = lookup.matched_resources[0]
        assert (match.resource.name, match.how) == ("carrier", "lexical")
        assert [p.signature for p in lookup.primary][:1] == ["GET /v2/carriers"]
        page.write_text("# Glossary\n\nNothing is defined here any more.\n")
        ingest_graph(graph, PROJECT, docs={"guides": load_docs(guides)})
        carrier = next(r for r in retriever.matchers.resources(graph, PROJECT, None)
                       if r.name == "carrier")
        assert "hauling firm" not in carrier.aliases
    finally:
        graph.close()


class _Recording(Embeddings):
    """The real model, recording every batch of texts it embeds."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.batches: list[list[str]] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.batches.append(list(texts))
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.batches.append([text])
        return self.inner.embed_query(text)


def test_a_question_s_unmatched_term_is_embedded_once(
    store: SqliteGraphStore, embeddings: Embeddings
) -> None:
    recording = _Recording(embeddings)
    retriever = KnowledgeGraphRetriever(store=store, embeddings=recording, project=PROJECT)
    lookup = retriever.lookup("list all pallets", project=PROJECT)
    # Nothing is named "pallet": the graph answers with the nearest resources' endpoints,
    # found from the similarities its resource matching already worked out.
    assert lookup.primary == [] and lookup.unmatched_terms and lookup.alternatives
    assert [b for b in recording.batches if any("pallet" in t for t in b)] == [
        lookup.unmatched_terms
    ]


def test_guide_definitions_are_kept_between_processes(
    tmp_path: Path, embeddings: Embeddings
) -> None:
    guides = tmp_path / "guides"
    guides.mkdir()
    (guides / "glossary.md").write_text("# Glossary\n\nCarriers are the hauling firms.\n")
    graph = _CountingStore(tmp_path / "graph.sqlite")
    try:
        ingest_graph(graph, PROJECT, specs=load_openapi(sample_spec_path()),
                     docs={"guides": load_docs(guides)})
        api = graph.resources(PROJECT)[0].api
        first = KnowledgeGraphRetriever(store=graph, embeddings=embeddings, project=PROJECT,
                                        derived_dir=tmp_path / "derived")
        for scope in (None, api):
            first.lookup("list all hauling firms", project=PROJECT, api=scope)
        read = graph.section_reads
        later = KnowledgeGraphRetriever(store=graph, embeddings=embeddings, project=PROJECT,
                                        derived_dir=tmp_path / "derived")  # a new process
        for scope in (None, api):
            lookup = later.lookup("list all hauling firms", project=PROJECT, api=scope)
            assert [p.signature for p in lookup.primary][:1] == ["GET /v2/carriers"]
        assert graph.section_reads == read  # what the guides define was kept, not read again
    finally:
        graph.close()
