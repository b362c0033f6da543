"""The ``apiatlas`` command line. Command names, flags and exit codes are a contract.

Exit codes: 0 success (an abstention is a success), 2 usage error or bad input, 1 runtime failure.
``ingest`` lives in :mod:`apiatlas.cli_ingest` and ``memory`` in :mod:`apiatlas.cli_memory`.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from apiatlas.cli_ingest import add_ingest_parser, run_ingest
from apiatlas.cli_memory import add_memory_parser, run_memory
from apiatlas.collector import collector_paused
from apiatlas.config import Settings, check_project
from apiatlas.errors import ApiAtlasError, UsageError
from apiatlas.rag.agent.context import MAX_K, check_confidence, check_k

EXIT_OK, EXIT_RUNTIME, EXIT_USAGE = 0, 1, 2
EXIT_INTERRUPTED = 130
"""Ctrl-C: the shell's code for a process ended by SIGINT (128 + 2)."""


def _parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--home", help="state directory (default: $APIATLAS_HOME or ./.apiatlas)")
    common.add_argument(
        "--project", type=_project,
        help="project to use (default: $APIATLAS_PROJECT or 'default'): letters, digits, '-', '_'",
    )
    backends = argparse.ArgumentParser(add_help=False)
    backends.add_argument(
        "--graph", choices=["embedded", "neo4j"], help="graph backend (default: $APIATLAS_GRAPH)"
    )
    backends.add_argument(
        "--vectors",
        choices=["chroma", "pgvector"],
        help="vector backend (default: $APIATLAS_VECTORS; pgvector when DATABASE_URL is set)",
    )

    parser = argparse.ArgumentParser(
        prog="apiatlas", description="Grounded, cited answers about your APIs."
    )
    commands = parser.add_subparsers(dest="command", required=True)

    add_ingest_parser(commands, parents=[common, backends])

    ask = commands.add_parser("ask", parents=[common, backends], help="ask a question")
    ask.add_argument("question")
    ask.add_argument("--api", help="restrict to one API")
    ask.add_argument("-k", type=_k, default=None,
                     help=f"how many endpoints the answer gives (1 to {MAX_K}; default: 5 in "
                     "full and the ranker's next 5 a line each)")
    ask.add_argument("--min-confidence", type=_confidence, default=None, metavar="P",
                     help="the lowest confidence (0 to 1) of an answer to act on; below it the "
                     "answer is 'unsure' (default: the threshold chosen on dev)")
    ask.add_argument("--json", action="store_true", help="print the structured result as JSON")
    ask.add_argument(
        "--agent-type", help="also follow the project memories shared by agents of this type"
    )
    ask.add_argument(
        "--at",
        type=datetime.fromisoformat,
        metavar="ISO_TIME",
        help="follow the project memory as it was then, e.g. 2025-01-31T12:00:00+00:00",
    )
    ask.add_argument(
        "--composer",
        choices=["deterministic", "llm"],
        help="who writes the answer (default: $APIATLAS_COMPOSER or deterministic); llm uses "
        "$APIATLAS_CHAT_MODEL (default openai:gpt-4.1-mini, needs apiatlas[openai])",
    )
    ask.add_argument(
        "--server", metavar="URL",
        help="ask a running `apiatlas serve` instead, e.g. http://127.0.0.1:8765 (default: "
        "$APIATLAS_SERVER); the server's home, backends and composer answer",
    )
    ask.add_argument("--token-file", metavar="PATH",
                     help="with --server: the server's token (default: $APIATLAS_SERVE_TOKEN)")

    serve = commands.add_parser(
        "serve", parents=[common, backends],
        help="answer over HTTP from one warm process (POST /ask, GET /stats, GET /health)",
    )
    serve.add_argument("--host", default="127.0.0.1",
                       help="address to bind (default: loopback; any other needs a token)")
    serve.add_argument("--port", type=int, default=8765, help="port (default: 8765; 0 picks one)")
    serve.add_argument("--workers", type=int, default=1, metavar="N",
                       help="processes answering, each with its own model (default: 1)")
    serve.add_argument(
        "--token-file", metavar="PATH",
        help="require this bearer token (default: $APIATLAS_SERVE_TOKEN; needed off loopback)",
    )
    serve.add_argument(
        "--allow-host", action="append", default=[], metavar="NAME",
        help="also answer requests whose Host is NAME (repeatable; loopback names always)",
    )
    serve.add_argument("--all-projects", action="store_true",
                       help="answer for any project a request names (default: --project only)")
    serve.add_argument("--timeout", type=float, default=30.0, metavar="SECONDS",
                       help="answer 503 to a request still unanswered after this (default: 30)")

    commands.add_parser(
        "mcp", parents=[common, backends],
        help="serve the project's tools and resources to MCP clients over stdio (apiatlas[mcp])",
    )

    graph = commands.add_parser("graph", help="inspect the knowledge graph")
    graph_commands = graph.add_subparsers(dest="graph_command", required=True)
    stats = graph_commands.add_parser("stats", parents=[common, backends], help="node and edge counts")
    stats.add_argument("--json", action="store_true")

    code = commands.add_parser("code", help="where the team's code calls the APIs")
    code_commands = code.add_subparsers(dest="code_command", required=True)
    code_report = code_commands.add_parser(
        "report", parents=[common, backends],
        help="every code site: file, line, endpoint (or none in the spec), confidence",
    )
    code_report.add_argument("--api", help="only the sites calling this API")
    code_report.add_argument("--json", action="store_true")

    evaluate = commands.add_parser(
        "eval", parents=[backends], help="evaluate every strategy on eval datasets"
    )
    evaluate.add_argument("datasets", nargs="+", metavar="DATASET.yaml")
    evaluate.add_argument(
        "--strategies",
        default="bm25,dense,hybrid,kg,agent",
        help="comma-separated strategies to compare (default: all five)",
    )
    evaluate.add_argument(
        "--out", type=Path, help="directory for the reports and stores (default: a temp dir)"
    )
    evaluate.add_argument(
        "--keep-homes",
        action="store_true",
        help="reuse the dataset homes a previous run left in --out (only changes are ingested)",
    )

    neo4j = commands.add_parser(
        "neo4j", parents=[common], help="run a local Neo4j (Community, from Maven Central)"
    )
    neo4j.add_argument("action", choices=["start", "stop", "status"])

    add_memory_parser(commands, parents=[common, backends])
    return parser


