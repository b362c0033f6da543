"""``make bench``: in-process timings, side by side in one run.

Reports, for the sample API and (when ``../shared/data`` is present) Square and Adobe Commerce
admin with its guides: first-ingest time and counts, unchanged re-ingest time, raw embedding
throughput, the first ``ask`` after opening (it builds the per-project caches), and ``ask``
latency median/p95 per agent route, cold (the question's embedding not cached) and warm (the
same question again), against a plain Chroma ``similarity_search`` on the same questions, and
with a question's threads set each way (:data:`THREAD_ARMS`), quiet and beside a busy process.
Writes a dated Markdown file. The machine is shared and noisy: read medians and ratios, not
single numbers.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from time import perf_counter

import numpy as np

from apiatlas.atlas import ApiAtlas, IngestReport
from apiatlas.config import Settings
from apiatlas.rag.agent.context import MAX_QUESTION_CHARS
from apiatlas.rag.memory.store import MAX_MEMORY_CHARS
from apiatlas.sample import sample_guides_dir, sample_spec_path

REPO = Path(__file__).resolve().parents[2]


@dataclass
class Dataset:
    """One API to ingest and the questions to time on it."""

    name: str
    openapi: list[Path]
    docs: list[Path] = field(default_factory=list)
    questions: tuple[str, ...] = ()


def datasets(shared: Path) -> list[Dataset]:
    """The sample API always; Square and Adobe admin when the shared data is present."""
    found = [
        Dataset(
            "sample",
            [sample_spec_path()],
            [sample_guides_dir()],
            (
                "What endpoints can I use to create a location?",
                "How do I create a shipment?",
                "register a new courier",
                "How do I verify a webhook signature?",
                "Which call bills a customer for a delivery?",
                "list all tracking events for a parcel",
                "What does POST /v2/quotes need?",
            ),
        )
    ]
    if (shared / "square").is_dir():
        found.append(
            Dataset(
                "square",
                [shared / "square/spec/api.json"],
                questions=(
                    "What endpoints can I use to create a location?",
                    "How do I search for customers by email?",
                    "update an order",
                    "delete a customer",
                    "How do I refund a payment?",
                    "create a shipping label",
                    "What does POST /v2/customers need?",
                ),
            )
        )
    if (shared / "adobe-commerce").is_dir():
        found.append(
            Dataset(
                "adobe-admin",
                [shared / "adobe-commerce/spec/src/openapi/admin-schema-2.4.8.yaml"],
                [shared / "adobe-commerce/docs/src/pages"],
                (
                    "How do I create an inventory source?",
                    "get a product by sku",
                    "cancel an order",
                    "admin access token for REST calls",
                    "create a customer",
                    "delete a spaceship",
                    "What does POST /V1/inventory/sources need?",
                ),
            )
        )
    return found


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100)."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def _stats(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} | {percentile(values, 95):.1f}"


def embedding_throughput(atlas: ApiAtlas, texts: list[str]) -> float:
    """Texts per second for the raw embedding model on ``texts``."""
    atlas.embeddings.embed_documents(texts[:8])
    started = perf_counter()
    atlas.embeddings.embed_documents(texts)
    return len(texts) / (perf_counter() - started)


def plain_search(atlas: ApiAtlas, ds: Dataset, repeat: int) -> list[float]:
    """Milliseconds of a plain ``similarity_search(question, k=5)`` on the same Chroma, scoped
    to the dataset's project, the question embedded each time: what a user of LangChain's
    Chroma alone would wait for."""
    out: list[float] = []
    for question in ds.questions:
        for _ in range(repeat):
            getattr(atlas.embeddings, "clear", lambda: None)()
            started = perf_counter()
            atlas.vector_store.similarity_search(question, k=5, filter={"project": ds.name})
            out.append((perf_counter() - started) * 1000)
    return out


THREAD_ARMS: dict[str, tuple[bool, bool]] = {
    "shipped: one BLAS thread, ONNX Runtime stops spinning": (True, False),
    "BLAS threads left alone": (False, False),
    "ONNX Runtime spins after each run": (True, True),
    "both off (before)": (False, True),
}
"""How a question's threads behave: (BLAS on one thread, ONNX Runtime's threads spinning after
each run)."""


def ask_block(
    home: str, project: str, questions: list[str], repeat: int, one_blas: bool, spin: bool
) -> list[float]:
    """Cold ``ask`` milliseconds of ``questions`` in this process, with its threads set as
    asked. Run in a process of its own per setting: threads that spin after one setting's work
    would otherwise still be spinning during the other's."""
    from apiatlas.rag.runtime import onnx_minilm, threads

    threads.ENABLED, onnx_minilm.SPIN_AFTER_RUN = one_blas, spin
    atlas = ApiAtlas(Settings(home=Path(home), project=project))
    with atlas:
        atlas.ask(questions[0], project=project)  # opening: the model and the caches
        out = []
        for question in questions:
            for _ in range(repeat):
                atlas.embeddings.clear()  # type: ignore[attr-defined]
                started = perf_counter()
                atlas.ask(question, project=project)
                out.append((perf_counter() - started) * 1000)
    return out


