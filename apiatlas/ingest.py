"""The ingest pipeline: named steps from spec and doc locations to a project's stores.

:meth:`ApiAtlas.ingest <apiatlas.atlas.ApiAtlas.ingest>` wires the stores and calls :func:`run`,
which skips an ingest whose inputs are as the last one left them and otherwise takes the steps in
order:

1. :func:`load` reads and validates every input (specs, doc pages, crawled sites), and
   :func:`scan_code` the team's code folders (a file unchanged since the last scan is not parsed
   again): nothing is written before all of them are read, so a broken input leaves the stores
   as they were;
2. :func:`prepare` turns them into documents: endpoint cards and guide chunks, each tagged with
   the location it came from (the unit of vector cleanup);
3. :func:`plan_graph` builds the graph batches, and :func:`checkpoint` keeps what the stores hold
   of everything the ingest replaces;
4. :func:`index` embeds and indexes the documents (LangChain's indexing API);
5. :func:`build_graph` writes the knowledge graph;
6. :func:`derive` builds what questions read of each graph revision (the corpus snapshot, the
   ranker's field index, the graph retriever's caches), so that no question pays for them;
7. :func:`record` vouches for the inputs in the manifest, for the next unchanged ingest.

If a step from 4 on fails (or the ingest is interrupted), :func:`put_back` restores the
checkpoint before the error goes on: the graph, the vectors and what is derived from them are
as before, and the project answers as it did. A process killed outright cannot do that; it leaves
the vectors changed and the graph as it was (or both changed, after step 5), and the next ingest
of the same inputs completes the work.

The loaders and the graph builder are imported inside the steps: a process that only asks
questions, or re-ingests unchanged files, never pays for them.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from time import perf_counter
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from apiatlas.collector import collector_paused
from apiatlas.config import Settings
from apiatlas.errors import StoreError
from apiatlas.graph.model import ChangeSummary, GraphBatch
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.loaders.models import ApiSpec, DocPage, LoadWarning
from apiatlas.manifest import IngestRecord, Manifest, file_hashes, inputs_key, listing
from apiatlas.rag.retrieval.index_stats import IndexStats

if TYPE_CHECKING:
    from langchain_core.documents import Document
    from langchain_core.embeddings import Embeddings

    from apiatlas.atlas import ApiAtlas
    from apiatlas.loaders.code.models import CodeFile
    from apiatlas.loaders.crawl import CrawlLimits
    from apiatlas.loaders.fetch import FetchPolicy
    from apiatlas.loaders.splitting import TokenSplitter
    from apiatlas.rag.ranking.pipeline import FieldIndexCache
    from apiatlas.rag.retrieval.dense import VectorCheckpoint, VectorIndex
    from apiatlas.rag.retrieval.fusion import HybridRetriever
    from apiatlas.rag.retrieval.snapshot import CorpusCache

ProgressCallback = Callable[[str, int, int], None]
"""Called as ``(stage, done, total)`` while ingesting."""


class IngestReport(BaseModel):
    """What one ingest loaded and changed."""

    project: str
    apis: list[str] = Field(default_factory=list)
    endpoints: int = 0
    doc_pages: int = 0
    doc_chunks: int = 0
    cards: int = 0
    code_files: int = 0
    code_parsed: int = 0
    """Code files parsed by this ingest (the others were unchanged since the last scan)."""
    code_sites: int = 0
    """The project's code sites after this ingest: calls that reach an ingested API."""
    graph: ChangeSummary = Field(default_factory=ChangeSummary)
    vectors: IndexStats | None = None
    warnings: list[LoadWarning] = Field(default_factory=list)
    seconds: dict[str, float] = Field(default_factory=dict)
    unchanged: bool = False
    """Every input file was as the project's last ingest of them left it, so nothing was read
    again: the counts and warnings are that ingest's, and nothing was added or changed."""


