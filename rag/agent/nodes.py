"""The agent's node functions: each reads the state, calls the pure functions of retrieval,
ranking, memory and answer, and returns its update. :mod:`apiatlas.rag.agent.graph` wires them."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import LanguageModelLike
from langchain_core.retrievers import BaseRetriever
from langgraph.runtime import Runtime

from apiatlas.errors import StoreError
from apiatlas.graph.model import Dependency, EndpointDetail, EndpointRef
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.rag.answer.composer import compose_answer, relevant_passages
from apiatlas.rag.answer.evidence import gather_evidence
from apiatlas.rag.answer.llm import DEFAULT_TIMEOUT_S, compose_with_llm
from apiatlas.rag.answer.result import AnswerResult
from apiatlas.config import DEFAULT_PROJECT
from apiatlas.rag.agent.context import AgentContext, resolve_context
from apiatlas.rag.retrieval.fusion import DENSE_UNAVAILABLE_KEY, HybridRetriever
from apiatlas.rag.retrieval.intent import analyse_question
from apiatlas.rag.retrieval.lookup import GraphLookup
from apiatlas.rag.retrieval.graph import KnowledgeGraphRetriever, named_outright, replacements
from apiatlas.rag.ranking.features import build_pool
from apiatlas.rag.ranking.lookups import id_mentions, lookup_calls
from apiatlas.rag.ranking.model import RankerModel, load_model
from apiatlas.rag.ranking.order import call_order
from apiatlas.rag.ranking.pipeline import (
    GRAPH_CANDIDATES,
    VECTOR_HITS,
    CardVectors,
    FieldIndexCache,
)
from apiatlas.rag.memory.agent import MEMORY_UNAVAILABLE_NOTE, MemoryStep
from apiatlas.rag.memory.precedence import TeamMemory
from apiatlas.rag.agent.state import AgentState

GRAPH_UNAVAILABLE = "graph unavailable"
VECTORS_UNAVAILABLE = "dense search unavailable, lexical only"
ALTERNATIVES = 3
PREREQUISITE_KINDS = frozenset({"create", "action"})
PROVIDERS_PER_PARAMETER = 2
"""Providers kept per needed id: the answer shows one call and at most one alternative."""


class GraphRagNodes:
    """The node functions, bound to the knowledge graph and a vector retriever.

    Args:
        store: The knowledge-graph store.
        vector_retriever: A retriever over endpoint cards and guide chunks that accepts
            ``project``, ``api`` and ``k`` keyword arguments (e.g. ``HybridRetriever``).
        embeddings: Embeddings for matching question terms to resources.
        model: The learned ranker (the packaged one by default).
        cards: Reads the stored card-head vectors of a project; by default from the vector
            store of ``vector_retriever`` when it is a :class:`HybridRetriever`.
        field_indexes: The per-project field indexes (shared with the ingest that writes them,
            see :class:`~apiatlas.rag.ranking.pipeline.FieldIndexCache`); in memory by default.
        default_context: The context of a run that passes none (e.g. over ``langgraph dev``,
            or as a subgraph): the atlas's project.
        chat_model: A LangChain chat model that writes the answer's text from the deterministic
            answer's evidence (:mod:`apiatlas.rag.answer.llm`); ``None``: the deterministic
            composer writes it.
        chat_timeout: Seconds to wait for ``chat_model`` before answering deterministically.
    """

    def __init__(
        self,
        store: KnowledgeGraphStore,
        vector_retriever: BaseRetriever,
        embeddings: Embeddings,
        model: RankerModel | None = None,
        cards: CardVectors | None = None,
        field_indexes: FieldIndexCache | None = None,
        default_context: AgentContext | None = None,
        chat_model: LanguageModelLike | None = None,
        chat_timeout: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        self.store = store
        self.chat_model = chat_model
        self.chat_timeout = chat_timeout
        self.default_context = default_context or AgentContext(project=DEFAULT_PROJECT)
        self.vectors = vector_retriever
        self.graph = KnowledgeGraphRetriever(
            store=store,
            embeddings=embeddings,
            derived_dir=field_indexes.folder if field_indexes is not None else None,
        )
        self.memory_step = MemoryStep(store, self.default_context)
        if cards is None and isinstance(vector_retriever, HybridRetriever):
            cards = vector_retriever.card_vectors
        self.fields = field_indexes or FieldIndexCache(embeddings, cards)
        self.model = model or load_model()

    def memory(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        """Recall the project memories relevant to the question (``runtime.store``)."""
        return self.memory_step.recall(state, runtime)

    def analyse(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        """Parse the question into an intent, correcting typos against the project's words."""
        ctx = resolve_context(runtime.context, self.default_context)
        try:
            intent = self.graph.analyse(state["question"], project=ctx.project, api=ctx.api)
        except StoreError:
            # The knowledge-graph node reports the outage; analysis just goes without typo fixes.
            intent = analyse_question(state["question"])
        return {"intent": intent}

    def knowledge_graph(
        self, state: AgentState, runtime: Runtime[AgentContext]
    ) -> dict[str, Any]:
        """Look the question up in the graph and load details of what it found."""
        ctx = resolve_context(runtime.context, self.default_context)
        try:
            lookup = self.graph.lookup(
                state["question"],
                project=ctx.project,
                api=ctx.api,
                k=max(ctx.k, GRAPH_CANDIDATES),
                intent=state["intent"],
            )
            candidates = list(lookup.primary)
            lookup.primary = candidates[: ctx.k]
            # The vector step ranks again and reads the details of what it presents: read them
            # here only for an answer the graph gives alone.
            details = self._details(ctx, lookup) if answered_by_graph(lookup) else {}
        except StoreError:
            # A graph server that is down must not take the agent down: answer from vectors.
            return {
                "lookup": GraphLookup(intent=state["intent"]),
                "details": {},
                "degraded": GRAPH_UNAVAILABLE,
                "route": [f"degraded: {GRAPH_UNAVAILABLE}"],
            }
        return {"lookup": lookup, "details": details, "candidates": candidates}

    def vector_fallback(
        self, state: AgentState, runtime: Runtime[AgentContext]
    ) -> dict[str, Any]:
        """Search guide passages; rank the graph's candidates and the field index's best
        matches (per-field and whole-text BM25, compact-name vectors) with the learned ranker.

        The ranking replaces the graph's primary endpoints: those the ranker is confident in
        are primary, the rest of the top ``k`` related, unless the answer model says the
        question asks for something the API does not have (then nothing is presented).
        """
        ctx = resolve_context(runtime.context, self.default_context)
        try:
            hits = self.vectors.invoke(
                state["question"], project=ctx.project, api=ctx.api, k=max(ctx.k, VECTOR_HITS)
            )
        except Exception as e:  # any vector backend failure surfaces as our store error
            raise StoreError(f"The vector retriever failed: {e}") from e
        return _noting_outage(hits, self._fuse_hits(state, ctx, hits, {}))

    async def avector_fallback(
        self, state: AgentState, runtime: Runtime[AgentContext]
    ) -> dict[str, Any]:
        """Async :meth:`vector_fallback`: the search and the graph reads of every endpoint it
        may present run concurrently (native async reads on Neo4j), then the same fusion runs.
        """
        ctx = resolve_context(runtime.context, self.default_context)
        try:
            hits = await self.vectors.ainvoke(
                state["question"], project=ctx.project, api=ctx.api, k=max(ctx.k, VECTOR_HITS)
            )
        except Exception as e:  # any vector backend failure surfaces as our store error
            raise StoreError(f"The vector retriever failed: {e}") from e
        known: dict[str, EndpointDetail | None] = {}
        if not state.get("degraded"):
            keys = [c.key for c in endpoints_from_cards(hits)]
            keys += [c.key for c in state.get("candidates", [])]
            keys = list(dict.fromkeys(keys))
            found = await asyncio.gather(*(self.store.aget_endpoint(ctx.project, k) for k in keys))
            known = dict(zip(keys, found))
        # The ranking reads the embedded stores synchronously: off the event loop.
        fused = await asyncio.to_thread(self._fuse_hits, state, ctx, hits, known)
        return _noting_outage(hits, fused)

    def _fuse_hits(
        self,
        state: AgentState,
        ctx: AgentContext,
        hits: list[Document],
        known: Mapping[str, EndpointDetail | None],
    ) -> dict[str, Any]:
        """The vector step after its reads: ``known`` holds endpoint details already fetched."""
        # Guide passages: as many as before the fusion asked for more hits.
        documents = [d for d in hits if d.metadata.get("kind") != "endpoint"][: ctx.k]
        lookup = state["lookup"]
        if state.get("degraded"):
            # Without the graph, the endpoint cards the vectors found are the best evidence.
            primary = endpoints_from_cards(hits)[: ctx.k]
            return {"documents": documents, "lookup": lookup.model_copy(update={"primary": primary})}
        index = self.fields.get(self.store, ctx.project, ctx.api)
        if not len(index):
            # No endpoint at all (a guides-only project): the sections' described endpoints.
            related = self._described(ctx, relevant_passages(lookup, documents))
            return {"documents": documents, "related": related[: ctx.k]}
        candidates = state.get("candidates") or lookup.primary
        question = state["question"]
        vector = self.fields.query_vector(question, self.model.adapter)
        pool = build_pool(question, lookup, candidates, index, vector)
        decision = self.model.decide(pool)
        if not decision.answer:
            if not lookup.alternatives:
                alternatives = [r for r, _ in decision.ranked[:ALTERNATIVES]]
                lookup = lookup.model_copy(update={"alternatives": alternatives})
            abstain = lookup.model_copy(update={"primary": [], "prerequisites": []})
            return {"documents": [], "lookup": abstain, "related": []}
        shown = [r.model_copy(update={"score": round(p, 4)}) for r, p in decision.ranked[: ctx.k]]
        confident = {r.key for r in decision.primary}
        primary = [r for r in shown if r.key in confident]
        trails = {r.key: self.store.dependency_trail(ctx.project, r.key) for r in primary}
        if len(primary) > 1:
            primary = call_order(primary, [d for t in trails.values() for d in t])
        related = [r for r in shown if r.key not in confident]
        if primary[0].kind in PREREQUISITE_KINDS:
            # A call the first endpoint needs first belongs under "call these first", after the
            # answer, not among the alternatives to it.
            needed = {
                d.provider.key for d in self.graph.prerequisites(ctx.project, primary[:1], trails)
            }
            related = [r for r in related if r.key not in needed]
        finds, given = self._lookups(ctx, question, primary[0], trails[primary[0].key], known)
        # An id the question gives or has looked up needs no "call this first".
        settled = {(primary[0].key, p) for p in given}
        settled |= {(d.endpoint.key, d.parameter) for d in finds}
        prerequisites = [
            d for d in self._prerequisites(ctx, primary, lookup, trails)
            if (d.endpoint.key, d.parameter) not in settled
        ]
        if finds:
            # The calls that find what the answer needs by the value the developer has come
            # first, in call order.
            found = {d.provider.key: d.provider for d in finds}
            primary = list(found.values()) + [r for r in primary if r.key not in found]
            related = [r for r in related if r.key not in found]
        update = {
            "primary": primary,
            "related": related,
            "lookups": finds,
            "prerequisites": prerequisites,
            "replacements": replacements(
                primary + related, endpoints_from_cards(hits) + list(candidates)
            ),
            "alternatives": [],
        }
        lookup = lookup.model_copy(update=update)
        details = self._details(ctx, lookup, known)
        return {"documents": documents, "lookup": lookup, "details": details}

    def _endpoint(
        self, ctx: AgentContext, key: str, known: Mapping[str, EndpointDetail | None]
    ) -> EndpointDetail | None:
        return known[key] if key in known else self.store.get_endpoint(ctx.project, key)

    def _lookups(
        self,
        ctx: AgentContext,
        question: str,
        first: EndpointRef,
        trail: list[Dependency],
        known: Mapping[str, EndpointDetail | None],
    ) -> tuple[list[Dependency], set[str]]:
        """The calls that find the ids ``first`` needs which the question names by another
        value (:func:`~apiatlas.rag.ranking.lookups.lookup_calls`), and the ids it gives."""
        resources = self.graph.matchers.resources(self.store, ctx.project, None)
        by_key = {r.key: r for r in resources}

        def collection(provider: EndpointRef) -> EndpointRef | None:
            detail = self._endpoint(ctx, f"{provider.api}/endpoint/GET {provider.path}", known)
            return detail.endpoint if detail is not None else None

        mentions = id_mentions(question, first, trail, by_key)
        given = {p for p, mention in mentions.items() if mention == "given"}
        return lookup_calls(mentions, first, trail, collection), given

    def _prerequisites(
        self,
        ctx: AgentContext,
        primary: list[EndpointRef],
        lookup: GraphLookup,
        trails: Mapping[str, list[Dependency]],
    ) -> list[Dependency]:
        """Calls that must come first, only when the task creates or acts on something
        (``trails``: the primaries' trails, already read).

        Reading, listing, updating or deleting takes the id the developer already has; a create
        or action call is where a required id must come from another call.
        """
        task = lookup.intent.kinds[0] if lookup.intent.kinds else primary[0].kind if primary else ""
        if task not in PREREQUISITE_KINDS:
            return []
        kept: dict[tuple[str, str], list[Dependency]] = {}
        for dep in self.graph.prerequisites(ctx.project, primary, trails):
            kept.setdefault((dep.endpoint.key, dep.parameter), []).append(dep)
        out: list[Dependency] = []
        for group in kept.values():
            # The call that creates the needed thing first, then one way to look it up.
            group.sort(key=lambda d: (d.provider.kind != "create", d.provider.deprecated))
            out += group[:PROVIDERS_PER_PARAMETER]
        return out

    def _details(
        self,
        ctx: AgentContext,
        lookup: GraphLookup,
        known: Mapping[str, EndpointDetail | None] | None = None,
    ) -> dict[str, EndpointDetail]:
        keys = [p.key for p in lookup.primary] + [d.provider.key for d in lookup.prerequisites]
        details: dict[str, EndpointDetail] = {}
        for key in dict.fromkeys(keys):
            detail = self._endpoint(ctx, key, known or {})
            if detail is not None:
                details[key] = detail
        return details

    def compose(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        """Write the cited answer, led by the project memories relevant to it.

        With a chat model, the model writes the text from the deterministic answer's evidence
        and the route notes which composer wrote it (see :mod:`apiatlas.rag.answer.llm`).
        """
        if state.get("memory_answer"):
            return self._written(state, self.memory_step.answer_alone(state, runtime))
        lookup, details, related, team = self.memory_step.review(state, runtime)
        result = compose_answer(
            state["question"],
            lookup=lookup,
            details=details,
            documents=state.get("documents", []),
            related=related,
            team=team,
        )
        update = self._written(state, result, lookup, details, team)
        result = update["result"]
        if state.get("degraded"):
            note = (
                f"> **Note:** the knowledge graph is unavailable ({state['degraded']}), so this "
                "answer comes from the vector index alone: prerequisites and required fields "
                "are not checked.\n\n"
            )
            result = result.model_copy(update={"answer": note + result.answer})
        if state.get("memory_unavailable"):
            note = MEMORY_UNAVAILABLE_NOTE.format(reason=state["memory_unavailable"])
            result = result.model_copy(update={"answer": note + result.answer})
        return {**update, "result": result}

    def _written(
        self,
        state: AgentState,
        result: AnswerResult,
        lookup: GraphLookup | None = None,
        details: Mapping[str, EndpointDetail] | None = None,
        team: TeamMemory | None = None,
    ) -> dict[str, Any]:
        """``result``, or the chat model's text over it with a route note on who wrote it."""
        if self.chat_model is None:
            return {"result": result}
        evidence = gather_evidence(
            result, lookup=lookup, details=details, documents=state.get("documents", []), team=team
        )
        written = compose_with_llm(
            state["question"], result, evidence, self.chat_model, timeout=self.chat_timeout
        )
        return {"result": written.result, "route": [written.route]}

    def _described(self, ctx: AgentContext, passages: list[Document]) -> list[EndpointRef]:
        """Endpoints linked (DESCRIBES) from the sections the passages come from."""
        wanted = {(d.metadata.get("source"), d.metadata.get("anchor") or "") for d in passages}
        if not wanted:
            return []
        out: dict[str, EndpointRef] = {}
        for node in self.store.nodes(ctx.project, "DocSection"):
            if (node.props.get("source"), node.props.get("anchor") or "") not in wanted:
                continue
            hood = self.store.neighbourhood(ctx.project, node.key, depth=1)
            for edge in hood.edges:
                if edge.type == "DESCRIBES" and edge.src == node.key and edge.dst not in out:
                    detail = self.store.get_endpoint(ctx.project, edge.dst)
                    if detail is not None and (ctx.api is None or detail.endpoint.api == ctx.api):
                        out[edge.dst] = detail.endpoint
        return list(out.values())


def answered_by_graph(lookup: GraphLookup) -> bool:
    """Whether the graph's lookup is the answer, without the vector step: the question named
    endpoints outright (and asks for no how-to) and the graph found them. A word that only
    looks like an operation id ("DocuSign") and names none is not such a question."""
    intent = lookup.intent
    if not intent.explicit or intent.is_howto:
        return False
    return any(named_outright(ref, intent) for ref in lookup.primary)


def _noting_outage(hits: list[Document], update: dict[str, Any]) -> dict[str, Any]:
    """``update`` with a route note when the hits were found without dense search."""
    for doc in hits:
        if doc.metadata.get(DENSE_UNAVAILABLE_KEY):
            return {**update, "route": [f"degraded: {VECTORS_UNAVAILABLE}"]}
    return update


def endpoints_from_cards(documents: list[Document]) -> list[EndpointRef]:
    """Endpoint references from the endpoint cards among vector hits, in rank order, unique."""
    found: dict[str, EndpointRef] = {}
    for doc in documents:
        meta = doc.metadata
        if meta.get("kind") != "endpoint":
            continue
        signature = f"{meta.get('method')} {meta.get('path')}"
        key = f"{meta.get('api')}/endpoint/{signature}"
        found.setdefault(
            key,
            EndpointRef(
                key=key,
                api=str(meta.get("api", "")),
                method=str(meta.get("method", "")),
                path=str(meta.get("path", "")),
                operation_id=str(meta.get("operation_id", "")),
                summary=str(meta.get("summary", "")),
                deprecated=bool(meta.get("deprecated", False)),
                source=str(meta.get("source", "")),
                pointer=str(meta.get("pointer", "")),
            ),
        )
    return list(found.values())
