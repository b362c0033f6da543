"""The graph ``langgraph dev`` serves (see ``langgraph.json`` at the repository root).

:func:`make_graph` is a graph factory: it opens the atlas the environment describes
(``APIATLAS_HOME``, ``APIATLAS_PROJECT``, the backend variables: see
:meth:`apiatlas.config.Settings.from_env`) once per process and returns its compiled agent. A
run that passes no ``context`` answers about ``APIATLAS_PROJECT``; a run may pass
``{"project": ..., "api": ..., "k": ...}`` as its context.

The LangGraph server supplies its own checkpointer and store to the graphs it serves, so under
``langgraph dev`` the agent reads project memory from the server's store, not from the home's.
"""

from __future__ import annotations

import asyncio
import threading

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings

_lock = threading.Lock()
_atlases: dict[str, ApiAtlas] = {}


async def make_graph(config: RunnableConfig) -> CompiledStateGraph:
    """The compiled agent over the atlas the environment names (opened on the first run).

    Opening the stores and loading the model block, so they run off the server's event loop.
    """
    return await asyncio.to_thread(open_graph)


def open_graph() -> CompiledStateGraph:
    """:func:`make_graph` for synchronous callers."""
    settings = Settings.from_env()
    key = repr(settings)  # secrets are kept out of the repr, the locations are in it
    with _lock:
        atlas = _atlases.get(key)
        if atlas is None:
            atlas = _atlases[key] = ApiAtlas(settings)
    return atlas.agent
