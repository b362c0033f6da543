"""An ingest killed with SIGKILL halfway leaves the previous state queryable, and the next ingest
completes (embedded graph, Chroma, SQLite record manager)."""

from __future__ import annotations

import json
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path


from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.sample import write_sample_api


def widgets_spec(path: Path, kinds: int = 150) -> Path:
    """A spec big enough that its embedding takes a while: two operations per kind."""
    paths = {
        f"/widgets{i}": {
            "get": {"operationId": f"listWidgets{i}", "summary": f"List widgets of kind {i}",
                    "description": "Returns the widgets of this kind. " * 12,
                    "responses": {"200": {"description": "ok"}}},
            "post": {"operationId": f"createWidget{i}", "summary": f"Create a widget of kind {i}",
                     "description": "Creates a widget of this kind. " * 12,
                     "responses": {"201": {"description": "created"}}},
        }
        for i in range(kinds)
    }
    path.write_text(json.dumps({"openapi": "3.0.3", "info": {"title": "Widgets", "version": "1"},
                                "paths": paths}), encoding="utf-8")
    return path


def recorded(home: Path) -> int:
    """Vector records the indexing API has committed so far."""
    try:
        with sqlite3.connect(home / "records.sqlite", timeout=1) as conn:
            return int(conn.execute("SELECT count(*) FROM upsertion_record").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_a_killed_ingest_loses_nothing_and_the_next_one_completes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    sample = write_sample_api(tmp_path / "sample")
    settings = Settings(home=home, project="demo")
    with ApiAtlas(settings) as atlas:
        atlas.ingest(openapi=[sample / "openapi.yaml"], project="demo")
        before = recorded(home)
        stats_before = atlas.stats("demo")
    spec = widgets_spec(tmp_path / "widgets.json")

    proc = subprocess.Popen(
        [sys.executable, "-m", "apiatlas.cli", "ingest", "--home", str(home), "--project", "demo",
         "--openapi", str(spec)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path,
    )
    deadline = time.monotonic() + 300
    while recorded(home) <= before and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the ingest finished before it could be killed: use a larger spec"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert before < recorded(home) < before + 300  # killed halfway through the vectors

    with ApiAtlas(settings) as atlas:
        assert atlas.stats("demo") == stats_before  # the graph is as it was
        result = atlas.ask("What endpoints can I use to create a location?", project="demo")
        assert (result.endpoints[0].method, result.endpoints[0].path) == ("POST", "/v2/locations")

        report = atlas.ingest(openapi=[sample / "openapi.yaml", spec], project="demo")
        assert report.endpoints == stats_before.nodes["Endpoint"] + 300
        assert atlas.stats("demo").nodes["Endpoint"] == stats_before.nodes["Endpoint"] + 300
        found = atlas.ask("Create a widget of kind 7", project="demo")
        assert (found.endpoints[0].method, found.endpoints[0].path) == ("POST", "/widgets7")
