"""``make bench``, new processes: what a CLI user waits for, side by side in one run.

- Ingest of Square by ``apiatlas ingest`` in a new process, then the same unchanged spec again,
  against the yardstick a user would build instead: the spec file split by LangChain's
  ``RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=100)`` into a plain Chroma with
  the same MiniLM (the same ONNX model object apiatlas uses, so the ratio is the pipeline's, not
  the model runtime's), also in a new process.
- ``apiatlas ask`` in a new process on that project: wall time and the process's peak memory.
  After each, a process that only imports the agent's dependencies (LangGraph, ONNX Runtime,
  tokenizers, numpy): the floor no CLI question can go under on this machine at this moment,
  which moves with the machine's load as much as the ``ask`` does.
- In a new process, after ``import apiatlas.atlas``: opening the project and answering its first
  question (the agent's, the stores' and the model's imports happen inside the timing).
- ``apiatlas --help`` and ``graph stats``, which must not load the model.

Writes ``evals/results/bench-cli-<date>.md``. Wall times of whole processes on a shared machine:
read the medians and the ratios.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from time import perf_counter

from apiatlas.evals.bench.ask import percentile, write_report

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "apiatlas.cli"]
QUESTIONS = (
    "What endpoints can I use to create a location?",
    "How do I refund a payment?",
    "delete a customer",
    "update an order",
    "How do I search for customers by email?",
)
_OPEN_AND_ASK = """
import sys
from pathlib import Path
from time import perf_counter
from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings

started = perf_counter()
with ApiAtlas(Settings(home=Path(sys.argv[1]), project="square")) as atlas:
    atlas.ask(sys.argv[2])
print(perf_counter() - started)
"""
_DEPENDENCIES = "import langgraph.graph, onnxruntime, tokenizers, numpy"
_YARDSTICK = """
import sys
from langchain_chroma import Chroma
from langchain_text_splitters import RecursiveCharacterTextSplitter
from apiatlas.config import Settings
from apiatlas.rag.runtime.embeddings import load_embeddings

text = open(sys.argv[1], encoding="utf-8").read()
chunks = RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=100).split_text(text)
store = Chroma(collection_name="yardstick", embedding_function=load_embeddings(Settings()),
               persist_directory=sys.argv[2])
store.add_texts(chunks)
print(len(chunks))
"""


@dataclass
class Run:
    """One finished process: wall seconds, peak resident MiB, exit code, its output streams."""

    seconds: float
    peak_mib: float
    code: int
    out: str
    err: str = ""


def run_process(argv: list[str], *, env: dict[str, str] | None = None) -> Run:
    """Run ``argv`` to the end; its own peak memory comes from ``wait4``'s resource usage."""
    started = perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        texts = []
        for stream in (out, err):
            stream.seek(0)
            texts.append(stream.read().decode("utf-8", "replace"))
    # ru_maxrss is in KiB on Linux.
    return Run(seconds, usage.ru_maxrss / 1024, proc.returncode, texts[0], texts[1])


def _checked(run: Run, what: str) -> Run:
    if run.code != 0:
        raise SystemExit(f"{what} exited with {run.code}:\n{(run.out + run.err)[-2000:]}")
    return run


@dataclass
class _Runs:
    """Every process one benchmark run started, by what it measured."""

    first: Run
    again: Run
    yardstick: Run
    asks: list[Run]
    floors: list[float]
    opened: list[float]
    light: dict[str, list[Run]]


def _measure(spec: Path, repeat: int, env: dict[str, str]) -> _Runs:
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        base = ["--home", str(home), "--project", "square"]
        # The model export and the interpreter's own caches are warm for every run below.
        _checked(run_process([*CLI, "ask", "warm up", *base], env=env), "warm-up")
        first = _checked(run_process([*CLI, "ingest", *base, "--openapi", str(spec)], env=env),
                         "apiatlas ingest")
        again = _checked(run_process([*CLI, "ingest", *base, "--openapi", str(spec)], env=env),
                         "apiatlas ingest (unchanged)")
        yardstick = _checked(
            run_process([sys.executable, "-c", _YARDSTICK, str(spec), str(Path(tmp) / "ys")],
                        env=env),
            "yardstick",
        )
        asks, floors = [], []
        for _ in range(repeat):
            for q in QUESTIONS:
                asks.append(_checked(run_process([*CLI, "ask", q, *base], env=env), "apiatlas ask"))
                floors.append(_checked(run_process([sys.executable, "-c", _DEPENDENCIES], env=env),
                                       "the dependencies' imports").seconds)
        # In process: the library imported, then the project opened and one question answered
        # (the model loaded on the way) in a new process each time.
        opened = [
            float(_checked(run_process([sys.executable, "-c", _OPEN_AND_ASK, str(home), q],
                                       env=env), "open and ask").out.strip())
            for _ in range(repeat) for q in QUESTIONS
        ]
        light = {
            "apiatlas --help": [*CLI, "--help"],
            "apiatlas graph stats": [*CLI, "graph", "stats", *base],
        }
        light_runs = {
            name: [_checked(run_process(argv, env=env), name) for _ in range(repeat)]
            for name, argv in light.items()
        }
    return _Runs(first, again, yardstick, asks, floors, opened, light_runs)


