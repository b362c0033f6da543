"""The agent's view of the team's code: which code question a question asks, and the ``code``
node that answers it or adds to an answer where the code calls the endpoints it presents."""

from __future__ import annotations

from typing import Any, Literal

from langgraph.graph import END
from langgraph.runtime import Runtime

from apiatlas.errors import StoreError
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.rag.agent.context import AgentContext, resolve_context
from apiatlas.rag.agent.state import AgentState
from apiatlas.rag.code.answer import code_answer, with_sites
from apiatlas.rag.code.sites import CodeSite, code_sites
from apiatlas.rag.question.code import CodeAsk, read_code_question

LISTING = frozenset({"deprecated", "unknown", "file"})
"""Code questions the code answers alone, without an endpoint search."""


def route_after_analyse(state: AgentState) -> Literal["knowledge_graph", "code"]:
    """Straight to the code when the question asks about the code itself."""
    ask = state.get("code_ask")
    return "code" if ask is not None and ask.kind in LISTING else "knowledge_graph"


def route_after_compose(state: AgentState) -> Literal["code", "__end__"]:
    """To the code node when the project holds code, else done."""
    return "code" if state.get("has_code") else END


class CodeStep:
    """Reads a project's code sites once per graph revision.

    Args:
        graph: The knowledge-graph store holding the code sites.
        default_context: The context of a run that passes none.
    """

    def __init__(self, graph: KnowledgeGraphStore, default_context: AgentContext) -> None:
        self.graph = graph
        self.default_context = default_context
        self._read: dict[str, tuple[str, list[CodeSite], list[str]]] = {}

    def sites(self, project: str) -> tuple[list[CodeSite], list[str]]:
        """The project's code sites and code file paths (``[]`` when the graph cannot say)."""
        try:
            revision = self.graph.revision(project)
            cached = self._read.get(project)
            if cached is None or cached[0] != revision:
                files = [n.props["path"] for n in self.graph.nodes(project, "CodeFile")]
                cached = (revision, code_sites(self.graph, project) if files else [], files)
                self._read[project] = cached
        except StoreError:
            return [], []  # the knowledge-graph node says the graph is unavailable
        return cached[1], cached[2]

    def ask(self, question: str, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        """The code question asked, and whether the project holds code at all."""
        project = resolve_context(runtime.context, self.default_context).project
        _, files = self.sites(project)
        return {"code_ask": read_code_question(question, files), "has_code": bool(files)}

    def answer(self, state: AgentState, runtime: Runtime[AgentContext]) -> dict[str, Any]:
        """Answer a question about the code, or add the code's sites to the composed answer."""
        ctx = resolve_context(runtime.context, self.default_context)
        sites, _ = self.sites(ctx.project)
        if ctx.api is not None:
            sites = [s for s in sites if s.api == ctx.api]
        ask: CodeAsk | None = state.get("code_ask")
        if "result" in state:
            return {"result": with_sites(state["result"], sites, ask)}
        assert ask is not None  # route_after_analyse sent a code question here
        return {"result": code_answer(state["question"], ask, sites)}
