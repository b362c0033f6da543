"""Score the code sites apiatlas finds against the testers' labels, per repo, language and style.

``python -m apiatlas.evals.code.score [LABELS.yaml ...] [--out DIR] [--calibrate]`` ingests each
labelled repo's spec and code into a fresh home, reads the code sites in the labelled files and
compares them with the labels, a site being the same file and line:

- **site** precision and recall: every site found (unknown calls included) against every labelled
  one;
- **endpoint** precision and recall: the sites found with an endpoint against the labelled sites
  whose endpoint is in the spec (sites whose endpoint the code leaves open count in neither).

Each figure is given for all sites and for the ``http`` and ``sdk`` styles apart (a found site's
style: ``sdk`` when matched by an SDK method's name, else ``http``), per repo and per language
within a split. ``--calibrate`` (dev label files only) writes each ``matched_by``'s precision on
them to ``graph/build/code_confidence.json``, the confidence every site matched that way carries.
"""

from __future__ import annotations

import argparse
import json
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.errors import UsageError
from apiatlas.evals.code.labels import RepoLabels, label_files, load_labels, shared_data_root
from apiatlas.evals.code.repos import DEFAULT_ROOT, repo_named, source_root
from apiatlas.graph.build import code as code_links
from apiatlas.rag.code.sites import CodeSite

SDK_MATCHES = frozenset({"operation-id", "sdk"})
CONFIDENCE_FILE = Path(code_links.__file__).with_name("code_confidence.json")
STYLES = ("all", "http", "sdk")


@dataclass
class Tally:
    """Found, labelled and agreeing counts; precision and recall from them."""

    found: int = 0
    labelled: int = 0
    agree: int = 0

    def add(self, other: Tally) -> None:
        self.found += other.found
        self.labelled += other.labelled
        self.agree += other.agree

    def figures(self) -> dict[str, float | int | None]:
        return {
            "precision": round(self.agree / self.found, 3) if self.found else None,
            "recall": round(self.agree / self.labelled, 3) if self.labelled else None,
            "found": self.found, "labelled": self.labelled, "agree": self.agree,
        }  # fmt: skip


@dataclass
class RepoScore:
    repo: str
    split: str
    language: str
    site: dict[str, Tally] = field(default_factory=lambda: {s: Tally() for s in STYLES})
    endpoint: dict[str, Tally] = field(default_factory=lambda: {s: Tally() for s in STYLES})
    matched: dict[str, list[int]] = field(default_factory=dict)  # matched_by -> [right, found]
    decoys_hit: int = 0
    misses: list[str] = field(default_factory=list)
    wrong: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "repo": self.repo, "split": self.split, "language": self.language,
            "site": {s: t.figures() for s, t in self.site.items()},
            "endpoint": {s: t.figures() for s, t in self.endpoint.items()},
            "matched_by": self.matched, "decoys_hit": self.decoys_hit,
            "misses": self.misses, "wrong": self.wrong,
        }  # fmt: skip


def style_of(site: CodeSite) -> str:
    return "sdk" if site.matched_by in SDK_MATCHES else "http"


def score(labels: RepoLabels, language: str, found: Iterable[CodeSite]) -> RepoScore:
    """Compare the sites found in the labelled files with the labels (same file and line)."""
    files = set(labels.files)
    by_place = {(s.file, s.line): s for s in labels.sites}
    decoys = {(d.file, d.line) for d in labels.decoys}
    predicted = {(s.file, s.line): s for s in found if s.file in files}
    out = RepoScore(labels.repo, labels.split, language)
    right: dict[str, Counter[str]] = defaultdict(Counter)
    for place, site in sorted(predicted.items()):
        label = by_place.get(place)
        for style in ("all", style_of(site)):
            out.site[style].found += 1
            out.site[style].agree += label is not None
        out.decoys_hit += place in decoys and label is None
        if label is not None and label.endpoint == "dynamic" and site.endpoint is not None:
            continue  # the code leaves the endpoint open: neither right nor wrong
        if site.endpoint is not None:
            ok = label is not None and label.spec_endpoint == site.endpoint
            for style in ("all", style_of(site)):
                out.endpoint[style].found += 1
                out.endpoint[style].agree += ok
        else:
            ok = label is not None and label.spec_endpoint is None
        right[site.matched_by]["found"] += 1
        right[site.matched_by]["right"] += ok
        if not ok:
            said = label.endpoint if label is not None else "no site"
            out.wrong.append(f"{site.file}:{site.line} {site.matched_by} {site.endpoint} "
                             f"(labelled: {said})")  # fmt: skip
    for place, label in sorted(by_place.items()):
        for style in ("all", label.style):
            out.site[style].labelled += 1
            if label.spec_endpoint is not None:
                out.endpoint[style].labelled += 1
        if place not in predicted:
            out.misses.append(f"{label.file}:{label.line} {label.style} {label.endpoint}")
    out.matched = {m: [c["right"], c["found"]] for m, c in sorted(right.items())}
    return out


