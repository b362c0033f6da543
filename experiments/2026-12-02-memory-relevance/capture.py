"""Record what the memory review sees for every case of the memory datasets (issue 54, item 2).

For each case: the memories handed to relevance (semantic hits and those linked to the
presented endpoints), what the graph presents, which memories today's rules keep and which lead,
and the answer's cited memories and first endpoint. ``fit.py`` reads the JSON lines.

    .venv/bin/python experiments/2026-12-02-memory-relevance/capture.py DATASET.yaml ... \
        --out DIR [--limit 5]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from apiatlas.config import Settings
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_atlas
from apiatlas.evals.memories import load_memories
from apiatlas.rag.agent import memory as agent_memory
from apiatlas.rag.memory import store as memory_store
from apiatlas.rag.runtime.embeddings import load_embeddings

SEEN: list[dict] = []


def _record(original):
    def relevant_views(views, lookup, related=()):
        kept = original(views, lookup, related)
        SEEN.append(
            {
                "primary": [e.key for e in lookup.primary],
                "prerequisites": [d.provider.key for d in lookup.prerequisites],
                "related": [e.key for e in related],
                "resources": [m.resource.key for m in lookup.matched_resources],
                "kinds": list(lookup.intent.kinds),
                "views": [
                    {
                        "id": v.memory.id,
                        "kind": v.memory.kind,
                        "text": v.memory.text,
                        "steps": list(v.memory.steps),
                        "refs": list(v.memory.refs),
                        "importance": v.memory.importance,
                        "supersedes": v.memory.supersedes is not None,
                        "created": v.memory.created_at.isoformat(),
                        "score": v.hit.score,
                        "matched": v.hit.matched,
                        "stances": dict(v.stances),
                        "resolved": {
                            r: [
                                {"key": e.key, "resource": e.resource, "kind": e.kind}
                                for e in found
                            ]
                            for r, found in v.resolved.items()
                        },
                    }
                    for v in views
                ],
                "kept": [v.memory.id for v in kept],
                "leads": [v.memory.id for v in kept if v.leads],
            }
        )
        return kept

    return relevant_views


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("datasets", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--root", type=Path, default=Path(".apiatlas/exp-memory"))
    parser.add_argument("--limit", type=int, default=5)
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    agent_memory.relevant_views = _record(agent_memory.relevant_views)
    recall = memory_store.ProjectMemory.recall

    def wider(self, question, *, limit=args.limit, **kw):
        return recall(self, question, limit=limit, **kw)

    memory_store.ProjectMemory.recall = wider
    embeddings = load_embeddings(Settings())
    for path in args.datasets:
        dataset = load_dataset(path)
        rows = []
        with dataset_atlas(dataset, args.root, embeddings) as atlas:
            loaded = load_memories(atlas, dataset)
            keys = {v: k for k, v in loaded.ids.items()}
            for case in dataset.cases:
                if case.expected_memories is None:
                    continue
                SEEN.clear()
                result = atlas.ask(case.question, project=dataset.name)
                cited = [c.uri.removeprefix("memory:") for c in result.citations if c.kind == "memory"]
                rows.append(
                    {
                        "dataset": dataset.name,
                        "id": case.id,
                        "question": case.question,
                        "tags": list(case.tags),
                        "expected_endpoints": list(case.expected_endpoints),
                        "acceptable_endpoints": list(case.acceptable_endpoints),
                        "expected": [loaded.ids[k] for k in case.expected_memories],
                        "superseded": [loaded.ids[k] for k in loaded.superseded],
                        "keys": keys,
                        "review": SEEN[-1] if SEEN else None,
                        "cited": cited,
                        "presented": [
                            f"{e.method.upper()} {e.path}" for e in result.endpoints
                        ],
                    }
                )
        (args.out / f"{dataset.name}.jsonl").write_text(
            "".join(json.dumps(r) + "\n" for r in rows)
        )
        print(dataset.name, len(rows), "cases")


if __name__ == "__main__":
    main()
