"""``k`` (how many endpoints or passages a question asks for) is a whole number from 1 to 50 at
every way in; anything else is a usage error before any store is touched."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from apiatlas.cli import main
from apiatlas.errors import UsageError
from apiatlas.rag.agent.context import DEFAULT_K, MAX_K, NAMED, AgentContext, check_k
from apiatlas.server import AskRequest
from apiatlas.tools import FindEndpointsInput, SearchDocsInput, search_docs


@pytest.mark.parametrize("k", [1, 5, MAX_K])
def test_whole_numbers_from_one_to_the_most_pass(k: int) -> None:
    assert check_k(k) == k
    assert AgentContext(project="p", k=k).k == k


@pytest.mark.parametrize("k", [0, -5, MAX_K + 1, True, 2.5, "3", None])
def test_anything_else_is_a_usage_error(k: object) -> None:
    with pytest.raises(UsageError, match=f"from 1 to {MAX_K}"):
        check_k(k)
    if k is not None:  # a context without k takes the default
        with pytest.raises(UsageError):
            AgentContext(project="p", k=k)  # type: ignore[arg-type]


def test_no_k_gives_five_in_full_and_names_ten_and_a_k_is_both() -> None:
    assert (AgentContext(project="p").full, AgentContext(project="p").named) == (DEFAULT_K, NAMED)
    assert (DEFAULT_K, NAMED) == (5, 10)
    assert (AgentContext(project="p", k=3).full, AgentContext(project="p", k=3).named) == (3, 3)


@pytest.mark.parametrize("k", ["0", "-5", "51", "two"])
def test_the_cli_exits_2_with_its_usage_before_opening_anything(
    k: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    home = tmp_path / "home"
    with pytest.raises(SystemExit) as exit_:
        main(["ask", "create a location", "--home", str(home), "-k", k])
    assert exit_.value.code == 2
    assert f"must be a whole number from 1 to {MAX_K}" in capsys.readouterr().err
    assert not home.exists()


def test_tools_and_http_share_the_bounds() -> None:
    assert FindEndpointsInput(question="x", k=MAX_K).k == MAX_K
    assert SearchDocsInput(query="x", k=MAX_K).k == MAX_K
    with pytest.raises(ValidationError):
        FindEndpointsInput(question="x", k=MAX_K + 1)
    with pytest.raises(ValidationError):
        SearchDocsInput(query="x", k=0)
    assert AskRequest(question="x", k=MAX_K).k == MAX_K
    with pytest.raises(ValidationError):
        AskRequest(question="x", k=-5)
    # The plain function refuses before it reads anything (no atlas is needed to see it).
    with pytest.raises(UsageError):
        search_docs(None, "x", k=0)  # type: ignore[arg-type]
