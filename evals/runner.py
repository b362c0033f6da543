"""``apiatlas eval``: ingest each dataset into a fresh home, run every strategy on every case.

A dataset's ``memories`` are recorded in its project memory after the ingest (through the facade,
so the graph links them to the endpoints they name) and before the cases run.

The runner is backend-neutral: it asks an :data:`AtlasFactory` for the ``ApiAtlas`` of each
dataset, so a production-backend factory (Neo4j, pgvector) plugs in without changing it.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.errors import LoaderError, SpecError, UsageError
from apiatlas.evals.dataset import Dataset, load_dataset
from apiatlas.evals.memories import DatasetMemories, load_memories
from apiatlas.evals.metrics import CaseRecord, compute_metrics
from apiatlas.evals.report import DatasetInfo, EvalReport, write_reports
from apiatlas.evals.strategies import STRATEGIES, make_strategy, parse_strategies
from apiatlas.loaders.docs import load_docs
from apiatlas.loaders.refs import is_remote, parse_document, pointer_get, read_file
from apiatlas.rag.runtime.embeddings import load_embeddings
from apiatlas.rag.memory.store import UnknownMemory
from apiatlas.rag.answer.result import Citation

AtlasFactory = Callable[[Settings, Embeddings], ApiAtlas]
"""Builds the atlas of one dataset from its isolated settings and the shared embeddings."""

_HOME_MARKER = ".apiatlas-eval-home"
_ALL = 1_000_000
WARM_UP = "list every endpoint"
"""Asked once per strategy before the cases, so the first case's cold latency does not include
building the project's caches (vocabulary, lexical indexes)."""
MEMORY_STRATEGIES = frozenset({"agent"})
"""Strategies that read project memory; the plain retrievers do not (their
``memory_precedence`` is ``None``)."""


def embedded_atlas(settings: Settings, embeddings: Embeddings) -> ApiAtlas:
    """The default factory: embedded SQLite graph and Chroma under ``settings.home``."""
    return ApiAtlas(settings, embeddings=embeddings)


class CitationChecker:
    """Decides whether a citation resolves to a real spec item or guide section.

    A spec citation resolves when its file exists and its JSON pointer leads to a value; a doc
    citation when its file exists and has a heading with that anchor; a memory citation
    (``memory:<id>``) when that memory exists in the project. Remote sources cannot be re-read
    offline, so they resolve when they are among what was ingested into the graph.
    """

    def __init__(self, atlas: ApiAtlas, project: str) -> None:
        self._atlas = atlas
        self._project = project
        self._specs: dict[str, Any] = {}
        self._anchors: dict[str, set[str] | None] = {}
        self._ingested: tuple[set[tuple[str, str]], set[tuple[str, str]]] | None = None
        self._memories: set[str] = set()

    def valid(self, citation: Citation) -> bool:
        """True when ``citation`` resolves."""
        if citation.kind == "memory":
            return self._memory_exists(citation.uri.removeprefix("memory:"))
        if citation.kind == "code":
            return _line_exists(Path(citation.source), citation.pointer)
        if is_remote(citation.source):
            specs, sections = self._ingested_items()
            pool = specs if citation.kind == "spec" else sections
            return (citation.source, citation.pointer) in pool
        if citation.kind == "spec":
            return self._pointer_resolves(citation.source, citation.pointer)
        anchors = self._doc_anchors(citation.source)
        return anchors is not None and (not citation.pointer or citation.pointer in anchors)

    def _memory_exists(self, memory_id: str) -> bool:
        if memory_id in self._memories:
            return True
        if not memory_id:
            return False
        try:
            self._atlas.memory(self._project).get(memory_id)
        except UnknownMemory:
            return False
        self._memories.add(memory_id)
        return True

    def _pointer_resolves(self, source: str, pointer: str) -> bool:
        if source not in self._specs:
            path = Path(source)
            try:
                self._specs[source] = (
                    parse_document(read_file(path), source, hint=path.name)
                    if path.is_file() else None
                )
            except SpecError:
                self._specs[source] = None
        document = self._specs[source]
        if document is None:
            return False
        try:
            pointer_get(document, pointer)
        except KeyError:
            return False
        return True

    def _doc_anchors(self, source: str) -> set[str] | None:
        if source not in self._anchors:
            try:
                pages = load_docs(source) if Path(source).is_file() else []
            except LoaderError:
                pages = []
            self._anchors[source] = (
                {s.anchor for page in pages for s in page.sections} if pages else None
            )
        return self._anchors[source]

    def _ingested_items(self) -> tuple[set[tuple[str, str]], set[tuple[str, str]]]:
        if self._ingested is None:
            graph = self._atlas.graph
            specs = {(e.source, e.pointer) for e in graph.find_endpoints(self._project, limit=_ALL)}
            sections = {
                (str(n.props.get("source", "")), str(n.props.get("anchor", "")))
                for n in graph.nodes(self._project, "DocSection")
            }
            self._ingested = (specs, sections)
        return self._ingested


