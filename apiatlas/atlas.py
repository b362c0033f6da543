"""``ApiAtlas``: the object most users need — ingest specs and docs, then ask questions.

It wires the embedded defaults together (SQLite knowledge graph, persistent Chroma, the packaged
MiniLM embeddings, the deterministic composer). Every component can be injected instead, which is
how production backends and tests plug in.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING
from datetime import datetime
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path

from apiatlas import ingest as pipeline
from apiatlas.config import Settings, check_project
from apiatlas.errors import StoreError, UnknownName
from apiatlas.graph.model import GraphStats
from apiatlas.graph.backends import open_graph_store
from apiatlas.graph.store import LinkedGraphStore
from apiatlas.ingest import IngestReport, ProgressCallback, docs_scope_name
from apiatlas.manifest import Manifest

if TYPE_CHECKING:
    from langchain_core.embeddings import Embeddings
    from langchain_core.language_models import LanguageModelLike
    from langchain_core.vectorstores import VectorStore
    from langgraph.graph.state import CompiledStateGraph
    from langgraph.store.base import BaseStore

    from apiatlas.loaders.crawl import CrawlLimits
    from apiatlas.loaders.fetch import FetchPolicy
    from apiatlas.loaders.splitting import TokenSplitter
    from apiatlas.rag.answer.result import AnswerResult
    from apiatlas.rag.code.report import CodeReport
    from apiatlas.rag.memory.links import LinkedMemory
    from apiatlas.rag.ranking.pipeline import FieldIndexCache
    from apiatlas.rag.retrieval.dense import VectorIndex
    from apiatlas.rag.retrieval.fusion import HybridRetriever
    from apiatlas.rag.retrieval.snapshot import CorpusCache

_log = logging.getLogger(__name__)

# The agent (LangGraph, the ranker, the retrievers), the vector stores and the embeddings are
# imported when first needed: `graph stats`, `memory list` and an ingest of unchanged files
# start without them.

__all__ = ["ApiAtlas", "IngestReport", "ProgressCallback", "docs_scope_name"]


class ApiAtlas:
    """Ingest OpenAPI specs and guides into a knowledge graph and a vector store; answer questions.

    Args:
        settings: Where state lives and which embeddings to use. Defaults to ``Settings()``.
        graph_store: A knowledge-graph store; by default the one ``settings.graph`` names
            (the embedded SQLite store, or Neo4j).
        embeddings: Embeddings for vectors and resource matching; from ``settings`` by default.
        vector_store: A LangChain vector store; by default the one ``settings.vectors`` names
            (persistent Chroma under the home, or pgvector on ``settings.database_url``).
        memory_store: The LangGraph store holding project memory; by default the one
            ``settings.memory`` names (``SqliteStore`` under the home, or ``PostgresStore`` on
            ``settings.database_url``). An injected store is not closed by :meth:`close`.
        chat_model: A LangChain chat model that writes the answers' text from their evidence
            (the LLM composer, :mod:`apiatlas.rag.answer.llm`); giving one selects it. Without
            one, ``settings.composer == "llm"`` builds ``settings.chat_model`` with
            ``init_chat_model``, and the default composer is the deterministic one.

    Example:
        >>> atlas = ApiAtlas(Settings(home=Path(".apiatlas")))
        >>> atlas.ingest(openapi=["openapi.yaml"], docs=["guides/"])
        >>> print(atlas.ask("What endpoints can I use to create a location?").answer)
    """

    def __init__(
        self,
        settings: Settings | None = None,
        *,
        graph_store: LinkedGraphStore | None = None,
        embeddings: Embeddings | None = None,
        vector_store: VectorStore | None = None,
        memory_store: BaseStore | None = None,
        chat_model: LanguageModelLike | None = None,
    ) -> None:
        self.settings = settings or Settings()
        self.settings.ensure_home()
        self.graph = graph_store or open_graph_store(self.settings)
        # The model and the vector store are opened on first use, so that bad input and
        # `graph stats` fail or answer fast without loading a model.
        self._embeddings = embeddings
        self._vector_store = vector_store
        # Stores or a model handed in may change behind the atlas's back: only its own are
        # trusted to be as the last ingest left them.
        self.manifest = (
            Manifest(self.settings.home / "ingests")
            if graph_store is None and embeddings is None and vector_store is None
            else None
        )
        """The record of past ingests (``None`` with injected stores or model)."""
        self._memory_store = memory_store
        self._chat_model = chat_model
        self._closers: list[Callable[[], None]] = []

    @cached_property
    def embeddings(self) -> Embeddings:
        """The embeddings used for vectors and resource matching."""
        from apiatlas.rag.runtime.embeddings import load_embeddings

        return self._embeddings or load_embeddings(self.settings)

    @cached_property
    def document_embeddings(self) -> Embeddings:
        """What ingests embed documents with: :attr:`embeddings`, and on an atlas of its own
        stores and model, with every vector kept by content hash in ``home/embeddings.sqlite``,
        so that no text is embedded twice (another project, the ranker's index rebuilt after
        one endpoint changed). Questions pass straight through to :attr:`embeddings`."""
        if self.manifest is None:
            return self.embeddings
        from apiatlas.rag.runtime.embedding_cache import SqliteByteStore, cached_embeddings

        try:
            store = SqliteByteStore(self.settings.home / "embeddings.sqlite")
        except StoreError as e:
            # A cache: without it texts are embedded again, and nothing else changes.
            _log.warning("%s Embedding without the cache.", e)
            return self.embeddings
        self._closers.append(store.close)
        return cached_embeddings(self.embeddings, store)

    @cached_property
    def vector_store(self) -> VectorStore:
        """The vector store holding endpoint cards and guide chunks."""
        from apiatlas.rag.retrieval.dense import open_vector_store

        return self._vector_store or open_vector_store(self.settings, self.document_embeddings)

    @cached_property
    def memory_store(self) -> BaseStore:
        """The LangGraph store holding project memory (opened on first use)."""
        from apiatlas.rag.memory.backends import open_memory_store
        from apiatlas.rag.runtime.embeddings import LazyEmbeddings, known_dimensions

        if self._memory_store is not None:
            return self._memory_store
        # The model loads on the first search or write: listing memories never needs it.
        lazy = LazyEmbeddings(lambda: self.embeddings)
        return open_memory_store(self.settings, lazy, dims=known_dimensions(self.settings))

    def _readable_memory(self) -> BaseStore:
        """:attr:`memory_store`, or, when it cannot be opened (a damaged file, a full disk), a
        store that says so on every read: the agent then answers from the docs, flagged
        ``degraded: memory unavailable``. ``memory`` commands still fail with the error."""
        from apiatlas.rag.memory.backends import UnavailableStore

        try:
            return self.memory_store
        except StoreError as e:
            return UnavailableStore(e)

    def memory(self, project: str | None = None, agent_type: str | None = None) -> LinkedMemory:
        """The project's memory: remember, supersede, forget, list and recall.

        Its writes keep the knowledge graph's memory links in step, so the memories about an
        endpoint come along when the graph returns it.

        Args:
            project: The project (``settings.project`` by default).
            agent_type: Also read (and, with ``scope="agent_type"``, write) the memories shared
                by every agent of this type in the project.
        """
        from apiatlas.rag.memory.links import LinkedMemory

        project = self.project_of(project)  # checked before the store is opened (or created)
        return LinkedMemory(
            self.memory_store,
            project,
            graph=self.graph,
            agent_type=agent_type,
        )

    @cached_property
    def vector_index(self) -> VectorIndex:
        """The indexing-API front of the vector store."""
        from apiatlas.rag.retrieval.dense import VectorIndex, record_manager_url

        return VectorIndex(self.vector_store, record_manager_url(self.settings))

    @cached_property
    def retriever(self) -> HybridRetriever:
        """Hybrid BM25 + dense retriever over the vector store."""
        from apiatlas.rag.retrieval.fusion import HybridRetriever

        if self._vector_store is None and self.settings.vectors == "chroma":
            # The embedded store is searched through its snapshot: a question never opens it.
            return HybridRetriever(corpus=self.corpus, project=self.settings.project)
        return HybridRetriever(
            vector_store=self.vector_store, corpus=self.corpus, project=self.settings.project
        )

    @cached_property
    def corpus(self) -> CorpusCache:
        """The projects' corpus snapshots (documents, vectors, lexical index) under
        ``home/derived``, written at ingest; the hybrid retriever reads them."""
        from apiatlas.rag.retrieval.dense import load_corpus_vectors
        from apiatlas.rag.retrieval.snapshot import CorpusCache

        embedded = self._vector_store is None and self.settings.vectors == "chroma"
        return CorpusCache(
            lambda project: load_corpus_vectors(self.vector_store, project),
            self.graph.revision,
            embeddings=self.embeddings if embedded else None,
            folder=self.settings.home / "derived",
        )

    @cached_property
    def agent(self) -> CompiledStateGraph:
        """The compiled agent graph (usable as a subgraph in your own LangGraph app).

        It is compiled with :attr:`memory_store`, so project memory leads its answers.
        """
        from apiatlas.rag.agent.context import AgentContext
        from apiatlas.rag.agent.graph import build_agent

        chat_model = self.chat_model  # a misconfigured chat model fails before a model loads
        return build_agent(
            store=self.graph,
            vector_retriever=self.retriever,
            embeddings=self.embeddings,
            memory=self._readable_memory(),
            field_indexes=self.field_indexes,
            default_context=AgentContext(project=self.settings.project),
            chat_model=chat_model,
            chat_timeout=self.settings.chat_timeout,
        )

    @cached_property
    def chat_model(self) -> LanguageModelLike | None:
        """The chat model of the LLM composer (``None``: the deterministic composer answers).

        Raises:
            MissingExtraError: The provider's LangChain package is not installed.
            ConfigError: ``settings.chat_model`` names no provider LangChain knows.
            ModelError: The model could not be built (e.g. no API key).
        """
        if self._chat_model is not None or self.settings.composer != "llm":
            return self._chat_model
        from apiatlas.rag.answer.chat_model import load_chat_model

        return load_chat_model(self.settings)

    @cached_property
    def field_indexes(self) -> FieldIndexCache:
        """The ranker's per-project field indexes, written under ``home/derived`` at ingest."""
        from apiatlas.rag.ranking.pipeline import FieldIndexCache

        return FieldIndexCache(
            self.document_embeddings,
            # From the corpus snapshot, which the ingest writes first: the store is not read
            # twice, and a question that finds both on disk never reads it at all.
            lambda project, api: self.corpus.get(project).card_vectors(api),
            folder=self.settings.home / "derived",
        )

    @cached_property
    def splitter(self) -> TokenSplitter:
        """The token-aware splitter, sized to the embedding model's window."""
        from apiatlas.loaders.splitting import TokenSplitter
        from apiatlas.rag.runtime.embeddings import LOCAL_MAX_TOKENS, local_tokenizer

        return TokenSplitter(local_tokenizer(), max_tokens=LOCAL_MAX_TOKENS)

    def ingest(
        self,
        *,
        openapi: Sequence[str | Path] = (),
        docs: Sequence[str | Path] = (),
        project: str | None = None,
        api: str | None = None,
        fetch_policy: FetchPolicy | None = None,
        progress: ProgressCallback | None = None,
        crawl: Sequence[str] = (),
        crawl_limits: CrawlLimits | None = None,
        code: Sequence[str | Path] = (),
    ) -> IngestReport:
        """Load specs and docs, scan code, then update the graph and the vectors of
        ``project``.

        Everything is loaded and validated before anything is written, so a broken input
        leaves both stores exactly as they were. Python's cyclic garbage collector is paused
        while it runs (process-wide; see :mod:`apiatlas.collector`).

        Each ``crawl`` URL is a documentation site crawled within ``crawl_limits`` and the
        ``fetch_policy`` allowlist (see :mod:`apiatlas.loaders.crawl`); the whole crawl is one
        docs set, so a re-crawl re-embeds changed pages only and removes vanished ones. Pages
        skipped by the crawl are listed in the report's warnings.

        Each ``code`` folder is the team's source code, one code set named after the folder:
        its calls that reach an ingested endpoint become code sites (see
        :meth:`code_report`); a file unchanged since the last scan is not parsed again.

        Raises:
            ConfigError: ``project`` cannot name a project (checked before anything is read).
            LoaderError: A source could not be read (names the file, pointer or URL), or a spec
                location has no endpoint at all (``SpecError``).
            StoreError: A store failed; the graph is unchanged.
        """
        return pipeline.run(self, pipeline.Sources(
            openapi=openapi, docs=docs, crawl=crawl, code=code, api=api,
            fetch_policy=fetch_policy, crawl_limits=crawl_limits,
        ), self.project_of(project), progress)  # fmt: skip

    def relink_memory(self, project: str) -> None:
        """Link the project's memories to the graph's endpoints again (after an ingest: the
        endpoints that came back are linked again). Nothing when there is no memory."""
        if self._has_memory():
            self.memory(project).relink()

    def open_memory(self) -> None:
        """Open the project memory when there is one (an ingest does, before it changes any
        store, so that a memory that cannot be opened fails it with nothing changed).

        Raises:
            StoreError: The memory store cannot be opened.
        """
        if self._has_memory():
            _ = self.memory_store

    def ask(
        self,
        question: str,
        *,
        project: str | None = None,
        api: str | None = None,
        k: int | None = None,
        agent_type: str | None = None,
        at: datetime | None = None,
        min_confidence: float | None = None,
    ) -> AnswerResult:
        """Answer a question about the project's APIs with a cited Markdown answer.

        The result's ``outcome`` says what a caller may do with it: ``answer`` (act on the first
        endpoint), ``unsure`` (candidates to choose from) or ``none`` (no endpoint does this).

        Args:
            question: The developer's question.
            project: The project (``settings.project`` by default).
            api: Restrict the answer to one API of the project.
            k: How many endpoints the answer gives, at most (by default five in full and the
                ranker's next five a line each, so that a question that needs several calls
                finds them all).
            agent_type: Also follow the memories shared by every agent of this type.
            at: Follow the project memory as it was at this moment (now by default).
            min_confidence: The lowest confidence of an ``answer`` (0 to 1); the threshold
                chosen on dev by default.

        Raises:
            UsageError: The question is empty or over
                :data:`~apiatlas.rag.agent.context.MAX_QUESTION_CHARS`.
            UnknownName: No such project in this home, or no such API in the project.
        """
        from apiatlas.rag.agent.context import AgentContext, check_question
        from apiatlas.rag.agent.graph import run_agent

        check_question(question)  # before anything opens or loads
        project = self.project_of(project)  # a name that cannot be one: before anything opens
        agent = self.agent  # then a composer that cannot be built, then a name that is not here
        context = AgentContext(
            project=self.known_project(project, api), api=api, k=k, agent_type=agent_type, at=at,
            min_confidence=min_confidence,
        )
        return run_agent(agent, question, context=context)

    def stats(self, project: str | None = None) -> GraphStats:
        """Knowledge-graph counts for one project (or all).

        Raises:
            UnknownName: ``project`` does not exist in this home.
        """
        return self.graph.stats(None if project is None else self.known_project(project))

    def code_report(self, project: str | None = None, api: str | None = None) -> CodeReport:
        """Where the project's code calls its APIs (``api``: one of them), every site with its
        file, line, endpoint (``None`` for a call to nothing in the spec), confidence and how it
        was matched.

        Raises:
            UnknownName: No such project, or no such API in it.
        """
        from apiatlas.rag.code.report import CodeReport
        from apiatlas.rag.code.sites import code_sites

        project = self.known_project(project, api)
        return CodeReport(project=project, api=api, sites=code_sites(self.graph, project, api=api))

    def project_of(self, project: str | None) -> str:
        """The project a call names (checked: ``""`` is no project), else the settings' own."""
        return self.settings.project if project is None else check_project(project)

    def known_project(self, project: str | None, api: str | None = None) -> str:
        """The project a question is asked of, checked to exist (in the graph or in project
        memory), and ``api`` checked to be one of its APIs.

        Raises:
            UnknownName: No such project, or no such API in it; the error lists those that exist
                and the closest.
        """
        project = self.project_of(project)
        projects = self.graph.projects()
        if project not in projects and not (self._has_memory() and self.memory(project).list()):
            raise UnknownName("project", project, projects, where=f"home {self.settings.home}")
        if api is not None:
            apis = sorted({str(n.props.get("name", "")) for n in self.graph.nodes(project, "Api")})
            if api not in apis:
                raise UnknownName("API", api, apis, where=f"project {project!r}")
        return project

    def _has_memory(self) -> bool:
        """Whether any project memory exists, without creating an empty embedded one."""
        if self._memory_store is not None or "memory_store" in self.__dict__:
            return True
        return self.settings.memory == "postgres" or self.settings.memory_path.exists()

    def close(self) -> None:
        """Close the stores (an injected memory store stays open: its owner closes it)."""
        self.graph.close()
        if "memory_store" in self.__dict__ and self._memory_store is None:
            from apiatlas.rag.memory.backends import close_memory_store

            close_memory_store(self.__dict__.pop("memory_store"))
        while self._closers:
            self._closers.pop()()

    def __enter__(self) -> ApiAtlas:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
