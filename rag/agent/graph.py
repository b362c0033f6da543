"""The agent: a LangGraph state machine from a question to a cited answer.

memory -> analyse -> knowledge_graph -> [rank] -> review -> compose [-> code]. The memory node
recalls the team's project memory first (a strongly matching procedure answers alone: memory ->
compose). Where the project holds the team's code, the code node adds where it calls the
endpoints presented; a question about the code itself (the deprecated endpoints it calls, its
calls the spec lacks, what one file calls) goes analyse -> code, answered from the code alone.
The rank step (vector search, then the learned ranker) runs when the graph found nothing, when
the question is a how-to, and to fetch guide passages for the endpoints found; it is skipped when
the question names its endpoints outright and the graph found them. The review brings in the
memories about the endpoints the answer presents and makes the answer follow the team where it
disagrees with the docs; compose writes the cited answer.

Use :func:`build_agent` to get a compiled graph (it can be a subgraph of your own app), and
:func:`run_agent` / :func:`arun_agent` to ask one question. Under ``ainvoke`` the rank step
searches and reads the graph natively async (the store's ``aget_endpoint``, on Neo4j its async
driver), fetching every endpoint it may present concurrently; the other nodes run in worker
threads, as LangGraph runs sync nodes.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any, Literal, Protocol

from langchain_core.embeddings import Embeddings
from langchain_core.language_models import LanguageModelLike
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime, get_runtime
from langgraph.store.base import BaseStore

from apiatlas.graph.store import LinkedGraphStore
from apiatlas.rag.agent.code import route_after_analyse, route_after_compose
from apiatlas.rag.agent.context import AgentContext, check_question
from apiatlas.rag.agent.memory import route_after_memory
from apiatlas.rag.agent.nodes import GraphRagNodes, answered_by_graph
from apiatlas.rag.agent.state import ENTRY_NODE, AgentState, InputState, OutputState
from apiatlas.rag.answer.llm import DEFAULT_TIMEOUT_S
from apiatlas.rag.answer.result import AnswerResult
from apiatlas.rag.ranking.pipeline import FieldIndexCache
from apiatlas.rag.runtime.threads import one_blas_thread

Node = Callable[[AgentState, Runtime[AgentContext]], dict[str, Any]]
AsyncNode = Callable[[AgentState, Runtime[AgentContext]], Awaitable[dict[str, Any]]]


class AgentNodes(Protocol):
    """The node functions the agent's topology wires together (``arank`` is ``rank`` under
    ``ainvoke``)."""

    def memory(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]: ...

    def analyse(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]: ...

    def knowledge_graph(
        self, state: AgentState, runtime: Runtime[AgentContext]
    ) -> dict[str, Any]: ...

    def rank(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]: ...

    async def arank(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]: ...

    def review(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]: ...

    def compose(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]: ...

    def code(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]: ...


def route_after_graph(state: AgentState) -> Literal["rank", "review"]:
    """Skip the rank step only when the question named endpoints and the graph found them."""
    if state.get("degraded"):
        return "rank"
    return "review" if answered_by_graph(state["lookup"]) else "rank"


def _finish(name: str, started: float, update: dict[str, Any], state: AgentState
            ) -> dict[str, Any]:
    elapsed = round((time.perf_counter() - started) * 1000, 2)
    out = {**update, "route": [name], "timings_ms": {name: elapsed}}
    # A node's notes (e.g. "degraded: graph unavailable") follow the earlier nodes' notes; the
    # entry node starts a question's notes afresh (a checkpointed thread outlives a question).
    notes = update.get("notes", [])
    if notes or name == ENTRY_NODE:
        out["notes"] = [*([] if name == ENTRY_NODE else state.get("notes", [])), *notes]
    return out


def _timed(name: str, fn: Node) -> Node:
    def node(state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        started = time.perf_counter()
        with one_blas_thread():
            return _finish(name, started, fn(state, runtime), state)

    node.__name__ = name
    return node


def _timed_both(name: str, fn: Node, afn: AsyncNode) -> RunnableLambda:
    """A node with a sync body for ``invoke`` and an async one for ``ainvoke``."""

    def node(state: AgentState) -> dict[str, Any]:
        started = time.perf_counter()
        with one_blas_thread():
            return _finish(name, started, fn(state, get_runtime(AgentContext)), state)

    async def anode(state: AgentState) -> dict[str, Any]:
        started = time.perf_counter()
        with one_blas_thread():
            return _finish(name, started, await afn(state, get_runtime(AgentContext)), state)

    return RunnableLambda(node, afunc=anode, name=name)


def build_state_graph(nodes: AgentNodes) -> StateGraph:
    """The agent's topology (uncompiled), with ``nodes`` as its node functions."""
    graph = StateGraph(
        AgentState, context_schema=AgentContext, input_schema=InputState, output_schema=OutputState
    )
    graph.add_node("memory", _timed("memory", nodes.memory))
    graph.add_node("analyse", _timed("analyse", nodes.analyse))
    graph.add_node("knowledge_graph", _timed("knowledge_graph", nodes.knowledge_graph))
    graph.add_node("rank", _timed_both("rank", nodes.rank, nodes.arank))
    graph.add_node("review", _timed("review", nodes.review))
    graph.add_node("compose", _timed("compose", nodes.compose))
    graph.add_node("code", _timed("code", nodes.code))
    graph.add_edge(START, "memory")
    graph.add_conditional_edges("memory", route_after_memory)
    graph.add_conditional_edges("analyse", route_after_analyse)
    graph.add_conditional_edges("knowledge_graph", route_after_graph)
    graph.add_edge("rank", "review")
    graph.add_edge("review", "compose")
    graph.add_conditional_edges("compose", route_after_compose)
    graph.add_edge("code", END)
    return graph