def thread_settings(home: Path, sets: list[Dataset], repeat: int) -> list[str]:
    """Cold ``ask`` under each of :data:`THREAD_ARMS`, each in a new process on the bench's
    home, two rounds in turn, on a quiet machine and while a busy-looping process holds one
    core (a shared machine, or a server's other work)."""
    times: dict[tuple[str, str, str], list[float]] = defaultdict(list)
    code = ("import json, sys; from apiatlas.evals.bench.ask import ask_block; "
            "print(json.dumps(ask_block(*json.loads(sys.argv[1]))))")
    for load in ("quiet", "one core busy"):
        burner = (subprocess.Popen([sys.executable, "-c", "while True: pass"])
                  if load != "quiet" else None)
        try:
            for _ in range(2):
                for ds in sets:
                    for arm, (one_blas, spin) in THREAD_ARMS.items():
                        args = [str(home), ds.name, list(ds.questions), repeat, one_blas, spin]
                        done = subprocess.run(
                            [sys.executable, "-c", code, json.dumps(args)],
                            capture_output=True, text=True, check=True,
                        )
                        times[(ds.name, load, arm)] += json.loads(done.stdout.splitlines()[-1])
        finally:
            if burner is not None:
                burner.kill()
                burner.wait()
    shipped = next(iter(THREAD_ARMS))
    rows = []
    for ds in sets:
        for load in ("quiet", "one core busy"):
            base = statistics.median(times[(ds.name, load, shipped)])
            for arm in THREAD_ARMS:
                values = times[(ds.name, load, arm)]
                rows.append(f"| {ds.name} | {load} | {arm} | {_stats(values)} | "
                            f"{statistics.median(values) / base:.2f} |")
    return [
        "## A question's threads: BLAS on one thread, ONNX Runtime's threads stop after each run",
        "",
        "Cold `ask`, each setting in a new process on this run's stores (two rounds in turn, "
        f"{repeat} runs per question each), then the same beside a busy-looping process. "
        "Ratio: median over the shipped setting's median.",
        "",
        "| dataset | machine | setting | median ms | p95 ms | median / shipped |",
        "| --- | --- | --- | ---: | ---: | ---: |",
        *rows,
        "",
    ]


def onnx_against_torch(questions: list[str], repeat: int) -> list[str]:
    """The export recipe against sentence-transformers (torch), on the base all-MiniLM-L6-v2
    (the shipped encoder has no torch weights): the lowest cosine between their vectors, and
    cold single-question latency of each, side by side."""
    from apiatlas.rag.runtime import onnx_minilm
    from apiatlas.rag.runtime.embeddings import torch_embeddings

    base = onnx_minilm.base_model_dir()
    onnx = onnx_minilm.OnnxEmbeddings(onnx_minilm.onnx_path(base), base)
    torch = torch_embeddings(base)
    a = np.array(onnx.embed_documents(questions))
    b = np.array(torch.embed_documents(questions))
    lowest = float((a * b).sum(axis=1).min())
    times: dict[str, list[float]] = {"onnx": [], "torch": []}
    for _ in range(repeat):
        for question in questions:
            for name, model in (("onnx", onnx), ("torch", torch)):
                started = perf_counter()
                model.embed_query(question)
                times[name].append((perf_counter() - started) * 1000)
    ratio = statistics.median(times["torch"]) / statistics.median(times["onnx"])
    return [
        "## Query embedding: ONNX Runtime against torch (sentence-transformers)",
        "",
        f"Lowest cosine between the two models' vectors over {len(questions)} questions: "
        f"{lowest:.7f}.",
        "",
        "| model | runs | median ms | p95 ms |",
        "| --- | ---: | ---: | ---: |",
        *(f"| {name} | {len(v)} | {_stats(v)} |" for name, v in times.items()),
        "",
        f"ONNX is {ratio:.1f}x faster at the median, in the same run.",
        "",
    ]


