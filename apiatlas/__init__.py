"""apiatlas: grounded, cited answers to developers' questions about APIs.

``from apiatlas import ApiAtlas, Settings`` is the way in; the facade (and what it loads) is
imported on first use, so ``import apiatlas`` stays light (the CLI's startup relies on it).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from apiatlas.errors import ApiAtlasError

if TYPE_CHECKING:
    from apiatlas.atlas import ApiAtlas
    from apiatlas.config import Settings

__all__ = ["ApiAtlas", "ApiAtlasError", "Settings"]
__version__ = "0.1.0"

_LAZY = {"ApiAtlas": "apiatlas.atlas", "Settings": "apiatlas.config"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'apiatlas' has no attribute {name!r}")
