"""``apiatlas code report``: where the team's code calls each API, as Markdown or JSON."""

from __future__ import annotations

from collections import defaultdict

from pydantic import BaseModel, Field

from apiatlas.rag.code.sites import CodeSite

SHOWN = 40
"""Rows of each Markdown list; the JSON report lists every site."""
_PLACES = 3


class CodeReport(BaseModel):
    """A project's code sites with the counts a reader starts from.

    Attributes:
        sites: Every site, by code set, file and line.
        endpoints: ``METHOD /path`` -> its sites' count, for the endpoints the code calls.
        unknown: Sites that call an API but none of its ingested endpoints.
        deprecated: Sites that call an endpoint the spec marks deprecated.
    """

    project: str
    api: str | None = None
    sites: list[CodeSite] = Field(default_factory=list)

    @property
    def endpoints(self) -> dict[str, int]:
        counts: dict[str, int] = defaultdict(int)
        for site in self.sites:
            if site.endpoint is not None:
                counts[f"{site.api} {site.endpoint}"] += 1
        return dict(sorted(counts.items()))

    @property
    def unknown(self) -> list[CodeSite]:
        return [s for s in self.sites if s.endpoint is None]

    @property
    def deprecated(self) -> list[CodeSite]:
        return [s for s in self.sites if s.deprecated]

    def to_json(self) -> dict[str, object]:
        """The ``--json`` form: ``sites`` with ``file``, ``line``, ``endpoint``, ``api``,
        ``confidence``, ``matched_by`` (and where in the code), and the counts."""
        return {
            "project": self.project,
            "api": self.api,
            "sites": [s.model_dump() for s in self.sites],
            "counts": {"sites": len(self.sites), "unknown": len(self.unknown),
                       "deprecated": len(self.deprecated), "endpoints": len(self.endpoints)},
        }  # fmt: skip

    def to_markdown(self) -> str:
        """The report a person reads: the totals, deprecated endpoints in use, calls to nothing
        in the spec, then each endpoint called with where."""
        scope = f" (API {self.api})" if self.api else ""
        if not self.sites:
            return (f"# Code report: project '{self.project}'{scope}\n\nNo code site calls an "
                    "ingested API. Ingest the team's code with `apiatlas ingest --code DIR` and "
                    "the specs it calls with `--openapi`.\n")  # fmt: skip
        files = len({(s.code_set, s.file) for s in self.sites})
        known = len(self.sites) - len(self.unknown)
        lines = [
            f"# Code report: project '{self.project}'{scope}", "",
            f"{len(self.sites)} sites in {files} files: {known} call {len(self.endpoints)} "
            f"endpoints, {len(self.unknown)} call an API but no endpoint in its spec.",
        ]  # fmt: skip
        if self.deprecated:
            lines += ["", "## Deprecated endpoints in use", ""]
            lines += _grouped(self.deprecated, replacements=True)
        if self.unknown:
            lines += ["", "## Calls not in the spec", ""]
            lines += [f"- `{s.where}` {s.api}: `{s.sent}` ({s.matched_by}, "
                      f"confidence {s.confidence:.2f})" for s in self.unknown[:SHOWN]]  # fmt: skip
            lines += _more(len(self.unknown))
        lines += ["", "## Endpoints called", ""]
        lines += _grouped([s for s in self.sites if s.endpoint is not None])
        return "\n".join(lines) + "\n"


def _grouped(sites: list[CodeSite], *, replacements: bool = False) -> list[str]:
    by_endpoint: dict[str, list[CodeSite]] = defaultdict(list)
    for site in sites:
        by_endpoint[f"{site.api} `{site.endpoint}`"].append(site)
    rows = []
    for name, group in sorted(by_endpoint.items())[:SHOWN]:
        places = ", ".join(f"`{s.where}`" for s in group[:_PLACES])
        more = f" and {len(group) - _PLACES} more" if len(group) > _PLACES else ""
        low = min(s.confidence for s in group)
        instead = group[0].replacement if replacements else []
        use = f"; use {', '.join(f'`{r}`' for r in instead)} instead" if instead else ""
        rows.append(f"- {name}: {len(group)} site(s) at {places}{more} "
                    f"(confidence ≥ {low:.2f}){use}")  # fmt: skip
    return rows + _more(len(by_endpoint))



def _more(count: int) -> list[str]:
    return [f"- … and {count - SHOWN} more (`--json` lists every site)"] if count > SHOWN else []
