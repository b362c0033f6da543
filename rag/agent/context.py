"""Run-scoped settings of the agent, passed as LangGraph runtime context."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, is_dataclass, replace
from dataclasses import fields as dataclass_fields
from datetime import datetime
from difflib import get_close_matches

from apiatlas.config import DEFAULT_PROJECT, check_project
from apiatlas.errors import UsageError

MAX_K = 50
"""The most endpoints (and guide passages) one question may ask for, at every way in: the CLI,
:meth:`~apiatlas.atlas.ApiAtlas.ask`, the tools, MCP and HTTP."""


MAX_QUESTION_CHARS = 1_000
"""The longest question (or guide search) answered, at every way in. The longest of the eval
datasets' 1,000-odd questions is 304 characters; a 4,000-character question took 1.5 s where a
normal one takes 20 ms, and sixteen of them kept ``serve`` busy for 22 s (issue 53)."""


def check_question(question: object, what: str = "question") -> str:
    """``question`` itself when it is text of 1 to :data:`MAX_QUESTION_CHARS` characters.

    Raises:
        UsageError: It is empty, too long, or not text.
    """
    if not isinstance(question, str) or not question.strip():
        raise UsageError(f"the {what} is empty: say what you want to do")
    if len(question) > MAX_QUESTION_CHARS:
        raise UsageError(
            f"the {what} is {len(question):,} characters, over the {MAX_QUESTION_CHARS:,}-"
            "character limit: ask it shortly (what to do, on which resource); long context "
            "belongs in project memory"
        )
    return question


DEFAULT_K = 5
"""Endpoints (and guide passages) an answer gives in full when the caller sets no ``k``."""
NAMED = 10
"""Endpoints an answer names when the caller sets no ``k``: the first :data:`DEFAULT_K` in
full, the ranker's next ones a line each, so that a question that needs several calls finds
each of them (a plain retriever's ten: ``all_expected@10`` in the eval report)."""


def check_k(k: object) -> int:
    """``k`` itself when it is a whole number from 1 to :data:`MAX_K`.

    Raises:
        UsageError: It is anything else (0 would present nothing, a negative number counts
            from the end of a list).
    """
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_K:
        raise UsageError(f"k must be a whole number from 1 to {MAX_K}, not {k!r}")
    return k


def check_confidence(value: object) -> float | None:
    """``value`` itself when it is ``None`` or a number from 0 to 1.

    Raises:
        UsageError: It is anything else.
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise UsageError(f"min_confidence must be a number from 0 to 1, not {value!r}")
    return float(value)


@dataclass(frozen=True)
class AgentContext:
    """Where and how widely one question is answered.

    Attributes:
        project: The project whose APIs and guides are searched (``None``: the agent's own,
            see :func:`resolve_context`).
        api: Restrict the answer to one API of the project (``None``: all of them).
        k: How many endpoints (and guide passages) the answer gives, 1 to :data:`MAX_K`;
            ``None``: :data:`DEFAULT_K` in full and the ranker's next ones up to :data:`NAMED`
            a line each.
        agent_type: Also consult the project memories shared by every agent of this type.
        at: Answer with the project memory as it was at this moment (``None``: now); ISO 8601
            text (from JSON) is read as such.
        min_confidence: The lowest confidence of an ``answer`` outcome, 0 to 1; below it the
            answer is ``unsure`` (``None``: the threshold ``make train`` chose on dev, at which
            nine confident answers in ten were right).
    """

    project: str | None = None
    api: str | None = None
    k: int | None = None
    agent_type: str | None = None
    at: datetime | None = None
    min_confidence: float | None = None

    def __post_init__(self) -> None:
        if isinstance(self.at, str):  # from JSON: a LangGraph server's run, a parent's dict
            try:
                object.__setattr__(self, "at", datetime.fromisoformat(self.at))
            except ValueError:
                raise UsageError(f"the context's at must be an ISO 8601 time, not {self.at!r}"
                                 ) from None
        if self.k is not None:
            check_k(self.k)
        check_confidence(self.min_confidence)
        if self.project is not None:
            check_project(self.project)

    @property
    def full(self) -> int:
        """Endpoints (and guide passages) given in full."""
        return DEFAULT_K if self.k is None else self.k

    @property
    def named(self) -> int:
        """Endpoints named in all, those given in full first."""
        return NAMED if self.k is None else self.k


def context_from(value: object) -> AgentContext | None:
    """``value`` read as an :class:`AgentContext`: itself, or the fields it carries when it is
    a mapping (a plain ``{"project": "square"}``, or a LangGraph server's JSON context) or
    another context object (a parent graph's dataclass or pydantic model, which reaches a
    subgraph as it is). Keys of the parent's own are left to the parent.

    Raises:
        UsageError: A key is a misspelling of a field (``projcet``), a value is invalid, or
            ``value`` is none of these.
    """
    if value is None or isinstance(value, AgentContext):
        return value
    if isinstance(value, Mapping):
        items = dict(value)
    elif is_dataclass(value) and not isinstance(value, type):
        items = {f.name: getattr(value, f.name) for f in dataclass_fields(value)}
    elif callable(getattr(value, "model_dump", None)):
        items = value.model_dump()
    else:
        raise UsageError(
            f"the run's context is a {type(value).__name__}: pass an AgentContext "
            f"(apiatlas.rag.agent.context) or a dict with the keys {', '.join(_FIELDS)}"
        )
    for key in items:
        close = get_close_matches(str(key), _FIELDS, n=1, cutoff=0.75)
        if key not in _FIELDS and close:
            raise UsageError(f"the run's context has no key {key!r}; did you mean {close[0]!r}? "
                             f"Its keys are {', '.join(_FIELDS)}")
    known = {k: v for k, v in items.items() if k in _FIELDS}
    try:
        return AgentContext(**known)
    except TypeError as e:  # a value of the wrong type where a check compares it
        raise UsageError(f"the run's context is invalid: {e}") from None


_FIELDS = tuple(f.name for f in dataclass_fields(AgentContext))


def resolve_context(context: object, default: AgentContext) -> AgentContext:
    """The context a run answers with: ``context`` (see :func:`context_from`) with what it
    leaves open taken from the agent's ``default`` (a LangGraph server builds an empty context
    when a run passes none)."""
    ctx = context_from(context)
    if ctx is None:
        return default
    if ctx.project is None:
        return replace(ctx, project=default.project or DEFAULT_PROJECT)
    return ctx
