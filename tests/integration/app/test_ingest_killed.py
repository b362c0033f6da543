"""An ingest killed with SIGKILL halfway leaves the previous state queryable, and the next ingest
completes: on the embedded stores (SQLite graph, Chroma, SQLite record manager) and on the servers
(Neo4j graph, pgvector with its record manager in the same PostgreSQL)."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import sqlalchemy

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.rag.retrieval.pgvector import record_manager_url
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


def sqlite_records(home: Path) -> Callable[[], int]:
    """Counts the vector records the indexing API has committed so far, under ``home``."""

    def count() -> int:
        try:
            with sqlite3.connect(home / "records.sqlite", timeout=1) as conn:
                return int(conn.execute("SELECT count(*) FROM upsertion_record").fetchone()[0])
        except sqlite3.Error:
            return 0

    return count


def postgres_records(url: str, project: str) -> Callable[[], int]:
    """Counts the committed vector records of ``project`` (the database is shared with other
    tests; the project is this test's own)."""
    engine = sqlalchemy.create_engine(record_manager_url(url))

    def count() -> int:
        try:
            with engine.connect() as conn:
                return int(conn.execute(
                    sqlalchemy.text("SELECT count(*) FROM upsertion_record "
                                    "WHERE group_id LIKE :prefix"),
                    {"prefix": f"{project}|%"},
                ).scalar_one())
        except sqlalchemy.exc.SQLAlchemyError:
            return 0

    return count


def kill_halfway_then_ingest(
    settings: Settings, env: dict[str, str], records: Callable[[], int], tmp_path: Path
) -> None:
    """Ingest the sample, kill a CLI ingest of a bigger spec halfway through its vectors, then
    check that the sample still answers as before and that a new ingest completes."""
    project = settings.project
    sample = write_sample_api(tmp_path / "sample")
    with ApiAtlas(settings) as atlas:
        atlas.ingest(openapi=[sample / "openapi.yaml"], project=project)
        before = records()
        stats_before = atlas.stats(project)
    spec = widgets_spec(tmp_path / "widgets.json")

    proc = subprocess.Popen(
        [sys.executable, "-m", "apiatlas.cli", "ingest", "--home", str(settings.home),
         "--project", project, "--openapi", str(spec)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=tmp_path, env=env,
    )
    deadline = time.monotonic() + 300
    while records() <= before and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the ingest finished before it could be killed: use a larger spec"
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert before < records() < before + 300  # killed halfway through the vectors

    with ApiAtlas(settings) as atlas:
        assert atlas.stats(project) == stats_before  # the graph is as it was
        result = atlas.ask("What endpoints can I use to create a location?", project=project)
        assert (result.endpoints[0].method, result.endpoints[0].path) == ("POST", "/v2/locations")

        report = atlas.ingest(openapi=[sample / "openapi.yaml", spec], project=project)
        assert report.endpoints == stats_before.nodes["Endpoint"] + 300
        assert atlas.stats(project).nodes["Endpoint"] == stats_before.nodes["Endpoint"] + 300
        found = atlas.ask("Create a widget of kind 7", project=project)
        assert (found.endpoints[0].method, found.endpoints[0].path) == ("POST", "/widgets7")
    assert records() == before + 300


def test_a_killed_ingest_loses_nothing_and_the_next_one_completes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("APIATLAS_", "NEO4J_")) and k != "DATABASE_URL"}
    kill_halfway_then_ingest(
        Settings(home=home, project="demo"), env, sqlite_records(home), tmp_path
    )


def test_a_killed_ingest_on_neo4j_and_pgvector_loses_nothing(
    neo4j_settings: Settings, pg_url: str, tmp_path: Path
) -> None:
    settings = dataclasses.replace(
        neo4j_settings, home=tmp_path / "home", project=f"killed-{tmp_path.name}",
        vectors="pgvector", database_url=pg_url,
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("APIATLAS_")}
    env.update({
        "APIATLAS_GRAPH": "neo4j", "APIATLAS_VECTORS": "pgvector", "APIATLAS_MEMORY": "sqlite",
        "NEO4J_URI": settings.neo4j_uri, "NEO4J_USERNAME": settings.neo4j_username,
        "NEO4J_PASSWORD": settings.neo4j_password, "DATABASE_URL": pg_url,
    })
    try:
        kill_halfway_then_ingest(
            settings, env, postgres_records(pg_url, settings.project), tmp_path
        )
    finally:
        # The server is shared with the other suites, whose checks count every project.
        with ApiAtlas(settings) as atlas:
            atlas.graph.delete_project(settings.project)


def test_ctrl_c_during_an_ingest_ends_with_one_line_and_the_project_still_answers(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    settings = Settings(home=home, project="demo")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("APIATLAS_", "NEO4J_")) and k != "DATABASE_URL"}
    sample = write_sample_api(tmp_path / "sample")
    with ApiAtlas(settings) as atlas:
        atlas.ingest(openapi=[sample / "openapi.yaml"], project="demo")
        stats_before = atlas.stats("demo")
    records = sqlite_records(home)
    before = records()
    proc = subprocess.Popen(
        [sys.executable, "-m", "apiatlas.cli", "ingest", "--home", str(home),
         "--project", "demo", "--openapi",
         # Four times the other tests' spec: interrupted at its first records, it costs nothing
         # more, and the ingest cannot finish in the moment before the signal lands (it did once
         # on a busy machine with 150 kinds).
         str(widgets_spec(tmp_path / "widgets.json", kinds=600))],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path, env=env,
    )
    deadline = time.monotonic() + 300
    while records() <= before and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the ingest finished before it could be interrupted"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "Traceback" not in out + err and "KeyboardInterrupt" not in out + err
    assert "interrupted: apiatlas ingest" in " ".join((out + err).split())
    with ApiAtlas(settings) as atlas:
        assert atlas.stats("demo") == stats_before
        result = atlas.ask("What endpoints can I use to create a location?", project="demo")
        assert (result.endpoints[0].method, result.endpoints[0].path) == ("POST", "/v2/locations")
