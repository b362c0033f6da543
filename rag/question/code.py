"""Whether a question is about the team's code, and which kind: where it calls an endpoint, the
deprecated endpoints it calls, its calls to nothing in the spec, or what one file or folder calls.

Only the words of :mod:`apiatlas.rag.question.lexicon` and the project's own file paths are read,
and only when the project holds code: a question with no code to answer from is left to the
endpoint search.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel

from apiatlas.rag.question.lexicon import (
    CALLING,
    CODE_OWNERS,
    CODE_PLACES,
    ENDPOINT_NOUNS,
    NOT_IN_SPEC,
    OLD_WORDS,
)

CodeAskKind = Literal["where", "deprecated", "unknown", "file"]
_WORD = re.compile(r"[a-z0-9]+")
_PATHLIKE = re.compile(r"[\w.\-]+(?:/[\w.\-]*)*")


class CodeAsk(BaseModel):
    """What a question asks of the code: ``where`` an endpoint is called (the endpoint search
    still finds which), the ``deprecated`` endpoints called, the calls ``unknown`` to the spec,
    or what the ``file`` (or folder) ``target`` calls."""

    kind: CodeAskKind
    target: str | None = None


def read_code_question(question: str, files: Iterable[str]) -> CodeAsk | None:
    """The code question ``question`` asks, given the project's code file paths; ``None`` when
    it asks none (or there is no code)."""
    paths = sorted(set(files))
    if not paths:
        return None
    lowered = question.lower()
    words = set(_WORD.findall(lowered))
    named = named_path(question, paths)
    if named is not None:
        return CodeAsk(kind="file", target=named)
    about_code = bool(words & CODE_OWNERS)
    calling = bool(words & CALLING)
    if calling and about_code and _old_endpoints(lowered):
        return CodeAsk(kind="deprecated")
    if (calling or about_code) and any(phrase in lowered for phrase in NOT_IN_SPEC):
        return CodeAsk(kind="unknown")
    if words & CODE_PLACES and ("code" in words or calling and (about_code or "which" in words)):
        return CodeAsk(kind="where")
    return None


def _old_endpoints(lowered: str) -> bool:
    """An old-word right before an endpoint noun (``deprecated endpoints``, ``legacy APIs``)."""
    tokens = _WORD.findall(lowered)
    return any(a in OLD_WORDS and b in ENDPOINT_NOUNS for a, b in zip(tokens, tokens[1:]))


def named_path(question: str, paths: list[str]) -> str | None:
    """The file or folder of the code the question names (``shipping/client.py``,
    ``client.py``, ``web/``), or ``None``. A bare name counts only when it has a dot or a slash
    and names one file; a folder, when files lie under it."""
    for token in sorted(_PATHLIKE.findall(question), key=len, reverse=True):
        token = token.strip("./") if token.startswith("./") else token.rstrip(".,;:?!")
        if "/" not in token and "." not in token:
            continue
        if token in paths:
            return token
        folder = token.rstrip("/")
        if "/" in token or token.endswith("/"):
            if any(p.startswith(folder + "/") for p in paths):
                return folder
        matches = [p for p in paths if p.rsplit("/", 1)[-1] == token]
        if len(matches) == 1:
            return matches[0]
    return None