def _ingest_section(r: _Runs) -> list[str]:
    ratio = r.first.seconds / r.yardstick.seconds
    return [
        "## Ingest of Square, against the yardstick",
        "",
        "| what | s | peak MiB | vectors added/updated/skipped/deleted (yardstick: chunks) |",
        "| --- | ---: | ---: | ---: |",
        f"| `apiatlas ingest`, first | {r.first.seconds:.1f} | {r.first.peak_mib:.0f} | "
        f"{_count(r.first.out)} |",
        f"| `apiatlas ingest`, unchanged again | {r.again.seconds:.1f} | {r.again.peak_mib:.0f} | "
        f"{_count(r.again.out)} |",
        f"| yardstick: spec split by RecursiveCharacterTextSplitter(1000, 100) into Chroma | "
        f"{r.yardstick.seconds:.1f} | {r.yardstick.peak_mib:.0f} | {r.yardstick.out.strip()} |",
        "",
        f"apiatlas / yardstick: **{ratio:.2f}**. Unchanged re-ingest / first: "
        f"**{r.again.seconds / r.first.seconds:.2f}**.",
        "",
    ]


def _ask_section(r: _Runs, repeat: int) -> list[str]:
    ask_s = [a.seconds for a in r.asks]
    return [
        f"## `apiatlas ask` on the Square project ({len(QUESTIONS)} questions x {repeat})",
        "",
        "| runs | median s | p95 s | max s | median peak MiB | max peak MiB |",
        "| ---: | ---: | ---: | ---: | ---: | ---: |",
        f"| {len(r.asks)} | {statistics.median(ask_s):.2f} | {percentile(ask_s, 95):.2f} | "
        f"{max(ask_s):.2f} | {statistics.median(a.peak_mib for a in r.asks):.0f} | "
        f"{max(a.peak_mib for a in r.asks):.0f} |",
        "",
        f"The agent's dependencies alone (`python -c \"{_DEPENDENCIES}\"`, a process after each "
        f"`ask`): median **{statistics.median(r.floors):.2f} s**, "
        f"p95 {percentile(r.floors, 95):.2f} s. What apiatlas adds to them (its own imports, "
        f"opening the stores and the model, the question, the printed answer): median of the "
        f"differences "
        f"**{statistics.median(a - f for a, f in zip(ask_s, r.floors)):.2f} s**.",
        "",
    ]


def _process_section(r: _Runs) -> list[str]:
    return [
        "## In process: opening the project and its first question (model load included)",
        "",
        "Timed inside a new process after `from apiatlas.atlas import ApiAtlas`: "
        "`ApiAtlas(settings)` and one `ask`, with the agent's, the stores' and the model's "
        "imports, which that import no longer does.",
        "",
        "| runs | median s | p95 s | max s |",
        "| ---: | ---: | ---: | ---: |",
        f"| {len(r.opened)} | {statistics.median(r.opened):.2f} | "
        f"{percentile(r.opened, 95):.2f} | {max(r.opened):.2f} |",
        "",
        "## Commands that must not load the model",
        "",
        "| command | runs | median s | median peak MiB |",
        "| --- | ---: | ---: | ---: |",
        *(
            f"| `{name}` | {len(runs)} | {statistics.median(x.seconds for x in runs):.2f} | "
            f"{statistics.median(x.peak_mib for x in runs):.0f} |"
            for name, runs in r.light.items()
        ),
        "",
    ]


def run(shared: Path, repeat: int) -> str:
    """Every measurement; the Markdown report."""
    spec = shared / "square/spec/api.json"
    if not spec.is_file():
        return f"(skipped: {spec} is missing)\n"
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "ANONYMIZED_TELEMETRY": "False"}
    r = _measure(spec, repeat, env)
    lines = [
        f"# apiatlas CLI benchmark, {date.today().isoformat()}",
        "",
        "Each row is a new process (`python -m apiatlas.cli ...`), wall time and that process's "
        "peak resident memory.",
        "",
        *_ingest_section(r),
        *_ask_section(r, repeat),
        *_process_section(r),
    ]
    return "\n".join(lines)


def _count(out: str) -> str:
    """The ``added/updated/skipped/deleted`` vectors an ``apiatlas ingest`` reported."""
    for line in out.splitlines():
        if "vectors added" in line:
            return [c.strip() for c in line.replace("|", "│").split("│") if c.strip()][-1]
    return ""


def main(argv: list[str] | None = None) -> None:
    """Run the CLI benchmark and write ``evals/results/bench-cli-<date>.md``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "results")
    args = parser.parse_args(argv)
    write_report(args.out, "bench-cli", run(args.shared, args.repeat))


if __name__ == "__main__":
    main()
