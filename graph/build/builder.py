"""Turn loader output into backend-neutral graph batches.

``build_api_batch`` emits one API's Api, Resource, Endpoint, OperationKind, Parameter, Schema,
Field and Tag nodes with every derived edge (REQUIRES included). ``build_docs_batch`` emits the
DocSection nodes of one documentation set. Keys are deterministic and namespaced by API (or doc
set) name, and props are JSON values in a stable order, so re-building unchanged input gives an
identical batch and re-ingesting it is a no-op.
"""

from __future__ import annotations

import json
from typing import Any

from apiatlas.graph.build.dependencies import requires_edges
from apiatlas.graph.build.kinds import classify
from apiatlas.graph.build.linker import extract_mentions
from apiatlas.graph.model import Edge, GraphBatch, Node, OperationKindName
from apiatlas.graph.build.resources import (
    DEFINES,
    ResourceIndex,
    definitions,
    derive_resources,
)
from apiatlas.loaders.models import ApiSpec, DocPage, Endpoint, FieldInfo


def api_scope(name: str) -> str:
    """The scope owning one API's nodes."""
    return f"api:{name}"


def docs_scope(name: str) -> str:
    """The scope owning one documentation set's nodes."""
    return f"docs:{name}"


def endpoint_key(api: str, endpoint: Endpoint) -> str:
    """``square/endpoint/POST /v2/locations``."""
    return f"{api}/endpoint/{endpoint.key}"


def resource_key(api: str, key_name: str) -> str:
    """``square/resource/location``."""
    return f"{api}/resource/{key_name}"


def jsonable(value: Any) -> Any:
    """A JSON-safe copy of ``value`` (YAML dates and other scalars become strings)."""
    return json.loads(json.dumps(value, default=str, sort_keys=True))


class _Batch:
    def __init__(self) -> None:
        self.nodes: dict[str, Node] = {}
        self.edges: dict[tuple[str, str, str], Edge] = {}

    def node(self, key: str, label: Any, props: dict[str, Any]) -> str:
        self.nodes.setdefault(key, Node(key=key, label=label, props=jsonable(props)))
        return key

    def edge(self, src: str, type_: Any, dst: str, props: dict[str, Any] | None = None) -> None:
        edge = Edge(src=src, type=type_, dst=dst, props=props or {})
        self.edges.setdefault((src, type_, dst), edge)

    def batch(self, project: str, scope: str) -> GraphBatch:
        return GraphBatch(
            project=project,
            scope=scope,
            nodes=[self.nodes[k] for k in sorted(self.nodes)],
            edges=[self.edges[k] for k in sorted(self.edges)],
        )


def build_api_batch(spec: ApiSpec, *, project: str) -> GraphBatch:
    """The complete graph of one API, as a batch for scope ``api:<spec.name>``.

    Args:
        spec: A loaded API.
        project: The project the batch belongs to.
    """
    api = spec.name
    out = _Batch()
    api_key = out.node(
        f"{api}/api",
        "Api",
        {
            "name": api,
            "title": spec.title,
            "version": spec.version,
            "description": spec.description,
            "spec_format": spec.spec_format,
            "source": spec.source,
            "servers": spec.servers,
            "base_path": spec.base_path,
        },
    )
    index = derive_resources(spec)
    for key_name in sorted(index.resources):
        res = index.resources[key_name]
        key = out.node(
            resource_key(api, key_name),
            "Resource",
            {
                "api": api,
                "name": res.name,
                "aliases": sorted(res.aliases),
                "parent": resource_key(api, res.parent) if res.parent else None,
            },
        )
        out.edge(api_key, "HAS_RESOURCE", key)
        if res.parent:
            out.edge(resource_key(api, res.parent), "SUB_RESOURCE", key)

    tags = {t.name: t.description for t in spec.tags}
    kinds: dict[str, OperationKindName] = {}
    for endpoint in spec.endpoints:
        kinds[endpoint.key] = classify(endpoint)
        _add_endpoint(out, api, endpoint, kinds[endpoint.key], index, tags)
    for edge in requires_edges(spec, index, kinds, lambda e: endpoint_key(api, e)):
        out.edge(edge.src, edge.type, edge.dst, edge.props)
    return out.batch(project, api_scope(api))


