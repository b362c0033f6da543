"""``apiatlas memory ...``: record and consult project memory from the command line.

``add``, ``list``, ``search``, ``forget``, ``supersede`` and ``history`` go through the
:class:`~apiatlas.atlas.ApiAtlas` facade, so they behave exactly like the Python API. Every
command prints memory ids, which is what ``forget``, ``supersede`` and ``history`` take.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from apiatlas.config import Settings
from apiatlas.errors import UsageError
from apiatlas.rag.memory.kinds import MEMORY_KINDS

if TYPE_CHECKING:  # the models (pydantic) load when a memory is read, not with the parser
    from apiatlas.rag.memory.model import Memory, MemoryHit

EXIT_OK = 0


def add_memory_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    parents: list[argparse.ArgumentParser],
) -> None:
    """Register ``memory`` and its subcommands on the CLI's subparsers.

    Args:
        commands: The top-level subparsers.
        parents: Shared option parsers (``--home``, ``--project``, the backend flags).
    """
    scope = argparse.ArgumentParser(add_help=False, parents=parents)
    scope.add_argument(
        "--memory",
        choices=["sqlite", "postgres"],
        help="memory backend (default: $APIATLAS_MEMORY; postgres when DATABASE_URL is set)",
    )
    scope.add_argument(
        "--agent-type",
        help="also use the memories shared by every agent of this type (add: store it there)",
    )
    fields = argparse.ArgumentParser(add_help=False)
    fields.add_argument(
        "--refs", action="append", metavar="REF",
        help="endpoint ('POST /v2/locations') or resource it is about; repeat or comma-separate",
    )  # fmt: skip
    fields.add_argument(
        "--step", action="append", metavar="STEP", help="a procedure step, in order; repeat"
    )
    fields.add_argument("--importance", type=int, help="1 (trivia) .. 10 (must never be missed)")
    fields.add_argument("--author", default="", help="who recorded it")
    fields.add_argument("--source", default="", help="where it came from (ticket, postmortem, URL)")
    when = argparse.ArgumentParser(add_help=False)
    when.add_argument("--at", type=_moment, help="as known at this ISO date or time (UTC)")
    when.add_argument("--json", action="store_true", help="print JSON")

    memory = commands.add_parser("memory", help="the project's memory: what the team has learned")
    sub = memory.add_subparsers(dest="memory_command", required=True)
    add = sub.add_parser("add", parents=[scope, fields], help="record a memory")
    add.add_argument("text")
    add.add_argument("--kind", choices=MEMORY_KINDS, default="fact")
    listing = sub.add_parser("list", parents=[scope, when], help="memories valid now (or --at)")
    listing.add_argument("--history", action="store_true", help="every version, valid or not")
    listing.add_argument("--kind", choices=MEMORY_KINDS)
    search = sub.add_parser("search", parents=[scope, when], help="memories about a question")
    search.add_argument("question")
    search.add_argument("--limit", type=int, default=5, help="at most this many (default 5)")
    forget = sub.add_parser("forget", parents=[scope], help="forget a memory (history stays)")
    forget.add_argument("id")
    supersede = sub.add_parser(
        "supersede", parents=[scope, fields], help="replace a memory with a new version"
    )
    supersede.add_argument("id")
    supersede.add_argument("text")
    supersede.add_argument("--kind", choices=MEMORY_KINDS)
    history = sub.add_parser("history", parents=[scope], help="a memory's versions, oldest first")
    history.add_argument("id")
    history.add_argument("--json", action="store_true", help="print JSON")


def run_memory(args: argparse.Namespace, console: Console, settings: Settings) -> int:
    """Run one ``memory`` subcommand; errors propagate to the CLI's exit-code mapping."""
    from apiatlas.atlas import ApiAtlas
    from apiatlas.rag.review.touches import touches

    with ApiAtlas(settings) as atlas:
        memory = atlas.memory(agent_type=args.agent_type)
        command = args.memory_command
        if command == "add":
            added = memory.remember(
                args.text,
                kind=args.kind,
                refs=_refs(args.refs),
                steps=args.step or (),
                importance=5 if args.importance is None else args.importance,
                author=args.author,
                source=args.source,
                scope="agent_type" if args.agent_type else "project",
            )
            _print_written("remembered", added, console)
            for touch in touches(memory, added):
                console.print(touch.message, markup=False, highlight=False, soft_wrap=True)
        elif command == "supersede":
            new = memory.supersede(
                args.id,
                args.text,
                kind=args.kind,
                refs=None if args.refs is None else _refs(args.refs),
                steps=args.step,
                importance=args.importance,
                author=args.author,
                source=args.source,
            )
            _print_written(f"superseded {args.id} with", new, console)
        elif command == "forget":
            gone = memory.forget(args.id)
            console.print(f"forgot {gone.id} (it stays in the history)", markup=False)
        elif command == "history":
            _print_memories(memory.history(args.id), args.json, console, "History")
        elif command == "list":
            found = memory.list(at=args.at, kind=args.kind, include_history=args.history)
            _print_memories(found, args.json, console, "Memories")
        else:
            hits = memory.recall(args.question, at=args.at, limit=args.limit)
            _print_hits(hits, args.json, console)
    return EXIT_OK


