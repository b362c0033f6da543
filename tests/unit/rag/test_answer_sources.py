"""The Sources list: one short line per citation, the cited files shown from the folder they
share, the citations themselves keeping full URIs."""

from __future__ import annotations

from apiatlas.rag.answer.citations import CitationRegistry


def test_cited_files_are_shown_from_the_folder_they_share() -> None:
    cites = CitationRegistry()
    cites.spec("/srv/api/shop/openapi.yaml", "/paths/~1orders/post", "POST /orders")
    cites.doc("/srv/api/shop/guides/orders.md", "placing-an-order", "Orders > Placing an order")
    cites.memory("mem_1", "We place orders with POST /orders")
    assert cites.sources_markdown().splitlines() == [
        "- [1] POST /orders — `openapi.yaml#/paths/~1orders/post`",
        "- [2] Placing an order — `guides/orders.md#placing-an-order`",
        "- [3] We place orders with POST /orders — `memory:mem_1`",
    ]
    assert cites.citations()[0].uri == "/srv/api/shop/openapi.yaml#/paths/~1orders/post"


def test_a_url_or_a_relative_file_is_shown_whole() -> None:
    cites = CitationRegistry()
    cites.spec("/srv/api/shop/openapi.yaml", "/paths/~1orders/get", "GET /orders")
    cites.doc("https://docs.example.com/orders", "", "Orders")
    assert cites.sources_markdown().splitlines() == [
        "- [1] GET /orders — `/srv/api/shop/openapi.yaml#/paths/~1orders/get`",
        "- [2] Orders — `https://docs.example.com/orders`",
    ]
    alone = CitationRegistry()
    alone.spec("specs/openapi.yaml", "/paths/~1a/get")
    assert alone.sources_markdown() == "- [1] `specs/openapi.yaml#/paths/~1a/get`"
