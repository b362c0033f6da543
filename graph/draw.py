"""Draw one neighbourhood of the knowledge graph with matplotlib, for notebooks and reports.

matplotlib only (the ``eval`` extra), no graph library: the centre node sits in the middle, the
nodes one hop away on a circle of radius 1 around it, two hops away on a circle of radius 2, and
so on. Nodes are coloured by label and captioned with what a reader knows them by
(``POST /v2/shipments``, a resource's name, a guide section's heading); each edge is an arrow
named by its type. The centre is ringed and named by the title.

Example:
    >>> hood = atlas.graph.neighbourhood("sample", key)
    >>> draw_neighbourhood(hood)  # a matplotlib Figure; `%matplotlib inline` shows it
"""

from __future__ import annotations

import math
from collections import deque
from typing import TYPE_CHECKING

from apiatlas.errors import UsageError
from apiatlas.extras import require
from apiatlas.graph.model import Neighbourhood, Node, NodeLabel

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

NODE_COLOURS: dict[NodeLabel, str] = {
    "Api": "#7f7f7f",
    "Resource": "#2ca02c",
    "Endpoint": "#1f77b4",
    "OperationKind": "#9467bd",
    "Parameter": "#ff7f0e",
    "Schema": "#8c564b",
    "Field": "#bcbd22",
    "Tag": "#e377c2",
    "DocSection": "#17becf",
    "CodeFile": "#d62728",
    "CodeFunction": "#ff9896",
    "CodeSite": "#c5b0d5",
}
"""One colour per node label (matplotlib's tab10)."""
CAPTION_CHARS = 36
"""Longer captions are cut, with an ellipsis."""
MIN_INCHES, MAX_INCHES = 7.0, 14.0
"""The figure's height grows with the number of nodes, within these bounds."""

Point = tuple[float, float]


def caption(node: Node, *, limit: int | None = CAPTION_CHARS) -> str:
    """What a reader knows a node by, cut to ``limit`` characters (``None``: whole).

    ``METHOD /path`` for an endpoint, the heading for a guide section, ``file:line`` for a code
    site, the path for a code file, otherwise the node's ``name`` (the key when it has none).
    """
    props = node.props
    if node.label == "Endpoint" and props.get("method") and props.get("path"):
        text = f"{props['method']} {props['path']}"
    elif node.label == "DocSection" and (props.get("section_path") or props.get("title")):
        text = str((props.get("section_path") or [props["title"]])[-1])
    elif node.label == "CodeSite" and props.get("file"):
        text = f"{props['file']}:{props.get('line', '')}"
    elif node.label == "CodeFile" and props.get("path"):
        text = str(props["path"])
    else:
        text = str(props.get("name") or node.key)
    if limit is None or len(text) <= limit:
        return text
    return text[: limit - 1] + "…"


def hops(hood: Neighbourhood) -> dict[str, int]:
    """Hops from the centre to each node, following edges in either direction.

    Nodes the edges do not connect to the centre are left out.
    """
    around: dict[str, set[str]] = {}
    for edge in hood.edges:
        around.setdefault(edge.src, set()).add(edge.dst)
        around.setdefault(edge.dst, set()).add(edge.src)
    distance = {hood.center: 0}
    queue = deque([hood.center])
    while queue:
        key = queue.popleft()
        for other in sorted(around.get(key, ())):
            if other not in distance:
                distance[other] = distance[key] + 1
                queue.append(other)
    return distance


def radial_layout(hood: Neighbourhood) -> dict[str, Point]:
    """Positions of the nodes: the centre at ``(0, 0)``, nodes ``n`` hops away evenly spaced on
    the circle of radius ``n``.

    Each circle is ordered by label, then caption, so the nodes of one label sit together. Nodes
    not connected to the centre go on one circle beyond the farthest.
    """
    distance = hops(hood)
    outside = max(distance.values()) + 1
    rings: dict[int, list[Node]] = {}
    for node in hood.nodes:
        if node.key != hood.center:
            rings.setdefault(distance.get(node.key, outside), []).append(node)
    positions: dict[str, Point] = {hood.center: (0.0, 0.0)}
    for radius, ring in rings.items():
        ring.sort(key=lambda n: (n.label, caption(n), n.key))
        for i, node in enumerate(ring):
            angle = math.pi / 2 - 2 * math.pi * i / len(ring)  # clockwise from the top
            positions[node.key] = (radius * math.cos(angle), radius * math.sin(angle))
    return positions


