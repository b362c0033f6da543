"""Project-memory links in Neo4j: ``(:Memory {project, id, refs})-[:ABOUT]->(:Endpoint|:Resource)``.

A memory node keeps its refs, and its ABOUT relationships are derived from them with the rules
of :mod:`apiatlas.graph.memory_refs`. ``apply`` deletes a removed endpoint with ``DETACH DELETE``
(its ABOUT links go with it) and then calls :func:`sync_links` for the project in the same write
transaction, which re-creates the links of every ref that names something again. So links
survive re-ingests, vanish with their endpoint and come back with it.

Memory nodes carry ``:ApiAtlasMemory``, not the graph's common ``:ApiAtlas`` label, so the
graph's own queries (stats, nodes, scopes, neighbourhoods, search) never see them.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

import neo4j

from apiatlas.graph.neo4j import queries as q
from apiatlas.graph.memory_refs import (
    RefFlags,
    SignatureProbe,
    endpoint_matches,
    in_reading_order,
    memory_link,
    probe,
    ref_target,
    resolve_refs,
)
from apiatlas.graph.model import EndpointRef, LinkNotes, MemoryLink
from apiatlas.graph.records import endpoint_ref
from apiatlas.graph.store import LinkedGraphStore

T = TypeVar("T")


def _props(raw: dict[str, Any]) -> dict[str, Any]:
    """Projected node properties back to model props (JSON-encoded ones decoded)."""
    as_json = set(raw.get("json_props") or ())
    return {
        k: json.loads(v) if k in as_json else v
        for k, v in raw.items()
        if k != "json_props" and v is not None
    }


def _candidates(
    tx: neo4j.ManagedTransaction, project: str, probes: Sequence[SignatureProbe], api: str | None
) -> list[tuple[str, str, dict[str, Any]]]:
    """``(signature, endpoint key, props)`` of the endpoints each probe names."""
    params = {"project": project, "probes": [p._asdict() for p in set(probes)], "api": api}
    by_signature = {p.signature: p for p in probes}
    out = []
    for row in tx.run(q.ENDPOINT_CANDIDATES, params).data():
        props = _props(row["props"])
        if endpoint_matches(by_signature[row["signature"]], props.get("method", ""), props.get("path", "")):
            out.append((row["signature"], row["key"], props))
    return out


def sync_links(
    tx: neo4j.ManagedTransaction, project: str, ids: Sequence[str] | None = None
) -> dict[str, list[str]]:
    """Make the ABOUT links of the memories (all of the project's when ``ids`` is ``None``)
    match what their refs name now.

    Returns:
        Memory id -> the refs that name nothing in the graph.
    """
    params: dict[str, Any] = {"project": project, "ids": None if ids is None else list(ids)}
    memories = {r["id"]: list(r["refs"] or []) for r in tx.run(q.MEMORY_REFS, params).data()}
    if not memories:
        return {}
    refs = list(dict.fromkeys(ref for refs in memories.values() for ref in refs))
    probes = [probe(r) for r in refs if ref_target(r).kind == "endpoint"]
    endpoints = {key: (key, p.get("method", ""), p.get("path", ""))
                 for _, key, p in _candidates(tx, project, probes, None)}  # fmt: skip
    resources = [(r["key"], _props(r["props"])) for r in tx.run(q.RESOURCE_NAMES, params).data()]
    found = resolve_refs(refs, endpoints.values(), resources)
    wanted = {(mid, key) for mid, mrefs in memories.items() for ref in mrefs for key in found[ref]}
    present = {(r["id"], r["key"]) for r in tx.run(q.MEMORY_LINKS, params).data()}
    for query, pairs in ((q.ABOUT_DELETE, present - wanted), (q.ABOUT_CREATE, wanted - present)):
        if pairs:
            rows = [{"id": mid, "key": key} for mid, key in sorted(pairs)]
            tx.run(query, {"project": project, "rows": rows}).consume()
    return {mid: [ref for ref in mrefs if not found[ref]] for mid, mrefs in memories.items()}


class Neo4jMemoryLinks(LinkedGraphStore):
    """The memory-link half of :class:`~apiatlas.graph.neo4j.store.Neo4jGraphStore`, with
    :meth:`resolve_signatures` (a graph read that shares the links' candidate query)."""

    @abstractmethod
    def _session(self, work: Callable[[neo4j.ManagedTransaction], T], *, write: bool) -> T:
        """Run ``work`` in one read or write transaction, wrapping driver errors."""

    def resolve_signatures(
        self, project: str, signatures: Sequence[str], *, api: str | None = None
    ) -> dict[str, list[EndpointRef]]:
        """See :meth:`KnowledgeGraphStore.resolve_signatures`."""
        probes = {s: probe(s) for s in signatures}  # a malformed signature fails before any I/O

        def work(tx: neo4j.ManagedTransaction) -> dict[str, list[EndpointRef]]:
            found: dict[str, list[EndpointRef]] = {}
            for signature, key, props in _candidates(tx, project, list(probes.values()), api):
                found.setdefault(signature, []).append(endpoint_ref(key, props))
            return {
                s: sorted(found.get(p.signature, []), key=lambda e: (e.api, e.path, e.key))
                for s, p in probes.items()
            }

        return self._session(work, write=False) if probes else {}

    def link_memory(
        self, project: str, memory_id: str, refs: Sequence[str], notes: LinkNotes = LinkNotes()
    ) -> list[str]:
        """See :meth:`MemoryLinks.link_memory`.

        The memory node keeps the refs; the ABOUT links are derived from them here and again
        after every ``apply`` that changes the project.
        """
        unique = list(dict.fromkeys(refs))
        for ref in unique:
            ref_target(ref)  # a malformed ref fails before anything is written

        params = {
            "project": project, "id": memory_id, "refs": unique, "rank": notes.rank,
            "avoid": [r for r in unique if r in notes.avoid],
            "inferred": [r for r in unique if r in notes.inferred],
        }  # fmt: skip

        def work(tx: neo4j.ManagedTransaction) -> list[str]:
            tx.run(q.MEMORY_UPSERT, params).consume()
            return sync_links(tx, project, [memory_id]).get(memory_id, [])

        return self._session(work, write=True)

    def unlink_memory(self, project: str, memory_id: str) -> None:
        """See :meth:`MemoryLinks.unlink_memory`."""
        params = {"project": project, "id": memory_id}
        self._session(lambda tx: tx.run(q.MEMORY_DELETE, params).consume(), write=True)

    def memory_links(
        self, project: str, keys: Sequence[str], limit: int | None = None
    ) -> dict[str, list[MemoryLink]]:
        """See :meth:`MemoryLinks.memory_links`."""
        params = {"project": project, "keys": list(dict.fromkeys(keys))}
        rows = self._session(lambda tx: tx.run(q.MEMORIES_ABOUT, params).data(), write=False)
        out: dict[str, list[MemoryLink]] = {}
        for row in rows:
            direct = {m["id"]: m for m in row["direct"]}
            ranks = {m["id"]: m["rank"] for m in [*row["via"], *row["direct"]]}
            links = [
                memory_link(mid, rank, _naming(direct.get(mid), row["method"], row["path"]))
                for mid, rank in ranks.items()
            ]
            if links:
                out[row["key"]] = in_reading_order(links, limit)
        return out


def _naming(memory: dict[str, Any] | None, method: str, path: str) -> list[RefFlags]:
    """The flags of the memory's refs that name the endpoint ``method path`` itself."""
    if memory is None:
        return []
    avoid, inferred = memory["avoid"], memory["inferred"]
    out: list[RefFlags] = []
    for ref in memory["refs"] or []:
        if ref_target(ref).kind == "endpoint" and endpoint_matches(probe(ref), method, path):
            out.append((
                None if avoid is None else ref in avoid,
                None if inferred is None else ref in inferred,
            ))  # fmt: skip
    return out
