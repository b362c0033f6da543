"""Choosing the composer: the settings, ``apiatlas ask --composer``, and building the chat model
(with a clear error when its package is missing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from apiatlas.cli import main
from apiatlas.config import DEFAULT_CHAT_MODEL, Settings
from apiatlas.errors import ConfigError
from apiatlas.extras import MissingExtraError
from apiatlas.rag.answer.chat_model import load_chat_model


def test_the_deterministic_composer_is_the_default() -> None:
    settings = Settings.from_env({})
    assert (settings.composer, settings.chat_model, settings.chat_timeout) == (
        "deterministic", DEFAULT_CHAT_MODEL, 30.0
    )  # fmt: skip
    assert Settings().composer == "deterministic"


def test_the_environment_picks_the_llm_composer_and_its_model() -> None:
    settings = Settings.from_env(
        {
            "APIATLAS_COMPOSER": "llm",
            "APIATLAS_CHAT_MODEL": "anthropic:claude-sonnet-4-5",
            "APIATLAS_CHAT_TIMEOUT": "12.5",
        }
    )
    assert (settings.composer, settings.chat_model, settings.chat_timeout) == (
        "llm", "anthropic:claude-sonnet-4-5", 12.5
    )  # fmt: skip
    # An explicit choice (the CLI's --composer) wins over the environment.
    assert Settings.from_env({"APIATLAS_COMPOSER": "llm"}, composer="deterministic").composer == (
        "deterministic"
    )


@pytest.mark.parametrize(
    ("env", "overrides", "message"),
    [
        ({"APIATLAS_COMPOSER": "gpt"}, {}, "APIATLAS_COMPOSER='gpt' is not supported"),
        ({}, {"composer": "LLM"}, "APIATLAS_COMPOSER='LLM' is not supported"),
        ({"APIATLAS_CHAT_MODEL": ""}, {}, "APIATLAS_CHAT_MODEL='' is not a chat model name"),
        ({"APIATLAS_CHAT_MODEL": "openai: gpt"}, {}, "is not a chat model name"),
        ({"APIATLAS_CHAT_TIMEOUT": "soon"}, {}, "APIATLAS_CHAT_TIMEOUT='soon' is not supported"),
        ({"APIATLAS_CHAT_TIMEOUT": "0"}, {}, "positive number of seconds"),
        ({"APIATLAS_CHAT_TIMEOUT": "nan"}, {}, "positive number of seconds"),
    ],
    ids=["composer", "composer-override", "empty-model", "spaced-model", "timeout-word",
         "timeout-zero", "timeout-nan"],
)  # fmt: skip
def test_bad_composer_settings_are_config_errors(
    env: dict[str, str], overrides: dict[str, object], message: str
) -> None:
    with pytest.raises(ConfigError, match=message):
        Settings.from_env(env, **overrides)


def test_an_openai_chat_model_is_built_from_the_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from langchain_openai import ChatOpenAI

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")  # building calls no API
    model = load_chat_model(
        Settings(composer="llm", chat_model="openai:gpt-4.1-mini", chat_timeout=7.0)
    )
    assert isinstance(model, ChatOpenAI)
    assert (model.model_name, model.request_timeout) == ("gpt-4.1-mini", 7.0)


def test_a_missing_provider_package_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_openai", None)  # as if not installed
    with pytest.raises(MissingExtraError, match=r"pip install 'apiatlas\[openai\]'"):
        load_chat_model(Settings(composer="llm", chat_model="openai:gpt-4.1-mini"))


def test_a_provider_langchain_does_not_know_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="APIATLAS_CHAT_MODEL='nosuchvendor:model-1'"):
        load_chat_model(Settings(composer="llm", chat_model="nosuchvendor:model-1"))


def test_ask_with_the_llm_composer_fails_early_and_names_the_extra(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("APIATLAS_COMPOSER", "APIATLAS_CHAT_MODEL", "APIATLAS_CHAT_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setitem(sys.modules, "langchain_openai", None)
    code = main(["ask", "--home", str(tmp_path), "--composer", "llm", "How do I book freight?"])
    said = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert code == 2, said
    assert "pip install 'apiatlas[openai]'" in said
    # It failed before opening the vector store (and loading the embedding model).
    assert not (tmp_path / "chroma").exists()


def test_ask_help_imports_no_chat_model_package(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from apiatlas.cli import main\n"
        "try:\n"
        "    main(['ask', '--help'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print(sorted(m for m in ('langchain', 'langchain_openai') if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=True
    )
    assert "--composer {deterministic,llm}" in out.stdout
    assert out.stdout.strip().splitlines()[-1] == "[]", out.stdout + out.stderr
