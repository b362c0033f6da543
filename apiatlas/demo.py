"""``make demo``: ingest the bundled sample API offline and answer a few questions with citations.

Run it twice: the second ingest finds nothing changed and re-embeds nothing.
"""

from __future__ import annotations

from rich.console import Console
from rich.markdown import Markdown
from rich.panel import Panel

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.sample import sample_guides_dir, sample_spec_path

QUESTIONS = (
    "What endpoints can I use to create a location?",
    "How do I create a shipment?",
    "How do I register a new courier?",
    "How do I verify a webhook signature?",
    "How do I create an invoice?",
)


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
            title = f"Q: {question}"
            if result.abstained:
                title += "  (abstained)"
            console.print(Panel(Markdown(result.answer), title=title, title_align="left"))
            total = sum(result.timings_ms.values())
            console.print(
                f"[dim]route: {' -> '.join(result.route)} · {total:.0f} ms · "
                f"{len(result.citations)} citations[/dim]\n"
            )
    console.print(f"Try: APIATLAS_HOME={settings.home} .venv/bin/apiatlas ask --project sample "
                  f"\"How do I track a shipment?\"", markup=False)


if __name__ == "__main__":
    main()
