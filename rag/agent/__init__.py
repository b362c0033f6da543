"""The agent: a LangGraph state machine from a question to a cited answer.

- :mod:`~apiatlas.rag.agent.graph`: the topology, :func:`build_agent`, :func:`run_agent`;
- :mod:`~apiatlas.rag.agent.nodes`: the node functions, each calling the pure steps of
  retrieval, ranking (:func:`apiatlas.rag.ranking.pipeline.rank`), memory and answer;
- :mod:`~apiatlas.rag.agent.memory`: the memory node, its router and the memory review;
- :mod:`~apiatlas.rag.agent.state` and :mod:`~apiatlas.rag.agent.context`: what flows through it.

The names below are imported on first use, so that the state and context modules can be
imported by the steps the nodes call without importing the whole agent.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

_EXPORTS = {
    "build_agent": "graph",
    "build_state_graph": "graph",
    "run_agent": "graph",
    "arun_agent": "graph",
    "AgentNodes": "graph",
    "GraphRagNodes": "nodes",
    "AgentContext": "context",
    "AgentState": "state",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)
