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

from apiatlas.config import DEFAULT_PROJECT
from apiatlas.errors import StoreError
from apiatlas.graph.model import EndpointDetail
from apiatlas.graph.store import LinkedGraphStore
from apiatlas.rag.agent.code import CodeStep
from apiatlas.rag.agent.context import AgentContext, resolve_context
from apiatlas.rag.agent.memory import MEMORY_UNAVAILABLE_NOTE, MemoryStep
from apiatlas.rag.agent.state import AgentState
from apiatlas.rag.answer.composer import TEAM_CONFIDENCE, compose_answer, with_outcome
from apiatlas.rag.answer.evidence import gather_evidence
from apiatlas.rag.answer.llm import DEFAULT_TIMEOUT_S, compose_with_llm
from apiatlas.rag.answer.markdown import safe_markdown
from apiatlas.rag.answer.result import AnswerResult
from apiatlas.rag.review.precedence import TeamMemory
from apiatlas.rag.ranking import pipeline
from apiatlas.rag.ranking.model import RankerModel, load_model
from apiatlas.rag.ranking.pipeline import (
    GRAPH_CANDIDATES,
    VECTOR_HITS,
    CardVectors,
    FieldIndexCache,
    RankingParts,
    Scope,
    endpoint_details,
    endpoints_from_cards,
)
from apiatlas.rag.retrieval.fusion import DENSE_UNAVAILABLE_KEY, HybridRetriever
from apiatlas.rag.retrieval.endpoint_fit import answered_alone, named_in
from apiatlas.rag.retrieval.graph import KnowledgeGraphRetriever
from apiatlas.rag.question.intent import analyse_question
from apiatlas.rag.retrieval.lookup import GraphLookup

