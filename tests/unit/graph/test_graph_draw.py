"""Drawing a neighbourhood: captions, hop counts, the radial layout and the figure itself."""

from __future__ import annotations

import io
import math
import sys

import pytest
from matplotlib.figure import Figure

from apiatlas.errors import UsageError
from apiatlas.extras import MissingExtraError
from apiatlas.graph.draw import CAPTION_CHARS, caption, draw_neighbourhood, hops, radial_layout
from apiatlas.graph.model import Edge, Neighbourhood, Node

CANCEL = "api/endpoint/POST /v2/shipments/{shipment_id}/cancel"
CREATE = "api/endpoint/POST /v2/shipments"
CARRIER = "api/endpoint/POST /v2/carriers"
RESOURCE = "api/resource/shipment"
SECTION = "api/doc/shipments.md#cancelling"


def _endpoint(key: str) -> Node:
    method, path = key.rsplit("/endpoint/", 1)[1].split(" ", 1)
    return Node(key=key, label="Endpoint", props={"method": method, "path": path})


@pytest.fixture
def hood() -> Neighbourhood:
    """Cancel needs a shipment (created with POST /v2/shipments, which needs a carrier)."""
    return Neighbourhood(
        center=CANCEL,
        nodes=[
            _endpoint(CANCEL),
            _endpoint(CREATE),
            _endpoint(CARRIER),
            Node(key=RESOURCE, label="Resource", props={"name": "shipment"}),
            Node(key=SECTION, label="DocSection",
                 props={"title": "Shipments", "section_path": ["Shipments", "Cancelling"]}),
            Node(key="api/tag/lonely", label="Tag", props={"name": "Lonely"}),
        ],
        edges=[
            Edge(src=CANCEL, type="REQUIRES", dst=CREATE),
            Edge(src=CREATE, type="REQUIRES", dst=CARRIER),
            Edge(src=RESOURCE, type="HAS_ENDPOINT", dst=CANCEL),  # points at the centre
            Edge(src=SECTION, type="DESCRIBES", dst=CANCEL),
        ],
    )


def test_captions_name_nodes_the_way_readers_do(hood: Neighbourhood) -> None:
    by_key = {node.key: node for node in hood.nodes}
    assert caption(by_key[CREATE]) == "POST /v2/shipments"
    assert caption(by_key[RESOURCE]) == "shipment"
    assert caption(by_key[SECTION]) == "Cancelling"  # the heading, not the page title
    assert caption(Node(key="api/schema/x", label="Schema")) == "api/schema/x"  # no name: key
    long = caption(by_key[CANCEL], limit=10)
    assert long == "POST /v2/…" and len(long) == 10
    assert caption(by_key[CANCEL], limit=None) == "POST /v2/shipments/{shipment_id}/cancel"
    assert len(caption(Node(key="k", label="Tag", props={"name": "x" * 99}))) == CAPTION_CHARS


def test_hops_follow_edges_both_ways(hood: Neighbourhood) -> None:
    assert hops(hood) == {CANCEL: 0, CREATE: 1, RESOURCE: 1, SECTION: 1, CARRIER: 2}


def test_layout_puts_each_hop_on_its_own_circle(hood: Neighbourhood) -> None:
    positions = radial_layout(hood)
    assert set(positions) == {node.key for node in hood.nodes}
    assert positions[CANCEL] == (0.0, 0.0)
    radius = {key: round(math.hypot(*point), 9) for key, point in positions.items()}
    assert radius[CREATE] == radius[RESOURCE] == radius[SECTION] == 1.0
    assert radius[CARRIER] == 2.0
    assert radius["api/tag/lonely"] == 3.0  # not connected: beyond the farthest circle
    ring = [positions[k] for k in (SECTION, CREATE, RESOURCE)]  # label order: Doc, End, Res
    assert ring[0] == pytest.approx((0.0, 1.0))  # the first one at the top
    assert len({(round(x, 6), round(y, 6)) for x, y in ring}) == 3  # evenly, never stacked


def test_the_drawing_has_every_node_edge_and_caption(hood: Neighbourhood) -> None:
    figure = draw_neighbourhood(hood)
    assert isinstance(figure, Figure)
    [axes] = figure.axes
    assert axes.get_title() == "POST /v2/shipments/{shipment_id}/cancel"
    texts = {t.get_text() for t in axes.texts}
    assert {"POST /v2/shipments", "POST /v2/carriers", "shipment", "Cancelling", "Lonely"} <= texts
    assert {"REQUIRES", "HAS_ENDPOINT", "DESCRIBES"} <= texts
    legend = axes.get_legend()
    assert legend is not None
    shown = {t.get_text() for t in legend.get_texts()}
    assert shown == {"Endpoint", "Resource", "DocSection", "Tag"}
    points = sum(len(c.get_offsets()) for c in axes.collections)
    assert points == len(hood.nodes) + 1  # every node, and the ring around the centre
    png = io.BytesIO()
    figure.savefig(png, format="png")
    assert png.getvalue().startswith(b"\x89PNG")


def test_edge_labels_can_be_left_out(hood: Neighbourhood) -> None:
    [axes] = draw_neighbourhood(hood, title="cancel", edge_labels=False).axes
    assert axes.get_title() == "cancel"
    assert "REQUIRES" not in {t.get_text() for t in axes.texts}


def test_a_centre_that_is_no_node_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="resolve_signatures"):
        draw_neighbourhood(Neighbourhood(center="api/endpoint/GET /nothing"))


def test_without_matplotlib_the_error_names_the_extra(
    hood: Neighbourhood, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)  # as if not installed
    with pytest.raises(MissingExtraError, match=r"apiatlas\[eval\]"):
        draw_neighbourhood(hood)
