"""What the code loader reads from a source file: the calls that may reach an API.

The loader knows no spec. It keeps every call that could be a request: one with an argument
that reads as a path or URL (a literal, a template, a concatenation, a format string, or a
variable assigned one in the same function or file), one with a ``METHOD /path`` route string,
and a method call on a receiver whose name has two words or more (an SDK method such as
``client.chat_postMessage``). Which of them reach which endpoint is decided when the project's
links are computed (:func:`apiatlas.graph.build.code.link_code`), so a re-ingested spec re-links code
that did not change.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

Language = Literal["python", "javascript", "typescript", "go", "java"]
CallStyle = Literal["path", "route", "name"]
"""How a call names what it calls: a path or URL argument, a ``METHOD /path`` route string, or
only its method's name."""


class CodeCall(BaseModel):
    """One call the linker may match.

    Attributes:
        line: 1-based line the call expression begins on.
        column: 0-based column of that start.
        function: The enclosing function (``Class.method`` where there is a class), or ``""``
            at module level.
        callee: The called expression as written (``self._post``, ``api.postMethod``).
        name: The callee's last identifier (``_post``, ``postMethod``).
        method: The HTTP method the call states (its name, a verb argument, ``method=``), or
            ``None`` when it states none.
        path: The path or URL the call sends, parameters as ``{}`` (``/files/{}``,
            ``https://api.example.com/v1/x``), or ``None``.
        receiver: True when the callee is a member of something (``a.b(...)``), which an SDK
            method call is.
        style: What names the target: the ``path``, a ``route`` string, or only the ``name``.
        text: The call's first line, cut to :data:`TEXT_CHARS`.
    """

    model_config = ConfigDict(frozen=True)

    line: int
    column: int = 0
    function: str = ""
    callee: str
    name: str
    method: str | None = None
    path: str | None = None
    receiver: bool = False
    style: CallStyle = "path"
    text: str = ""


class CodeFile(BaseModel):
    """A scanned source file: where it is, what it hashes to, and its candidate calls."""

    path: str = Field(description="Relative to the scanned folder, with / separators.")
    language: Language
    sha256: str
    lines: int
    calls: list[CodeCall] = Field(default_factory=list)


class CodeWarning(BaseModel):
    """A file that was skipped or read in part, and why."""

    path: str
    message: str


TEXT_CHARS = 160
"""Longest call text kept for display."""