def _add_endpoint(
    out: _Batch,
    api: str,
    endpoint: Endpoint,
    kind: OperationKindName,
    index: ResourceIndex,
    tags: dict[str, str],
) -> None:
    key = endpoint_key(api, endpoint)
    res_key = resource_key(api, index.of_endpoint[endpoint.key])
    request_schema = _request_schema(api, endpoint, out)
    response_schema = _response_schema(api, endpoint, out)
    out.node(
        key,
        "Endpoint",
        {
            "api": api,
            "method": endpoint.method,
            "path": endpoint.path,
            "operation_id": endpoint.operation_id,
            "summary": endpoint.summary,
            "description": endpoint.description,
            "deprecated": endpoint.deprecated,
            "webhook": endpoint.webhook,
            "resource": res_key,
            "resource_name": index.resources[index.of_endpoint[endpoint.key]].name,
            "kind": kind,
            "source": endpoint.provenance.source,
            "pointer": endpoint.provenance.pointer,
            "tags": sorted(endpoint.tags),
            "security": sorted(endpoint.security),
            "servers": endpoint.servers,
            "examples": [_example(e) for e in endpoint.examples],
            "code_samples": [c.model_dump(mode="json") for c in endpoint.code_samples],
            "request_schema": request_schema,
            "response_schema": response_schema,
        },
    )
    out.edge(res_key, "HAS_ENDPOINT", key)
    kind_key = out.node(f"{api}/kind/{kind}", "OperationKind", {"api": api, "name": kind})
    out.edge(key, "OF_KIND", kind_key)
    _add_parameters(out, key, endpoint)
    if request_schema:
        out.edge(key, "ACCEPTS", f"{api}/schema/{request_schema}")
    if response_schema:
        out.edge(key, "RETURNS", f"{api}/schema/{response_schema}")
    for tag in endpoint.tags:
        tag_props = {"api": api, "name": tag, "description": tags.get(tag, "")}
        tag_key = out.node(f"{api}/tag/{tag}", "Tag", tag_props)
        out.edge(key, "TAGGED", tag_key)


def _add_parameters(out: _Batch, key: str, endpoint: Endpoint) -> None:
    """The endpoint's parameters as nodes under its key, in order, each linked from it."""
    for order, param in enumerate(endpoint.parameters):
        param_key = out.node(
            f"{key}/param/{param.location}/{param.name}",
            "Parameter",
            {
                "name": param.name,
                "location": param.location,
                "required": param.required,
                "type": param.type,
                "description": param.description,
                "deprecated": param.deprecated,
                "order": order,
                "source": param.provenance.source,
                "pointer": param.provenance.pointer,
            },
        )
        out.edge(key, "HAS_PARAMETER", param_key)


def _example(example: Any) -> dict[str, Any]:
    return {
        "kind": example.kind,
        "name": example.name,
        "media_type": example.media_type,
        "status": example.status,
        "value": example.value,
        "source": example.provenance.source,
        "pointer": example.provenance.pointer,
    }


def _request_schema(api: str, endpoint: Endpoint, out: _Batch) -> str | None:
    body = endpoint.request_body
    if body is None:
        return None
    name = body.schema_name or f"{endpoint.operation_id or endpoint.key} request"
    prov = body.provenance
    _add_schema(out, api, name, body.description, body.fields, prov.source, prov.pointer)
    return name


def _response_schema(api: str, endpoint: Endpoint, out: _Batch) -> str | None:
    for response in sorted(endpoint.responses, key=lambda r: r.status):
        if response.status.startswith("2") and (response.schema_name or response.fields):
            name = response.schema_name or f"{endpoint.operation_id or endpoint.key} response"
            prov = response.provenance
            _add_schema(
                out, api, name, response.description, response.fields, prov.source, prov.pointer
            )
            return name
    return None


def _add_schema(
    out: _Batch,
    api: str,
    name: str,
    description: str,
    fields: list[FieldInfo],
    source: str,
    pointer: str,
) -> None:
    key = f"{api}/schema/{name}"
    if key in out.nodes:
        return
    props = {"api": api, "name": name, "description": description, "source": source}
    out.node(key, "Schema", {**props, "pointer": pointer})
    for order, f in enumerate(fields):
        field_key = out.node(
            f"{key}/field/{f.path}",
            "Field",
            {
                "name": f.path,
                "type": f.type,
                "required": f.required,
                "required_if": f.required_if,
                "description": f.description,
                "deprecated": f.deprecated,
                "read_only": f.read_only,
                "order": order,
            },
        )
        out.edge(key, "HAS_FIELD", field_key)


def build_docs_batch(pages: list[DocPage], *, project: str, name: str) -> GraphBatch:
    """DocSection nodes of one documentation set, as a batch for scope ``docs:<name>``.

    Args:
        pages: Loaded guide pages.
        project: The project the batch belongs to.
        name: The documentation set's name (unique within the project).
    """
    out = _Batch()
    for page in sorted(pages, key=lambda p: p.source):
        seen: dict[str, int] = {}
        for section in page.sections:
            base = f"{name}/doc/{section.uri}"
            seen[base] = seen.get(base, 0) + 1
            # Repeated headings ("Example") share an anchor: number the repeats.
            key = base if seen[base] == 1 else f"{base}~{seen[base]}"
            out.node(
                key,
                "DocSection",
                {
                    "docs": name,
                    "source": section.source,
                    "title": section.title,
                    "section_path": section.section_path,
                    "anchor": section.anchor,
                    "mentions": extract_mentions(section.text),
                    # What the section defines ("Sources are the physical locations ..."):
                    # aliases for the resources of those names (see ``guide_definitions``).
                    "definitions": [f"{s}{DEFINES}{a}" for s, a in definitions(section.text)],
                },
            )
    return out.batch(project, docs_scope(name))
