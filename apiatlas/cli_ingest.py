"""``apiatlas ingest``: its flags, and the ingest they ask for, shown as progress bars and a report.

The command's flags are registered on the CLI's parser with the others at startup, so this module
imports nothing heavy at the top: the facade and the loaders' policy and limits load when the
command runs. Everything goes through :class:`~apiatlas.atlas.ApiAtlas`, so a command-line ingest
behaves exactly like the Python API's.
"""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn
from rich.table import Table

from apiatlas.config import Settings
from apiatlas.errors import UsageError

if TYPE_CHECKING:  # the report (pydantic) loads with the facade, when the command runs
    from apiatlas.atlas import IngestReport
    from apiatlas.loaders.models import LoadWarning

_EVERY_HOST = "*"  # what a bare --allow-private stands for


def add_ingest_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    parents: list[argparse.ArgumentParser],
) -> None:
    """Add ``ingest`` to the top-level ``commands``, with the options it shares through
    ``parents`` (``--home``, ``--project``, the backend flags) and its own: what to read (specs,
    docs, crawls), the hosts it may fetch from, and the limits of a crawl."""
    ingest = commands.add_parser(
        "ingest", parents=parents, help="load OpenAPI specs, docs and the team's code"
    )
    ingest.add_argument("--openapi", action="append", default=[], metavar="PATH_OR_URL")
    ingest.add_argument("--docs", action="append", default=[], metavar="PATH_OR_URL")
    ingest.add_argument(
        "--code", action="append", default=[], metavar="DIR",
        help="a folder of the team's source code (Python, JavaScript, TypeScript, Go, Java): "
        "where it calls the ingested APIs (repeatable; one code set per folder, by its name)",
    )
    ingest.add_argument("--api", help="name for the API (default: from the spec title)")
    ingest.add_argument(
        "--allow-private", action="append", nargs="?", const=_EVERY_HOST, metavar="HOST",
        help="allow private/loopback addresses for HOST only (repeatable), or for every host "
        "without HOST (link-local and cloud metadata addresses need the bare flag)",
    )
    ingest.add_argument(
        "--allow-host", action="append", default=[], metavar="HOST", help="only fetch these hosts"
    )
    ingest.add_argument(
        "--read-outside", action="store_true",
        help="let a spec's $refs and a docs folder's links read files outside the folder given",
    )
    ingest.add_argument(
        "--crawl", action="append", default=[], metavar="URL",
        help="crawl a docs site from URL (a page or sitemap), following links within "
        "--allow-host (default: the URL's host) and robots.txt",
    )
    ingest.add_argument("--max-pages", type=int, metavar="N",
                        help="most URLs one crawl fetches (default: 50)")
    ingest.add_argument("--max-depth", type=int, metavar="D",
                        help="most links a crawl follows from its start URL (default: 3)")
    ingest.add_argument("--crawl-delay", type=float, metavar="SECONDS",
                        help="least time between two crawl requests (default: 0.2)")
    ingest.add_argument("--page-timeout", type=float, metavar="SECONDS",
                        help="skip a crawled page that takes longer (default: 10)")
    ingest.add_argument("--max-page-bytes", type=int, metavar="BYTES",
                        help="skip a crawled page that is larger (default: 2000000)")


def run_ingest(
    args: argparse.Namespace, console: Console, settings: Callable[[], Settings]
) -> None:
    """Ingest what the flags name, with a progress bar per stage, and print the report.

    Args:
        args: The parsed ``ingest`` flags.
        console: Where the progress and the report go.
        settings: The settings of the flags and the environment, read once the flags are checked.

    Raises:
        UsageError: Nothing to ingest was named.
    """
    from apiatlas.atlas import ApiAtlas
    from apiatlas.loaders.crawl import CrawlLimits
    from apiatlas.loaders.fetch import FetchPolicy

    if not args.openapi and not args.docs and not args.crawl and not args.code:
        raise UsageError(
            "nothing to ingest: pass --openapi PATH_OR_URL, --docs PATH_OR_URL, --crawl URL "
            "and/or --code DIR"
        )
    private = args.allow_private or []
    policy = FetchPolicy(
        allow_private=_EVERY_HOST in private,
        private_hosts=tuple(host for host in private if host != _EVERY_HOST),
        allowlist=tuple(args.allow_host),
        read_outside=args.read_outside,
    )
    given = {
        "max_pages": args.max_pages,
        "max_depth": args.max_depth,
        "delay": args.crawl_delay,
        "page_timeout": args.page_timeout,
        "max_page_bytes": args.max_page_bytes,
    }
    limits = CrawlLimits(**{name: value for name, value in given.items() if value is not None})
    with _progress(console) as bar, ApiAtlas(settings()) as atlas:
        tasks: dict[str, TaskID] = {}

        def on_progress(stage: str, done: int, total: int) -> None:
            if stage not in tasks:
                tasks[stage] = bar.add_task(stage, total=max(total, 1))
            bar.update(tasks[stage], completed=done, total=max(total, 1))

        report = atlas.ingest(
            openapi=args.openapi,
            docs=args.docs,
            project=args.project,
            api=args.api,
            fetch_policy=policy,
            progress=on_progress,
            crawl=args.crawl,
            crawl_limits=limits,
            code=args.code,
        )
    _print_report(report, console)


