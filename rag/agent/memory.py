"""Project memory in the agent: the memory node that runs first, its router, and the review
node after ranking (the storage they read is :mod:`apiatlas.rag.memory`, the policy they apply
:mod:`apiatlas.rag.review`).

The memory node reads LangGraph's ``runtime.store`` (the store the agent was compiled with) and
recalls the memories semantically relevant to the question, as they were at ``context.at``. A
team procedure that matches strongly answers alone: the agent goes straight to composing it, with
the endpoints it names verified against the graph. Otherwise the review, once the answer's
endpoints are ranked, reads the few memories linked to them that the answer may use
(:func:`~apiatlas.rag.review.relevance.linked_to_read`); those the relevance model finds about
the question, or forbidding the answer's first endpoint, are kept and cited
(:mod:`apiatlas.rag.review.relevance`), an endpoint further down that another forbids is left
out, and the answer is made to follow the kept ones
(:func:`apiatlas.rag.review.precedence.apply_precedence`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from langgraph.runtime import Runtime

from apiatlas.errors import StoreError
from apiatlas.graph.model import EndpointDetail, EndpointRef
from apiatlas.graph.store import LinkedGraphStore
from apiatlas.config import DEFAULT_PROJECT
from apiatlas.rag.agent.context import AgentContext, resolve_context
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.answer.team import memory_answer
from apiatlas.rag.memory.links import LinkedMemory
from apiatlas.rag.memory.model import MemoryHit
from apiatlas.rag.review.precedence import (
    MemoryView,
    TeamMemory,
    answering_procedure,
    apply_precedence,
)
from apiatlas.rag.review.relevance import (
    forbidden_keys,
    linked_to_read,
    presented_keys,
    quietly_forbidden,
    relevant_views,
)
from apiatlas.rag.memory.stance import classify_stances, named_endpoints
from apiatlas.rag.memory.store import ProjectMemory
from apiatlas.rag.answer.result import AnswerResult
from apiatlas.rag.agent.state import AgentState

LINKS_PER_ENDPOINT = 50
"""Links of each kind the review reads per presented endpoint, most important first: the
memories forbidding it, those naming it, the others. The review uses the first one or two
of a kind; the rest leave room for memories recalled already, out of force or of another
agent type. Past 50 of a kind, an endpoint's less important memories are not looked at."""
NO_MEMORY = "memory: none"
"""The note when the agent was built without a memory store."""
MEMORY_UNAVAILABLE = "memory unavailable"
MEMORY_UNAVAILABLE_NOTE = (
    "> **Note:** the project memory could not be read ({reason}), so this answer follows the "
    "specs and guides alone: your team's decisions and warnings were not checked.\n\n"
)


def route_after_memory(state: AgentState) -> Literal["analyse", "compose"]:
    """Straight to composing when a team procedure answers the question alone."""
    return "compose" if state.get("memory_answer") else "analyse"


