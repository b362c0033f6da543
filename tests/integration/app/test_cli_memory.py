"""``apiatlas memory ...`` end to end, in process, on a temporary home (real SQLite store, model)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from apiatlas.cli import main

ID = re.compile(r"\bmem_[0-9a-f]{12}\b")


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("DATABASE_URL", "APIATLAS_MEMORY", "APIATLAS_GRAPH", "APIATLAS_VECTORS"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("cli-memory-home")


def run(
    home: Path, capsys: pytest.CaptureFixture[str], *args: str, project: str = "acme"
) -> tuple[int, str]:
    """``apiatlas memory <args>``: the exit code and everything printed."""
    capsys.readouterr()
    code = main(["memory", args[0], "--home", str(home), "--project", project, *args[1:]])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def json_of(
    home: Path, capsys: pytest.CaptureFixture[str], *args: str, project: str = "acme"
) -> list[dict]:
    """Run ``apiatlas <command> <subcommand> ... --json`` and parse what it printed."""
    capsys.readouterr()
    code = main([*args[:2], "--home", str(home), "--project", project, *args[2:]])
    assert code == 0
    return json.loads(capsys.readouterr().out)


WRITTEN = re.compile(r"\b(?:remembered|with) (mem_[0-9a-f]{12})\b")


def added_id(output: str) -> str:
    """The id of the memory written (the output may name earlier memories it touches)."""
    found = WRITTEN.findall(output)
    assert found, output
    return found[-1]


def test_add_takes_repeated_and_comma_separated_refs_and_steps(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(
        home, capsys, "add", "--kind", "procedure",
        "--refs", "POST /v2/carriers, carriers", "--refs", "post /v2/carriers/{id}/accounts/",
        "--step", "Create the carrier", "--step", "Add its account",
        "--importance", "8", "--author", "dana", "--source", "RUNBOOK-7",
        "To onboard a carrier",
    )  # fmt: skip
    assert code == 0
    memory_id = added_id(out)
    assert f"remembered {memory_id} (procedure)" in out
    assert "removed:" not in out
    [stored] = [m for m in json_of(home, capsys, "memory", "list", "--json") if m["id"] == memory_id]
    assert stored["refs"] == ["POST /v2/carriers", "carriers", "POST /v2/carriers/{id}/accounts"]
    assert stored["steps"] == ["Create the carrier", "Add its account"]
    assert (stored["importance"], stored["author"], stored["source"]) == (8, "dana", "RUNBOOK-7")


def test_add_says_what_was_scrubbed(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    token = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJjbGktdGVzdCJ9.c2lnbmF0dXJlLW9mLXRoZS10b2tlbg"
    code, out = run(
        home, capsys, "add", "--kind", "fact",
        f"The reporting job calls the API with Authorization: Bearer {token}",
    )  # fmt: skip
    assert code == 0
    assert "removed: bearer-token" in out
    memory_id = added_id(out)
    [stored] = [m for m in json_of(home, capsys, "memory", "list", "--json") if m["id"] == memory_id]
    assert token not in json.dumps(stored)
    assert "[REDACTED:bearer-token]" in stored["text"]


def test_search_supersede_history_and_forget(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    project = "lifecycle"
    code, out = run(home, capsys, "add", "--kind", "decision", "--refs", "POST /v1/locations",
                    "We create locations with POST /v1/locations", project=project)  # fmt: skip
    assert code == 0
    first = added_id(out)

    hits = json_of(home, capsys, "memory", "search", "--json", "Which endpoint creates a location?",
                   project=project)  # fmt: skip
    assert [h["memory"]["id"] for h in hits] == [first]
    assert json_of(home, capsys, "memory", "search", "--json", "--at", "2001-01-01",
                   "Which endpoint creates a location?", project=project) == []  # fmt: skip

    code, out = run(home, capsys, "supersede", first, "We create locations with POST /v2/locations",
                    "--refs", "POST /v2/locations", project=project)  # fmt: skip
    assert code == 0
    second = added_id(out)
    assert f"superseded {first} with {second}" in out
    assert [m["id"] for m in json_of(home, capsys, "memory", "list", "--json", project=project)] == [second]
    chain = json_of(home, capsys, "memory", "history", first, "--json", project=project)
    assert [m["id"] for m in chain] == [first, second]
    assert chain[0]["superseded_by"] == second and chain[1]["refs"] == ["POST /v2/locations"]

    code, out = run(home, capsys, "forget", second, project=project)
    assert code == 0 and f"forgot {second}" in out
    assert json_of(home, capsys, "memory", "list", "--json", project=project) == []
    everything = json_of(home, capsys, "memory", "list", "--json", "--history", project=project)
    assert {m["id"] for m in everything} == {first, second}
    code, out = run(home, capsys, "history", second, project=project)
    assert code == 0 and first in out and second in out


def test_projects_and_agent_types_are_kept_apart(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(home, capsys, "add", "--agent-type", "support", "--kind", "warning",
                    "Support agents never issue refunds above 500 EUR", project="scoped")  # fmt: skip
    assert code == 0
    support_only = added_id(out)
    assert json_of(home, capsys, "memory", "list", "--json", project="scoped") == []
    with_type = json_of(home, capsys, "memory", "list", "--json", "--agent-type", "support",
                        project="scoped")  # fmt: skip
    assert [m["id"] for m in with_type] == [support_only]
    assert with_type[0]["agent_type"] == "support"
    assert json_of(home, capsys, "memory", "list", "--json", "--agent-type", "support",
                   project="elsewhere") == []  # fmt: skip
    code, _ = run(home, capsys, "forget", support_only, project="scoped")
    assert code == 2  # invisible without its agent type


def test_list_filters_by_kind_and_prints_ids(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(home, capsys, "add", "--kind", "warning", "Never call DELETE /v2/shipments",
                    project="kinds")  # fmt: skip
    warning = added_id(out)
    run(home, capsys, "add", "--kind", "fact", "Shipments need a carrier", project="kinds")
    kinds = json_of(home, capsys, "memory", "list", "--json", "--kind", "warning", project="kinds")
    assert [m["id"] for m in kinds] == [warning]
    code, out = run(home, capsys, "list", project="kinds")
    assert code == 0 and warning in out and len(set(ID.findall(out))) == 2


def test_usage_errors_exit_2(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(home, capsys, "forget", "mem_000000000000")
    assert code == 2 and "apiatlas memory list" in out
    code, out = run(home, capsys, "add", "--refs", "POST", "A ref without a path")
    assert code == 2 and "METHOD /path" in out.replace("\n", " ")
    code, out = run(home, capsys, "add", "--refs", "GET /a,,GET /b", "Empty ref")
    assert code == 2 and "empty --refs" in out
    code, out = run(home, capsys, "add", "--importance", "11", "Too important")
    assert code == 2 and "1..10" in out
    code, out = run(home, capsys, "add", "--memory", "postgres", "Needs a server")
    assert code == 2 and "DATABASE_URL" in out
    with pytest.raises(SystemExit) as exited:
        main(["memory", "list", "--home", str(home), "--at", "last tuesday"])
    assert exited.value.code == 2
    with pytest.raises(SystemExit) as exited:
        main(["memory", "add", "--home", str(home), "--kind", "rumour", "text"])
    assert exited.value.code == 2


def test_unreachable_postgres_exits_1_without_the_password(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://ops:N0t-For-Logs@127.0.0.1:1/atlas")
    code, out = run(home, capsys, "list", "--memory", "postgres")
    assert code == 1
    flat = out.replace("\n", "")
    assert "127.0.0.1:1/atlas" in flat and "N0t-For-Logs" not in flat


# Made-up secrets in each provider's shape (issue 53's list): none may reach the store.
PROVIDER_SECRETS = {
    "gitlab-token": "glpat-Q3x9Lm2Vb7Tz1Kp8Wd4R",
    "npm-token": "npm_Z8k2Lq9Xw3Vb7Tn1Mp5Rc6Hd0Fg4Js2Ky8Au",
    "sendgrid-key": "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",
    "huggingface-token": "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",
    "anthropic-key": "sk-ant-api03-" + "Ab3Cd5Ef7Gh9Jk1Lm3Np5Qr7St9Uv1Wx3Yz5" * 2
                     + "Ab3Cd5Ef7Gh9Jk1Lm3Np5AA",
    "azure-storage-key": "AccountKey=Zx8Cv7Bn6Mq5Wr4Ty3Ui2Op1As9Df8Gh7Jk6Lz5Xc4Vb3Nm2Qw1Er0Ty9"
                         "Ui8Op7As6Df5Gh4Jk3Lq1W2e3R4t5==",
    "twilio-key": "SK3f9a8b7c6d5e4f3a2b1c0d9e8f7a6b5c",
    "password": "The admin password is Winter2024!Blue",
    "aws-secret-key": "with secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
}


@pytest.mark.parametrize("kind", sorted(PROVIDER_SECRETS))
def test_a_provider_secret_is_scrubbed_before_the_memory_is_stored(
    home: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    secret = PROVIDER_SECRETS[kind]
    value = secret.rsplit(" ", 1)[-1].removeprefix("AccountKey=")
    code, out = run(home, capsys, "add", f"The deploy job uses {secret} for the nightly sync.")
    assert code == 0 and f"removed: {kind}" in out
    memory_id = added_id(out)
    listed = [m for m in json_of(home, capsys, "memory", "list", "--json") if m["id"] == memory_id]
    found = json_of(home, capsys, "memory", "search", "nightly sync deploy job", "--json")
    assert listed and value not in json.dumps(listed) and value not in json.dumps(found)
    assert f"[REDACTED:{kind}]" in listed[0]["text"]
