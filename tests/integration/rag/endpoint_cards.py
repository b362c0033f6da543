"""Hand-written endpoint cards, shaped like the card builder's, and checks shared by the
vector-store tests of every backend."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings

from apiatlas.rag.retrieval.dense import VectorIndex, load_card_vectors

Row = tuple[str, str, str, str, str]
"""(api, method, path, operationId, text); the source file is derived from the api."""


def source_of(api: str) -> str:
    """The spec file a card of ``api`` claims to come from."""
    return f"/specs/{api}.yaml"


def card(project: str, api: str, method: str, path: str, op: str, text: str) -> Document:
    """One endpoint card with the metadata the indexing and retrieval code relies on."""
    return Document(
        page_content=f"{method} {path}\noperationId: {op}\n{text}",
        metadata={
            "project": project,
            "api": api,
            "kind": "endpoint",
            "method": method,
            "path": path,
            "source": source_of(api),
            "title": f"{method} {path}",
        },
    )


def cards(project: str, rows: Iterable[Row]) -> list[Document]:
    """A card per row, all in ``project``."""
    return [card(project, *row) for row in rows]


def check_card_vectors(vindex: VectorIndex, embeddings: Embeddings, rows: Sequence[Row]) -> None:
    """``load_card_vectors`` reads back the stored vector of each card's head, per project and
    API, and skips guide chunks and later chunks of a split card."""
    docs = cards("a", rows)
    guide = Document(page_content="A guide about locations.",
                     metadata={"project": "a", "api": rows[0][0], "kind": "doc",
                               "source": source_of(rows[0][0]), "title": "Guide"})
    tail = card("a", *rows[0][:4], "the second chunk of a long card")
    tail.metadata.update(chunk=1, chunks=2)
    vindex.index([*docs, guide, tail], project="a", sources=sorted({source_of(r[0]) for r in rows}))
    vindex.index(cards("b", rows[:1]), project="b", sources=[source_of(rows[0][0])])

    stored = load_card_vectors(vindex.vector_store, "a")
    assert sorted(stored) == sorted((r[0], r[1], r[2]) for r in rows)
    first = docs[0]
    expected = embeddings.embed_documents([first.page_content])[0]
    got = stored[(rows[0][0], rows[0][1], rows[0][2])]
    assert max(abs(a - b) for a, b in zip(got, expected, strict=True)) < 1e-4

    api = rows[-1][0]
    assert {k[0] for k in load_card_vectors(vindex.vector_store, "a", api)} == {api}
    assert list(load_card_vectors(vindex.vector_store, "b")) == [rows[0][:3]]
