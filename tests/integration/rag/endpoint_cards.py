"""Hand-written endpoint cards, shaped like the card builder's, shared by the vector-store tests."""

from __future__ import annotations

from collections.abc import Iterable

from langchain_core.documents import Document

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
