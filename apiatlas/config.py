"""Settings, read once from the environment at the edge (CLI, factories) and passed down."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Mapping

from apiatlas.errors import ConfigError

EmbeddingsKind = Literal["local", "openai"]

DEFAULT_PROJECT = "default"


@dataclass(frozen=True)
class Settings:
    """Where apiatlas keeps its state and which components it uses.

    Attributes:
        home: Root directory for all state (graph file, vector store, record manager).
        project: Default project; every query is scoped to one project.
        embeddings: ``local`` (packaged all-MiniLM-L6-v2, offline) or ``openai``.
        openai_model: Embedding model name when ``embeddings == "openai"``.
    """

    home: Path = field(default_factory=lambda: Path(".apiatlas"))
    project: str = DEFAULT_PROJECT
    embeddings: EmbeddingsKind = "local"
    openai_model: str = "text-embedding-3-small"

    @property
    def graph_path(self) -> Path:
        """The embedded knowledge-graph SQLite file."""
        return self.home / "graph.sqlite"

    @property
    def chroma_dir(self) -> Path:
        """The persistent Chroma directory."""
        return self.home / "chroma"

    @property
    def record_manager_url(self) -> str:
        """SQLAlchemy URL of the indexing API's record manager."""
        return f"sqlite:///{(self.home / 'records.sqlite').resolve()}"

    def ensure_home(self) -> Path:
        """Create the home directory if needed and return it."""
        self.home.mkdir(parents=True, exist_ok=True)
        return self.home

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        """Build settings from ``APIATLAS_*`` variables; explicit overrides win.

        Raises:
            ConfigError: If a variable has a value apiatlas does not understand.
        """
        env = os.environ if env is None else env
        embeddings = env.get("APIATLAS_EMBEDDINGS", "local")
        if embeddings not in ("local", "openai"):
            raise ConfigError(
                f"APIATLAS_EMBEDDINGS={embeddings!r} is not supported: use 'local' or 'openai'."
            )
        values: dict[str, object] = {
            "home": Path(env.get("APIATLAS_HOME", ".apiatlas")),
            "project": env.get("APIATLAS_PROJECT", DEFAULT_PROJECT),
            "embeddings": embeddings,
            "openai_model": env.get("APIATLAS_OPENAI_EMBEDDING_MODEL", "text-embedding-3-small"),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        if isinstance(values["home"], str):
            values["home"] = Path(values["home"])
        return cls(**values)  # type: ignore[arg-type]
