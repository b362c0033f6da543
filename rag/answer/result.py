"""The agent's structured result. ``apiatlas ask --json`` prints exactly this model."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class Citation(BaseModel):
    """A numbered citation ``[n]``.

    Attributes:
        n: The number used in the answer text.
        kind: ``spec`` (an OpenAPI item), ``doc`` (a guide section), ``memory`` (a project
            memory) or ``code`` (a line of the team's code).
        source: The spec file / doc file / code file path or URL (``memory`` for project
            memories).
        uri: ``source#pointer`` for spec items, ``source#anchor`` for doc sections,
            ``memory:<id>`` for project memories, ``source#L<line>`` for code.
        pointer: JSON pointer (spec), section anchor (doc) or ``L<line>`` (code).
        title: What is cited, e.g. ``POST /v2/locations`` or ``Guide > Section``.
    """

    n: int
    kind: Literal["spec", "doc", "memory", "code"]
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
    role: Literal["primary", "candidate", "prerequisite", "related"] = Field(
        default="primary",
        description="primary: the endpoint to call; candidate: one of the endpoints an unsure "
        "answer weighs, none of them marked primary; prerequisite: call it first; related: "
        "ranked near the answer.",
    )
    citation: int | None = None


class AnswerExample(BaseModel):
    """An example request for a presented endpoint."""

    endpoint: str = Field(description="``METHOD /path`` of the endpoint it calls.")
    language: str = "http"
    content: str
    origin: Literal["spec", "synthesised"] = "spec"
    citation: int | None = None


MemoryStance = Literal["prefer", "avoid", "caution", "neutral"]


class AnswerMemory(BaseModel):
    """A project memory the answer used: it leads the answer and wins over the docs.

    Attributes:
        id: The memory id (cited as ``memory:<id>``).
        kind: fact, decision, procedure, warning or episode.
        text: What the team recorded.
        steps: A procedure's steps.
        refs: The endpoints and resources it is about.
        inferred_refs: The endpoints its text names, linked because no endpoint ref was given.
        importance: 1..10.
        matched: ``semantic`` (similar to the question), ``ref`` (about an endpoint the answer
            presents) or ``both``.
        score: Semantic similarity to the question (0 for a ref match).
        citation: Its citation number in the answer.
        stances: Per endpoint ref: ``prefer`` (the team uses it), ``avoid`` (the team forbids
            it), ``caution`` (a warning about it) or ``neutral``.
        conflicts: Where it disagrees with the docs, and what the answer did about it.
        missing_refs: Endpoint refs that name no endpoint the API has (a stale memory).
    """

    id: str
    kind: str
    text: str
    steps: list[str] = Field(default_factory=list)
    refs: list[str] = Field(default_factory=list)
    inferred_refs: list[str] = Field(default_factory=list)
    importance: int = 5
    matched: Literal["semantic", "ref", "both"] = "semantic"
    score: float = 0.0
    citation: int | None = None
    stances: dict[str, MemoryStance] = Field(default_factory=dict)
    conflicts: list[str] = Field(default_factory=list)
    missing_refs: list[str] = Field(default_factory=list)


Outcome = Literal["answer", "unsure", "none"]


class AnswerResult(BaseModel):
    """What the agent returns for one question.

    ``outcome`` is what an agent acts on: ``answer`` (the first endpoint is one to call),
    ``unsure`` (candidates, none marked primary: apiatlas is not sure which is meant) or
    ``none`` (no endpoint does this; ``alternatives`` holds the closest existing things).
    ``confidence`` is the calibrated probability that the first endpoint presented is one a
    correct answer starts with; ``answer`` means it reached the threshold the call asked for.
    """

    question: str
    answer: str
    outcome: Outcome = "answer"
    confidence: float = Field(default=0.0, ge=0.0, le=1.0)
    route: list[str] = Field(default_factory=list, description="The nodes taken, in order.")
    notes: list[str] = Field(
        default_factory=list,
        description="What the nodes noted: no memory store, a degraded component, who wrote "
        "the text (e.g. 'degraded: graph unavailable', 'composer: llm').",
    )
    endpoints: list[AnswerEndpoint] = Field(default_factory=list)
    examples: list[AnswerExample] = Field(default_factory=list)
    citations: list[Citation] = Field(default_factory=list)
    abstained: bool = False
    alternatives: list[str] = Field(
        default_factory=list, description="Closest existing things, when abstaining."
    )
    timings_ms: dict[str, float] = Field(default_factory=dict)
    memories: list[AnswerMemory] = Field(
        default_factory=list, description="Project memories used, in the order they lead."
    )
