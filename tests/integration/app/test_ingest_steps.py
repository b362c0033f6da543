"""The ingest pipeline's steps, each called on its own over the sample API (real loaders, a real
SQLite graph): what each returns is what ``ApiAtlas.ingest`` stores."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiatlas import ingest
from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.errors import SpecError
from apiatlas.rag.retrieval.dense import GROUP_KEY
from apiatlas.sample import write_sample_api


@pytest.fixture
def sample(tmp_path: Path) -> Path:
    return write_sample_api(tmp_path / "sample")


def test_load_then_prepare_gives_one_card_per_endpoint_and_tagged_chunks(
    sample: Path, tmp_path: Path
) -> None:
    stages: list[str] = []
    loaded = ingest.load(
        ingest.Sources(openapi=[sample / "openapi.yaml"], docs=[sample / "guides"]),
        lambda stage, done, total: stages.append(stage),
    )
    assert len(loaded.specs) == 1
    endpoints = sum(len(spec.endpoints) for spec in loaded.specs)
    assert endpoints >= 30 and list(loaded.pages) == [ingest.docs_scope_name(sample / "guides")]
    assert {"load specs", "load docs"} <= set(stages)
    with ApiAtlas(Settings(home=tmp_path / "home")) as atlas:
        prepared = ingest.prepare(loaded, "demo", atlas.splitter)
    assert prepared.cards == endpoints and prepared.chunks > 0
    assert len(prepared.documents) == prepared.cards + prepared.chunks
    groups = {doc.metadata[GROUP_KEY] for doc in prepared.documents}
    assert groups == set(loaded.sources)


def test_build_graph_writes_what_was_loaded(sample: Path, tmp_path: Path) -> None:
    loaded = ingest.load(ingest.Sources(openapi=[sample / "openapi.yaml"]))
    with ApiAtlas(Settings(home=tmp_path / "home")) as atlas:
        batches = ingest.plan_graph(atlas.graph, loaded, "demo")
        assert atlas.graph.projects() == []  # planning writes nothing
        changes = ingest.build_graph(atlas.graph, batches)
        stats = atlas.stats("demo")
    assert changes.changed
    assert stats.nodes["Endpoint"] == sum(len(spec.endpoints) for spec in loaded.specs)


def test_a_broken_input_fails_in_load_before_any_step_writes(
    sample: Path, tmp_path: Path
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("openapi: 3.0.0\ninfo: {title: x, version: '1'}\npaths: {}\n")
    with pytest.raises(SpecError, match="broken.yaml"):
        ingest.load(ingest.Sources(openapi=[sample / "openapi.yaml", broken]))
