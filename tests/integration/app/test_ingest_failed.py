"""An ingest that fails at any step after the stores begin to change (or is interrupted there)
puts the previous state back: the graph, the vectors, the memory's links and the answers are as
before, and the next ingest of the same inputs completes (issue 53). A process killed outright
is tested in ``test_ingest_killed.py``."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from apiatlas import ingest
from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.errors import StoreError
from apiatlas.rag.retrieval.dense import VectorIndex
from tests.integration.app.test_ingest_killed import widgets_spec
from tests.integration.conftest import SampleHome

QUESTIONS = (
    "What endpoints can I use to create a location?",
    "How do I change a location's address?",
    "List the items of an order",
)
DECISION = "We create locations through POST /v2/locations and never through a batch call"


class Boom(Exception):
    """The failure a test injects."""


@dataclasses.dataclass
class State:
    """What a project answers and holds, to compare before and after."""

    stats: object
    answers: list[tuple[list[str], str]]
    vectors: set[str]
    memory_about: list[str]


def state(atlas: ApiAtlas, project: str, sources: list[str]) -> State:
    answers = []
    for question in QUESTIONS:
        result = atlas.ask(question, project=project)
        answers.append(([f"{e.method} {e.path}" for e in result.endpoints], result.outcome))
    saved = atlas.vector_index.checkpoint(project, sources)
    [location] = atlas.graph.resolve_signatures(project, ["POST /v2/locations"])[
        "POST /v2/locations"
    ]
    about = [m.text for m in atlas.memory(project).about([location.key])]
    return State(atlas.stats(project), answers, {str(d.id) for d in saved.documents}, about)


@pytest.fixture
def home(sample_home: SampleHome, tmp_path: Path) -> Iterator[tuple[Settings, Path, list[str]]]:
    """A copy of the ingested sample, ingested again from a copy of its files, with a team
    memory; the inputs of the next ingest: that copy with a summary changed, its guides, and a
    new spec."""
    root = tmp_path / "home"
    shutil.copytree(sample_home.home, root)
    settings = Settings(home=root, project=sample_home.project)
    changed = tmp_path / "sample"
    shutil.copytree(sample_home.sample, changed)
    spec = changed / "openapi.yaml"
    widgets = widgets_spec(tmp_path / "widgets.json", kinds=20)
    with ApiAtlas(settings) as atlas:
        atlas.ingest(openapi=[spec], docs=[changed / "guides"])
        atlas.memory().remember(DECISION, kind="decision", refs=["POST /v2/locations"])
    spec.write_text(spec.read_text().replace("summary: Create a location",
                                             "summary: Open a new site"), encoding="utf-8")
    yield settings, changed, [str(spec), str(changed / "guides"), str(widgets)]


def sources_of(locations: list[str]) -> list[str]:
    loaded = ingest.load(ingest.Sources(openapi=[locations[0], locations[2]], docs=[locations[1]]))
    return loaded.sources


def fail_once(real: Callable[..., object], error: BaseException,
              after: bool = True) -> Callable[..., object]:
    """``real``, which raises ``error`` on its first call (after doing its work, or before)."""
    calls = []

    def patched(*args: object, **kwargs: object) -> object:
        calls.append(1)
        if len(calls) > 1:
            return real(*args, **kwargs)
        if not after:
            raise error
        real(*args, **kwargs)
        raise error

    return patched


STEPS: dict[str, Callable[[pytest.MonkeyPatch, ApiAtlas], None]] = {
    # The vectors all changed, then a failure.
    "vectors": lambda mp, atlas: mp.setattr(
        VectorIndex, "index", fail_once(VectorIndex.index, Boom("vector store lost"))),
    # The graph store refuses the write (the vectors have changed).
    "graph": lambda mp, atlas: mp.setattr(
        type(atlas.graph), "apply",
        fail_once(type(atlas.graph).apply, StoreError("disk full"), after=False)),
    # The graph is written, the memory's links fail.
    "memory links": lambda mp, atlas: mp.setattr(
        ApiAtlas, "relink_memory", fail_once(ApiAtlas.relink_memory, Boom("memory locked"))),
    # Everything is written; what questions read of it fails (as a too-large project did).
    "derived": lambda mp, atlas: mp.setattr(
        ingest, "derive", fail_once(ingest.derive, Boom("too many SQL variables"), after=False)),
    # Ctrl-C while the ranking index is built.
    "interrupted": lambda mp, atlas: mp.setattr(
        ingest, "derive", fail_once(ingest.derive, KeyboardInterrupt(), after=False)),
    # Everything is done but the manifest cannot be written.
    "manifest": lambda mp, atlas: mp.setattr(
        ingest, "record", fail_once(ingest.record, OSError("read-only file system"))),
}


@pytest.mark.parametrize("step", list(STEPS))
def test_a_failed_ingest_puts_the_previous_state_back(
    step: str, home: tuple[Settings, Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, _, locations = home
    project = settings.project
    sources = sources_of(locations)
    with ApiAtlas(settings) as atlas:
        before = state(atlas, project, sources)
        assert before.memory_about == [DECISION]
        STEPS[step](monkeypatch, atlas)
        with pytest.raises((Boom, StoreError, OSError, KeyboardInterrupt)):
            atlas.ingest(openapi=[locations[0], locations[2]], docs=[locations[1]],
                         project=project)  # fmt: skip
        assert state(atlas, project, sources) == before
    monkeypatch.undo()
    with ApiAtlas(settings) as atlas:  # a new process reads the same
        assert state(atlas, project, sources) == before
        report = atlas.ingest(openapi=[locations[0], locations[2]], docs=[locations[1]],
                              project=project)  # fmt: skip
        assert not report.unchanged and report.endpoints == before.stats.nodes["Endpoint"] + 40  # type: ignore[attr-defined]
        found = atlas.ask("Open a new site", project=project)
        assert (found.endpoints[0].method, found.endpoints[0].path) == ("POST", "/v2/locations")
        assert atlas.ask("Create a widget of kind 7", project=project).endpoints[0].path == (
            "/widgets7")


def test_when_putting_back_fails_too_the_error_says_both_and_what_to_do(
    home: tuple[Settings, Path, list[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    settings, _, locations = home
    with ApiAtlas(settings) as atlas:
        monkeypatch.setattr(ingest, "derive", fail_once(ingest.derive, Boom("no space"), after=False))
        monkeypatch.setattr(VectorIndex, "restore", fail_once(VectorIndex.restore, Boom("gone"),
                                                              after=False))
        with pytest.raises(StoreError) as raised:
            atlas.ingest(openapi=[locations[0]], project=settings.project)
    said = str(raised.value)
    assert "no space" in said and "gone" in said and "ingest it again" in said
    assert isinstance(raised.value.__cause__, Boom)


@pytest.mark.parametrize("step", ["vectors", "derived"])
def test_a_failed_ingest_on_neo4j_and_pgvector_puts_the_previous_state_back(
    step: str, neo4j_settings: Settings, pg_url: str, sample_home: SampleHome,
    home: tuple[Settings, Path, list[str]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    _, _, locations = home
    spec = Path(locations[0])
    changed = spec.read_text(encoding="utf-8")
    shutil.copy(sample_home.sample / "openapi.yaml", spec)  # as before the change
    settings = dataclasses.replace(
        neo4j_settings, home=tmp_path / "servers", project=f"failed-{tmp_path.name}",
        vectors="pgvector", database_url=pg_url,
    )
    project = settings.project
    sources = sources_of(locations)
    try:
        with ApiAtlas(settings) as atlas:
            atlas.ingest(openapi=[locations[0]], docs=[locations[1]], project=project)
            atlas.memory().remember(DECISION, kind="decision", refs=["POST /v2/locations"])
            spec.write_text(changed, encoding="utf-8")
            before = state(atlas, project, sources)
            STEPS[step](monkeypatch, atlas)
            with pytest.raises((Boom, StoreError)):
                atlas.ingest(openapi=[locations[0], locations[2]], docs=[locations[1]],
                             project=project)  # fmt: skip
            after = state(atlas, project, sources)
        assert after == before
    finally:
        # The servers are shared with the other suites, whose checks count every project.
        with ApiAtlas(settings) as atlas:
            atlas.graph.delete_project(project)
