"""Which project-memory backend the settings pick, and where the embedded one lives."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiatlas.config import Settings
from apiatlas.errors import ConfigError

URL = "postgresql://u:p@127.0.0.1:5432/db"


def test_sqlite_by_default_under_the_home() -> None:
    settings = Settings.from_env({"APIATLAS_HOME": "/srv/atlas"})
    assert settings.memory == "sqlite"
    assert settings.memory_path == Path("/srv/atlas/memory.sqlite")


def test_database_url_alone_selects_postgres() -> None:
    assert Settings.from_env({"DATABASE_URL": URL}).memory == "postgres"


def test_explicit_choice_wins_over_database_url() -> None:
    assert Settings.from_env({"DATABASE_URL": URL, "APIATLAS_MEMORY": "sqlite"}).memory == "sqlite"
    assert Settings.from_env({"DATABASE_URL": URL}, memory="sqlite").memory == "sqlite"


def test_postgres_without_a_url_says_what_to_set() -> None:
    with pytest.raises(ConfigError, match="DATABASE_URL"):
        Settings.from_env({"APIATLAS_MEMORY": "postgres"})
    with pytest.raises(ConfigError, match="DATABASE_URL"):
        Settings.from_env({}, memory="postgres")


def test_unknown_backend_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="APIATLAS_MEMORY='redis'"):
        Settings.from_env({"APIATLAS_MEMORY": "redis"})
