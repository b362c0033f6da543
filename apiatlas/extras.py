"""Optional dependencies: import them by the extra that installs them, with a clear error.

The core install runs the embedded default (SQLite graph, Chroma, the local model). The rest
comes with extras: ``apiatlas[neo4j]``, ``apiatlas[postgres]``, ``apiatlas[openai]``,
``apiatlas[mcp]``, ``apiatlas[serve]`` and ``apiatlas[eval]``.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from apiatlas.errors import UsageError

EXTRAS: dict[str, str] = {
    "neo4j": "neo4j",
    "langchain_postgres": "postgres",
    "psycopg": "postgres",
    "psycopg_pool": "postgres",
    "pgserver": "postgres",
    "langgraph.checkpoint.postgres": "postgres",
    "langgraph.store.postgres": "postgres",
    "langchain_openai": "openai",
    "mcp": "mcp",
    "fastapi": "serve",
    "uvicorn": "serve",
    "matplotlib": "eval",
}
"""Top-level module -> the extra that installs it."""


class MissingExtraError(UsageError):
    """An optional dependency is not installed; the message names the extra to install."""


def require(module: str, extra: str | None = None, *, purpose: str = "") -> ModuleType:
    """Import ``module``, or say which extra installs it.

    Args:
        module: The module to import, e.g. ``"neo4j"`` or ``"mcp.server.fastmcp"``.
        extra: The extra that provides it (looked up in :data:`EXTRAS` by default).
        purpose: What needs it, for the message (e.g. ``"the Neo4j graph backend"``).

    Raises:
        MissingExtraError: The module (or one it needs) is not installed.
    """
    try:
        return importlib.import_module(module)
    except ImportError as e:
        name = extra or _extra_of(module)
        what = f" for {purpose}" if purpose else ""
        raise MissingExtraError(
            f"{module} is not installed{what}: install it with pip install 'apiatlas[{name}]'"
        ) from e


def missing_extra(extra: str, purpose: str, error: ImportError) -> MissingExtraError:
    """The error for a module that failed to import: which extra installs it, for what.

    For modules that import several packages of one extra::

        try:
            import psycopg
        except ImportError as e:
            raise missing_extra("postgres", "the pgvector backend", e) from e
    """
    return MissingExtraError(
        f"{error.name or 'a dependency'} is not installed for {purpose}: install it with "
        f"pip install 'apiatlas[{extra}]'"
    )


def _extra_of(module: str) -> str:
    for prefix in sorted(EXTRAS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return EXTRAS[prefix]
    return "all"
