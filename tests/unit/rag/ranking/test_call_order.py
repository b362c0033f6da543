"""Call order: the lookup that yields an id before the call that uses it."""

from __future__ import annotations

from apiatlas.graph.model import Dependency, EndpointRef
from apiatlas.rag.ranking.order import call_order


def ref(signature: str) -> EndpointRef:
    method, path = signature.split(" ", 1)
    return EndpointRef(key=signature, api="a", method=method, path=path)


ARCHIVE = ref("POST /channels/{id}/archive")
LIST = ref("GET /channels")
OTHER = ref("GET /users")


def needs(endpoint: EndpointRef, provider: EndpointRef) -> Dependency:
    return Dependency(endpoint=endpoint, parameter="id", provider=provider)


def test_a_provider_among_the_presented_goes_before_its_consumer() -> None:
    ordered = call_order([ARCHIVE, OTHER, LIST], [needs(ARCHIVE, LIST)])
    assert [r.key for r in ordered] == [LIST.key, ARCHIVE.key, OTHER.key]


def test_rank_order_stays_without_dependencies_or_absent_providers() -> None:
    absent = ref("GET /teams")
    assert call_order([ARCHIVE, OTHER], [needs(ARCHIVE, absent)]) == [ARCHIVE, OTHER]
    assert call_order([OTHER, LIST], []) == [OTHER, LIST]


def test_cycles_do_not_loop_or_drop_endpoints() -> None:
    ordered = call_order([ARCHIVE, LIST], [needs(ARCHIVE, LIST), needs(LIST, ARCHIVE)])
    assert sorted(r.key for r in ordered) == sorted([ARCHIVE.key, LIST.key])