def found_sites(labels: RepoLabels, code_root: Path, data: Path) -> tuple[str, list[CodeSite]]:
    """Ingest the repo's spec and code into a fresh home; its language and code sites."""
    repo = repo_named(labels.repo)
    folder = source_root(repo, code_root)
    with tempfile.TemporaryDirectory() as home, ApiAtlas(
        Settings(home=Path(home), project=repo.name)
    ) as atlas:
        atlas.ingest(openapi=[data / repo.spec], code=[folder], project=repo.name)
        return repo.language, atlas.code_report(repo.name).sites


def run(paths: Sequence[Path], code_root: Path = DEFAULT_ROOT) -> list[RepoScore]:
    data = shared_data_root()
    scores = []
    for path in paths:
        labels = load_labels(path)
        language, sites = found_sites(labels, code_root, data)
        scores.append(score(labels, language, sites))
    return scores


def by_language(scores: Sequence[RepoScore]) -> dict[str, dict[str, Any]]:
    """Each split's figures per language (the repos of one language added up)."""
    groups: dict[tuple[str, str], RepoScore] = {}
    for s in scores:
        total = groups.setdefault((s.split, s.language), RepoScore("", s.split, s.language))
        for style in STYLES:
            total.site[style].add(s.site[style])
            total.endpoint[style].add(s.endpoint[style])
    return {f"{split}/{language}": {"site": {k: t.figures() for k, t in g.site.items()},
                                    "endpoint": {k: t.figures() for k, t in g.endpoint.items()}}
            for (split, language), g in sorted(groups.items())}  # fmt: skip


def calibrate(scores: Sequence[RepoScore]) -> dict[str, Any]:
    """Each ``matched_by``'s precision on the dev repos, smoothed (one right and one wrong
    added), and the counts it came from."""
    if any(s.split != "dev" for s in scores):
        raise UsageError("calibrate on dev label files only: test sets report, never calibrate")
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for s in scores:
        for matched_by, (right, found) in s.matched.items():
            counts[matched_by][0] += right
            counts[matched_by][1] += found
    return {
        "from": sorted(s.repo for s in scores),
        "command": "python -m apiatlas.evals.code.score --calibrate",
        "counts": dict(sorted(counts.items())),
        "confidence": {m: round((r + 1) / (n + 2), 3) for m, (r, n) in sorted(counts.items())},
    }


def markdown(scores: Sequence[RepoScore]) -> str:
    lines = ["# Code sites against the testers' labels", "",
             "| split | repo | language | style | site P | site R | endpoint P | endpoint R | "
             "labelled | decoys hit |", "|---|---|---|---|---|---|---|---|---|---|"]  # fmt: skip
    for s in scores:
        for style in STYLES:
            site, ep = s.site[style].figures(), s.endpoint[style].figures()
            if not site["labelled"] and not site["found"]:
                continue
            lines.append(
                f"| {s.split} | {s.repo} | {s.language} | {style} | {_f(site['precision'])} | "
                f"{_f(site['recall'])} | {_f(ep['precision'])} | {_f(ep['recall'])} | "
                f"{site['labelled']} | {s.decoys_hit if style == 'all' else ''} |"
            )
    return "\n".join(lines) + "\n"


def _f(value: object) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m apiatlas.evals.code.score")
    parser.add_argument("labels", nargs="*", type=Path, help="label files (default: dev and test)")
    parser.add_argument("--out", type=Path, default=Path("evals/results/code"))
    parser.add_argument("--code-root", type=Path, default=DEFAULT_ROOT)
    parser.add_argument("--calibrate", action="store_true",
                        help="write the dev files' precision per matched_by as the confidences")
    args = parser.parse_args(argv)
    paths = args.labels or label_files(("dev",) if args.calibrate else ("dev", "test"))
    scores = run(paths, args.code_root)
    if args.calibrate:
        table = calibrate(scores)
        CONFIDENCE_FILE.write_text(json.dumps(table, indent=2) + "\n")
        print(f"{CONFIDENCE_FILE}: {table['confidence']}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    report = {"repos": [s.to_json() for s in scores], "languages": by_language(scores)}
    (args.out / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "report.md").write_text(markdown(scores))
    print(markdown(scores), end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
