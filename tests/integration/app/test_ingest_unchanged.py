"""Ingesting unchanged files again returns at once; any change, or another ingest in between,
means a full ingest (real SQLite, Chroma and MiniLM)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from apiatlas.atlas import ApiAtlas, IngestReport
from apiatlas.config import Settings
from apiatlas.errors import StoreError
from apiatlas.manifest import inputs_key

from tests.integration.conftest import SampleHome


@pytest.fixture
def atlas(sample_home: SampleHome, tmp_path: Path):
    """An atlas on this test's own copy of the ingested sample home."""
    home = shutil.copytree(sample_home.home, tmp_path / "home")
    with ApiAtlas(Settings(home=home, project=sample_home.project)) as atlas:
        yield atlas


def _ingest(atlas: ApiAtlas, sample: Path, *, docs: bool = True) -> IngestReport:
    return atlas.ingest(openapi=[sample / "openapi.yaml"],
                        docs=[sample / "guides"] if docs else [])


def test_unchanged_files_are_not_read_again(atlas: ApiAtlas, sample_home: SampleHome) -> None:
    stats = atlas.stats(sample_home.project)
    # The home was ingested from these very files by another process.
    again = _ingest(atlas, sample_home.sample)
    assert again.unchanged
    assert again.endpoints == stats.nodes.get("Endpoint") and again.doc_chunks > 0
    assert again.vectors is not None and again.vectors.num_added == 0
    assert again.vectors.num_skipped == again.endpoints + again.doc_chunks
    assert not again.graph.changed and atlas.stats(sample_home.project) == stats
    assert any("secret scrubbed" in w.message for w in again.warnings)  # the first one's
    answer = atlas.ask("Which call creates a new location?")
    assert (answer.endpoints[0].method, answer.endpoints[0].path) == ("POST", "/v2/locations")


def test_any_change_or_another_ingest_in_between_means_a_full_ingest(
    atlas: ApiAtlas, sample_home: SampleHome, tmp_path: Path
) -> None:
    sample = Path(shutil.copytree(sample_home.sample, tmp_path / "sample"))
    first = _ingest(atlas, sample)  # other paths: other inputs than the home's record
    assert not first.unchanged
    assert _ingest(atlas, sample).unchanged

    # A $ref'd file, never named on the command line, changes.
    schemas = sample / "schemas.yaml"
    schemas.write_text(schemas.read_text(encoding="utf-8").replace(
        "description:", "description: Changed.", 1), encoding="utf-8")
    changed = _ingest(atlas, sample)
    assert not changed.unchanged and changed.graph.changed
    assert _ingest(atlas, sample).unchanged

    # A guide is added to the docs folder.
    (sample / "guides" / "pallets.md").write_text(
        "# Pallets\n\nA pallet groups parcels for one courier pickup.\n", encoding="utf-8")
    added = _ingest(atlas, sample)
    assert not added.unchanged and added.doc_pages == changed.doc_pages + 1
    assert _ingest(atlas, sample).unchanged

    # Other inputs (the spec alone) are not the recorded ones: both ingests do the work, which
    # finds nothing to change.
    spec_only = _ingest(atlas, sample, docs=False)
    assert not spec_only.unchanged and spec_only.vectors is not None
    assert spec_only.vectors.num_skipped == spec_only.endpoints
    back = _ingest(atlas, sample)
    assert not back.unchanged and back.vectors is not None and back.vectors.num_added == 0

    # The graph changed behind the record's back: it no longer vouches for the stores.
    atlas.graph.delete_project(sample_home.project)
    restored = _ingest(atlas, sample)
    assert not restored.unchanged and restored.graph.changed
    assert restored.endpoints == back.endpoints

    # An unreadable record is no record.
    for record in (atlas.settings.home / "ingests").glob("*.json"):
        record.write_text("{not json", encoding="utf-8")
    assert not _ingest(atlas, sample).unchanged
    assert _ingest(atlas, sample).unchanged


def test_urls_are_never_vouched_for() -> None:
    assert inputs_key(["https://example.com/openapi.json"], [], []) is None
    assert inputs_key(["a.yaml"], ["https://example.com/docs/"], []) is None
    assert inputs_key(["a.yaml"], [], ["x"]) != inputs_key(["a.yaml"], [], ["y"])
    assert inputs_key(["a.yaml"], ["b"], []) != inputs_key(["a.yaml", "b"], [], [])


def test_an_ingest_stopped_while_writing_leaves_no_record(
    atlas: ApiAtlas, sample_home: SampleHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _ingest(atlas, sample_home.sample).unchanged

    def stopped(*args: object, **kwargs: object) -> None:
        raise StoreError("stopped halfway")

    # Other inputs (another API name), stopped once the stores may have begun to change: the
    # record of the earlier ingest must no longer vouch for them, as after a SIGKILL there.
    monkeypatch.setattr(atlas.vector_index, "index", stopped)
    with pytest.raises(StoreError, match="halfway"):
        atlas.ingest(openapi=[sample_home.sample / "openapi.yaml"], api="renamed")
    monkeypatch.undo()
    again = _ingest(atlas, sample_home.sample)
    assert not again.unchanged and not again.graph.changed
    assert _ingest(atlas, sample_home.sample).unchanged


def test_another_embedding_model_means_a_full_ingest(
    atlas: ApiAtlas, sample_home: SampleHome, monkeypatch: pytest.MonkeyPatch
) -> None:
    from apiatlas.rag.runtime import onnx_minilm

    assert _ingest(atlas, sample_home.sample).unchanged
    # Other weights installed for the local model: the record no longer vouches for the vectors.
    monkeypatch.setattr(onnx_minilm, "weights_id", lambda folder: "minilm-other")
    assert not _ingest(atlas, sample_home.sample).unchanged
    assert _ingest(atlas, sample_home.sample).unchanged
