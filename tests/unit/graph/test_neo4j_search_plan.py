"""The Neo4j search plan: exact re-ranking of the server's candidates, and its near-tie rule.

The plan is pure: it yields Cypher steps and is sent their records, so these tests drive it
with the records a server would return, without a server.
"""

from __future__ import annotations

from typing import Any

import pytest

from apiatlas.graph.neo4j import queries as q
from apiatlas.graph.neo4j.reads import INT64_MAX, search
from apiatlas.graph.fts import Fts5Tokenizer, bm25_idfs, bm25_score


def _found(lengths: list[int], cut: float | None) -> dict[str, Any]:
    top = [[f"k{i}", [[0, 4.0]], length, {"method": "GET", "path": f"/p{i}"}] for i, length in enumerate(lengths)]
    return {"rows": 20, "tokens": 200, "nhit": [len(lengths)], "cut": cut, "top": top}


def _exact(length: int, hits: int) -> float:
    return bm25_score([4.0], length, bm25_idfs(20, [hits]), 10.0)


def test_one_round_trip_when_the_cut_is_clearly_lower() -> None:
    plan = search(Fts5Tokenizer(), "p", "locations", None, 2)
    query, params = next(plan)
    assert query == q.SEARCH and params["terms"] == ["locat"] and params["top"] == 12
    with pytest.raises(StopIteration) as done:
        plan.send([_found([12, 8, 10], cut=_exact(30, 3))])
    refs = done.value.value
    # Shorter rows score higher (same weight): k1 (8 tokens), then k2 (10).
    assert [r.key for r in refs] == ["k1", "k2"]
    assert refs[0].score == _exact(8, 3) and refs[0].path == "/p1"


def test_a_near_tie_at_the_cut_fetches_every_candidate() -> None:
    plan = search(Fts5Tokenizer(), "p", "locations", "ship", 1)
    _, params = next(plan)
    assert params["scope"] == "api:ship"
    # The server's score of the next candidate equals the last kept one: it may be its equal.
    _, again = plan.send([_found([8], cut=_exact(8, 1))])
    assert again["top"] == INT64_MAX
    with pytest.raises(StopIteration) as done:
        plan.send([_found([9, 8], cut=None)])
    assert [r.key for r in done.value.value] == ["k1"]


def test_no_candidates_and_empty_queries() -> None:
    plan = search(Fts5Tokenizer(), "p", "locations", None, 5)
    next(plan)
    with pytest.raises(StopIteration) as done:
        plan.send([])
    assert done.value.value == []
    for text, limit in (("the a of", 5), ("locations", 0)):
        with pytest.raises(StopIteration) as nothing:
            next(search(Fts5Tokenizer(), "p", text, None, limit))
        assert nothing.value.value == []
