"""One root for every error apiatlas raises.

Usage errors (bad configuration, bad input files, bad URLs) are raised early and say how to fix
the input. Runtime failures (a store that cannot be written, a model that cannot be loaded) wrap
the underlying exception with ``raise ... from e``.
"""

from __future__ import annotations

from difflib import get_close_matches


class ApiAtlasError(Exception):
    """Root of all apiatlas errors."""


class UsageError(ApiAtlasError):
    """The caller gave apiatlas something it cannot use: fix the input or the configuration."""


class ConfigError(UsageError):
    """A setting is missing or invalid."""


class LoaderError(UsageError):
    """A source (spec file, doc file, URL) could not be read or understood.

    Attributes:
        message: What went wrong and what to do, without the location.
        source: The file path or URL that failed.
        pointer: The JSON pointer inside the source, when it applies.
        line: The 1-based line number, when it applies.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str,
        pointer: str | None = None,
        line: int | None = None,
    ) -> None:
        self.message = message
        self.source = source
        self.pointer = pointer
        self.line = line
        where = source
        if line is not None:
            where += f":{line}"
        if pointer is not None:
            where += f"#{pointer}"
        super().__init__(f"{where}: {message}")


class SpecError(LoaderError):
    """An OpenAPI/Swagger document is invalid or cannot be resolved."""


class FetchError(LoaderError):
    """A URL could not be fetched (refused, unreachable, or not allowed)."""


class StoreError(ApiAtlasError):
    """A knowledge-graph or vector store failed at run time."""


class ModelError(ApiAtlasError):
    """An embedding or chat model could not be loaded or called."""


class ProjectNotServedError(UsageError):
    """A request to ``apiatlas serve`` named a project the server was not started for."""


class RequestTimeoutError(ApiAtlasError):
    """A request to ``apiatlas serve`` took longer than the server's time limit."""


class RemoteError(ApiAtlasError):
    """An ``apiatlas serve`` server refused or failed a request, or could not be reached.

    Attributes:
        status: The HTTP status it answered with; ``None`` when no answer came.
    """

    def __init__(self, message: str, *, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class UnknownName(UsageError):
    """A project or API name that does not exist: an error, never an empty answer.

    Attributes:
        what: What was named (``project``, ``API``).
        name: The name given.
        known: The names that exist, sorted.
        closest: The known name nearest to ``name`` (``None`` when none is near).
    """

    def __init__(self, what: str, name: str, known: list[str], *, where: str) -> None:
        self.what, self.name, self.known = what, name, sorted(known)
        near = get_close_matches(name.lower(), [k.lower() for k in self.known], n=1, cutoff=0.6)
        self.closest = next((k for k in self.known if near and k.lower() == near[0]), None)
        hint = f"; did you mean {self.closest!r}?" if self.closest else "."
        listed = ", ".join(self.known) if self.known else "none yet: ingest a spec first"
        plural = f"{what[:1].upper()}{what[1:]}s"  # Projects, APIs
        super().__init__(f"no {what} {name!r} in {where}{hint} {plural}: {listed}")
