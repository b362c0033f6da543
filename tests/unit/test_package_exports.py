"""``from apiatlas import ApiAtlas, Settings`` works, and ``import apiatlas`` loads neither."""

from __future__ import annotations

import subprocess
import sys

import pytest

import apiatlas
from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings


def test_the_facade_and_its_settings_are_exported() -> None:
    assert (apiatlas.ApiAtlas, apiatlas.Settings) == (ApiAtlas, Settings)
    assert {"ApiAtlas", "Settings", "ApiAtlasError"} <= set(apiatlas.__all__)
    with pytest.raises(AttributeError, match="no attribute 'Atlas'"):
        apiatlas.Atlas  # noqa: B018


def test_importing_the_package_loads_no_facade() -> None:
    code = "import sys, apiatlas; print('apiatlas.atlas' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