@dataclass(frozen=True)
class Sources:
    """What one ingest reads.

    Attributes:
        openapi: Spec locations (files, folders, URLs).
        docs: Documentation locations (files, folders, URLs, sitemaps).
        crawl: Documentation sites to crawl, each one docs set.
        code: Folders of the team's source code, each one code set named after the folder.
        api: The API name to give a single spec (else its title).
        fetch_policy: What URLs may be fetched.
        crawl_limits: How far a crawl goes.
    """

    openapi: Sequence[str | Path] = ()
    docs: Sequence[str | Path] = ()
    crawl: Sequence[str] = ()
    code: Sequence[str | Path] = ()
    api: str | None = None
    fetch_policy: FetchPolicy | None = None
    crawl_limits: CrawlLimits | None = None

    @property
    def locations(self) -> list[str | Path]:
        """The spec and doc locations (a crawl is never vouched for)."""
        return [*self.openapi, *self.docs]


@dataclass
class Loaded:
    """Every input, read and validated: the specs, the doc pages by docs set, and what the
    docs folders and the crawls left out."""

    specs: list[ApiSpec] = field(default_factory=list)
    pages: dict[str, list[DocPage]] = field(default_factory=dict)
    doc_warnings: list[LoadWarning] = field(default_factory=list)
    code: dict[str, list[CodeFile]] = field(default_factory=dict)
    code_roots: dict[str, str] = field(default_factory=dict)
    code_parsed: int = 0

    @property
    def sources(self) -> list[str]:
        """The locations the vector store groups documents by."""
        return [spec.source for spec in self.specs] + list(self.pages)


@dataclass
class Prepared:
    """The documents to index: compacted endpoint cards, then guide chunks."""

    documents: list[Document]
    cards: int
    chunks: int


def _silent(stage: str, done: int, total: int) -> None:
    return None


def run(atlas: ApiAtlas, sources: Sources, project: str,
        progress: ProgressCallback | None = None) -> IngestReport:
    """Ingest ``sources`` into ``project`` of ``atlas``'s stores (the steps in order)."""
    notify = progress or _silent
    started = perf_counter()
    manifest = atlas.manifest
    # Code folders are never vouched for: their scan reuses what each unchanged file gave.
    key = None if sources.crawl or sources.code or manifest is None else inputs_key(
        sources.openapi, sources.docs, settings_key(atlas.settings, sources.api)
    )
    if key is not None and manifest is not None:
        found = manifest.unchanged(project, key, sources.locations, atlas.graph.revision(project))
        if found is not None:
            return unchanged_report(found, perf_counter() - started)
    # The cyclic collector stays off while the ingest builds objects that all live until it
    # ends (apiatlas.collector).
    with collector_paused():
        loaded = load(sources, notify)
        scan_code(atlas.graph, project, sources.code, loaded, notify)
        report = IngestReport(project=project, seconds={"load": perf_counter() - started})
        prepared = prepare(loaded, project, atlas.splitter)
        _count(report, loaded, prepared)
        # The memory is linked again after the graph is built: one that cannot be opened fails
        # the ingest here, before any store changes.
        atlas.open_memory()
        batches = plan_graph(atlas.graph, loaded, project)
        report.code_sites = sum(n.label == "CodeSite" for b in batches for n in b.nodes)
        saved = checkpoint(atlas, batches, loaded, project)
        if manifest is not None:
            # From here the stores change: an ingest killed on the way must not leave a record
            # that vouches for them.
            manifest.forget(project)
        try:
            write(atlas, prepared, loaded, batches, project, report, notify)
            report.seconds["total"] = perf_counter() - started
            if key is not None and manifest is not None:
                record(manifest, atlas.graph, project, key, sources.locations, loaded.specs,
                       report)  # fmt: skip
        except BaseException as error:
            put_back(atlas, saved, project, error)
            raise
        return report


