"""Per dev case (validation included): the kinds the question asks, its best-matched resources
and whether that resource has an endpoint of an asked kind. Dev sets only.

    .venv/bin/python experiments/2026-11-27-abstention/inspect_kinds.py > .apiatlas/abstention/kinds.txt
"""

from __future__ import annotations

from apiatlas.config import Settings
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_atlas, dataset_files
from apiatlas.evals.train import DEV, EXCLUDED, HOMES
from apiatlas.rag.retrieval.embeddings import load_embeddings
from apiatlas.rag.retrieval.graph import KnowledgeGraphRetriever


def main() -> None:
    embeddings = load_embeddings(Settings())
    for path in dataset_files(DEV):
        if path.stem in EXCLUDED:
            continue
        dataset = load_dataset(path)
        with dataset_atlas(dataset, HOMES, embeddings) as atlas:
            graph = KnowledgeGraphRetriever(store=atlas.graph, embeddings=atlas.embeddings)
            every = atlas.graph.find_endpoints(dataset.name, limit=100000)
            by_resource: dict[str, set[str]] = {}
            for ref in every:
                by_resource.setdefault(ref.resource, set()).add(ref.kind)
            for case in dataset.cases:
                lookup = graph.lookup(case.question, project=dataset.name, k=10)
                intent = lookup.intent
                matches = sorted(lookup.matched_resources, key=lambda m: -m.score)[:3]
                shown = ", ".join(
                    f"{m.resource.key}[{m.term}]{m.score:.2f}{m.how[0]}:"
                    f"{'/'.join(sorted(by_resource.get(m.resource.key, ())))}" for m in matches)
                print(f"{dataset.name}\t{'A' if case.answerable else 'U'}\t{intent.kinds}\t"
                      f"{intent.verbs}\t{shown}\tunmatched={lookup.unmatched_terms}\t"
                      f"{case.question[:90]}")


if __name__ == "__main__":
    main()
