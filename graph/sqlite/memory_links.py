"""Project-memory links in the embedded store: refs stored per memory, resolved when read.

The ``memory_refs`` table keeps each memory's refs in comparison form (see
:mod:`apiatlas.graph.memory_refs`). Nothing points at node rows, so ``apply`` needs no
bookkeeping: a link exists exactly while the graph holds an endpoint (or resource) the ref
names, which makes links survive re-ingests, vanish with a removed endpoint and come back with
it. The functions take an open connection; the store holds its lock and transaction.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from typing import Any

from apiatlas.graph.sqlite import queries as q
from apiatlas.graph.memory_refs import (
    SignatureProbe,
    endpoint_matches,
    probe,
    ref_target,
    resolve_refs,
    resource_forms,
)
from apiatlas.graph.model import EndpointRef, LinkNotes, MemoryLink
from apiatlas.graph.records import endpoint_ref
from apiatlas.graph.signatures import endpoint_key

# Sorts after any path character: [prefix, prefix + _PREFIX_END) holds every path with the prefix.
_PREFIX_END = "\U0010ffff"


def _candidates(
    conn: sqlite3.Connection, project: str, probe_: SignatureProbe, api: str | None
) -> list[tuple[str, dict[str, Any]]]:
    params = (project, probe_.method, probe_.prefix, probe_.prefix + _PREFIX_END, api, api)
    rows = conn.execute(q.ENDPOINT_CANDIDATES, params).fetchall()
    found = [(key, json.loads(raw)) for key, raw in rows]
    return [(k, p) for k, p in found if endpoint_matches(probe_, p.get("method", ""), p.get("path", ""))]


def resolve_signatures(
    conn: sqlite3.Connection, project: str, signatures: Sequence[str], api: str | None
) -> dict[str, list[EndpointRef]]:
    """See :meth:`KnowledgeGraphStore.resolve_signatures`."""
    probes = {s: probe(s) for s in signatures}
    out: dict[str, list[EndpointRef]] = {}
    for signature, probe_ in probes.items():
        refs = [endpoint_ref(k, p) for k, p in _candidates(conn, project, probe_, api)]
        out[signature] = sorted(refs, key=lambda e: (e.api, e.path, e.key))
    return out


def link_memory(
    conn: sqlite3.Connection,
    project: str,
    memory_id: str,
    refs: Sequence[str],
    notes: LinkNotes,
) -> list[str]:
    """Replace the memory's stored refs and their flags (inside the caller's transaction);
    return the refs that name nothing now."""
    targets = {ref: ref_target(ref) for ref in dict.fromkeys(refs)}
    conn.execute(q.MEMORY_REFS_DELETE, (project, memory_id))
    conn.executemany(
        q.MEMORY_REFS_INSERT,
        [
            (project, memory_id, ref, t.kind, t.match,
             ref in notes.avoid, ref in notes.inferred, notes.rank)
            for ref, t in targets.items()
        ],
    )
    endpoints = {
        key: (key, props.get("method", ""), props.get("path", ""))
        for ref, t in targets.items()
        if t.kind == "endpoint"
        for key, props in _candidates(conn, project, probe(ref), None)
    }
    named = any(t.kind == "resource" for t in targets.values())
    resources = conn.execute(q.RESOURCE_NAMES, (project,)).fetchall() if named else []
    found = resolve_refs(
        list(targets), endpoints.values(), [(k, json.loads(p)) for k, p in resources]
    )
    return [ref for ref in targets if not found[ref]]


def unlink_memory(conn: sqlite3.Connection, project: str, memory_id: str) -> None:
    """Forget the memory's stored refs."""
    conn.execute(q.MEMORY_REFS_DELETE, (project, memory_id))


def memory_links(
    conn: sqlite3.Connection, project: str, keys: Sequence[str], limit: int | None = None
) -> dict[str, list[MemoryLink]]:
    """See :meth:`MemoryLinks.memory_links`: the flags, the reading order and the limit are
    applied by the query."""
    rows = conn.execute(q.ENDPOINT_SIGNATURES, (json.dumps(list(keys)), project)).fetchall()
    if not rows:
        return {}
    res_keys = json.dumps(sorted({resource for _, _, _, resource in rows}))
    res_rows = conn.execute(q.NODES_BY_KEYS, (res_keys, project, "Resource")).fetchall()
    names = {key: resource_forms(json.loads(raw)) for key, raw in res_rows}
    wanted = [
        triple
        for key, method, path, resource in rows
        for triple in [
            (key, "endpoint", endpoint_key(f"{method} {path}")),
            *((key, "resource", form) for form in sorted(names.get(resource, ()))),
        ]
    ]
    out: dict[str, list[MemoryLink]] = {}
    for key, memory_id, avoids, named, rank in conn.execute(
        q.MEMORY_LINKS, (project, json.dumps(wanted), limit)
    ):
        out.setdefault(key, []).append(MemoryLink(memory_id, bool(avoids), bool(named), rank))
    return out