def _k(text: str) -> int:
    """``-k``'s value, refused by argparse (exit 2, with the usage) outside 1 to MAX_K."""
    try:
        return check_k(int(text))
    except (ValueError, UsageError) as e:
        raise argparse.ArgumentTypeError(f"must be a whole number from 1 to {MAX_K}") from e


def _confidence(text: str) -> float:
    """``--min-confidence``'s value, refused by argparse (exit 2, with the usage) outside 0 to 1."""
    try:
        value = float(text)
        check_confidence(value)
    except (ValueError, UsageError) as e:
        raise argparse.ArgumentTypeError("must be a number from 0 to 1") from e
    return value


def _project(text: str) -> str:
    """``--project``'s value, refused by argparse (exit 2, with the usage) unless it can name a
    project (:func:`~apiatlas.config.check_project`)."""
    try:
        return check_project(text)
    except UsageError as e:
        raise argparse.ArgumentTypeError(str(e)) from e


def _settings(args: argparse.Namespace) -> Settings:
    return Settings.from_env(
        home=getattr(args, "home", None),
        project=getattr(args, "project", None),
        graph=getattr(args, "graph", None),
        vectors=getattr(args, "vectors", None),
        memory=getattr(args, "memory", None),
        composer=getattr(args, "composer", None),
    )


def _ingest(args: argparse.Namespace, console: Console) -> int:
    run_ingest(args, console, lambda: _settings(args))
    return EXIT_OK


def _ask(args: argparse.Namespace, console: Console) -> int:
    from apiatlas.client import server_url

    server = server_url(args.server)
    if server is not None:
        return _ask_server(args, console, server)
    if args.token_file is not None:
        raise UsageError("--token-file is the token of a server: use it with --server URL")
    # One question per process: the collector would only walk the objects the imports and the
    # opening leave, all alive until the process ends (apiatlas.collector).
    with collector_paused():
        return _answer(args, console)