@dataclass
class _Measured:
    """What one benchmark run measured, before it is written up."""

    ingest_rows: list[str] = field(default_factory=list)
    cold: dict[tuple[str, str], list[float]] = field(default_factory=lambda: defaultdict(list))
    warm: dict[tuple[str, str], list[float]] = field(default_factory=lambda: defaultdict(list))
    first_ask: dict[str, float] = field(default_factory=dict)
    plain: dict[str, list[float]] = field(default_factory=dict)
    throughput: float = 0.0
    settings_rows: list[str] = field(default_factory=list)
    limit_rows: list[str] = field(default_factory=list)


def _ingest_row(name: str, first: IngestReport, again: IngestReport) -> str:
    total = first.seconds["total"]
    return (
        f"| {name} | {first.endpoints} | {first.doc_chunks} | {total:.1f} | "
        f"{first.seconds['vectors']:.1f} | {first.seconds['graph']:.1f} | "
        f"{first.endpoints / total:.0f} | "
        f"{(first.cards + first.doc_chunks) / first.seconds['vectors']:.0f} | "
        f"{again.seconds['total']:.1f} | {again.graph.changed} |"
    )


def _time_asks(atlas: ApiAtlas, ds: Dataset, repeat: int, out: _Measured) -> None:
    """Each question ``repeat`` times, cold (its embedding computed again) then warm."""
    for question in ds.questions:
        for _ in range(repeat):
            clear = getattr(atlas.embeddings, "clear", None)
            if clear is not None:
                clear()  # cold: the question's embedding is computed again
            for times in (out.cold, out.warm):
                started = perf_counter()
                result = atlas.ask(question, project=ds.name)
                elapsed = (perf_counter() - started) * 1000
                times[(ds.name, " → ".join(result.route))].append(elapsed)


