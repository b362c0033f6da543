"""The agent's structured result. ``apiatlas ask --json`` prints exactly this model."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class Citation(BaseModel):
    """A numbered citation ``[n]``.

    Attributes:
        n: The number used in the answer text.
        kind: ``spec`` (an OpenAPI item) or ``doc`` (a guide section).
        source: The spec file / doc file path or URL.
        uri: ``source#pointer`` for spec items, ``source#anchor`` for doc sections.
        pointer: JSON pointer (spec) or section anchor (doc).
        title: What is cited, e.g. ``POST /v2/locations`` or ``Guide > Section``.
    """

    n: int
    kind: Literal["spec", "doc"]
    source: str
    uri: str
    pointer: str = ""
    title: str = ""


class AnswerEndpoint(BaseModel):
    """An endpoint the answer presents."""

    method: str
    path: str
    summary: str = ""
    api: str = ""
    operation_id: str = ""
    deprecated: bool = False
    role: Literal["primary", "prerequisite"] = "primary"
    citation: int | None = None


class AnswerExample(BaseModel):
    """An example request for a presented endpoint."""

    endpoint: str = Field(description="``METHOD /path`` of the endpoint it calls.")
    language: str = "http"
    content: str
    origin: Literal["spec", "synthesised"] = "spec"
    citation: int | None = None


class AnswerResult(BaseModel):
    """What the agent returns for one question."""

    question: str
    answer: str
    route: list[str] = Field(default_factory=list)
    endpoints: list[AnswerEndpoint] = Field(default_factory=list)
    examples: list[AnswerExample] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    abstained: bool = False
    alternatives: list[str] = Field(
        default_factory=list, description="Closest existing things, when abstaining."
    )
    timings_ms: dict[str, float] = Field(default_factory=dict)
