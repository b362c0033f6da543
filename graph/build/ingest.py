"""Ingest specs and docs into a knowledge-graph store in one transaction.

Doc links cross scopes (a guide set describes endpoints of several APIs), so they live in their
own ``links`` scope and are recomputed from the whole project state after every ingest.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from apiatlas.graph.build.builder import build_api_batch, build_docs_batch
from apiatlas.graph.build.code import build_code_batch, link_code
from apiatlas.graph.build.linker import link
from apiatlas.graph.model import ChangeSummary, GraphBatch, Node, NodeLabel
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.loaders.code.models import CodeFile
from apiatlas.loaders.models import ApiSpec, DocPage

LINKS_SCOPE = "links"


def plan_batches(
    store: KnowledgeGraphStore,
    project: str,
    *,
    specs: Sequence[ApiSpec] = (),
    docs: Mapping[str, list[DocPage]] | None = None,
    code: Mapping[str, list[CodeFile]] | None = None,
    code_roots: Mapping[str, str] | None = None,
) -> list[GraphBatch]:
    """The batches an ingest applies: one per API, one per doc set, one per code set, and the
    ``links`` batch (guide sections to endpoints, and the code's sites).

    Args:
        store: Read for the nodes of scopes this ingest does not replace.
        project: The project to ingest into.
        specs: Loaded APIs (each replaces its ``api:<name>`` scope).
        docs: Doc set name -> pages (each replaces its ``docs:<name>`` scope).
        code: Code set name -> scanned files (each replaces its ``code:<name>`` scope).
        code_roots: Code set name -> the folder scanned.
    """
    batches = [build_api_batch(spec, project=project) for spec in specs]
    batches += [
        build_docs_batch(pages, project=project, name=name)
        for name, pages in sorted((docs or {}).items())
    ]
    batches += [
        build_code_batch(files, project=project, name=name, root=(code_roots or {}).get(name, ""))
        for name, files in sorted((code or {}).items())
    ]
    replaced = {b.scope for b in batches}
    kept = [s for s in store.scopes(project) if s not in replaced and s != LINKS_SCOPE]

    def gather(label: NodeLabel) -> list[Node]:
        found = [n for b in batches for n in b.nodes if n.label == label]
        for scope in kept:
            found += store.nodes(project, label, scope=scope)
        return found

    endpoints = gather("Endpoint")
    sites = link_code(gather("CodeFile"), endpoints, gather("Api"))
    edges = link(gather("DocSection"), endpoints) + sites.edges
    batches.append(GraphBatch(project=project, scope=LINKS_SCOPE, nodes=sites.nodes, edges=edges))
    return batches


def ingest_graph(
    store: KnowledgeGraphStore,
    project: str,
    *,
    specs: Sequence[ApiSpec] = (),
    docs: Mapping[str, list[DocPage]] | None = None,
    code: Mapping[str, list[CodeFile]] | None = None,
) -> ChangeSummary:
    """Build and apply every batch of an ingest in one ``store.apply`` call (one transaction).

    Returns:
        What changed; ``changed`` is False when the input was already ingested.

    Raises:
        StoreError: The store failed; it is left as it was.
    """
    return store.apply(plan_batches(store, project, specs=specs, docs=docs, code=code))
