"""Run-scoped settings of the agent, passed as LangGraph runtime context."""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime

from apiatlas.config import DEFAULT_PROJECT, check_project
from apiatlas.errors import UsageError

MAX_K = 50
"""The most endpoints (and guide passages) one question may ask for, at every way in: the CLI,
:meth:`~apiatlas.atlas.ApiAtlas.ask`, the tools, MCP and HTTP."""


def check_k(k: object) -> int:
    """``k`` itself when it is a whole number from 1 to :data:`MAX_K`.

    Raises:
        UsageError: It is anything else (0 would present nothing, a negative number counts
            from the end of a list).
    """
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise UsageError(f"k must be a whole number from 1 to {MAX_K}, not {k!r}")
    return k


@dataclass(frozen=True)
class AgentContext:
    """Where and how widely one question is answered.

    Attributes:
        project: The project whose APIs and guides are searched (``None``: the agent's own,
            see :func:`resolve_context`).
        api: Restrict the answer to one API of the project (``None``: all of them).
        k: Maximum number of endpoints (and guide passages) to retrieve, 1 to :data:`MAX_K`.
        agent_type: Also consult the project memories shared by every agent of this type.
        at: Answer with the project memory as it was at this moment (``None``: now).
    """

    project: str | None = None
    api: str | None = None
    k: int = 5
    agent_type: str | None = None
    at: datetime | None = None

    def __post_init__(self) -> None:
        check_k(self.k)
        if self.project is not None:
            check_project(self.project)


def resolve_context(context: AgentContext | None, default: AgentContext) -> AgentContext:
    """The context a run answers with: ``context`` with what it leaves open taken from the
    agent's ``default`` (a LangGraph server builds an empty context when a run passes none)."""
    if context is None:
        return default
    if context.project is None:
        return replace(context, project=default.project or DEFAULT_PROJECT)
    return context