def _moment(text: str) -> datetime:
    from apiatlas.rag.memory.model import as_utc

    try:
        return as_utc(datetime.fromisoformat(text))
    except ValueError as e:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO date or time: use e.g. 2026-10-01 or 2026-10-01T09:30"
        ) from e


def _refs(values: Iterable[str] | None) -> list[str]:
    refs = [part.strip() for value in values or () for part in value.split(",")]
    if any(not ref for ref in refs):
        raise UsageError("an empty --refs entry: name an endpoint ('POST /v2/locations') or resource")
    return refs


def _print_written(verb: str, memory: Memory, console: Console) -> None:
    console.print(f"{verb} {memory.id} ({memory.kind})", markup=False, highlight=False)
    if memory.scrubbed:
        # The user must know the stored text differs from what they typed, and why.
        console.print(f"removed: {', '.join(memory.scrubbed)}", markup=False, highlight=False)
    if memory.inferred_refs:
        console.print(
            f"linked to what its text names: {', '.join(memory.inferred_refs)} (inferred; "
            "supersede it with --refs to change)",
            markup=False, highlight=False,
        )


def _print_memories(memories: list[Memory], as_json: bool, console: Console, title: str) -> None:
    if as_json:
        sys.stdout.write(json.dumps([m.model_dump(mode="json") for m in memories], indent=2) + "\n")
        return
    if not memories:
        console.print("no memories")
        return
    table = Table(title=title)
    table.add_column("id", no_wrap=True)  # whole, so it can be copied into forget/supersede
    for column in ("kind", "text", "refs", "valid"):
        table.add_column(column, overflow="fold")
    for m in memories:
        valid = f"{m.valid_from:%Y-%m-%d %H:%M} .. " + (
            f"{m.valid_to:%Y-%m-%d %H:%M}" if m.valid_to else "now"
        )
        if m.forgotten_at:
            valid += " (forgotten)"
        elif m.superseded_by:
            valid += f" (-> {m.superseded_by})"
        text = "\n".join([m.text, *(f"{i}. {s}" for i, s in enumerate(m.steps, 1))])
        refs = [*m.refs, *(f"{r} (inferred)" for r in m.inferred_refs)]
        table.add_row(m.id, m.kind, text, "\n".join(refs), valid)
    console.print(table)


def _print_hits(hits: list[MemoryHit], as_json: bool, console: Console) -> None:
    if as_json:
        sys.stdout.write(json.dumps([h.model_dump(mode="json") for h in hits], indent=2) + "\n")
        return
    if not hits:
        console.print("no memory is about that")
        return
    table = Table(title="Relevant memories")
    table.add_column("id", no_wrap=True)
    for column in ("kind", "text", "score", "matched"):
        table.add_column(column, overflow="fold")
    for hit in hits:
        m = hit.memory
        table.add_row(m.id, m.kind, m.text, f"{hit.score:.2f}", hit.matched)
    console.print(table)
