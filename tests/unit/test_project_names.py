"""A project name is checked once, the same way, at every way in, before anything is stored."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiatlas.cli import main
from apiatlas.config import Settings, check_project
from apiatlas.errors import ConfigError, UsageError
from apiatlas.rag.agent.context import AgentContext

BAD = ["", "..", "../../etc", "a/b", "a.b", " a", "-a", "a b", "x" * 65, "é"]


@pytest.mark.parametrize("name", ["default", "adobe-commerce", "Team_2", "7", "x" * 64])
def test_names_of_letters_digits_dashes_and_underscores_pass(name: str) -> None:
    assert check_project(name) == name
    assert Settings(project=name).project == name
    assert AgentContext(project=name).project == name


@pytest.mark.parametrize("name", [*BAD, None, 5])
def test_anything_else_is_refused_by_every_check(name: object) -> None:
    with pytest.raises(ConfigError, match="is not valid: use 1 to 64 letters"):
        check_project(name)
    with pytest.raises(UsageError):
        Settings(project=name)  # type: ignore[arg-type]
    if name is not None:  # None is the agent's "the default project"
        with pytest.raises(UsageError):
            AgentContext(project=name)  # type: ignore[arg-type]


def test_the_environment_is_checked_too() -> None:
    with pytest.raises(ConfigError, match="project name '' is not valid"):
        Settings.from_env({"APIATLAS_PROJECT": ""})


@pytest.mark.parametrize("name", ["", "..", "../../etc"])
@pytest.mark.parametrize("command", ["ingest", "ask", "memory"])
def test_the_cli_exits_2_with_its_usage_before_creating_anything(
    name: str, command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    args = {
        "ingest": ["ingest", "--openapi", str(tmp_path / "spec.yaml")],
        "ask": ["ask", "where are the orders"],
        "memory": ["memory", "list"],
    }[command]
    with pytest.raises(SystemExit) as exit_:
        main([*args, "--home", str(home), "--project", name])
    assert exit_.value.code == 2
    assert "is not valid: use 1 to 64 letters" in capsys.readouterr().err
    assert not home.exists()
