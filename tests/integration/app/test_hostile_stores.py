"""A store that cannot be opened degrades the answer instead of stopping it (and fails an ingest
before it changes anything), and a question or a memory over its limit is a usage error that
states the limit (issue 53), through the CLI, the Python API and the tools."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from langchain_core.tools import ToolException
from pydantic import ValidationError

from apiatlas.atlas import ApiAtlas
from apiatlas.cli import main
from apiatlas.config import Settings
from apiatlas.errors import UsageError
from apiatlas.rag.agent.context import MAX_QUESTION_CHARS
from apiatlas.rag.memory.store import MAX_MEMORY_CHARS
from apiatlas.tools import make_tools
from tests.integration.conftest import SampleHome

GARBAGE = b"this is not an SQLite database\n" * 64


def cli(home: SampleHome, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    capsys.readouterr()
    code = main([*args, "--home", str(home.home), "--project", home.project])
    captured = capsys.readouterr()
    return code, " ".join((captured.out + captured.err).replace("▌", " ").split())


def test_a_damaged_memory_file_gives_the_docs_answer_flagged_and_memory_commands_say_why(
    sample_home: SampleHome, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (sample_home.home / "memory.sqlite").write_bytes(GARBAGE)
    code, said = cli(sample_home, capsys, "ask", "What endpoints can I use to create a location?")
    assert code == 0, said
    assert "POST /v2/locations" in said
    assert "the project memory could not be read" in said
    assert "Could not set up the project memory" in said
    code, said = cli(sample_home, capsys, "ask", "create a location", "--json")
    assert code == 0 and "degraded: memory unavailable" in said
    code, said = cli(sample_home, capsys, "memory", "list")
    assert code == 1 and "Could not set up the project memory" in said
    # An ingest fails before it changes anything, and the project answers as before.
    with ApiAtlas(Settings(home=sample_home.home, project=sample_home.project)) as atlas:
        before = atlas.stats()
    sample = shutil.copytree(sample_home.sample, tmp_path / "sample")  # the spec's other files
    spec = sample / "openapi.yaml"
    spec.write_text(spec.read_text().replace("/v2/locations:", "/v3/locations:", 1),
                    encoding="utf-8")
    code, said = cli(sample_home, capsys, "ingest", "--openapi", str(spec))
    assert code == 1 and "Could not set up the project memory" in said, said
    with ApiAtlas(Settings(home=sample_home.home, project=sample_home.project)) as atlas:
        assert atlas.stats() == before
    (sample_home.home / "memory.sqlite").unlink()


def test_a_damaged_embedding_cache_is_worked_around_by_ask_and_ingest(
    sample_home: SampleHome, capsys: pytest.CaptureFixture[str]
) -> None:
    (sample_home.home / "embeddings.sqlite").write_bytes(GARBAGE)
    code, said = cli(sample_home, capsys, "ask", "What endpoints can I use to create a location?")
    assert code == 0 and "POST /v2/locations" in said, said
    code, said = cli(sample_home, capsys, "ingest", "--openapi",
                     str(sample_home.sample / "openapi.yaml"))
    assert code == 0, said


def test_a_question_over_the_limit_is_a_usage_error_at_every_way_in(
    sample_home: SampleHome, capsys: pytest.CaptureFixture[str]
) -> None:
    question = "create a location " * (MAX_QUESTION_CHARS // 18 + 1)
    limit = f"over the {MAX_QUESTION_CHARS:,}-character limit"
    code, said = cli(sample_home, capsys, "ask", question)
    assert code == 2 and f"the question is {len(question):,} characters, {limit}" in said
    with ApiAtlas(Settings(home=sample_home.home, project=sample_home.project)) as atlas:
        with pytest.raises(UsageError, match=limit):
            atlas.ask(question)
        tools = {t.name: t for t in make_tools(atlas)}
        for name, argument in (("find_endpoints", "question"), ("ask", "question"),
                               ("search_docs", "query")):
            with pytest.raises((ValidationError, ToolException),
                               match=f"at most {MAX_QUESTION_CHARS} characters"):
                tools[name].invoke({argument: question})
        assert atlas.ask("create a location").endpoints  # a normal question still answers


def test_a_memory_over_the_limit_is_a_usage_error_and_nothing_is_stored(
    sample_home: SampleHome, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    home = SampleHome(home=tmp_path / "home", sample=sample_home.sample)
    text = "Locations need a timezone. " * (MAX_MEMORY_CHARS // 27 + 1)
    code, said = cli(home, capsys, "memory", "add", text)
    assert code == 2 and f"over the {MAX_MEMORY_CHARS:,}-character limit" in said
    code, said = cli(home, capsys, "memory", "list", "--json")
    assert code == 0 and said == "[]"