GRAPH_UNAVAILABLE = "graph unavailable"
VECTORS_UNAVAILABLE = "dense search unavailable, lexical only"


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
        store: LinkedGraphStore,
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
        self.code_step = CodeStep(store, self.default_context)
        if cards is None and isinstance(vector_retriever, HybridRetriever):
            cards = vector_retriever.card_vectors
        self.ranking = RankingParts(
            store=store,
            graph=self.graph,
            fields=field_indexes or FieldIndexCache(embeddings, cards),
            model=model or load_model(),
        )

    def memory(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        """Recall the project memories relevant to the question (``runtime.store``)."""
        return self.memory_step.recall(state, runtime)

    def analyse(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        """Parse the question into an intent, correcting typos against the project's words,
        and read whether it asks about the team's code."""
        ctx = resolve_context(runtime.context, self.default_context)
        try:
            intent = self.graph.analyse(state["question"], project=ctx.project, api=ctx.api)
        except StoreError:
            # The knowledge-graph node reports the outage; analysis just goes without typo fixes.
            intent = analyse_question(state["question"])
        return {"intent": intent, **self.code_step.ask(state["question"], runtime)}

    def code(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        """Answer a question about the team's code, or say where it calls what the answer
        presents."""
        update = self.code_step.answer(state, runtime)
        return {"result": _safe(update["result"])}

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
                k=max(ctx.full, GRAPH_CANDIDATES),
                intent=state["intent"],
            )
            candidates = list(lookup.primary)
            lookup.primary = candidates[: ctx.full]
            # The rank step ranks again and reads the details of what it presents: read them
            # here only for an answer the graph gives alone.
            alone = answered_by_graph(lookup)
            details = endpoint_details(self.store, ctx.project, lookup) if alone else {}
        except StoreError:
            # A graph server that is down must not take the agent down: answer from vectors.
            return {
                "lookup": GraphLookup(intent=state["intent"]),
                "details": {},
                "degraded": GRAPH_UNAVAILABLE,
                "notes": [f"degraded: {GRAPH_UNAVAILABLE}"],
            }
        update = {"lookup": lookup, "details": details, "candidates": candidates}
        if alone:
            # No ranking follows: the question named what it wants, and the graph found it.
            update["confidence"] = self.ranking.model.named_confidence
        return update

    def rank(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        """Search guide passages and endpoint cards, then rank the endpoints to present
        (:func:`apiatlas.rag.ranking.pipeline.rank`)."""
        ctx = resolve_context(runtime.context, self.default_context)
        try:
            hits = self.vectors.invoke(
                state["question"], project=ctx.project, api=ctx.api, k=max(ctx.full, VECTOR_HITS)
            )
        except Exception as e:  # any vector backend failure surfaces as our store error
            raise StoreError(f"The vector retriever failed: {e}") from e
        return _noting_outage(hits, self._ranked(state, ctx, hits, {}))

    async def arank(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        """Async :meth:`rank`: the search and the graph reads of every endpoint it may present
        run concurrently (native async reads on Neo4j), then the same ranking runs."""
        ctx = resolve_context(runtime.context, self.default_context)
        try:
            hits = await self.vectors.ainvoke(
                state["question"], project=ctx.project, api=ctx.api, k=max(ctx.full, VECTOR_HITS)
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
        ranked = await asyncio.to_thread(self._ranked, state, ctx, hits, known)
        return _noting_outage(hits, ranked)

    def _ranked(
        self,
        state: AgentState,
        ctx: AgentContext,
        hits: list[Document],
        known: Mapping[str, EndpointDetail | None],
    ) -> dict[str, Any]:
        ranking = pipeline.rank(
            state["question"], state["lookup"], state.get("candidates") or [], hits,
            Scope(ctx.project, ctx.api, ctx.full, ctx.named), self.ranking, known,
            degraded=bool(state.get("degraded")),
        )  # fmt: skip
        return ranking.update()

    def review(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        """Bring in the memories about the endpoints the answer presents and make the answer
        follow them (:meth:`~apiatlas.rag.agent.memory.MemoryStep.review`)."""
        lookup, details, related, team = self.memory_step.review(state, runtime)
        return {"lookup": lookup, "details": details, "related": related, "team": team}

    def compose(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        """Write the cited answer, led by the project memories the review kept.

        With a chat model, the model writes the text from the deterministic answer's evidence
        and its note says which composer wrote it (see :mod:`apiatlas.rag.answer.llm`).
        """
        ctx = resolve_context(runtime.context, self.default_context)
        threshold = (self.ranking.model.confidence_threshold if ctx.min_confidence is None
                     else ctx.min_confidence)
        if state.get("memory_answer"):
            alone = self.memory_step.answer_alone(state, runtime)
            update = self._written(state, with_outcome(alone, TEAM_CONFIDENCE, threshold))
            return {**update, "result": _safe(update["result"])}
        lookup, details = state["lookup"], state.get("details", {})
        related, team = state.get("related", []), state.get("team")
        result = compose_answer(
            state["question"],
            lookup=lookup,
            details=details,
            documents=state.get("documents", []),
            related=related,
            team=team,
            confidence=state.get("confidence", 0.0),
            min_confidence=threshold,
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
        return {**update, "result": _safe(result)}

    def _written(
        self,
        state: AgentState,
        result: AnswerResult,
        lookup: GraphLookup | None = None,
        details: Mapping[str, EndpointDetail] | None = None,
        team: TeamMemory | None = None,
    ) -> dict[str, Any]:
        """``result``, or the chat model's text over it with a note on who wrote it."""
        if self.chat_model is None:
            return {"result": result}
        evidence = gather_evidence(
            result, lookup=lookup, details=details, documents=state.get("documents", []), team=team
        )
        written = compose_with_llm(
            state["question"], result, evidence, self.chat_model, timeout=self.chat_timeout
        )
        return {"result": written.result, "notes": [written.note]}


def _safe(result: AnswerResult) -> AnswerResult:
    """``result`` with its Markdown made safe to show (:func:`safe_markdown`): links only to
    http(s), mailto or relative targets, hidden characters escaped."""
    return result.model_copy(update={"answer": safe_markdown(result.answer)})


def answered_by_graph(lookup: GraphLookup) -> bool:
    """Whether the graph's lookup is the answer, without the rank step
    (:func:`~apiatlas.rag.retrieval.endpoint_fit.answered_alone` of the endpoints it found that
    the question names, :func:`~apiatlas.rag.retrieval.endpoint_fit.named_in`). A word that
    only looks like an operation id ("DocuSign") and names none is not such a question."""
    intent = lookup.intent
    return answered_alone(intent, named_in(lookup.primary, intent))


def _noting_outage(hits: list[Document], update: dict[str, Any]) -> dict[str, Any]:
    """``update`` with a note when the hits were found without dense search."""
    for doc in hits:
        if doc.metadata.get(DENSE_UNAVAILABLE_KEY):
            return {**update, "notes": [f"degraded: {VECTORS_UNAVAILABLE}"]}
    return update
