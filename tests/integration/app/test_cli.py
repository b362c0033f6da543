"""The CLI contract, end to end on the sample API: real SQLite, Chroma and the local model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apiatlas.cli import main
from apiatlas.sample import write_sample_api
from tests.unit.loaders import hostile_specs as hostile


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli-home")


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_api(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def ingested(home: Path, sample: Path) -> Path:
    code = main(
        ["ingest", "--home", str(home), "--project", "cli", "--openapi", str(sample / "openapi.yaml"),
         "--docs", str(sample / "guides")]
    )
    assert code == 0
    return home


def ask_json(home: Path, question: str, capsys: pytest.CaptureFixture[str]) -> dict:
    capsys.readouterr()
    assert main(["ask", "--home", str(home), "--project", "cli", "--json", question]) == 0
    return json.loads(capsys.readouterr().out)


def test_ask_json_has_the_contract_keys(ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = ask_json(ingested, "What endpoints can I use to create a location?", capsys)
    for key in ("question", "answer", "route", "endpoints", "examples", "citations", "abstained",
                "timings_ms", "memories"):
        assert key in result
    first = result["endpoints"][0]
    assert (first["method"], first["path"]) == ("POST", "/v2/locations")
    assert result["abstained"] is False
    assert len(result["citations"]) >= 2


def test_abstention_exits_zero(ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    result = ask_json(ingested, "How do I train a neural network on a GPU cluster?", capsys)
    assert result["abstained"] is True
    assert result["endpoints"] == []


def test_graph_stats_counts_the_sample(ingested: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert main(["graph", "stats", "--home", str(ingested), "--project", "cli", "--json"]) == 0
    stats = json.loads(capsys.readouterr().out)
    assert stats["nodes"]["Endpoint"] >= 30
    assert stats["edges"]["REQUIRES"] > 0
    assert stats["edges"]["DESCRIBES"] > 0


def test_reingest_unchanged_changes_nothing(
    ingested: Path, sample: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    code = main(["ingest", "--home", str(ingested), "--project", "cli", "--openapi",
                 str(sample / "openapi.yaml"), "--docs", str(sample / "guides")])
    assert code == 0
    said = " ".join(capsys.readouterr().out.split())
    # One line, no table or progress: nothing was read, so nothing is counted again.
    assert said.startswith("Project 'cli' is unchanged since the last ingest: nothing read again")
    assert "graph nodes" not in said and "load specs" not in said


def test_bad_spec_exits_2_names_the_file_and_keeps_the_graph(
    ingested: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.yaml"
    broken.write_text("openapi: 3.0.3\ninfo: {title: Broken, version: '1'}\npaths:\n  /x: [\n",
                      encoding="utf-8")
    capsys.readouterr()
    code = main(["ingest", "--home", str(ingested), "--project", "cli", "--openapi", str(broken)])
    captured = capsys.readouterr()
    assert code == 2
    assert "broken.yaml" in captured.out + captured.err
    result = ask_json(ingested, "What endpoints can I use to create a location?", capsys)
    assert result["endpoints"][0]["path"] == "/v2/locations"


def _endpoint_count(home: Path, capsys: pytest.CaptureFixture[str]) -> int:
    capsys.readouterr()
    assert main(["graph", "stats", "--home", str(home), "--project", "cli", "--json"]) == 0
    return int(json.loads(capsys.readouterr().out)["nodes"]["Endpoint"])


def test_a_spec_without_endpoints_exits_2_says_why_and_keeps_the_graph(
    ingested: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _endpoint_count(ingested, capsys)
    listy = tmp_path / "listy.yaml"
    listy.write_text("openapi: 3.0.3\ninfo: {title: Listy, version: '1'}\npaths: [1, 2]\n",
                     encoding="utf-8")
    code = main(["ingest", "--home", str(ingested), "--project", "cli", "--openapi", str(listy)])
    said = " ".join((lambda c: c.out + c.err)(capsys.readouterr()).split())
    assert code == 2
    assert str(listy) in said and "no endpoint found" in said and "#/paths" in said
    assert _endpoint_count(ingested, capsys) == before > 0


def test_malformed_structure_is_listed_with_its_pointer(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # no wrapping inside a long path
    spec = tmp_path / "odd.yaml"
    ok = "responses: {'200': {description: ok}}"
    spec.write_text(
        "openapi: 3.0.3\ninfo: {title: Odd, version: '1'}\npaths:\n  /listy: [1]\n"
        f"  /a:\n    get: {{operationId: same, parameters: oops, {ok}}}\n"
        f"  /b:\n    get: {{operationId: same, {ok}}}\n",
        encoding="utf-8",
    )
    capsys.readouterr()
    code = main(["ingest", "--home", str(home), "--project", "odd", "--openapi", str(spec)])
    said = " ".join((lambda c: c.out + c.err)(capsys.readouterr()).split())
    assert code == 0
    assert "3 warning(s)" in said
    for pointer in ("#/paths/~1listy", "#/paths/~1a/get/parameters", "#/paths/~1b/get"):
        assert f"{spec}{pointer}:" in said


def test_like_warnings_are_one_line_and_an_unchanged_ingest_prints_one_line(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")
    ops = "".join(
        f"  /{name}:\n    get:\n      operationId: get_{name}\n      responses:\n"
        f"        '200':\n          description: ok\n          content:\n"
        f"            application/json:\n              schema:\n"
        f"                $ref: 'https://schemas.example.com/{name}.json#/Thing'\n"
        for name in ("a", "b", "c", "d", "e")
    )
    spec = tmp_path / "remote.yaml"
    spec.write_text(f"openapi: 3.0.3\ninfo: {{title: Remote, version: '1'}}\npaths:\n{ops}",
                    encoding="utf-8")
    args = ["ingest", "--home", str(home), "--project", "remote", "--openapi", str(spec)]
    capsys.readouterr()
    assert main(args) == 0
    said = (lambda c: c.out + c.err)(capsys.readouterr())
    [line] = [ln for ln in said.splitlines() if "remote $ref" in ln]  # five, one line
    assert "5 warning(s)" in said and line.strip().startswith("- 5 like this one:")
    assert f"{spec}#/paths/~1a/get" in line and "and 2 more" in line
    assert "load docs" not in said  # no docs were asked for: no bar for them
    assert main(args) == 0
    again = (lambda c: c.out + c.err)(capsys.readouterr()).strip()
    assert again == ("Project 'remote' is unchanged since the last ingest: nothing read again "
                     "(5 endpoints, 0 doc pages, 5 warning(s) as before).")


def test_missing_path_and_empty_ingest_are_usage_errors(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["ingest", "--home", str(home), "--openapi", str(home / "nope.yaml")]) == 2
    assert main(["ingest", "--home", str(home)]) == 2
    assert "nothing to ingest" in capsys.readouterr().out


def test_graph_stats_without_a_graph_is_a_usage_error(tmp_path: Path) -> None:
    assert main(["graph", "stats", "--home", str(tmp_path / "empty")]) == 2


def test_loopback_url_is_refused_without_allow_private(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["ingest", "--home", str(home), "--openapi", "http://127.0.0.1:9/openapi.yaml"])
    assert code == 2
    assert "127.0.0.1" in capsys.readouterr().out



@pytest.mark.parametrize(
    ("write", "limit"),
    [
        (hostile.deep_json, "nested more than 100 levels"),
        (hostile.deep_yaml, "nested more than 100 levels"),
        (hostile.alias_bomb, "YAML aliases are expanded"),
        (hostile.alias_loop, "refers to a node that contains it"),
    ],
)
def test_hostile_spec_exits_2_names_file_and_limit_and_keeps_the_graph(
    ingested: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], write, limit: str  # type: ignore[no-untyped-def]
) -> None:
    path = write(tmp_path)
    capsys.readouterr()
    code = main(["ingest", "--home", str(ingested), "--project", "cli", "--openapi", str(path)])
    said = " ".join((lambda c: c.out + c.err)(capsys.readouterr()).split())
    assert code == 2
    assert path.name in said and limit in said and "Traceback" not in said
    result = ask_json(ingested, "What endpoints can I use to create a location?", capsys)
    assert result["endpoints"][0]["path"] == "/v2/locations"


def test_a_50_mb_spec_ingests_beside_the_sample(
    ingested: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = hostile.fifty_mb(tmp_path)
    assert path.stat().st_size > 50_000_000
    code = main(["ingest", "--home", str(ingested), "--project", "big", "--openapi", str(path)])
    assert code == 0
    capsys.readouterr()
    assert main(["graph", "stats", "--home", str(ingested), "--project", "big", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["nodes"]["Endpoint"] == 1


def test_the_caller_s_min_confidence_decides_answer_or_unsure(
    ingested: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    question = "What endpoints can I use to create a location?"
    base = ["ask", "--home", str(ingested), "--project", "cli", "--json"]
    shown = ask_json(ingested, question, capsys)
    assert shown["outcome"] in ("answer", "unsure") and 0.0 < shown["confidence"] < 1.0
    for threshold, outcome in (("0", "answer"), ("1", "unsure")):
        capsys.readouterr()
        assert main([*base, "--min-confidence", threshold, question]) == 0
        result = json.loads(capsys.readouterr().out)
        assert result["outcome"] == outcome and result["confidence"] == shown["confidence"]
        roles = {e["role"] for e in result["endpoints"]}
        assert ("primary" in roles) == (outcome == "answer")
        # The same endpoints in the same order, whatever the outcome.
        assert [e["path"] for e in result["endpoints"]] == [e["path"] for e in shown["endpoints"]]
    with pytest.raises(SystemExit) as refused:
        main([*base, "--min-confidence", "1.5", question])
    assert refused.value.code == 2


@pytest.mark.parametrize("command", [["ask", "create a location"], ["memory", "list"],
                                     ["ingest", "--openapi", "spec.yaml"]])
@pytest.mark.parametrize("where", ["file", "file/sub", "/dev/null"])
def test_a_home_that_cannot_be_a_folder_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str], where: str
) -> None:
    (tmp_path / "file").write_text("not a folder\n")
    home = where if where.startswith("/") else str(tmp_path / where)
    assert main([*command, "--home", home]) == 2
    said = " ".join(capsys.readouterr().out.split())
    assert f"the apiatlas home {home} cannot be a folder" in said
    assert "pass --home" in said
