"""Ingest specs and docs into a knowledge-graph store in one transaction.

Doc links cross scopes (a guide set describes endpoints of several APIs), so they live in their
own ``links`` scope and are recomputed from the whole project state after every ingest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from apiatlas.graph.build.builder import build_api_batch, build_docs_batch
from apiatlas.graph.build.linker import link
from apiatlas.graph.model import ChangeSummary, GraphBatch, Node, NodeLabel
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.loaders.models import ApiSpec, DocPage

LINKS_SCOPE = "links"


def plan_batches(
    store: KnowledgeGraphStore,
    project: str,
    *,
    specs: Sequence[ApiSpec] = (),
    docs: Mapping[str, list[DocPage]] | None = None,
) -> list[GraphBatch]:
    """The batches an ingest applies: one per API, one per doc set, and the ``links`` batch.

    Args:
        store: Read for the nodes of scopes this ingest does not replace.
        project: The project to ingest into.
        specs: Loaded APIs (each replaces its ``api:<name>`` scope).
        docs: Doc set name -> pages (each replaces its ``docs:<name>`` scope).
    """
    batches = [build_api_batch(spec, project=project) for spec in specs]
    batches += [
        build_docs_batch(pages, project=project, name=name)
        for name, pages in sorted((docs or {}).items())
    ]
    replaced = {b.scope for b in batches}
    kept = [s for s in store.scopes(project) if s not in replaced and s != LINKS_SCOPE]

    def gather(label: NodeLabel) -> list[Node]:
        found = [n for b in batches for n in b.nodes if n.label == label]
        for scope in kept:
            found += store.nodes(project, label, scope=scope)
        return found

    edges = link(gather("DocSection"), gather("Endpoint"))
    batches.append(GraphBatch(project=project, scope=LINKS_SCOPE, edges=edges))
    return batches


def ingest_graph(
    store: KnowledgeGraphStore,
    project: str,
    *,
    specs: Sequence[ApiSpec] = (),
    docs: Mapping[str, list[DocPage]] | None = None,
) -> ChangeSummary:
    """Build and apply every batch of an ingest in one ``store.apply`` call (one transaction).

    Returns:
        What changed; ``changed`` is False when the input was already ingested.

    Raises:
        StoreError: The store failed; it is left as it was.
    """
    return store.apply(plan_batches(store, project, specs=specs, docs=docs))
