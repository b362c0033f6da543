"""The facade, the tools and MCP check a project name before they read or store anything: a
refused name leaves the home as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.errors import ConfigError
from apiatlas.sample import write_sample_api
from apiatlas.tools import find_endpoints, make_tools, remember, search_docs


@pytest.mark.parametrize("name", ["", "..", "../../etc"])
def test_a_bad_name_is_refused_before_anything_is_stored(name: str, tmp_path: Path) -> None:
    spec = write_sample_api(tmp_path / "sample")
    with ApiAtlas(Settings(home=tmp_path / "home", project="good")) as atlas:
        with pytest.raises(ConfigError, match="is not valid"):
            atlas.ingest(openapi=[spec], project=name)
        assert atlas.stats().apis == []  # no project got anything
        for call in (
            lambda: atlas.ask("which call lists the orders", project=name),
            lambda: atlas.memory(name),
            lambda: atlas.stats(name),
            lambda: find_endpoints(atlas, "list the orders", project=name),
            lambda: search_docs(atlas, "orders", project=name),
            lambda: remember(atlas, "we ship on Fridays", project=name),
            lambda: make_tools(atlas, project=name),
        ):
            with pytest.raises(ConfigError, match="is not valid"):
                call()
    assert not (tmp_path / "home" / "memory.sqlite").exists()
