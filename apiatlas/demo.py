"""``make demo``: ingest the bundled sample API offline and answer a few questions with citations,
then show a team memory changing an answer.

Run it twice: the second ingest finds nothing changed and re-embeds nothing, and the team memory
is found rather than recorded again (the "before" answer is then the one from just before it was
recorded, ``ask(..., at=...)``).
"""

from __future__ import annotations

from datetime import timedelta

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.rag.memory.model import Memory
from apiatlas.rag.answer.result import AnswerResult
from apiatlas.sample import sample_guides_dir, sample_spec_path

QUESTIONS = (
    "What endpoints can I use to create a location?",
    "How do I create a shipment?",
    "How do I register a new courier?",
    "How do I verify a webhook signature?",
    "How do I train a neural network on a GPU cluster?",
)
MEMORY_QUESTION = "How do I delete a shipment?"
TEAM_WARNING = (
    "Never DELETE shipments in production, not even drafts: finance reconciles invoices on "
    "shipment ids. Cancel them with POST /v2/shipments/{shipment_id}/cancel instead."
)
TEAM_WARNING_REFS = (
    "DELETE /v2/shipments/{shipment_id}",
    "POST /v2/shipments/{shipment_id}/cancel",
)


def find_team_warning(atlas: ApiAtlas) -> Memory | None:
    """The demo's team warning if an earlier run recorded it (and it is still in force)."""
    return next((m for m in atlas.memory().list(kind="warning") if m.text == TEAM_WARNING), None)


def memory_changes_answer(atlas: ApiAtlas) -> tuple[AnswerResult, Memory, bool, AnswerResult]:
    """Ask, record the team warning, ask again.

    On a later run the warning exists already and is not recorded twice: the first answer is
    then the one from just before it was recorded.

    Returns:
        The answer before the memory, the memory, whether it was recorded now, the answer after.
    """
    existing = find_team_warning(atlas)
    moment = existing.created_at - timedelta(seconds=1) if existing is not None else None
    before = atlas.ask(MEMORY_QUESTION, at=moment)
    memory = existing or atlas.memory().remember(
        TEAM_WARNING, kind="warning", refs=TEAM_WARNING_REFS, importance=9, author="demo"
    )
    return before, memory, existing is None, atlas.ask(MEMORY_QUESTION)


def _first(result: AnswerResult) -> str:
    return f"{result.endpoints[0].method} {result.endpoints[0].path}" if result.endpoints else "-"


def show_memory(console: Console, atlas: ApiAtlas) -> None:
    """The memory part of the demo: the same question before and after a team warning."""
    before, memory, recorded, after = memory_changes_answer(atlas)
    console.rule("Project memory: the team's word takes precedence over the docs")
    console.print(Panel(Markdown(before.answer), title=f"Q: {MEMORY_QUESTION}  (docs only)",
                        title_align="left"))
    what = "Recorded" if recorded else "Already recorded (not added again):"
    console.print(f"{what} team memory {memory.citation} ({memory.kind}): {memory.text}",
                  markup=False, highlight=False, soft_wrap=True)
    console.print(Panel(Markdown(after.answer), title=f"Q: {MEMORY_QUESTION}  (with team memory)",
                        title_align="left"))
    cited = [c for c in after.citations if c.kind == "memory"]
    console.print(
        f"first endpoint before: {_first(before)}; after: {_first(after)}; "
        f"memory cited as " + ", ".join(f"[{c.n}] {c.uri}" for c in cited),
        markup=False, highlight=False, soft_wrap=True,
    )
    console.print(f"Try: APIATLAS_HOME={atlas.settings.home} .venv/bin/apiatlas memory list "
                  f"--project {atlas.settings.project}", markup=False, soft_wrap=True)


def main() -> None:
    """Ingest the sample API into ``$APIATLAS_HOME`` (default ``./.apiatlas``) and ask."""
    console = Console()
    settings = Settings.from_env(project="sample")
    console.print(f"apiatlas demo — state in [bold]{settings.home.resolve()}[/bold], offline")
    with ApiAtlas(settings) as atlas:
        report = atlas.ingest(openapi=[sample_spec_path()], docs=[sample_guides_dir()])
        vectors = report.vectors
        console.print(
            f"Ingested {report.endpoints} endpoints and {report.doc_pages} guide pages "
            f"({report.doc_chunks} chunks) in {report.seconds['total']:.1f}s; "
            f"graph changed: {report.graph.changed}; "
            + (
                f"vectors added {vectors.num_added}, skipped {vectors.num_skipped}, "
                f"deleted {vectors.num_deleted}"
                if vectors
                else ""
            )
        )
        for question in QUESTIONS:
            result = atlas.ask(question)
            title = f"Q: {question}  ({result.outcome}, confidence {result.confidence:.2f})"
            console.print(Panel(Markdown(result.answer), title=title, title_align="left"))
            total = sum(result.timings_ms.values())
            console.print(
                f"[dim]route: {' -> '.join(result.route)} · {total:.0f} ms · "
                f"{len(result.citations)} citations[/dim]\n"
            )
        show_memory(console, atlas)
    console.print(f"Try: APIATLAS_HOME={settings.home} .venv/bin/apiatlas ask --project sample "
                  f"\"How do I track a shipment?\"", markup=False)


if __name__ == "__main__":
    main()
