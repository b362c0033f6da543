"""What the knowledge graph says about a question: the record the agent's steps pass along."""

from __future__ import annotations

from pydantic import BaseModel, Field

from apiatlas.graph.model import Dependency, EndpointRef
from apiatlas.rag.retrieval.resource_matcher import ResourceMatch
from apiatlas.rag.question.intent import Intent


class GraphLookup(BaseModel):
    """What the knowledge graph says about a question.

    Attributes:
        intent: The analysed question.
        primary: Endpoints that answer it, best first (empty when nothing fits).
        related: Further endpoints ranked near the answer but without the ranker's confidence.
        prerequisites: Calls the primary endpoints depend on, nearest first.
        lookups: Primary endpoints that find an id the answer needs from the value the question
            names the thing by (``provider`` finds ``parameter`` for ``endpoint``).
        matched_resources: Resources the question's terms matched.
        unmatched_terms: Resource terms that matched nothing in the graph.
        alternatives: The closest existing endpoints, for "did you mean" when nothing fits.
        replacements: Deprecated primary endpoint key -> its non-deprecated replacement.
        apis: The APIs searched.
    """

    intent: Intent
    primary: list[EndpointRef] = Field(default_factory=list)
    related: list[EndpointRef] = Field(default_factory=list)
    prerequisites: list[Dependency] = Field(default_factory=list)
    lookups: list[Dependency] = Field(default_factory=list)
    matched_resources: list[ResourceMatch] = Field(default_factory=list)
    unmatched_terms: list[str] = Field(default_factory=list)
    alternatives: list[EndpointRef] = Field(default_factory=list)
    replacements: dict[str, EndpointRef] = Field(default_factory=dict)
    apis: list[str] = Field(default_factory=list)
