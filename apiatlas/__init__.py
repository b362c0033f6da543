"""apiatlas: grounded, cited answers to developers' questions about APIs."""

from apiatlas.errors import ApiAtlasError

__all__ = ["ApiAtlasError"]
__version__ = "0.1.0"