def run_eval(
    dataset_paths: Sequence[str | Path],
    *,
    strategies: Sequence[str] | str = STRATEGIES,
    out_dir: str | Path | None = None,
    atlas_factory: AtlasFactory | None = None,
    progress: bool = True,
    embeddings: Embeddings | None = None,
    keep_homes: bool = False,
) -> EvalReport:
    """Evaluate every strategy on every case of every dataset; write the reports.

    Args:
        dataset_paths: Dataset YAML files (validated before anything is ingested).
        strategies: Names from :data:`~apiatlas.evals.strategies.STRATEGIES`, or ``a,b,c``.
        out_dir: Where ``report.json``/``.md``/``.png`` and the per-dataset homes go; a new
            temporary directory when ``None``.
        atlas_factory: Builds each dataset's atlas; :func:`embedded_atlas` by default.
        progress: Show a progress bar on stderr.
        embeddings: The embeddings shared by every dataset; the local model by default.
        keep_homes: Reuse the dataset homes an earlier run left in ``out_dir`` instead of
            starting each afresh: the ingest then only applies what changed (nothing, when the
            sources did not change), so a rerun skips the embedding.

    Returns:
        The report, with ``paths`` naming the files written.

    Raises:
        UsageError: A dataset is invalid, a strategy unknown, dataset names repeat, or a source
            cannot be loaded.
    """
    names = parse_strategies(strategies)
    datasets = [load_dataset(p) for p in dataset_paths]
    if not datasets:
        raise UsageError("no dataset given: pass one or more dataset YAML files")
    repeated = sorted({d.name for d in datasets if [x.name for x in datasets].count(d.name) > 1})
    if repeated:
        raise UsageError(f"datasets share the name {', '.join(repeated)}: names must be unique")
    out = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="apiatlas-eval-"))
    out.mkdir(parents=True, exist_ok=True)
    factory = atlas_factory or embedded_atlas
    shared = embeddings or load_embeddings(Settings())
    report = EvalReport(generated_at=datetime.now(timezone.utc).isoformat(timespec="seconds"))
    with _progress_bar(progress) as bar:
        for dataset in datasets:
            home = _fresh_home(out, dataset.name, keep=keep_homes)
            settings = Settings(home=home, project=dataset.name)
            with factory(settings, shared) as atlas:
                report.graph_backend = atlas.settings.graph
                info = _ingest(atlas, dataset, bar)
                memories = load_memories(atlas, dataset)
                info.memories = len(dataset.memories)
                records = _run_cases(atlas, dataset, names, bar, memories)
            report.datasets[dataset.name] = info
            report.records += records
            report.results[dataset.name] = {
                s: compute_metrics([r for r in records if r.strategy == s]) for s in names
            }
    report.paths = write_reports(report, out)
    return report