def write(atlas: ApiAtlas, prepared: Prepared, loaded: Loaded, batches: list[GraphBatch],
          project: str, report: IngestReport, notify: ProgressCallback = _silent) -> None:
    """Steps 4 to 6: the vectors, the graph and what is derived from them, timed in
    ``report``."""
    mark = perf_counter()
    notify("embed and index", 0, len(prepared.documents))
    report.vectors = index(atlas.vector_index, prepared, loaded, project)
    notify("embed and index", len(prepared.documents), len(prepared.documents))
    report.seconds["vectors"] = perf_counter() - mark
    mark = perf_counter()
    notify("knowledge graph", 0, 1)
    report.graph = build_graph(atlas.graph, batches)
    notify("knowledge graph", 1, 1)
    report.seconds["graph"] = perf_counter() - mark
    atlas.relink_memory(project)  # links follow the new graph
    mark = perf_counter()
    notify("ranking index", 0, 1)
    derive(atlas.graph, project, changed=report.vectors.changed, retriever=atlas.retriever,
           corpus=atlas.corpus, field_indexes=atlas.field_indexes,
           embeddings=atlas.document_embeddings)  # fmt: skip
    notify("ranking index", 1, 1)
    report.seconds["ranking"] = perf_counter() - mark


@dataclass(frozen=True)
class Checkpoint:
    """What the stores held of everything one ingest replaces, before it wrote anything.

    Attributes:
        graph: Each scope the ingest's batches replace, as stored (empty when it is new).
        vectors: The documents of the locations the ingest indexes.
    """

    graph: list[GraphBatch]
    vectors: VectorCheckpoint


def checkpoint(atlas: ApiAtlas, batches: Sequence[GraphBatch], loaded: Loaded,
               project: str) -> Checkpoint:
    """Keep what ``batches`` and the loaded locations will replace in ``atlas``'s stores.

    Raises:
        StoreError: A store could not be read; nothing has been written.
    """
    return Checkpoint(
        graph=[atlas.graph.batch(project, batch.scope) for batch in batches],
        vectors=atlas.vector_index.checkpoint(project, loaded.sources),
    )


def put_back(atlas: ApiAtlas, saved: Checkpoint, project: str, error: BaseException) -> None:
    """Restore ``saved`` after ``error`` stopped an ingest: the vectors, the graph (one
    transaction), the memory's links and what questions read of them.

    Raises:
        StoreError: Restoring failed too (it names ``error`` and what to do); ``error`` is
            re-raised by the caller otherwise.
    """
    try:
        atlas.vector_index.restore(saved.vectors)
        atlas.graph.apply(saved.graph)
        atlas.relink_memory(project)
        derive(atlas.graph, project, changed=True, retriever=atlas.retriever,
               corpus=atlas.corpus, field_indexes=atlas.field_indexes,
               embeddings=atlas.document_embeddings)  # fmt: skip
    except Exception as e:
        raise StoreError(
            f"the ingest into project {project!r} failed ({error or type(error).__name__}) and "
            f"putting its previous state back failed too ({e}): ingest it again."
        ) from error


def load(sources: Sources, notify: ProgressCallback = _silent) -> Loaded:
    """Read and validate every input.

    Raises:
        LoaderError: A source could not be read (the error names the file, pointer or URL), or
            a spec location has no endpoint at all (``SpecError``).
    """
    from apiatlas.loaders.crawl import crawl as crawl_site
    from apiatlas.loaders.docs import load_docs
    from apiatlas.loaders.openapi import load_openapi, require_endpoints

    loaded = Loaded()
    openapi, docs, crawl = sources.openapi, sources.docs, sources.crawl
    for i, location in enumerate(openapi):
        notify("load specs", i, len(openapi))
        found = load_openapi(location, api=sources.api, fetch_policy=sources.fetch_policy)
        loaded.specs.extend(require_endpoints(found, location))
    if openapi:  # a stage with nothing to do shows no progress
        notify("load specs", len(openapi), len(openapi))
    for i, location in enumerate(docs):
        notify("load docs", i, len(docs))
        pages = load_docs(
            location, fetch_policy=sources.fetch_policy, warnings=loaded.doc_warnings
        )
        loaded.pages[docs_scope_name(location)] = pages
    if docs:
        notify("load docs", len(docs), len(docs))
    for i, start in enumerate(crawl):
        notify("crawl docs", i, len(crawl))
        crawled = crawl_site(start, sources.fetch_policy, sources.crawl_limits)
        loaded.pages[f"crawl-{docs_scope_name(crawled.start)}"] = crawled.pages
        loaded.doc_warnings.extend(crawled.warnings)
    if crawl:
        notify("crawl docs", len(crawl), len(crawl))
    return loaded