class MemoryStep:
    """The memory node and the memory review, bound to the knowledge graph they verify against.

    Args:
        graph: The knowledge-graph store (resolves refs, holds the memory links).
        default_context: The context of a run that passes none.
    """

    def __init__(
        self, graph: LinkedGraphStore, default_context: AgentContext | None = None
    ) -> None:
        self.graph = graph
        self.default_context = default_context or AgentContext(project=DEFAULT_PROJECT)

    def recall(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        """The memory node: the memories relevant to the question, and whether one answers alone.

        A memory store that fails must not take the agent down: the question is answered from
        the docs, with ``degraded: memory unavailable`` in its notes and a note in the answer.
        """
        ctx = resolve_context(runtime.context, self.default_context)
        if runtime.store is None:
            return {"memories": [], "memory_answer": "", "notes": [NO_MEMORY]}
        memory = ProjectMemory(runtime.store, ctx.project, agent_type=ctx.agent_type)
        try:
            hits = memory.recall(state["question"], at=ctx.at)
        except Exception as e:  # any BaseStore backend failure: answer without memory, say so
            reason = f"{type(e).__name__}: {e}".splitlines()[0][:200]
            return {
                "memories": [],
                "memory_answer": "",
                "memory_unavailable": reason,
                "notes": [f"degraded: {MEMORY_UNAVAILABLE}"],
            }
        alone = answering_procedure(hits)
        return {"memories": hits, "memory_answer": alone.memory.id if alone else ""}

    def answer_alone(self, state: AgentState, runtime: Runtime[AgentContext]) -> AnswerResult:
        """The answer from the team procedure the memory node chose, endpoints verified."""
        ctx = resolve_context(runtime.context, self.default_context)
        hit = next(h for h in state["memories"] if h.memory.id == state["memory_answer"])
        named = named_endpoints(hit.memory)
        view = self._view(ctx, hit, named)
        checked = bool(view.resolved) or not named
        return memory_answer(state["question"], view, named, checked=checked)

    def review(
        self, state: AgentState, runtime: Runtime[AgentContext]
    ) -> tuple[GraphLookup, dict[str, EndpointDetail], list[EndpointRef], TeamMemory | None]:
        """Bring in the memories about the presented endpoints and make the answer follow them.

        Returns:
            The lookup, details and guide-described endpoints to compose from, and the memories
            to lead the answer (``None`` when no memory is relevant: the answer is exactly the
            docs' answer).
        """
        ctx = resolve_context(runtime.context, self.default_context)
        confident = {e.key for e in state["lookup"].primary}
        # Memory judges everything the answer shows, the ranker's related endpoints included:
        # a team decision about a related endpoint may bring it to the front.
        lookup = shown(state["lookup"])
        # The ranker's endpoints after those given in full are named a line each: one the team
        # forbids is left out, and no memory about them comes into the answer.
        more = lookup.primary[ctx.full :]
        detailed = lookup.model_copy(update={"primary": lookup.primary[: ctx.full]})
        details = dict(state.get("details", {}))
        related = list(state.get("related", []))
        hits = list(state.get("memories", []))
        if runtime.store is not None and not (
            state.get("degraded") or state.get("memory_unavailable")
        ):
            hits = _merge(hits, *self._linked(runtime, ctx, lookup, related, hits))
        if not hits:
            return split_shown(lookup, confident), details, related, None
        considered = self._views(ctx, hits)
        more = [e for e in more if not any(forbidden_keys(v, {e.key}) for v in considered)]
        views = relevant_views(considered, detailed, related)
        quiet = quietly_forbidden(considered, views, presented_keys(detailed, related))
        if quiet:
            detailed = _without(detailed, quiet)
            related = [e for e in related if e.key not in quiet]
        if not views:
            return split_shown(_named(detailed, more), confident), details, related, None
        pool = list(state.get("candidates", []))
        lookup, team = apply_precedence(
            views, detailed, pool=pool, k=ctx.full, api=ctx.api, related=related
        )
        related = [e for e in related if e.key not in team.avoided]
        for endpoint in lookup.primary:
            if endpoint.key not in details and not state.get("degraded"):
                detail = self.graph.get_endpoint(ctx.project, endpoint.key)
                if detail is not None:
                    details[endpoint.key] = detail
        lookup = _named(lookup, [e for e in more if e.key not in team.avoided])
        return split_shown(lookup, confident), details, related, team

    def _linked(
        self,
        runtime: Runtime[AgentContext],
        ctx: AgentContext,
        lookup: GraphLookup,
        related: list[EndpointRef],
        recalled: list[MemoryHit],
    ) -> tuple[list[MemoryHit], set[str]]:
        """The linked memories the answer may use (:func:`linked_to_read`) besides those
        ``recalled``, and the ids of the memories whose links to what it presents were read."""
        presented = [*lookup.primary, *related, *(d.provider for d in lookup.prerequisites)]
        if not presented or runtime.store is None:
            return [], set()
        keys = [e.key for e in presented]
        links = self.graph.memory_links(ctx.project, keys, limit=LINKS_PER_ENDPOINT)
        memory = LinkedMemory(
            runtime.store, ctx.project, graph=self.graph, agent_type=ctx.agent_type
        )
        known = {h.memory.id for h in recalled}
        wanted = linked_to_read(links, lookup, presented, known)
        read = memory.first_in_force(wanted, at=ctx.at)
        every = {link.memory_id for found in links.values() for link in found}
        return [MemoryHit(memory=m, matched="ref") for m in read], every

    def _view(self, ctx: AgentContext, hit: MemoryHit, refs: Sequence[str]) -> MemoryView:
        """The memory with its stances, and ``refs`` looked up in the graph."""
        return self._views(ctx, [hit], [refs])[0]

    def _views(
        self,
        ctx: AgentContext,
        hits: Sequence[MemoryHit],
        refs: Sequence[Sequence[str]] | None = None,
    ) -> list[MemoryView]:
        """Each memory with its stances, and its endpoint refs (or ``refs``, one list per hit)
        looked up in the graph: one lookup for all of them."""
        wanted = [list(r) for r in refs] if refs is not None else [
            h.memory.endpoint_refs for h in hits
        ]
        views = [MemoryView(hit=h, stances=classify_stances(h.memory)) for h in hits]
        every = list(dict.fromkeys(r for rs in wanted for r in rs))
        if not every:
            return views
        try:
            resolved = self.graph.resolve_signatures(ctx.project, every)
        except StoreError:
            return views  # the graph is down: refs stay unverified rather than called stale
        for view, rs in zip(views, wanted, strict=True):
            view.resolved = {r: resolved[r] for r in rs}
            given = set(view.memory.given_endpoint_refs)
            view.missing = [r for r in rs if r in given and not view.resolved.get(r)]
        return views


def _merge(
    semantic: list[MemoryHit], linked: list[MemoryHit], every: set[str]
) -> list[MemoryHit]:
    """Semantic hits in their order, then the linked ones; a memory found both ways (among the
    links read for the presented endpoints, see :data:`LINKS_PER_ENDPOINT`) is ``both``."""
    by_id = {
        h.memory.id: h.model_copy(update={"matched": "both"}) if h.memory.id in every else h
        for h in semantic
    }
    for hit in linked:
        by_id.setdefault(hit.memory.id, hit)
    return list(by_id.values())


def shown(lookup: GraphLookup) -> GraphLookup:
    """The lookup with its related endpoints after the primary ones, as one shown list."""
    if not lookup.related:
        return lookup
    return lookup.model_copy(update={"primary": [*lookup.primary, *lookup.related], "related": []})


def _named(lookup: GraphLookup, more: Sequence[EndpointRef]) -> GraphLookup:
    """The lookup with ``more`` after its shown endpoints, those already there left out."""
    there = {e.key for e in lookup.primary}
    return lookup.model_copy(
        update={"primary": [*lookup.primary, *(e for e in more if e.key not in there)]}
    )


def _without(lookup: GraphLookup, keys: set[str]) -> GraphLookup:
    """The lookup with the endpoints of ``keys`` left out (as primary or prerequisite)."""
    return lookup.model_copy(update={
        "primary": [e for e in lookup.primary if e.key not in keys],
        "prerequisites": [d for d in lookup.prerequisites if d.provider.key not in keys],
    })


def split_shown(lookup: GraphLookup, confident: set[str]) -> GraphLookup:
    """Split a shown list back: primary up to the last endpoint the ranker was confident in
    (anything memory moved before it leads with it), related after it."""
    shown_list = lookup.primary
    last = max((i for i, e in enumerate(shown_list) if e.key in confident), default=0)
    return lookup.model_copy(
        update={"primary": shown_list[: last + 1], "related": shown_list[last + 1 :]}
    )
