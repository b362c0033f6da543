"""How often variants of "the asked kind is absent from the resource the question names" fire
on answerable and unanswerable dev cases (validation included; dev sets only).

    .venv/bin/python experiments/2026-11-27-abstention/kind_rules.py [RULES.json] [--show]

RULES.json gets each case's rules (analyse.py --rules reads it). ``--show`` also prints, per
case, the kinds the question asks, its best-matched resources and the kinds their endpoints
have (what the rules were read from).
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from apiatlas.config import Settings
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_atlas, dataset_files
from apiatlas.evals.train import DEV, EXCLUDED, HOMES, VALIDATION
from apiatlas.rag.runtime.embeddings import load_embeddings
from apiatlas.rag.retrieval.graph import KnowledgeGraphRetriever


def variants(lookup, by_resource, under):
    kinds = lookup.intent.kinds
    matches = lookup.matched_resources
    out = {}
    if not kinds or not matches:
        return {k: 0 for k in ("v1", "v2", "v3", "v4", "v5")}
    top = max(m.score for m in matches)
    best = [m.resource.key for m in matches if m.score >= top - 1e-9]
    lexical = [m.resource.key for m in matches if m.how == "lexical"]
    own = lambda keys: set().union(*(by_resource.get(k, set()) for k in keys))  # noqa: E731
    deep = lambda keys: set().union(*(under.get(k, set()) for k in keys))  # noqa: E731
    out["v1"] = int(kinds[0] not in own(best))
    out["v2"] = int(not set(kinds) & own(best))
    out["v3"] = int(not set(kinds) & own([m.resource.key for m in matches]))
    out["v4"] = int(bool(lexical) and not set(kinds) & own(lexical))
    out["v5"] = int(not set(kinds) & deep(best))
    return out


def show(dataset: str, answerable: bool, question: str, lookup, by_resource) -> None:
    """One case's line: its asked kinds and verbs, best three matches with their kinds."""
    matches = sorted(lookup.matched_resources, key=lambda m: -m.score)[:3]
    shown = ", ".join(
        f"{m.resource.key}[{m.term}]{m.score:.2f}{m.how[0]}:"
        f"{'/'.join(sorted(by_resource.get(m.resource.key, ())))}" for m in matches)
    print(f"{dataset}\t{'A' if answerable else 'U'}\t{lookup.intent.kinds}\t"
          f"{lookup.intent.verbs}\t{shown}\tunmatched={lookup.unmatched_terms}\t{question[:90]}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("rules", type=Path, nargs="?")
    parser.add_argument("--show", action="store_true")
    args = parser.parse_args()
    embeddings = load_embeddings(Settings())
    counts = {part: Counter() for part in ("train", "validation")}
    fired_by_case: dict[str, dict[str, int]] = {}
    for path in dataset_files(DEV):
        if path.stem in EXCLUDED:
            continue
        part = "validation" if path.stem in VALIDATION else "train"
        dataset = load_dataset(path)
        with dataset_atlas(dataset, HOMES, embeddings) as atlas:
            graph = KnowledgeGraphRetriever(store=atlas.graph, embeddings=atlas.embeddings)
            by_resource: dict[str, set[str]] = {}
            under: dict[str, set[str]] = {}
            for ref in atlas.graph.find_endpoints(dataset.name, limit=100000):
                by_resource.setdefault(ref.resource, set()).add(ref.kind)
                parts = ref.resource.split("/")
                for i in range(len(parts), 0, -1):
                    under.setdefault("/".join(parts[:i]), set()).add(ref.kind)
            for case in dataset.cases:
                lookup = graph.lookup(case.question, project=dataset.name, k=10)
                if args.show:
                    show(dataset.name, case.answerable, case.question, lookup, by_resource)
                label = "A" if case.answerable else "U"
                counts[part][label, "n"] += 1
                found = variants(lookup, by_resource, under)
                fired_by_case[f"{dataset.name}|{case.question}"] = found
                for name, fired in found.items():
                    counts[part][label, name] += fired
    for part, c in counts.items():
        print(part, {f"{v}": f"U {c['U', v]}/{c['U', 'n']} A {c['A', v]}/{c['A', 'n']}"
                     for v in ("v1", "v2", "v3", "v4", "v5")})
    if args.rules:
        args.rules.write_text(json.dumps(fired_by_case), encoding="utf-8")


if __name__ == "__main__":
    main()
