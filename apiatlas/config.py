"""Settings, read once from the environment at the edge (CLI, factories) and passed down."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Mapping

from apiatlas.errors import ConfigError

EmbeddingsKind = Literal["local", "openai"]
GraphBackend = Literal["embedded", "neo4j"]
VectorBackend = Literal["chroma", "pgvector"]
MemoryBackend = Literal["sqlite", "postgres"]
ComposerKind = Literal["deterministic", "llm"]

DEFAULT_PROJECT = "default"
_PROJECT_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
DEFAULT_CHAT_MODEL = "openai:gpt-4.1-mini"
DEFAULT_CHAT_TIMEOUT_S = 30.0


@dataclass(frozen=True)
class Settings:
    """Where apiatlas keeps its state and which components it uses.

    Attributes:
        home: Root directory for all state (graph file, vector store, record manager).
        project: Default project; every query is scoped to one project.
        embeddings: ``local`` (packaged all-MiniLM-L6-v2, offline) or ``openai``.
        openai_model: Embedding model name when ``embeddings == "openai"``.
        graph: Knowledge-graph backend: ``embedded`` (SQLite under home) or ``neo4j``.
        vectors: Vector backend: ``chroma`` (under home) or ``pgvector`` (``database_url``).
        neo4j_uri: Bolt URI of the Neo4j server when ``graph == "neo4j"``.
        neo4j_username: Neo4j user.
        neo4j_password: Neo4j password.
        neo4j_database: Neo4j database name.
        database_url: PostgreSQL URL (``postgresql://user:pass@host:port/db``) for pgvector.
        memory: Project-memory backend: ``sqlite`` (LangGraph ``SqliteStore`` at
            ``memory_path``) or ``postgres`` (LangGraph ``PostgresStore`` on ``database_url``).
        composer: Who writes the answer: ``deterministic`` (the default, no model) or ``llm``
            (a chat model writes it from the same numbered evidence, see
            :mod:`apiatlas.rag.answer.llm`).
        chat_model: The chat model when ``composer == "llm"``, as
            ``langchain.chat_models.init_chat_model`` takes it (``provider:model``).
        chat_timeout: Seconds the chat model may take per answer before the deterministic
            answer is given instead.
    """

    home: Path = field(default_factory=lambda: Path(".apiatlas"))
    project: str = DEFAULT_PROJECT
    embeddings: EmbeddingsKind = "local"
    openai_model: str = "text-embedding-3-small"
    graph: GraphBackend = "embedded"
    vectors: VectorBackend = "chroma"
    neo4j_uri: str = "bolt://127.0.0.1:7687"
    neo4j_username: str = "neo4j"
    neo4j_password: str = field(default="apiatlas-dev-password", repr=False)
    neo4j_database: str = "neo4j"
    database_url: str | None = field(default=None, repr=False)
    memory: MemoryBackend = "sqlite"
    composer: ComposerKind = "deterministic"
    chat_model: str = DEFAULT_CHAT_MODEL
    chat_timeout: float = DEFAULT_CHAT_TIMEOUT_S

    def __post_init__(self) -> None:
        check_project(self.project)
        if isinstance(self.home, str):  # Settings(home=".apiatlas") as a user writes it
            object.__setattr__(self, "home", Path(self.home))

    @property
    def graph_path(self) -> Path:
        """The embedded knowledge-graph SQLite file."""
        return self.home / "graph.sqlite"

    @property
    def chroma_dir(self) -> Path:
        """The persistent Chroma directory."""
        return self.home / "chroma"

    @property
    def memory_path(self) -> Path:
        """The embedded project-memory SQLite file."""
        return self.home / "memory.sqlite"

    @property
    def record_manager_url(self) -> str:
        """SQLAlchemy URL of the indexing API's record manager."""
        return f"sqlite:///{(self.home / 'records.sqlite').resolve()}"

    def ensure_home(self) -> Path:
        """Create the home directory if needed and return it.

        Raises:
            ConfigError: The home, or a folder above it, is a file, or cannot be written.
        """
        try:
            self.home.mkdir(parents=True, exist_ok=True)
        except (FileExistsError, NotADirectoryError) as exc:
            what = ("it is a file" if isinstance(exc, FileExistsError)
                    else "a path above it is a file")
            raise ConfigError(
                f"the apiatlas home {self.home} cannot be a folder ({what}): pass --home (or set "
                "APIATLAS_HOME to) a folder, or a path where one can be made"
            ) from None
        except PermissionError:
            raise ConfigError(
                f"the apiatlas home {self.home} cannot be made or written: pass --home (or set "
                "APIATLAS_HOME to) a folder you can write"
            ) from None
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
        graph = env.get("APIATLAS_GRAPH", "embedded")
        if graph not in ("embedded", "neo4j"):
            raise ConfigError(f"APIATLAS_GRAPH={graph!r} is not supported: use 'embedded' or 'neo4j'.")
        # DATABASE_URL alone selects pgvector; APIATLAS_VECTORS decides when both are set.
        vectors = env.get("APIATLAS_VECTORS", "pgvector" if env.get("DATABASE_URL") else "chroma")
        if vectors not in ("chroma", "pgvector"):
            raise ConfigError(
                f"APIATLAS_VECTORS={vectors!r} is not supported: use 'chroma' or 'pgvector'."
            )
        # Like the vectors: DATABASE_URL alone moves project memory to Postgres too.
        memory = env.get("APIATLAS_MEMORY", "postgres" if env.get("DATABASE_URL") else "sqlite")
        if memory not in ("sqlite", "postgres"):
            raise ConfigError(
                f"APIATLAS_MEMORY={memory!r} is not supported: use 'sqlite' or 'postgres'."
            )
        values: dict[str, object] = {
            "home": Path(env.get("APIATLAS_HOME", ".apiatlas")),
            "project": env.get("APIATLAS_PROJECT", DEFAULT_PROJECT),
            "embeddings": embeddings,
            "openai_model": env.get("APIATLAS_OPENAI_EMBEDDING_MODEL", "text-embedding-3-small"),
            "graph": graph,
            "vectors": vectors,
            "neo4j_uri": env.get("NEO4J_URI", cls.neo4j_uri),
            "neo4j_username": env.get("NEO4J_USERNAME", cls.neo4j_username),
            "neo4j_password": env.get("NEO4J_PASSWORD", cls.neo4j_password),
            "neo4j_database": env.get("NEO4J_DATABASE", cls.neo4j_database),
            "database_url": env.get("DATABASE_URL") or None,
            "memory": memory,
            "composer": env.get("APIATLAS_COMPOSER", "deterministic"),
            "chat_model": env.get("APIATLAS_CHAT_MODEL", DEFAULT_CHAT_MODEL),
            "chat_timeout": _seconds(env.get("APIATLAS_CHAT_TIMEOUT"), DEFAULT_CHAT_TIMEOUT_S),
        }
        values.update({k: v for k, v in overrides.items() if v is not None})
        if values["vectors"] == "pgvector" and not values["database_url"]:
            raise ConfigError(
                "the pgvector backend needs a PostgreSQL URL: set DATABASE_URL "
                "(postgresql://user:password@host:5432/db)."
            )
        if values["memory"] == "postgres" and not values["database_url"]:
            raise ConfigError(
                "the postgres memory backend needs a PostgreSQL URL: set DATABASE_URL "
                "(postgresql://user:password@host:5432/db), or APIATLAS_MEMORY=sqlite."
            )
        if isinstance(values["home"], str):
            values["home"] = Path(values["home"])
        _check_composer(values)
        return cls(**values)  # type: ignore[arg-type]


def check_project(name: object) -> str:
    """``name`` itself when it can name a project: 1 to 64 letters, digits, ``-`` or ``_``,
    starting with a letter or a digit.

    Every way in checks it (settings, the CLI, the facade's methods, the agent's context, the
    tools, MCP and HTTP) before anything is stored: a name is a key in every store (a graph
    property, a vector metadata value, a memory namespace, a file name under the home), so
    ``""``, ``..`` or ``../../etc`` would store data that no later question could read back.

    Raises:
        ConfigError: It is anything else.
    """
    if not isinstance(name, str) or not _PROJECT_NAME.fullmatch(name):
        raise ConfigError(
            f"project name {name!r} is not valid: use 1 to 64 letters, digits, '-' or '_', "
            "starting with a letter or a digit."
        )
    return name


def _seconds(text: str | None, default: float) -> float:
    """``APIATLAS_CHAT_TIMEOUT`` as a positive number of seconds."""
    if text is None:
        return default
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not value > 0:  # also rejects NaN
        raise ConfigError(
            f"APIATLAS_CHAT_TIMEOUT={text!r} is not supported: use a positive number of seconds."
        )
    return value


def _check_composer(values: dict[str, object]) -> None:
    """The composer settings, from the environment or overrides (``--composer``)."""
    composer = values["composer"]
    if composer not in ("deterministic", "llm"):
        raise ConfigError(
            f"APIATLAS_COMPOSER={composer!r} is not supported: use 'deterministic' or 'llm'."
        )
    model = values["chat_model"]
    if not isinstance(model, str) or not model.strip() or any(c.isspace() for c in model):
        raise ConfigError(
            f"APIATLAS_CHAT_MODEL={model!r} is not a chat model name: use provider:model, "
            f"e.g. {DEFAULT_CHAT_MODEL!r}."
        )