def _progress(console: Console) -> Progress:
    """The progress display: one bar per ingest stage, with its count and the time elapsed."""
    return Progress(
        TextColumn("{task.description:<16}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    )


def _print_report(report: IngestReport, console: Console) -> None:
    """The counts of an ingest as a table, then its warnings grouped by what they say (see
    :func:`grouped_warnings`); an unchanged re-ingest prints one line."""
    if report.unchanged:
        said = f", {len(report.warnings)} warning(s) as before" if report.warnings else ""
        console.print(f"Project '{report.project}' is unchanged since the last ingest: nothing "
                      f"read again ({report.endpoints} endpoints, {report.doc_pages} doc "
                      f"pages{said}).", markup=False)
        return
    table = Table(title=f"Ingested into project '{report.project}'")
    table.add_column("what")
    table.add_column("count", justify="right")
    rows = [
        ("APIs", ", ".join(report.apis) or "-"),
        ("endpoints", report.endpoints),
        ("doc pages", report.doc_pages),
        ("doc chunks", report.doc_chunks),
        *([("code files (parsed)", f"{report.code_files} ({report.code_parsed})"),
           ("code sites", report.code_sites)] if report.code_files else []),
        ("graph nodes added/updated/removed", f"{report.graph.nodes_added}/"
         f"{report.graph.nodes_updated}/{report.graph.nodes_removed}"),
    ]
    if report.vectors is not None:
        v = report.vectors
        rows.append(("vectors added/updated/skipped/deleted",
                     f"{v.num_added}/{v.num_updated}/{v.num_skipped}/{v.num_deleted}"))
    rows.append(("seconds", f"{report.seconds.get('total', 0.0):.1f}"))
    for name, value in rows:
        table.add_row(name, str(value))
    console.print(table)
    if report.warnings:
        console.print(f"[yellow]{len(report.warnings)} warning(s):[/yellow]")
        for group in grouped_warnings(report.warnings):
            first = group[0]
            if len(group) == 1:
                console.print(f"  - {_where(first)}: {first.message}", markup=False,
                              soft_wrap=True)
                continue
            places = ", ".join(_where(w) for w in group[:SHOWN_PLACES])
            more = f" and {len(group) - SHOWN_PLACES} more" if len(group) > SHOWN_PLACES else ""
            console.print(f"  - {len(group)} like this one: {first.message} (at {places}{more})",
                          markup=False, soft_wrap=True)


SHOWN_PLACES = 3
"""Places a group of like warnings names (the report keeps every one)."""


def grouped_warnings(warnings: list[LoadWarning]) -> list[list[LoadWarning]]:
    """``warnings`` grouped by their message with each quoted name ('...') and URL left out,
    in the order each group first appears: sixty unresolved remote ``$ref``s are one line."""
    groups: dict[str, list[LoadWarning]] = {}
    for warning in warnings:
        key = _QUOTED.sub("'…'", _URL.sub("…", warning.message))
        groups.setdefault(key, []).append(warning)
    return list(groups.values())


_QUOTED = re.compile(r"'[^']*'")
_URL = re.compile(r"\bhttps?://[^\s'\"]+")


def _where(warning: LoadWarning) -> str:
    return f"{warning.source}#{warning.pointer}" if warning.pointer else warning.source