def _ask_server(args: argparse.Namespace, console: Console, server: str) -> int:
    """The question sent to a running server (apiatlas.client), printed as a local answer."""
    from apiatlas.client import ask_remote, default_project, read_token
    from apiatlas.errors import RemoteError

    local = [f"--{flag}" for flag in ("home", "graph", "vectors", "composer")
             if getattr(args, flag) is not None]
    if local:
        raise UsageError(f"{', '.join(local)} cannot be used with --server: the server's own "
                         "settings answer")
    try:
        result = ask_remote(
            server, args.question, project=args.project or default_project(), api=args.api,
            k=args.k, agent_type=args.agent_type, at=args.at, token=read_token(args.token_file),
            min_confidence=args.min_confidence,
        )
    except RemoteError as e:
        console.print(Text.assemble(("error: ", "bold red"), str(e)), soft_wrap=True)
        return EXIT_USAGE if e.status is not None and e.status < 500 else EXIT_RUNTIME
    return _print_answer(args, console, result)


def _answer(args: argparse.Namespace, console: Console) -> int:
    from apiatlas.atlas import ApiAtlas

    with ApiAtlas(_settings(args)) as atlas:
        result = atlas.ask(
            args.question,
            project=args.project,
            api=args.api,
            k=args.k,
            agent_type=args.agent_type,
            at=args.at,
            min_confidence=args.min_confidence,
        )
    return _print_answer(args, console, result.model_dump(mode="json"))


def _print_answer(args: argparse.Namespace, console: Console, result: dict[str, Any]) -> int:
    """An answer (``ask --json``'s object), from this process or a server, printed alike."""
    if args.json:
        sys.stdout.write(json.dumps(result, indent=2) + "\n")
    else:
        from rich.markdown import Markdown  # only an answer is rendered as Markdown

        console.print(Markdown(result["answer"]))
        console.print(f"[dim]outcome: {result['outcome']} (confidence "
                      f"{result['confidence']:.2f}) · route: {' -> '.join(result['route'])}"
                      + "".join(f" · {note}" for note in result.get("notes", [])) + "[/dim]")
    return EXIT_OK


def _serve(args: argparse.Namespace, console: Console) -> int:
    try:
        from apiatlas.server_run import Launch, serve
    except ImportError as e:
        from apiatlas.extras import missing_extra

        raise missing_extra("serve", "apiatlas serve", e) from e
    launch = Launch(
        settings={name: getattr(args, name) for name in ("home", "project", "graph", "vectors")
                  if getattr(args, name) is not None},
        host=args.host, port=args.port, workers=args.workers, all_projects=args.all_projects,
        allow_hosts=tuple(args.allow_host), token_file=args.token_file, timeout=args.timeout,
    )
    # Flushed at once: a parent process waits for this line to know the port.
    serve(launch, lambda line: print(line, flush=True))
    return EXIT_OK


def _mcp(args: argparse.Namespace, console: Console) -> int:
    from apiatlas.mcp_server import serve_stdio

    serve_stdio(_settings(args))  # stdout is the protocol's: main's console writes to stderr
    return EXIT_OK


def _graph_stats(args: argparse.Namespace, console: Console) -> int:
    from apiatlas.graph.backends import open_graph_store

    settings = _settings(args)
    if settings.graph == "embedded" and not settings.graph_path.exists():
        raise UsageError(f"no knowledge graph at {settings.graph_path}: run `apiatlas ingest` first")
    store = open_graph_store(settings)
    try:
        stats = store.stats(args.project)
    finally:
        store.close()
    if args.json:
        sys.stdout.write(stats.model_dump_json(indent=2) + "\n")
        return EXIT_OK
    table = Table(title=f"Knowledge graph ({args.project or 'all projects'})")
    table.add_column("kind")
    table.add_column("name")
    table.add_column("count", justify="right")
    for label, count in sorted(stats.nodes.items()):
        table.add_row("node", label, str(count))
    for edge, count in sorted(stats.edges.items()):
        table.add_row("edge", edge, str(count))
    console.print(table)
    console.print(f"APIs: {', '.join(stats.apis) or '-'}")
    return EXIT_OK