def limits_block(atlas: ApiAtlas, project: str, repeat: int) -> list[str]:
    """A question and a memory at their limits beside normal ones (issue 53): cold ``ask`` and
    ``remember`` medians and p95, and the answer's size."""
    normal_q = "What endpoints can I use to create a location?"
    longest_q = (normal_q + " ") * (MAX_QUESTION_CHARS // (len(normal_q) + 1))
    normal_m = "We create locations with POST /v2/locations and always send a timezone."
    longest_m = (normal_m + " ") * (MAX_MEMORY_CHARS // (len(normal_m) + 1))
    rows: list[str] = []
    for label, question in (("question", normal_q), ("question at the limit", longest_q)):
        times, size = [], 0
        for _ in range(repeat):
            clear = getattr(atlas.embeddings, "clear", None)
            if clear is not None:
                clear()
            started = perf_counter()
            size = len(atlas.ask(question, project=project).answer)
            times.append((perf_counter() - started) * 1000)
        rows.append(f"| {label} | {len(question):,} | {_stats(times)} | {size:,} |")
    memory = atlas.memory(project, agent_type="bench-limits")
    for label, text in (("memory", normal_m), ("memory at the limit", longest_m)):
        times = []
        for _ in range(repeat):
            started = perf_counter()
            memory.remember(text, kind="decision", refs=["POST /v2/locations"], scope="agent_type")
            times.append((perf_counter() - started) * 1000)
        answer = atlas.ask(normal_q, project=project, agent_type="bench-limits").answer
        rows.append(f"| {label} (remember; then the answer) | {len(text):,} | {_stats(times)} | "
                    f"{len(answer):,} |")
    return [
        "## Inputs at their limits (sample, cold)",
        "",
        "| input | characters | median ms | p95 ms | answer characters |",
        "| --- | ---: | ---: | ---: | ---: |",
        *rows,
    ]


def _measure(shared: Path, repeat: int) -> _Measured:
    out = _Measured()
    with tempfile.TemporaryDirectory() as home:
        atlas = ApiAtlas(Settings(home=Path(home), project="bench"))
        with atlas:
            for ds in datasets(shared):
                first, again = (atlas.ingest(openapi=ds.openapi, docs=ds.docs, project=ds.name)
                                for _ in range(2))
                out.ingest_rows.append(_ingest_row(ds.name, first, again))
                started = perf_counter()
                atlas.ask(ds.questions[0], project=ds.name)
                out.first_ask[ds.name] = (perf_counter() - started) * 1000
                _time_asks(atlas, ds, repeat, out)
                out.plain[ds.name] = plain_search(atlas, ds, repeat)
            out.limit_rows = limits_block(atlas, "sample", repeat)
            texts = [f"POST /v2/things/{i} creates thing number {i} with a name"
                     for i in range(256)]
            out.throughput = embedding_throughput(atlas, texts)
            out.settings_rows = thread_settings(Path(home), datasets(shared), repeat)
    return out


def _latency_lines(m: _Measured) -> tuple[list[str], dict[str, tuple[list[float], list[float]]]]:
    """The latency table's rows, per route and per dataset, and each dataset's cold and warm
    times."""
    lines: list[str] = []
    per_dataset: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for (name, route), values in sorted(m.cold.items()):
        hot = m.warm[(name, route)]
        per_dataset[name][0].extend(values)
        per_dataset[name][1].extend(hot)
        lines.append(f"| {name} | {route} | {len(values)} | {_stats(values)} | {_stats(hot)} |")
    for name, (values, hot) in sorted(per_dataset.items()):
        lines.append(f"| {name} | all | {len(values)} | {_stats(values)} | {_stats(hot)} |")
    return lines, per_dataset


def run(shared: Path, repeat: int) -> str:
    """Run every measurement and return the Markdown report."""
    m = _measure(shared, repeat)
    latency, per_dataset = _latency_lines(m)
    lines = [
        f"# apiatlas benchmark, {date.today().isoformat()}",
        "",
        "## Ingest (first run, then an unchanged re-run)",
        "",
        "| dataset | endpoints | doc chunks | first s | embed+index s | graph s | ops/s | "
        "chunks/s (cards+docs) | unchanged re-run s | re-run changed graph |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |",
        *m.ingest_rows,
        "",
        f"Raw embedding model throughput in the same run: {m.throughput:.0f} texts/s "
        "(256 short texts, one batch call).",
        "",
        "## First `ask` after opening (builds the per-project caches)",
        "",
        "| dataset | ms |",
        "| --- | ---: |",
        *(f"| {name} | {ms:.0f} |" for name, ms in m.first_ask.items()),
        "",
        f"## `ask` latency (in-process, {repeat} runs per question)",
        "",
        "Cold: the question's embedding is not cached; warm: the same question again at once.",
        "",
        "| dataset | route | runs | cold median ms | cold p95 ms | warm median ms | warm p95 ms |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: |",
        *latency,
        "",
        "## Against a plain Chroma `similarity_search` (cold, embedding included), same questions",
        "",
        "| dataset | plain median ms | plain p95 ms | `ask` cold median ms | ask / plain |",
        "| --- | ---: | ---: | ---: | ---: |",
        *(
            f"| {name} | {_stats(m.plain[name])} | {statistics.median(cold):.1f} | "
            f"**{statistics.median(cold) / statistics.median(m.plain[name]):.2f}** |"
            for name in sorted(m.plain) for cold in [per_dataset[name][0]]
        ),
    ]
    questions = [q for ds in datasets(shared) for q in ds.questions]
    lines += ["", *m.limit_rows, "", *m.settings_rows, *onnx_against_torch(questions, repeat)]
    # ru_maxrss is in KiB on Linux: the peak resident size of this whole benchmark process.
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines += ["", f"Peak resident memory of the benchmark process: {peak_mib:.0f} MiB."]
    return "\n".join(lines) + "\n"


def write_report(out: Path, stem: str, report: str) -> Path:
    """Write ``report`` to ``out/<stem>-<date>.md``, print it and say where it went."""
    out.mkdir(parents=True, exist_ok=True)
    target = out / f"{stem}-{date.today().isoformat()}.md"
    target.write_text(report, encoding="utf-8")
    print(report)
    print(f"written to {target}")
    return target


def main(argv: list[str] | None = None) -> None:
    """Run the benchmark and write ``evals/results/bench-<date>.md``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "results")
    args = parser.parse_args(argv)
    report = run(args.shared, args.repeat)
    if (args.shared / "square").is_dir() and (args.shared / "adobe-commerce").is_dir():
        from apiatlas.evals.bench.backends import run as run_backends

        report += "\n" + run_backends(args.shared)
    write_report(args.out, "bench", report)


if __name__ == "__main__":
    main()
