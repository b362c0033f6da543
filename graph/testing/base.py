"""What every test class of the suite shares: the projects and keys the tests use, and loading
the shipping graph. The tests take a ``store`` fixture that the suite does not define: the
adopter's is the only one (without it pytest reports ``fixture 'store' not found``)."""

from __future__ import annotations

from apiatlas.graph.build.ingest import ingest_graph
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.graph.testing.fixtures import shipping_guide, shipping_spec

P = "proj"
PROJECTS = (P, "a", "b")
"""Every project the tests write to (a store on a shared server may empty them first)."""
CREATE_SHIPMENT = "ship/endpoint/POST /v2/shipments"
CREATE_LOCATION = "ship/endpoint/POST /v2/locations"
READ_SHIPMENT = "ship/endpoint/GET /v2/shipments/{shipment_id}"
READ_LOCATION = "ship/endpoint/GET /v2/locations/{location_id}"
LIST_CARRIERS = "ship/endpoint/GET /v2/carriers"


def load(store: KnowledgeGraphStore, project: str = P, **spec_kwargs: object) -> None:
    """Ingest the shipping API (``spec_kwargs`` go to :func:`shipping_spec`) and its guide."""
    ingest_graph(store, project, specs=[shipping_spec(**spec_kwargs)], docs={"guide": shipping_guide()})  # type: ignore[arg-type]


def snapshot(store: KnowledgeGraphStore, project: str = P) -> tuple[object, ...]:
    """What the graph reads give for a project, to compare before and after a change."""
    labels = ("Api", "Resource", "Endpoint", "Parameter", "Schema", "Field", "DocSection")
    return (
        store.stats(project).model_dump(),
        tuple(tuple(n.model_dump_json() for n in store.nodes(project, label)) for label in labels),
        store.neighbourhood(project, CREATE_SHIPMENT, depth=2).model_dump_json(),
    )
