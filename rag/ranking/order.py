"""Call order: a presented endpoint that supplies an id another presented one needs comes first."""

from __future__ import annotations

from collections.abc import Sequence

from apiatlas.graph.model import Dependency, EndpointRef


def call_order(endpoints: Sequence[EndpointRef], trails: Sequence[Dependency]) -> list[EndpointRef]:
    """``endpoints`` in rank order, except that each one's providers among them go before it.

    Args:
        endpoints: Presented endpoints, best first.
        trails: Dependencies (``endpoint`` needs what ``provider`` returns), e.g. the REQUIRES
            trails of the presented endpoints.

    Returns:
        The same endpoints: the lookup that yields an id before the call that uses it, the
        ranking kept otherwise.
    """
    present = {e.key: e for e in endpoints}
    providers: dict[str, list[str]] = {}
    for dep in trails:
        if dep.endpoint.key in present and dep.provider.key in present:
            providers.setdefault(dep.endpoint.key, []).append(dep.provider.key)
    out: list[EndpointRef] = []
    placed: set[str] = set()

    def place(key: str, visiting: set[str]) -> None:
        if key in placed or key in visiting:
            return
        visiting.add(key)
        for provider in providers.get(key, []):
            place(provider, visiting)
        placed.add(key)
        out.append(present[key])

    for endpoint in endpoints:
        place(endpoint.key, set())
    return out
