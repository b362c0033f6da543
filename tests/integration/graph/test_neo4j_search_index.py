"""The Neo4j store's own search index (``:ApiAtlasTerm`` posting lists) and full-text index.

The conformance suite checks what search answers; these check what Neo4j holds to answer it:
posting lists that follow ingests and project deletes, a graph written before the posting lists
existed being upgraded when opened, and the full-text index people query with their own Cypher.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apiatlas.config import Settings
from apiatlas.graph.neo4j import queries as q
from apiatlas.graph.build.ingest import ingest_graph
from apiatlas.graph.neo4j.store import Neo4jGraphStore
from apiatlas.graph.testing.fixtures import shipping_guide, shipping_spec

P, OTHER = "search-index", "search-index-other"
READ_SHIPMENT = "ship/endpoint/GET /v2/shipments/{shipment_id}"
POSTINGS = """
MATCH (t:ApiAtlasTerm {project: $project})
RETURN t.scope AS scope, t.term AS term, t.keys AS keys, t.weights AS weights, t.lens AS lens
ORDER BY scope, term
"""


def _open(settings: Settings) -> Neo4jGraphStore:
    s = settings
    return Neo4jGraphStore(s.neo4j_uri, s.neo4j_username, s.neo4j_password, database=s.neo4j_database)


@pytest.fixture
def store(neo4j_settings: Settings) -> Iterator[Neo4jGraphStore]:
    store = _open(neo4j_settings)
    for project in (P, OTHER):
        store.delete_project(project)
    yield store
    for project in (P, OTHER):
        store.delete_project(project)
    store.close()


def _postings(store: Neo4jGraphStore, project: str = P) -> list[dict[str, object]]:
    assert store._driver is not None
    return [r.data() for r in store._driver.execute_query(POSTINGS, {"project": project}).records]


def _load(store: Neo4jGraphStore, project: str = P, **spec_kwargs: object) -> None:
    ingest_graph(store, project, specs=[shipping_spec(**spec_kwargs)], docs={"guide": shipping_guide()})  # type: ignore[arg-type]


def test_posting_lists_follow_ingests_and_deletes(store: Neo4jGraphStore) -> None:
    _load(store)
    _load(store, OTHER, summary_override={"GET /v2/carriers": "Enumerate hauliers"})
    postings = _postings(store)
    assert postings and {p["scope"] for p in postings} == {"api:ship"}
    by_term = {p["term"]: p for p in postings}
    # FTS5's porter stems, with every endpoint that uses the term, its weight and length.
    locat = by_term["locat"]
    assert "ship/endpoint/POST /v2/locations" in locat["keys"]  # type: ignore[operator]
    assert len(locat["keys"]) == len(locat["weights"]) == len(locat["lens"])  # type: ignore[arg-type]
    assert all(w > 0 for w in locat["weights"]) and all(n > 0 for n in locat["lens"])  # type: ignore[attr-defined]
    assert "haulier" not in by_term and "haulier" in {p["term"] for p in _postings(store, OTHER)}
    assert any(READ_SHIPMENT in p["keys"] for p in postings)  # type: ignore[operator]

    ingest_graph(store, P, specs=[shipping_spec(drop={"GET /v2/shipments/{shipment_id}"})])
    assert not any(READ_SHIPMENT in p["keys"] for p in _postings(store))  # type: ignore[operator]
    assert _postings(store, OTHER)  # untouched

    store.delete_project(P)
    assert _postings(store) == [] and store.search(P, "location") == []
    assert [h.signature for h in store.search(OTHER, "hauliers")] == ["GET /v2/carriers"]


def test_a_graph_from_before_the_posting_lists_is_upgraded_when_opened(
    store: Neo4jGraphStore, neo4j_settings: Settings
) -> None:
    _load(store)
    expected = store.search(P, "what endpoints can I use to create a location?")
    postings = _postings(store)
    assert expected and postings
    # What an older apiatlas left: no posting lists, search fields on the endpoints, version 1.
    assert store._driver is not None
    store._driver.execute_query("MATCH (t:ApiAtlasTerm {project: $p}) DELETE t", {"p": P})
    store._driver.execute_query(
        "MATCH (e:Endpoint:ApiAtlas {project: $p}) SET e.search_freq = '{}', e.search_path = 'v2'",
        {"p": P},
    )
    store._driver.execute_query(q.SEARCH_INDEX_VERSION_SET, {"version": 1})
    assert store.search(P, "create a location") == []

    reopened = _open(neo4j_settings)
    try:
        assert reopened.search(P, "what endpoints can I use to create a location?") == expected
        assert _postings(reopened) == postings
        props = reopened.nodes(P, "Endpoint")[0].props
        assert "search_freq" not in props and "search_path" not in props
        version = reopened._driver.execute_query(q.SEARCH_INDEX_VERSION_READ).records  # type: ignore[union-attr]
        assert version[0]["version"] == q.SEARCH_INDEX_VERSION
    finally:
        reopened.close()


def test_the_full_text_index_answers_people_s_cypher(store: Neo4jGraphStore) -> None:
    _load(store)
    assert store._driver is not None
    records = store._driver.execute_query(
        f"CALL db.index.fulltext.queryNodes('{q.FULLTEXT_INDEX}', $text) YIELD node "
        "WHERE node.project = $p RETURN node.key AS key",
        {"text": "location", "p": P},
    ).records
    keys = {r["key"] for r in records}
    assert "ship/resource/location" in keys  # resource names
    assert "ship/endpoint/POST /v2/locations" in keys  # endpoint summaries
