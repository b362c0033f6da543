"""The bundled sample API: the Parcelroute Logistics API spec and its guides.

The sample ships as package data (``apiatlas/sample_api``) so the demo, the default tests and the
notebooks work offline from an editable install and from a wheel alike. It is an original,
fictional logistics API: ``openapi.yaml`` (OpenAPI 3.0.3, with external ``$ref``s into
``schemas.yaml``), Markdown guides under ``guides/``, and under ``code/`` a made-up team's code
that calls it (Python, TypeScript and Go).
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path

from apiatlas.errors import LoaderError

SPEC_FILE = "openapi.yaml"
GUIDES_DIR = "guides"
CODE_DIR = "code"
"""The sample team's code calling the API, one folder per part of its app."""
# The same globs as the package data in pyproject.toml: anything else in the folder is not shipped.
_SPEC_SUFFIX = ".yaml"
_GUIDE_SUFFIX = ".md"
_CODE_SUFFIXES = (".py", ".ts", ".go")


def _sample_root() -> Traversable:
    return files("apiatlas") / "sample_api"


def sample_api_dir() -> Path:
    """Return the directory holding the bundled sample API.

    Returns:
        The ``sample_api`` directory inside the installed ``apiatlas`` package.

    Raises:
        LoaderError: If the package data is missing or not on the file system (for example when
            apiatlas is imported from a zip file); use :func:`write_sample_api` to get a copy.
    """
    root = _sample_root()
    if not isinstance(root, Path) or not root.is_dir():
        raise LoaderError(
            "the bundled sample API is not available as a directory; reinstall apiatlas, or call "
            "apiatlas.sample.write_sample_api(target) to copy it somewhere readable",
            source=str(root),
        )
    return root


def sample_spec_path() -> Path:
    """Return the path of the sample API's root spec (``openapi.yaml``).

    Raises:
        LoaderError: If the bundled sample API is not available (see :func:`sample_api_dir`).
    """
    return sample_api_dir() / SPEC_FILE


def sample_code_dir() -> Path:
    """Return the directory holding the sample team's code (``apiatlas ingest --code``).

    Raises:
        LoaderError: If the bundled sample API is not available (see :func:`sample_api_dir`).
    """
    return sample_api_dir() / CODE_DIR


def sample_guides_dir() -> Path:
    """Return the directory holding the sample API's Markdown guides.

    Raises:
        LoaderError: If the bundled sample API is not available (see :func:`sample_api_dir`).
    """
    return sample_api_dir() / GUIDES_DIR


def write_sample_api(target: Path) -> Path:
    """Copy the sample API (spec files, guides and the team's code) into ``target``.

    Gives notebooks and tests a private copy they may edit (to show re-ingestion picking up a
    change, say) without touching the installed package. Sample files already in ``target`` are
    overwritten; other files there are left alone.

    Args:
        target: Directory to write into; created if missing.

    Returns:
        ``target``: load ``target / "openapi.yaml"`` and the guides in ``target / "guides"``;
        the team's code calling it is in ``target / "code"``.

    Raises:
        LoaderError: If ``target`` exists but is not a directory, or cannot be written.
    """
    target = Path(target)
    if target.exists() and not target.is_dir():
        raise LoaderError(
            "cannot copy the sample API here: the path exists and is not a directory; "
            "pass a new or empty directory",
            source=str(target),
        )
    root = _sample_root()
    if not root.is_dir():
        raise LoaderError(
            "the bundled sample API is missing from the installed package; reinstall apiatlas",
            source=str(root),
        )
    try:
        (target / GUIDES_DIR).mkdir(parents=True, exist_ok=True)
        # Read through Traversable rather than shutil.copytree so this also works when the
        # package data is not a plain directory.
        for item in root.iterdir():
            if item.is_file() and item.name.endswith(_SPEC_SUFFIX):
                (target / item.name).write_bytes(item.read_bytes())
        for item in (root / GUIDES_DIR).iterdir():
            if item.is_file() and item.name.endswith(_GUIDE_SUFFIX):
                (target / GUIDES_DIR / item.name).write_bytes(item.read_bytes())
        for part in (root / CODE_DIR).iterdir():
            for item in part.iterdir() if part.is_dir() else ():
                if item.is_file() and item.name.endswith(_CODE_SUFFIXES):
                    (target / CODE_DIR / part.name).mkdir(parents=True, exist_ok=True)
                    (target / CODE_DIR / part.name / item.name).write_bytes(item.read_bytes())
    except OSError as e:
        raise LoaderError(
            f"could not copy the sample API: {e.strerror or e}; check that the directory is "
            "writable and the disk is not full",
            source=str(target),
        ) from e
    return target
