"""REQUIRES edges: which endpoints produce the ids an endpoint needs.

An endpoint needs a resource's id when it has a path parameter for it (``{location_id}``,
``{locationId}``, or a bare ``{id}`` / ``{sku}`` naming the preceding collection) or a required
request-body field ending in ``_id``/``Id`` (``origin_location_id`` -> location), or a required
``id`` inside an object (``group.id`` -> group). The providers of that id are the resource's
create endpoints, then its list and search endpoints.

A parameter that nearly every endpoint of the API needs is its scope, not a step of a task: the
account every call runs in (``/v2/accounts/{accountId}/...``) comes with the credentials. Such a
parameter gets no REQUIRES edges, so an answer does not tell the developer to create an account
before each call.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping

from apiatlas.graph.model import Edge, OperationKindName
from apiatlas.graph.build.resources import ResourceIndex, id_resource_phrase, resource_chain
from apiatlas.graph.words import is_param, param_name, path_segments, slug
from apiatlas.loaders.models import ApiSpec, Endpoint

PROVIDER_KINDS: tuple[OperationKindName, ...] = ("create", "list", "search")
SCOPE_SHARE = 0.9
"""The share of an API's endpoints that must need a parameter for it to count as the API's scope.

Calibrated on the dev APIs (``python -m apiatlas.evals.scope``): the account parameters of two of
them are needed by 94-98 % of their endpoints, and every other parameter by at most 81 % (most by
under 40 %)."""


def needed_resources(endpoint: Endpoint, index: ResourceIndex) -> list[tuple[str, str]]:
    """``(parameter, resource key name)`` pairs an endpoint needs, in path-then-body order.

    Parameters that cannot be mapped to a resource of the API are skipped.
    """
    own = index.of_endpoint.get(endpoint.key)
    needs: list[tuple[str, str]] = []
    segments = path_segments(endpoint.path)
    for i, seg in enumerate(segments):
        if not is_param(seg):
            continue
        name = param_name(seg)
        phrase = id_resource_phrase(name)
        found = index.find(phrase, own) if phrase else None
        if found is None:
            found = _preceding_resource(segments[:i], index)
        if found is not None:
            needs.append((name, found))
    for name in _required_body_ids(endpoint):
        phrase = id_resource_phrase(name.rsplit(".", 1)[-1])
        found = index.find(phrase, own) if phrase else None
        if found is not None:
            needs.append((name, found))
    return needs


def _preceding_resource(prefix: list[str], index: ResourceIndex) -> str | None:
    # A bare {id} (or {sku}, {key}) identifies the collection named just before it.
    if not prefix or is_param(prefix[-1]):
        return None
    key_name = "/".join(slug(n) for n in resource_chain("/" + "/".join(prefix)))
    return key_name if key_name in index.resources else None


def _required_body_ids(endpoint: Endpoint) -> list[str]:
    body = endpoint.request_body
    if body is None:
        return []
    required = {f.path for f in body.fields if f.required}
    out: list[str] = []
    for f in body.fields:
        parts = f.path.split(".")
        # A required field inside an optional object is not required by the call.
        ancestors_required = all(".".join(parts[:i]) in required for i in range(1, len(parts)))
        if not (f.required and ancestors_required):
            continue
        if f.name.endswith(("_id", "Id")):
            out.append(f.path)
        elif f.name == "id" and len(parts) > 1:
            # A reference by nested object ({"group": {"id": ...}}) names its resource by the
            # object's field: read it as ``group_id``.
            out.append(f"{'.'.join(parts[:-1])}_id")
    return out


def requires_edges(
    spec: ApiSpec,
    index: ResourceIndex,
    kinds: Mapping[str, OperationKindName],
    endpoint_key: Callable[[Endpoint], str],
) -> list[Edge]:
    """REQUIRES edges for every endpoint of a spec.

    Args:
        spec: The API.
        index: Its resources (from :func:`~apiatlas.graph.build.resources.derive_resources`).
        kinds: ``METHOD /path`` -> operation kind.
        endpoint_key: Maps an endpoint to its graph node key.

    Returns:
        Edges ``endpoint -REQUIRES-> provider`` with props ``param``, ``order`` (the parameter's
        position among the endpoint's needs) and ``rank`` (0 = the best provider of that
        parameter: creates before lists before searches), sorted deterministically.
    """
    providers: dict[str, list[Endpoint]] = {}
    for kind in PROVIDER_KINDS:
        # Deprecated providers last: a trail should point at what to call today.
        for ep in sorted(spec.endpoints, key=lambda e: (e.deprecated, e.path, e.method)):
            if kinds[ep.key] == kind:
                providers.setdefault(index.of_endpoint[ep.key], []).append(ep)
    needs = {ep.key: needed_resources(ep, index) for ep in spec.endpoints}
    scope = scope_parameters(needs.values(), len(spec.endpoints))
    edges: dict[tuple[str, str], Edge] = {}
    for ep in spec.endpoints:
        src = endpoint_key(ep)
        own = index.of_endpoint[ep.key]
        for order, (param, resource) in enumerate(needs[ep.key]):
            if (param, resource) in scope:
                continue
            if resource == own and kinds[ep.key] == "create":
                continue  # creating a thing cannot need that thing's id first
            for rank, provider in enumerate(providers.get(resource, [])):
                dst = endpoint_key(provider)
                if dst != src and (src, dst) not in edges:
                    props = {"param": param, "order": order, "rank": rank}
                    edges[(src, dst)] = Edge(src=src, type="REQUIRES", dst=dst, props=props)
    return [edges[k] for k in sorted(edges)]


def need_shares(
    needs: Iterable[list[tuple[str, str]]], endpoints: int
) -> dict[tuple[str, str], float]:
    """Per ``(parameter, resource)`` pair, the share of the API's endpoints that need it.

    Args:
        needs: Each endpoint's :func:`needed_resources`.
        endpoints: How many endpoints the API has.
    """
    counts = Counter(pair for need in needs for pair in set(need))
    return {pair: n / max(endpoints, 1) for pair, n in counts.most_common()}


def scope_parameters(
    needs: Iterable[list[tuple[str, str]]], endpoints: int
) -> set[tuple[str, str]]:
    """The ``(parameter, resource)`` pairs at least :data:`SCOPE_SHARE` of the endpoints need."""
    return {pair for pair, share in need_shares(needs, endpoints).items() if share >= SCOPE_SHARE}
