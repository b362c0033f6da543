"""A project or API name that does not exist is a usage error that lists the names that do and
the closest one, at every way in: Python, the CLI and the tools (MCP and HTTP: their suites)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from apiatlas.atlas import ApiAtlas
from apiatlas.cli import main
from apiatlas.config import Settings
from apiatlas.errors import UnknownName
from apiatlas.tools import make_tools
from tests.integration.conftest import SampleHome

QUESTION = "create a location"


@pytest.fixture(scope="module")
def atlas(sample_home: SampleHome) -> Iterator[ApiAtlas]:
    with ApiAtlas(Settings(home=sample_home.home, project=sample_home.project)) as opened:
        yield opened


def test_a_misspelt_project_raises_with_the_closest_and_the_existing_ones(atlas: ApiAtlas) -> None:
    with pytest.raises(UnknownName) as raised:
        atlas.ask(QUESTION, project="dmeo")
    error = raised.value
    assert (error.what, error.name, error.known, error.closest) == (
        "project", "dmeo", ["demo"], "demo")
    assert "no project 'dmeo' in home" in str(error) and "did you mean 'demo'?" in str(error)
    assert str(error).endswith("Projects: demo")


def test_an_unknown_api_raises_and_a_known_one_answers(atlas: ApiAtlas) -> None:
    [api] = atlas.stats("demo").apis
    with pytest.raises(UnknownName, match=f"no API '{api}x' in project 'demo'; did you mean "
                                          f"'{api}'"):
        atlas.ask(QUESTION, api=f"{api}x")
    with pytest.raises(UnknownName, match=f"APIs: {api}$"):
        atlas.ask(QUESTION, api="zzzz")
    answer = atlas.ask(QUESTION, api=api)
    assert answer.endpoints and answer.outcome in ("answer", "unsure")


def test_stats_of_an_unknown_project_is_the_same_error(atlas: ApiAtlas) -> None:
    with pytest.raises(UnknownName, match="did you mean 'demo'"):
        atlas.stats("demoo")


def test_the_cli_exits_2_naming_the_closest(
    sample_home: SampleHome, capsys: pytest.CaptureFixture[str]
) -> None:
    home = str(sample_home.home)
    capsys.readouterr()
    assert main(["ask", "--home", home, "--project", "deom", QUESTION]) == 2
    said = capsys.readouterr().out
    assert "no project 'deom'" in said and "did you mean 'demo'?" in said
    assert main(["ask", "--home", home, "--project", "demo", "--api", "nope", QUESTION]) == 2
    assert "no API 'nope' in project 'demo'" in capsys.readouterr().out
    assert main(["ask", "--home", home, "--project", "demo", "--json", QUESTION]) == 0


def test_the_tools_answer_an_unknown_api_with_an_error_message(atlas: ApiAtlas) -> None:
    tools = {t.name: t for t in make_tools(atlas)}
    said = tools["find_endpoints"].invoke({"question": QUESTION, "api": "nope"})
    assert isinstance(said, str) and "no API 'nope' in project 'demo'" in said
    search = {t.name: t for t in make_tools(atlas, project="nowhere")}["search_docs"]
    said = search.invoke({"query": "webhooks"})
    assert "no project 'nowhere'" in said and "Projects: demo" in said
