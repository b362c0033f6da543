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


def check_confidence(value: object) -> float | None:
    """``value`` itself when it is ``None`` or a number from 0 to 1.

    Raises:
        UsageError: It is anything else.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise UsageError(f"min_confidence must be a number from 0 to 1, not {value!r}")
    return float(value)


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
        min_confidence: The lowest confidence of an ``answer`` outcome, 0 to 1; below it the
            answer is ``unsure`` (``None``: the threshold ``make train`` chose on dev, at which
            nine confident answers in ten were right).
    """

    project: str | None = None
    api: str | None = None
    k: int = 5
    agent_type: str | None = None
    at: datetime | None = None
    min_confidence: float | None = None

    def __post_init__(self) -> None:
        check_k(self.k)
        check_confidence(self.min_confidence)
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
