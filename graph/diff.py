"""What applying a batch changes, worked out once for every backend.

A store reads what one scope holds (node hashes, edge props or their hashes), hands it here with
the batch, and writes what comes back in its own statements: which nodes to write and whether
each is new, which are stale, which edges go, change or come, and the counts of the summary.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from apiatlas.graph.model import ChangeSummary, GraphBatch, Node
from apiatlas.graph.records import canonical

EdgeId = tuple[str, str, str]
"""``(src, type, dst)``."""


def digest(text: str) -> str:
    """The hash stores keep beside props (sha256 hex)."""
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class NodeWrite:
    """A node to write: its canonical props, their hash, and whether no scope held its key."""

    node: Node
    props: str
    hash: str
    new: bool


@dataclass
class NodeDiff:
    """The node half of applying a batch.

    Attributes:
        writes: Added and updated nodes, in the batch's order.
        stale: Keys the scope held that the batch no longer has (sorted).
        summary: The node counts (a store adds the edges its removals took).
        touched: Scopes whose search index must be rebuilt.
    """

    writes: list[NodeWrite] = field(default_factory=list)
    stale: list[str] = field(default_factory=list)
    summary: ChangeSummary = field(default_factory=ChangeSummary)
    touched: set[str] = field(default_factory=set)


def outside_keys(batch: GraphBatch, held: Mapping[str, str]) -> list[str]:
    """The batch's keys its scope does not hold: another scope may (read their scope and hash
    for :func:`node_diff`)."""
    return [n.key for n in batch.nodes if n.key not in held]


def node_diff(
    batch: GraphBatch, held: Mapping[str, str], elsewhere: Mapping[str, tuple[str, str]]
) -> NodeDiff:
    """Compare the batch's nodes with what is stored.

    Args:
        batch: The scope's new state.
        held: Key -> hash of the nodes the scope holds now.
        elsewhere: Key -> (scope, hash) of the :func:`outside_keys` another scope holds.
    """
    scope, diff = batch.scope, NodeDiff()
    added = updated = unchanged = 0
    written: dict[str, tuple[str, str]] = {}
    for node in batch.nodes:
        props = canonical(node.props)
        hashed = digest(f"{node.label}\n{props}")
        if node.key in held:
            previous: tuple[str, str] | None = (scope, held[node.key])
        else:
            previous = written.get(node.key, elsewhere.get(node.key))
        if previous == (scope, hashed):
            unchanged += 1
            continue
        if previous is None:
            added += 1
        else:
            updated += 1
            diff.touched.add(previous[0])
        diff.writes.append(NodeWrite(node, props, hashed, new=previous is None))
        written[node.key] = (scope, hashed)
        diff.touched.add(scope)
    diff.stale = sorted(set(held) - {n.key for n in batch.nodes})
    if diff.stale:
        diff.touched.add(scope)
    diff.summary = ChangeSummary(
        nodes_added=added, nodes_updated=updated, nodes_removed=len(diff.stale),
        nodes_unchanged=unchanged,
    )  # fmt: skip
    return diff


@dataclass
class EdgeDiff:
    """The edge half of applying a batch.

    Attributes:
        gone: Edges the scope held that the batch no longer has (sorted).
        updates: Edges whose props changed: (id, props, canonical props).
        inserts: Edges the scope did not hold, in the batch's order; a store skips those with
            an end it does not hold.
        unchanged: How many edges stay as they are.
    """

    gone: list[EdgeId] = field(default_factory=list)
    updates: list[tuple[EdgeId, dict[str, Any], str]] = field(default_factory=list)
    inserts: list[tuple[EdgeId, dict[str, Any], str]] = field(default_factory=list)
    unchanged: int = 0

    def summary(self, inserted: int) -> ChangeSummary:
        """The edge counts once ``inserted`` of the inserts were written (an updated edge counts
        as one removed and one added)."""
        return ChangeSummary(
            edges_added=inserted + len(self.updates),
            edges_removed=len(self.gone) + len(self.updates),
            edges_unchanged=self.unchanged,
        )


def edge_diff(
    batch: GraphBatch, held: Mapping[EdgeId, str], stored: Callable[[str], str]
) -> EdgeDiff:
    """Compare the batch's edges (the first of each id) with what is stored.

    Args:
        batch: The scope's new state.
        held: Edge id -> what the store keeps of its props: ``stored(canonical(props))``.
        stored: The canonical props as the store keeps them (themselves, or :func:`digest`).
    """
    wanted: dict[EdgeId, dict[str, Any]] = {}
    for edge in batch.edges:
        wanted.setdefault((edge.src, edge.type, edge.dst), edge.props)
    diff = EdgeDiff(gone=sorted(set(held) - set(wanted)))
    for ident, props in wanted.items():
        text = canonical(props)
        if ident not in held:
            diff.inserts.append((ident, props, text))
        elif held[ident] == stored(text):
            diff.unchanged += 1
        else:
            diff.updates.append((ident, props, text))
    return diff
