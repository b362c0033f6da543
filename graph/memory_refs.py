"""How a project memory's refs name graph nodes: the matching rules both stores share.

A ref is either an endpoint signature (``METHOD /path``) or a resource name. Endpoint refs match
endpoints whose method and path are equal once path-parameter names are blanked and a trailing
slash is dropped (:func:`apiatlas.graph.signatures.normalise_endpoint`), in any API. Resource refs
match resources whose name or one of whose aliases is the same singular noun phrase
(``Locations`` names the resource ``location``; ``facilities`` its alias ``facility``).

The stores only fetch candidates (endpoints with the ref's method whose path starts with the
ref's literal prefix, and resources) and keep the ones these functions accept, so the rule lives
in one place and never has to be expressed in SQL or Cypher.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, NamedTuple

from apiatlas.errors import UsageError
from apiatlas.graph.model import MemoryLink
from apiatlas.graph.signatures import HTTP_METHODS, endpoint_key, normalise_endpoint
from apiatlas.graph.words import noun_phrase

RefKind = Literal["endpoint", "resource"]


class RefTarget(NamedTuple):
    """What a ref names, in comparison form.

    Attributes:
        kind: ``endpoint`` or ``resource``.
        match: The comparison form: ``POST /v2/locations/{}`` or ``location``.
    """

    kind: RefKind
    match: str


class SignatureProbe(NamedTuple):
    """The cheap, exact pre-filter a store runs for one endpoint signature.

    Attributes:
        signature: The comparison form (``POST /v2/locations/{}``).
        method: The upper-case HTTP method.
        prefix: The path up to the first parameter: every matching endpoint's path starts with it.
    """

    signature: str
    method: str
    prefix: str


def ref_target(ref: str) -> RefTarget:
    """Classify a ref and give its comparison form.

    Raises:
        UsageError: The ref is empty, or starts with an HTTP method but has no ``/path``.
    """
    value = ref.strip()
    if not value:
        raise UsageError("an empty ref: name an endpoint ('POST /v2/locations') or a resource")
    first = value.split()[0].upper()
    # The same rule as ``parse_ref``: a method or a slash means the ref is meant as an endpoint.
    if first in HTTP_METHODS or "/" in value:
        return RefTarget("endpoint", normalise_endpoint(value))
    return RefTarget("resource", resource_form(value))


def resource_form(name: str) -> str:
    """A resource name or alias in comparison form: a lower-case singular noun phrase."""
    return noun_phrase(name) or name.strip().lower()


def probe(signature: str) -> SignatureProbe:
    """The pre-filter for an endpoint signature (``METHOD /path``).

    Raises:
        UsageError: ``signature`` is not ``METHOD /path``.
    """
    normal = normalise_endpoint(signature)
    method, path = normal.split(" ", 1)
    return SignatureProbe(normal, method, path.split("{", 1)[0])


def endpoint_matches(probe_: SignatureProbe, method: str, path: str) -> bool:
    """Whether an endpoint (its stored method and path) is the one the probe names."""
    return endpoint_key(f"{method} {path}") == probe_.signature


def resource_forms(props: Mapping[str, Any]) -> set[str]:
    """The comparison forms a resource node answers to: its name and aliases."""
    names = [props.get("name", ""), *props.get("aliases", [])]
    return {resource_form(n) for n in names if isinstance(n, str) and n.strip()}


def resolve_refs(
    refs: Sequence[str],
    endpoints: Iterable[tuple[str, str, str]],
    resources: Iterable[tuple[str, Mapping[str, Any]]],
) -> dict[str, list[str]]:
    """The node keys each ref names, from ``(key, method, path)`` endpoints and
    ``(key, props)`` resources; an empty list means the ref names nothing present.

    Raises:
        UsageError: A ref is malformed (see :func:`ref_target`).
    """
    targets = {ref: ref_target(ref) for ref in refs}
    by_signature: dict[str, list[str]] = {}
    for key, method, path in endpoints:
        by_signature.setdefault(endpoint_key(f"{method} {path}"), []).append(key)
    by_name: dict[str, list[str]] = {}
    for key, props in resources:
        for form in resource_forms(props):
            by_name.setdefault(form, []).append(key)
    found: dict[str, list[str]] = {}
    for ref, target in targets.items():
        table = by_signature if target.kind == "endpoint" else by_name
        found[ref] = sorted(set(table.get(target.match, [])))
    return found


RefFlags = tuple[bool | None, bool | None]
"""``(avoid, inferred)`` of one ref as stored with its link; ``None`` where the link predates
the flags."""


def memory_link(memory_id: str, rank: str | None, direct: Iterable[RefFlags]) -> MemoryLink:
    """How one memory's link to one endpoint reads back (every store builds it here).

    Args:
        memory_id: The memory.
        rank: Its reading order as linked (``None``: the link predates it).
        direct: The flags of each of its refs that names the endpoint itself (none when the
            memory reaches the endpoint through its resource only).

    A flag the link predates reads as the answer that makes a reader look at the memory: it
    may forbid the endpoint, and it may name it.
    """
    flags = list(direct)
    return MemoryLink(
        memory_id=memory_id,
        avoids=any(avoid is None or avoid for avoid, _ in flags),
        named=any(inferred is None or not inferred for _, inferred in flags),
        rank=rank or "",
    )


def in_reading_order(
    links: Iterable[MemoryLink], limit: int | None = None
) -> list[MemoryLink]:
    """Links in ``(rank, memory_id)`` order, at most ``limit`` of each kind (forbidding;
    naming, not forbidding; the others), as :meth:`MemoryLinks.memory_links` lists them."""
    ordered = sorted(links, key=lambda link: (link.rank, link.memory_id))
    if limit is None:
        return ordered
    taken: dict[tuple[bool, bool], int] = {}
    out = []
    for link in ordered:
        kind = (link.avoids, link.named and not link.avoids)
        taken[kind] = taken.get(kind, 0) + 1
        if taken[kind] <= limit:
            out.append(link)
    return out
