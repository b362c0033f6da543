"""The ranker's field index is built at ingest, kept per graph revision, and read back by later
processes instead of being built (and embedded) again."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.rag.ranking import pipeline
from apiatlas.rag.ranking.fields import FieldIndex, build_field_index
from apiatlas.rag.question.vocabulary import Vocabulary
from apiatlas.sample import write_sample_api


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("derived-home")
    sample = write_sample_api(tmp_path_factory.mktemp("sample"))
    with ApiAtlas(Settings(home=home, project="demo")) as atlas:
        atlas.ingest(openapi=[sample / "openapi.yaml"], docs=[sample / "guides"], project="demo")
    return home


def test_ingest_writes_the_index_and_a_new_process_reads_it(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    [saved] = (home / "derived").glob("fields-*.npz")
    index = FieldIndex.load(saved)
    assert len(index) >= 30 and set(index.dense) == {"name", "about", "card"}

    def no_build(*args: object, **kwargs: object) -> FieldIndex:
        raise AssertionError("the index was built again instead of read")

    def no_vocabulary(*args: object, **kwargs: object) -> Vocabulary:
        raise AssertionError("the vocabulary was read from the graph again")

    monkeypatch.setattr(pipeline, "build_field_index", no_build)
    monkeypatch.setattr(Vocabulary, "from_store", no_vocabulary)
    assert len(list((home / "derived").glob("vocabulary-*.json"))) == 1
    assert len(list((home / "derived").glob("resources-*.npy"))) == 1
    batches: list[int] = []
    with ApiAtlas(Settings(home=home, project="demo")) as atlas:
        inner = atlas.embeddings.embed_documents
        monkeypatch.setattr(atlas.embeddings, "embed_documents",
                            lambda texts: batches.append(len(texts)) or inner(texts))
        result = atlas.ask("What endpoints can I use to create a location?", project="demo")
    assert (result.endpoints[0].method, result.endpoints[0].path) == ("POST", "/v2/locations")
    assert all(n == 1 for n in batches)  # the question alone: no resource names embedded again


def test_an_apis_index_cut_from_the_projects_equals_one_built_for_it(home: Path) -> None:
    with ApiAtlas(Settings(home=home, project="demo")) as atlas:
        whole = atlas.field_indexes.get(atlas.graph, "demo", None)
        api = whole.endpoints[0].api
        cut = atlas.field_indexes.get(atlas.graph, "demo", api)
        built = build_field_index(atlas.graph, "demo", api, atlas.embeddings,
                                  atlas.field_indexes.cards("demo", api))
    assert [r.key for r in cut.endpoints] == [r.key for r in built.endpoints]
    assert cut.fields == built.fields and cut.resource_size == built.resource_size
    for name in built.dense:
        assert np.allclose(cut.dense[name], built.dense[name], atol=1e-5)


def test_a_changed_graph_replaces_the_old_file(home: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra.yaml"
    extra.write_text(
        "openapi: 3.0.3\ninfo: {title: Extra, version: '1'}\npaths:\n  /widgets:\n"
        "    get: {operationId: listWidgets, summary: List widgets, responses: {'200': "
        "{description: ok}}}\n", encoding="utf-8")
    before = sorted((home / "derived").glob("fields-*.npz"))
    with ApiAtlas(Settings(home=home, project="demo")) as atlas:
        atlas.ingest(openapi=[extra], project="demo")
    after = sorted((home / "derived").glob("fields-*.npz"))
    assert len(after) == 1 and after != before
    assert any(r.path == "/widgets" for r in FieldIndex.load(after[0]).endpoints)
