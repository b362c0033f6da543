"""Scan a folder of the team's code: which files to read, and the calls in each.

Nothing outside the folder is read: symbolic links are not followed (one that points outside
is reported), and neither are folders of other people's code (``node_modules``, ``vendor``,
virtual environments) or hidden ones. A file is skipped with a warning naming it when it is
binary or larger than :data:`MAX_CODE_BYTES` (generated or bundled code); one the parser reads
only in part keeps the calls it could read, with a warning giving the line.

What is kept of a call (its text, callee and path) is scrubbed of secrets first, with a warning
giving the line: a key pasted into a call is not stored.

A file whose content hash matches the previous scan's is not parsed again: its calls are taken
from that scan, which is what makes an unchanged re-scan cheap.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from apiatlas.errors import LoaderError
from apiatlas.loaders.code.calls import calls, first_error, parse
from apiatlas.loaders.code.models import CodeCall, CodeFile, CodeWarning, Language
from apiatlas.scrub import scrub_text

MAX_CODE_BYTES = 2 * 1024 * 1024
"""Largest source file read (2 MiB, about 50k lines); larger ones are generated or bundled."""
_BINARY_PROBE = 8192

LANGUAGES: dict[str, Language] = {
    ".py": "python",
    ".js": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".jsx": "javascript",
    ".ts": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".tsx": "typescript",
    ".go": "go",
    ".java": "java",
}
_DECLARATIONS = (".d.ts", ".d.mts", ".d.cts")
_SKIPPED_DIRS = frozenset({"node_modules", "vendor", "__pycache__", "site-packages", "venv"})


@dataclass
class Scan:
    """What a scan found: the files read (sorted by path), the warnings, and how many files
    were parsed (the others were unchanged since ``previous``)."""

    root: Path
    files: list[CodeFile] = field(default_factory=list)
    warnings: list[CodeWarning] = field(default_factory=list)
    parsed: int = 0


def scan(root: str | Path, previous: Mapping[str, CodeFile] | None = None) -> Scan:
    """Read every source file under ``root`` in a language the loader knows.

    Args:
        root: The folder to scan.
        previous: The last scan's files by path; a file with the same hash is not parsed.

    Raises:
        LoaderError: ``root`` is not a folder.
    """
    folder = Path(root)
    if not folder.is_dir():
        raise LoaderError(
            "not a folder of source code; give the folder to scan (apiatlas ingest --code DIR)",
            source=str(root),
        )
    folder = folder.resolve()
    found = Scan(root=folder)
    previous = previous or {}
    for directory, subdirs, names in os.walk(folder, followlinks=False):
        subdirs[:] = sorted(d for d in subdirs if not _skipped_dir(Path(directory) / d, found))
        for name in sorted(names):
            path = Path(directory) / name
            relative = path.relative_to(folder).as_posix()
            language = _language(name)
            if language is None:
                continue
            if path.is_symlink():
                _link_warning(path, relative, folder, found)
                continue
            read = _read(path, relative, language, previous.get(relative), found)
            if read is not None:
                found.files.append(read)
    found.files.sort(key=lambda f: f.path)
    return found


def _language(name: str) -> Language | None:
    if name.endswith(_DECLARATIONS):
        return None
    return LANGUAGES.get(os.path.splitext(name)[1].lower())


def _skipped_dir(path: Path, found: Scan) -> bool:
    if path.name.startswith(".") or path.name in _SKIPPED_DIRS:
        return True
    if path.is_symlink():
        _link_warning(path, path.relative_to(found.root).as_posix(), found.root, found)
        return True
    return False


def _link_warning(path: Path, relative: str, folder: Path, found: Scan) -> None:
    target = path.resolve()
    if not target.is_relative_to(folder):
        found.warnings.append(CodeWarning(
            path=relative, message=f"symbolic link to {target}, outside the folder: not read"))  # fmt: skip


def _read(path: Path, relative: str, language: Language, before: CodeFile | None,
          found: Scan) -> CodeFile | None:  # fmt: skip
    try:
        size = path.stat().st_size
        if size > MAX_CODE_BYTES:
            found.warnings.append(CodeWarning(path=relative, message=(
                f"{size / 1024 / 1024:.1f} MiB, larger than {MAX_CODE_BYTES // 1024 // 1024} MiB "
                "(generated or bundled code?): not read")))  # fmt: skip
            return None
        source = path.read_bytes()
    except OSError as error:
        found.warnings.append(CodeWarning(path=relative, message=f"cannot be read: {error}"))
        return None
    if b"\0" in source[:_BINARY_PROBE]:
        found.warnings.append(CodeWarning(path=relative, message="binary content: not read"))
        return None
    digest = hashlib.sha256(source).hexdigest()
    lines = source.count(b"\n") + (0 if source.endswith(b"\n") or not source else 1)
    if before is not None and before.sha256 == digest:
        return before
    tree = parse(source, language, tsx=path.suffix.lower() == ".tsx")
    found.parsed += 1
    error_line = first_error(tree)
    if error_line is not None:
        found.warnings.append(CodeWarning(path=relative, message=(
            f"does not parse as {language} at line {error_line}: calls read from the rest")))  # fmt: skip
    kept = [_scrubbed(call, relative, found) for call in calls(tree, source)]
    return CodeFile(path=relative, language=language, sha256=digest, lines=lines, calls=kept)


def _scrubbed(call: CodeCall, relative: str, found: Scan) -> CodeCall:
    """``call`` with every secret in what is stored of it redacted (a warning says where)."""
    fields = {"text": call.text, "callee": call.callee, "path": call.path}
    results = {k: scrub_text(v) for k, v in fields.items() if v}
    kinds = sorted({kind for r in results.values() for kind in r.findings})
    if not kinds:
        return call
    found.warnings.append(CodeWarning(
        path=relative, message=f"secret scrubbed at line {call.line}: {', '.join(kinds)}"))  # fmt: skip
    return call.model_copy(update={k: r.text for k, r in results.items()})