def build_agent(
    *,
    store: LinkedGraphStore,
    vector_retriever: BaseRetriever,
    embeddings: Embeddings,
    checkpointer: Any = None,
    memory: BaseStore | None = None,
    field_indexes: FieldIndexCache | None = None,
    default_context: AgentContext | None = None,
    chat_model: LanguageModelLike | None = None,
    chat_timeout: float = DEFAULT_TIMEOUT_S,
) -> CompiledStateGraph:
    """Compile the agent over a knowledge-graph store and a vector retriever.

    Args:
        store: The knowledge-graph store.
        vector_retriever: Retriever over endpoint cards and guide chunks (``HybridRetriever``).
        embeddings: Embeddings used to match question terms to resources.
        checkpointer: Optional LangGraph checkpointer.
        memory: The LangGraph store holding project memory (with a semantic index on
            ``search_text``, see :func:`apiatlas.rag.memory.backends.open_memory_store`). The
            agent is compiled with it, so its nodes (and yours, as a subgraph) reach it as
            ``runtime.store``. Without one, the route notes ``memory: none``.
        field_indexes: The per-project field indexes the ranker reads (an ingest writes them
            ahead, see :class:`~apiatlas.rag.ranking.pipeline.FieldIndexCache`).
        default_context: The context of a run invoked without one (project, ``k``...).
        chat_model: A LangChain chat model that writes the answer's text (the LLM composer, see
            :mod:`apiatlas.rag.answer.llm`); by default the deterministic composer writes it.
            Any chat model works, fakes included: it is asked for JSON, not for tool calls.
        chat_timeout: Seconds to wait for ``chat_model``; then the deterministic answer is
            given and the route says why.
    """
    nodes = GraphRagNodes(
        store, vector_retriever, embeddings,
        field_indexes=field_indexes, default_context=default_context,
        chat_model=chat_model, chat_timeout=chat_timeout,
    )  # fmt: skip
    return build_state_graph(nodes).compile(
        checkpointer=checkpointer, store=memory, name="apiatlas"
    )


def run_agent(
    agent: CompiledStateGraph,
    question: str,
    *,
    context: AgentContext,
    config: RunnableConfig | None = None,
) -> AnswerResult:
    """Ask one question; the result carries the route taken and per-node timings.

    Args:
        agent: From :func:`build_agent`.
        question: The developer's question.
        context: Project, API and ``k`` for this question.
        config: LangGraph config, e.g. ``{"configurable": {"thread_id": ...}}`` with a
            checkpointer.

    Raises:
        UsageError: The question is empty or longer than
            :data:`~apiatlas.rag.agent.context.MAX_QUESTION_CHARS`.
    """
    check_question(question)
    state = agent.invoke({"question": question}, config=config, context=context)
    return _state_result(state)


async def arun_agent(
    agent: CompiledStateGraph,
    question: str,
    *,
    context: AgentContext,
    config: RunnableConfig | None = None,
) -> AnswerResult:
    """Async :func:`run_agent`."""
    check_question(question)
    state = await agent.ainvoke({"question": question}, config=config, context=context)
    return _state_result(state)


def _state_result(state: dict[str, Any]) -> AnswerResult:
    result: AnswerResult = state["result"]
    route = list(state.get("route", []))
    notes = list(state.get("notes", []))
    timings = dict(state.get("timings_ms", {}))
    return result.model_copy(update={"route": route, "notes": notes, "timings_ms": timings})