def scan_code(graph: KnowledgeGraphStore, project: str, folders: Sequence[str | Path],
              loaded: Loaded, notify: ProgressCallback = _silent) -> None:
    """Scan each code folder into ``loaded.code`` (its set named after the folder); a file
    whose hash is the stored one's keeps the stored calls, unparsed.

    Raises:
        LoaderError: A folder is not one, or two folders would share a set name.
    """
    from apiatlas.errors import LoaderError
    from apiatlas.graph.build.code import code_file, code_scope
    from apiatlas.loaders.code import scan

    for i, folder in enumerate(folders):
        notify("scan code", i, len(folders))
        name = code_set_name(folder)
        if name in loaded.code:
            raise LoaderError(f"two code folders are both named {name!r}; ingest them one at "
                              "a time or rename one", source=str(folder))  # fmt: skip
        stored = graph.nodes(project, "CodeFile", scope=code_scope(name))
        found = scan(folder, {n.props["path"]: code_file(n) for n in stored})
        loaded.code[name] = found.files
        loaded.code_roots[name] = str(found.root)
        loaded.code_parsed += found.parsed
        loaded.doc_warnings.extend(
            LoadWarning(message=w.message, source=str(found.root / w.path)) for w in found.warnings
        )
    if folders:
        notify("scan code", len(folders), len(folders))