def _code(args: argparse.Namespace, console: Console) -> int:
    from apiatlas.atlas import ApiAtlas

    with ApiAtlas(_settings(args)) as atlas:
        report = atlas.code_report(args.project, args.api)
    if args.json:
        print(json.dumps(report.to_json(), indent=2))
    else:
        console.print(report.to_markdown(), markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK


def _eval(args: argparse.Namespace, console: Console) -> int:
    from langchain_core.embeddings import Embeddings

    from apiatlas.atlas import ApiAtlas
    from apiatlas.evals.metrics import METRIC_KEYS
    from apiatlas.evals.report import format_metric
    from apiatlas.evals.runner import run_eval

    chosen = _settings(args)

    def atlas_for(settings: Settings, embeddings: Embeddings) -> ApiAtlas:
        # The runner picks each dataset's home and project; the backends come from the flags.
        backends = replace(
            chosen, home=settings.home, project=settings.project, embeddings=settings.embeddings
        )
        atlas = ApiAtlas(backends, embeddings=embeddings)
        if not args.keep_homes:
            atlas.graph.delete_project(settings.project)  # a server keeps old runs: start fresh
        return atlas

    report = run_eval(
        args.datasets, strategies=args.strategies, out_dir=args.out, atlas_factory=atlas_for,
        keep_homes=args.keep_homes,
    )
    for name, per_strategy in report.results.items():
        # Metrics as rows and strategies as columns: thirteen metric columns do not fit a terminal.
        table = Table(title=f"{name} ({report.graph_backend} graph)")
        table.add_column("metric")
        for strategy in per_strategy:
            table.add_column(strategy, justify="right")
        for key in METRIC_KEYS:
            table.add_row(key, *(format_metric(m.get(key)) for m in per_strategy.values()))
        console.print(table)
    for kind, path in report.paths.items():
        # soft_wrap: a long path printed whole stays copyable.
        console.print(f"{kind}: {path}", markup=False, highlight=False, soft_wrap=True)
    return EXIT_OK


def _neo4j(args: argparse.Namespace, console: Console) -> int:
    from apiatlas.graph.devserver.launcher import cli

    return cli(args.action, _settings(args))


def _memory(args: argparse.Namespace, console: Console) -> int:
    return run_memory(args, console, _settings(args))


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code."""
    args = _parser().parse_args(argv)
    # JSON output and the MCP protocol own stdout: messages and errors go to stderr.
    console = Console(stderr=bool(getattr(args, "json", False)) or args.command == "mcp")
    handlers = {
        "ingest": _ingest,
        "ask": _ask,
        "serve": _serve,
        "mcp": _mcp,
        "graph": _graph_stats,
        "eval": _eval,
        "code": _code,
        "neo4j": _neo4j,
        "memory": _memory,
    }
    try:
        return handlers[args.command](args, console)
    except UsageError as e:
        # soft_wrap: no line breaks inside the message, so a long path stays whole to copy or
        # grep (rich folds it at the terminal's width otherwise, 80 columns when piped).
        console.print(Text.assemble(("error: ", "bold red"), str(e)), soft_wrap=True)
        return EXIT_USAGE
    except ApiAtlasError as e:
        console.print(Text.assemble(("failed: ", "bold red"), str(e)), soft_wrap=True)
        return EXIT_RUNTIME
    except KeyboardInterrupt:
        console.print(Text.assemble(("interrupted: ", "bold red"), f"apiatlas {args.command}"))
        return EXIT_INTERRUPTED


def run(argv: Sequence[str] | None = None) -> int:
    """The ``apiatlas`` program: :func:`main`, then a process exit that skips collecting garbage.

    Python's shutdown searches every object for reference cycles before it frees the modules, and
    the agent's imports (LangGraph, LangChain Core, LangSmith's pydantic models) leave some 135,000
    of them: about 0.3-0.4 s of a 1.8 s CLI question on this project's 2-core machine. Frozen, they
    are left to the operating system. Exit handlers still run and output is still flushed; stores
    are closed by the commands themselves. Not for in-process callers, who keep using :func:`main`.
    """
    code = main(argv)
    gc.freeze()
    return code


if __name__ == "__main__":
    raise SystemExit(run())