def draw_neighbourhood(
    hood: Neighbourhood, *, title: str | None = None, edge_labels: bool = True
) -> Figure:
    """Draw ``hood`` (from :meth:`KnowledgeGraphStore.neighbourhood`) on a new figure.

    Args:
        hood: The nodes and edges around a centre node.
        title: The figure's title; the centre's caption by default.
        edge_labels: Name each edge by its type (``REQUIRES``, ``HAS_ENDPOINT``...).

    Returns:
        A matplotlib ``Figure`` (not attached to pyplot: show it as a cell's value, or
        ``figure.savefig(path)``).

    Raises:
        UsageError: The centre is not among the nodes (its key names no node in the graph).
        MissingExtraError: matplotlib is not installed (``pip install 'apiatlas[eval]'``).
    """
    nodes = {node.key: node for node in hood.nodes}
    if hood.center not in nodes:
        raise UsageError(
            f"nothing to draw around {hood.center!r}: no such node in the graph; find an "
            "endpoint's key with graph.resolve_signatures(project, ['METHOD /path'])"
        )
    positions = radial_layout(hood)
    # Captions keep their size in points: a busier neighbourhood needs a larger figure.
    side = min(MAX_INCHES, max(MIN_INCHES, 5.0 + 0.25 * len(nodes)))
    figure_type = require("matplotlib.figure", purpose="drawing the knowledge graph").Figure
    figure: Figure = figure_type(figsize=(side * 1.25, side), layout="constrained")
    axes = figure.add_subplot()
    for edge in hood.edges:
        if edge.src in positions and edge.dst in positions:
            _arrow(axes, positions[edge.src], positions[edge.dst], edge.type if edge_labels else "")
    for label, colour in NODE_COLOURS.items():
        keys = [key for key, node in nodes.items() if node.label == label]
        if keys:
            xs, ys = zip(*(positions[key] for key in keys))
            axes.scatter(xs, ys, s=160, color=colour, label=label, zorder=3,
                         edgecolors="white", linewidths=1.5)  # fmt: skip
    # The title names the centre; a caption there would cover the edges that meet at it.
    axes.scatter(*positions[hood.center], s=420, facecolors="none", edgecolors="black",
                 linewidths=1.5, zorder=4)  # fmt: skip
    for key, node in nodes.items():
        if key != hood.center:
            _caption(axes, positions[key], caption(node))
    reach = max(math.hypot(x, y) for x, y in positions.values()) or 1.0
    axes.set_xlim(-reach - 1.2, reach + 1.2)
    axes.set_ylim(-reach - 0.5, reach + 0.5)
    axes.set_aspect("equal")
    axes.set_axis_off()
    axes.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False)
    axes.set_title(title if title is not None else caption(nodes[hood.center], limit=None))
    return figure


def _arrow(axes: Axes, start: Point, end: Point, text: str) -> None:
    axes.annotate(
        "", xy=end, xytext=start, zorder=1,
        arrowprops={"arrowstyle": "-|>", "color": "0.65", "shrinkA": 9, "shrinkB": 9},
    )  # fmt: skip
    if text:
        # Nearer the outer end: the inner ends of a busy node's edges crowd together.
        t = 0.6 if math.hypot(*end) >= math.hypot(*start) else 0.4
        at = (start[0] + t * (end[0] - start[0]), start[1] + t * (end[1] - start[1]))
        axes.text(*at, text, fontsize=6.5, color="0.35", ha="center", va="center", zorder=2,
                  bbox={"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none"})


def _caption(axes: Axes, point: Point, text: str) -> None:
    """Outwards from the centre, so a caption never covers the edges that meet at its node."""
    x, y = point
    norm = math.hypot(x, y) or 1.0
    axes.annotate(text, point, xytext=(10 * x / norm, 10 * y / norm), textcoords="offset points",
                  ha="left" if x >= -1e-9 else "right", va="center", fontsize=8, zorder=4)
