"""The facade end to end: ingest, change, break and isolate, on real SQLite, Chroma and MiniLM."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
import yaml

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.errors import LoaderError, SpecError, UnknownName
from apiatlas.sample import write_sample_api


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_api(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def atlas(tmp_path_factory: pytest.TempPathFactory, sample: Path):
    home = tmp_path_factory.mktemp("atlas-home")
    with ApiAtlas(Settings(home=home, project="acme")) as atlas:
        report = atlas.ingest(openapi=[sample / "openapi.yaml"], docs=[sample / "guides"])
        assert report.endpoints >= 30 and report.doc_pages >= 8
        yield atlas


def signatures(result) -> list[str]:
    return [f"{e.method} {e.path}" for e in result.endpoints]


def test_broken_spec_leaves_graph_and_vectors_intact(atlas: ApiAtlas, tmp_path: Path) -> None:
    before = atlas.stats("acme")
    docs_before = atlas.retriever.invoke("webhook signature", project="acme")
    broken = tmp_path / "dangling.yaml"
    broken.write_text(
        yaml.safe_dump({
            "openapi": "3.0.3",
            "info": {"title": "Broken", "version": "1"},
            "paths": {"/things": {"get": {"responses": {"200": {
                "description": "ok",
                "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Nope"}}},
            }}}}},
        }),
        encoding="utf-8",
    )
    with pytest.raises(SpecError) as raised:
        atlas.ingest(openapi=[broken], project="acme")
    assert "dangling.yaml" in str(raised.value) and "Nope" in str(raised.value)
    assert atlas.stats("acme") == before
    docs_after = atlas.retriever.invoke("webhook signature", project="acme")
    assert [d.id for d in docs_after] == [d.id for d in docs_before]
    assert signatures(atlas.ask("What endpoints can I use to create a location?"))[0] == (
        "POST /v2/locations"
    )


def test_changed_spec_updates_what_changed_and_removes_what_is_gone(tmp_path: Path) -> None:
    copy = write_sample_api(tmp_path / "sample")
    spec_path = copy / "openapi.yaml"
    with ApiAtlas(Settings(home=tmp_path / "home", project="change")) as atlas:
        atlas.ingest(openapi=[spec_path])
        assert "POST /v2/webhooks/{webhook_id}/test" in {
            e.signature for e in atlas.graph.find_endpoints("change", limit=500)
        }
        spec = yaml.safe_load(spec_path.read_text(encoding="utf-8"))
        del spec["paths"]["/v2/webhooks/{webhook_id}/test"]
        spec["paths"]["/v2/locations"]["post"]["summary"] = "Create a site (changed)"
        spec_path.write_text(yaml.safe_dump(spec, sort_keys=False), encoding="utf-8")

        report = atlas.ingest(openapi=[spec_path])

        assert report.graph.nodes_added == 0
        assert report.graph.nodes_updated == 1
        assert report.graph.nodes_removed >= 1
        assert report.vectors is not None
        assert report.vectors.num_added >= 1 and report.vectors.num_deleted >= 2
        remaining = {e.signature for e in atlas.graph.find_endpoints("change", limit=500)}
        assert "POST /v2/webhooks/{webhook_id}/test" not in remaining
        detail = atlas.graph.get_endpoint(
            "change", next(e.key for e in atlas.graph.find_endpoints("change", limit=500)
                           if e.signature == "POST /v2/locations")
        )
        assert detail is not None and detail.endpoint.summary == "Create a site (changed)"
        hits = atlas.retriever.invoke("send a test delivery to a webhook", project="change", k=10)
        assert all(d.metadata.get("path") != "/v2/webhooks/{webhook_id}/test" for d in hits)


def test_projects_do_not_leak(atlas: ApiAtlas) -> None:
    # A project nothing was ingested into is no project: an error, never another's answer.
    with pytest.raises(UnknownName, match="no project 'other-team'"):
        atlas.ask("What endpoints can I use to create a location?", project="other-team")
    assert atlas.retriever.invoke("create a location", project="other-team") == []


def test_an_ingest_builds_with_the_collector_paused_and_gives_it_back(
    atlas: ApiAtlas, sample: Path, tmp_path: Path
) -> None:
    seen: dict[str, bool] = {}

    def progress(stage: str, done: int, total: int) -> None:
        seen[stage] = gc.isenabled()

    gc.enable()
    report = atlas.ingest(openapi=[sample / "openapi.yaml"], project="paused", progress=progress)
    assert report.endpoints >= 30
    assert set(seen) >= {"load specs", "embed and index", "knowledge graph", "ranking index"}
    assert not any(seen.values()), seen
    assert gc.isenabled()
    with pytest.raises(LoaderError):
        atlas.ingest(openapi=[tmp_path / "missing.yaml"], project="paused")
    assert gc.isenabled()
