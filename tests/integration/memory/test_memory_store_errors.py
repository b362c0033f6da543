"""Opening project memory where it cannot live fails with a StoreError that says where and why."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.embeddings import Embeddings

from apiatlas.config import Settings
from apiatlas.errors import ConfigError, StoreError
from apiatlas.rag.runtime.embeddings import load_embeddings
from apiatlas.rag.memory.backends import open_memory_store


@pytest.fixture(scope="module")
def embeddings() -> Embeddings:
    return load_embeddings(Settings())


def test_dead_postgres_names_the_url_without_the_password(embeddings: Embeddings) -> None:
    # Port 1 on loopback: nothing listens there, so the connection is refused at once.
    url = "postgresql://memuser:Sup3rS3cret-pw@127.0.0.1:1/memdb"
    settings = Settings(home=Path("unused"), memory="postgres", database_url=url)
    with pytest.raises(StoreError) as caught:
        open_memory_store(settings, embeddings)
    message = str(caught.value)
    assert "127.0.0.1:1/memdb" in message and "memuser" in message
    assert "Sup3rS3cret-pw" not in message
    assert "Is the server up" in message


def test_postgres_without_a_url_is_a_config_error(embeddings: Embeddings, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="DATABASE_URL"):
        open_memory_store(Settings(home=tmp_path, memory="postgres"), embeddings)


def test_unwritable_sqlite_path_names_the_path(embeddings: Embeddings, tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("a file where the home directory should be")
    settings = Settings(home=blocker / "home", memory="sqlite")
    with pytest.raises(StoreError, match="not-a-directory") as caught:
        open_memory_store(settings, embeddings)
    assert "APIATLAS_HOME" in str(caught.value)


def test_a_file_that_is_not_sqlite_is_a_store_error(embeddings: Embeddings, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, memory="sqlite")
    settings.memory_path.write_bytes(b"this is not a database" * 100)
    with pytest.raises(StoreError, match="memory.sqlite"):
        open_memory_store(settings, embeddings)