def _fresh_home(out: Path, name: str, *, keep: bool = False) -> Path:
    home = out / "homes" / name
    if home.exists():
        if not (home / _HOME_MARKER).exists():
            raise UsageError(
                f"{home} exists and was not made by `apiatlas eval`: choose another --out"
            )
        if keep:
            return home
        shutil.rmtree(home)
    home.mkdir(parents=True)
    (home / _HOME_MARKER).write_text("an isolated home written by `apiatlas eval`\n")
    return home


def _ingest(atlas: ApiAtlas, dataset: Dataset, bar: Progress | None) -> DatasetInfo:
    task = bar.add_task(f"ingest {dataset.name}", total=1) if bar is not None else None

    def on_progress(stage: str, done: int, total: int) -> None:
        if bar is not None and task is not None:
            bar.update(task, description=f"ingest {dataset.name}: {stage}",
                       completed=done, total=max(total, 1))

    ingested = atlas.ingest(
        openapi=dataset.sources.openapi, docs=dataset.sources.docs,
        project=dataset.name, progress=on_progress,
    )
    return DatasetInfo(
        path=str(dataset.path or ""),
        split=dataset.split,
        description=dataset.description,
        answerable=sum(c.answerable for c in dataset.cases),
        memory_cases=sum(c.expected_memories is not None for c in dataset.cases),
        unanswerable=sum(not c.answerable for c in dataset.cases),
        endpoints=ingested.endpoints,
        doc_chunks=ingested.doc_chunks,
        ingest_seconds=round(ingested.seconds.get("total", 0.0), 2),
        home=str(atlas.settings.home),
    )


def _run_cases(
    atlas: ApiAtlas,
    dataset: Dataset,
    names: Sequence[str],
    bar: Progress | None,
    memories: DatasetMemories,
) -> list[CaseRecord]:
    checker = CitationChecker(atlas, dataset.name)
    total = len(names) * len(dataset.cases)
    task = bar.add_task(f"eval {dataset.name}", total=total) if bar is not None else None
    records: list[CaseRecord] = []
    forget = getattr(atlas.embeddings, "clear", None)
    for name in names:
        strategy = make_strategy(name, atlas, project=dataset.name)
        strategy(WARM_UP)  # the project's caches and lazy indexes, not any case's question
        for case in dataset.cases:
            if forget is not None:
                forget()  # cold: the question's embedding is not cached
            out = strategy(case.question)
            warm = strategy(case.question)
            records.append(CaseRecord(
                dataset=dataset.name, case_id=case.id, strategy=name, question=case.question,
                answerable=case.answerable, expected=case.expected_endpoints,
                acceptable=case.acceptable_endpoints, ranked=out.ranked, presented=out.presented,
                primary=out.primary, confidence=out.confidence, outcome=out.outcome,
                tags=list(case.tags),
                citations_valid=sum(checker.valid(c) for c in out.citations),
                citations_total=len(out.citations), latency_ms=out.latency_ms,
                latency_warm_ms=warm.latency_ms,
                expected_memories=case.expected_memories,
                cited_memories=memories.cited(out.citations) if name in MEMORY_STRATEGIES else None,
                superseded_memories=memories.superseded,
            ))
            if bar is not None and task is not None:
                bar.update(task, advance=1, description=f"eval {dataset.name}: {name}")
    return records


@contextmanager
def _progress_bar(enabled: bool) -> Iterator[Progress | None]:
    if not enabled:
        yield None
        return
    with Progress(
        TextColumn("{task.description:<36}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), console=Console(stderr=True),
    ) as bar:
        yield bar


def _line_exists(path: Path, pointer: str) -> bool:
    """A code citation's ``L<line>`` is a line of its file."""
    line = int(pointer[1:]) if pointer[:1] == "L" and pointer[1:].isdigit() else 0
    try:
        return 0 < line <= len(path.read_bytes().splitlines())
    except OSError:
        return False
