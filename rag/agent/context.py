"""Run-scoped settings of the agent, passed as LangGraph runtime context."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from apiatlas.config import DEFAULT_PROJECT


@dataclass(frozen=True)
class AgentContext:
    """Where and how widely one question is answered.

    Attributes:
        project: The project whose APIs and guides are searched.
        api: Restrict the answer to one API of the project (``None``: all of them).
        k: Maximum number of endpoints (and guide passages) to retrieve.
        agent_type: Also consult the project memories shared by every agent of this type.
        at: Answer with the project memory as it was at this moment (``None``: now).
    """

    project: str = DEFAULT_PROJECT
    api: str | None = None
    k: int = 5
    agent_type: str | None = None
    at: datetime | None = None