def code_set_name(folder: str | Path) -> str:
    """A code set's name: its folder's name."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", Path(folder).expanduser().resolve().name).strip("-")


def prepare(loaded: Loaded, project: str, splitter: TokenSplitter) -> Prepared:
    """Endpoint cards (compacted to the card budget) and guide chunks, each tagged with the
    location it came from."""
    from apiatlas.loaders.cards import CARD_TOKENS, endpoint_documents
    from apiatlas.loaders.splitting import section_documents

    cards = [
        _grouped(card, spec.source)
        for spec in loaded.specs
        for card in endpoint_documents(spec, project=project)
    ]
    chunks = [
        _grouped(chunk, scope)
        for scope, group in loaded.pages.items()
        for chunk in section_documents(group, project=project, splitter=splitter)
    ]
    documents = splitter.compact_documents(cards, max_tokens=CARD_TOKENS) + chunks
    return Prepared(documents, cards=len(cards), chunks=len(chunks))


def index(vector_index: VectorIndex, prepared: Prepared, loaded: Loaded,
          project: str) -> IndexStats:
    """Embed and index the documents; those of the loaded locations that are gone are
    removed."""
    return vector_index.index(prepared.documents, project=project, sources=loaded.sources)


def plan_graph(graph: KnowledgeGraphStore, loaded: Loaded, project: str) -> list[GraphBatch]:
    """The batches that write the project's knowledge graph from the loaded specs and pages
    (read from ``graph``: the nodes of the scopes they keep, for the guides' links)."""
    from apiatlas.graph.build.ingest import plan_batches

    return plan_batches(graph, project, specs=loaded.specs, docs=loaded.pages, code=loaded.code,
                        code_roots=loaded.code_roots)  # fmt: skip


def build_graph(graph: KnowledgeGraphStore, batches: Sequence[GraphBatch]) -> ChangeSummary:
    """Apply the batches of :func:`plan_graph` (one transaction).

    Raises:
        StoreError: The store failed; the graph is unchanged.
    """
    return graph.apply(batches)


def derive(graph: KnowledgeGraphStore, project: str, *, changed: bool,
           retriever: HybridRetriever, corpus: CorpusCache, field_indexes: FieldIndexCache,
           embeddings: Embeddings) -> None:
    """Build what questions read of the graph's revision, once (a no-op when the revision's
    files are already on disk). The snapshot first: the ranker's index takes the endpoints'
    vectors from it. ``changed``: the vectors changed, and the revision may not have moved, so
    its snapshot is replaced."""
    from apiatlas.rag.retrieval.graph import KnowledgeGraphRetriever

    retriever.refresh()
    if changed:
        corpus.rebuild(project)
    else:
        corpus.get(project)
    field_indexes.get(graph, project, None)
    KnowledgeGraphRetriever(
        store=graph, embeddings=embeddings, derived_dir=field_indexes.folder
    ).warm(project)


def record(manifest: Manifest, graph: KnowledgeGraphStore, project: str, key: str,
           locations: Sequence[str | Path], specs: Sequence[ApiSpec],
           report: IngestReport) -> None:
    """Vouch for the inputs of a finished ingest (their listing and hashes), unless one is a
    URL or unreadable: then nothing is vouched for."""
    listed = listing(locations)
    read = listed + [d for spec in specs for d in spec.documents]
    read += [str(Path(p).expanduser().resolve()) for p in locations]
    hashes = file_hashes(dict.fromkeys(p for p in read if Path(p).is_file()))
    if hashes is None or any("://" in p for p in read):
        manifest.forget(project)
        return
    manifest.save(project, IngestRecord(
        key=key, listing=listed, files=hashes,
        revision=graph.revision(project), report=report.model_dump(mode="json"),
    ))  # fmt: skip


def settings_key(settings: Settings, api: str | None) -> list[object]:
    """What, beside the input files, decides what an ingest stores."""
    from apiatlas.loaders.cards import CARD_TOKENS
    from apiatlas.rag.runtime.embeddings import settings_model_id

    s = settings
    # The model's id, not the OpenAI model setting: it names the OpenAI model when that is
    # used, the local weights otherwise.
    return [api, s.graph, s.vectors, s.neo4j_uri, s.neo4j_database, s.embeddings,
            settings_model_id(s), CARD_TOKENS, bool(s.database_url)]


def unchanged_report(found: IngestRecord, seconds: float) -> IngestReport:
    """The report of an ingest whose inputs were all as the last one (``found``) left them."""
    report = IngestReport.model_validate(found.report)
    stored = report.vectors
    kept = 0 if stored is None else (
        stored.num_added + stored.num_updated + stored.num_skipped
    )
    return report.model_copy(update={
        "graph": ChangeSummary(),
        "vectors": IndexStats(num_skipped=kept),
        "seconds": {"total": seconds},
        "unchanged": True,
    })  # fmt: skip


def docs_scope_name(location: str | Path) -> str:
    """A stable, readable scope name for a documentation location (a dir, file or URL)."""
    text = str(location)
    if not re.match(r"^https?://", text):
        text = str(Path(text).resolve())
    return re.sub(r"[^A-Za-z0-9._/-]+", "-", text).strip("-")


def _count(report: IngestReport, loaded: Loaded, prepared: Prepared) -> None:
    report.apis = [spec.name for spec in loaded.specs]
    report.endpoints = sum(len(spec.endpoints) for spec in loaded.specs)
    report.cards = prepared.cards
    report.doc_pages = sum(len(group) for group in loaded.pages.values())
    report.doc_chunks = prepared.chunks
    report.code_files = sum(len(files) for files in loaded.code.values())
    report.code_parsed = loaded.code_parsed
    report.warnings = [w for spec in loaded.specs for w in spec.warnings]
    report.warnings += loaded.doc_warnings


def _grouped(document: Document, group: str) -> Document:
    """Tag a document with the ingest location it belongs to, the unit of vector cleanup."""
    from apiatlas.rag.retrieval.dense import GROUP_KEY

    document.metadata[GROUP_KEY] = group
    return document
