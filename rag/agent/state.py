"""The agent's state: the input (a question) extended by everything the nodes add."""

from __future__ import annotations

from typing import Annotated, TypedDict

from langchain_core.documents import Document

from apiatlas.graph.model import EndpointDetail, EndpointRef
from apiatlas.rag.question.code import CodeAsk
from apiatlas.rag.question.intent import Intent
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.memory.model import MemoryHit
from apiatlas.rag.answer.result import AnswerResult
from apiatlas.rag.review.precedence import TeamMemory


ENTRY_NODE = "memory"


def extend_route(left: list[str], right: list[str]) -> list[str]:
    """Reducer: nodes append themselves; the entry node starts a fresh route.

    With a checkpointer, one thread's state outlives a question; restarting at the entry node
    keeps each answer's route its own.
    """
    return list(right) if ENTRY_NODE in right else [*left, *right]


def merge_timings(left: dict[str, float], right: dict[str, float]) -> dict[str, float]:
    """Reducer: per-node timings accumulate; the entry node starts a fresh set."""
    return dict(right) if ENTRY_NODE in right else {**left, **right}


class InputState(TypedDict):
    """What a caller gives the agent."""

    question: str


class OutputState(TypedDict, total=False):
    """What the agent hands back: the answer, the nodes taken and their timings."""

    result: AnswerResult
    route: list[str]
    notes: list[str]
    timings_ms: dict[str, float]


class AgentState(InputState, total=False):
    """The full state.

    Attributes:
        memories: Project memories semantically relevant to the question (the memory node).
        memory_answer: The id of a team procedure that answers the question alone (``""``:
            none), in which case the agent skips the graph and rank steps.
        memory_unavailable: Why the memory store could not be read, when it could not (the
            answer then follows the docs alone and says so).
        intent: The analysed question.
        code_ask: The question about the team's code it asks, if any.
        has_code: Whether the project holds the team's code (then the answer says where it
            calls what the answer presents).
        lookup: What the knowledge graph found (after the rank step: the ranked answer; after
            the review: as the team's memory has it).
        candidates: The graph's ranked candidates before the fusion cut them to ``k``.
        details: Endpoint details by key (primary and prerequisite endpoints).
        documents: Vector hits (endpoint cards and guide chunks).
        related: Graph endpoints described by the guide sections found.
        team: The memories the answer follows, from the review (``None``: none is relevant,
            and the answer is exactly the docs' answer).
        degraded: Why a component was skipped (e.g. ``graph unavailable``), when one was.
        confidence: How sure the ranking is of its first endpoint (calibrated, 0 to 1).
        route: The nodes taken, in order (node names only).
        notes: What the nodes noted on the way, in order (``memory: none``, ``degraded:
            graph unavailable``, ``composer: llm``); each question's own.
        timings_ms: Wall time per node.
        result: The composed answer.
    """

    memories: list[MemoryHit]
    memory_answer: str
    memory_unavailable: str
    intent: Intent
    code_ask: CodeAsk | None
    has_code: bool
    lookup: GraphLookup
    candidates: list[EndpointRef]
    details: dict[str, EndpointDetail]
    documents: list[Document]
    related: list[EndpointRef]
    team: TeamMemory | None
    degraded: str
    confidence: float
    route: Annotated[list[str], extend_route]
    notes: list[str]
    timings_ms: Annotated[dict[str, float], merge_timings]
    result: AnswerResult
