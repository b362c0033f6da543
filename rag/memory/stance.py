"""What a memory says about each endpoint it names: prefer it, avoid it, or take care with it.

Deterministic, no LLM. The text is cut into clauses; each endpoint ref is located in them (by its
``METHOD /path``, a shortened path such as ``DELETE /shipments``, or, when it tells the refs apart,
its version, its action segment or its method's verb); cue words in the clause decide the stance:

- a prohibition before the mention ("never", "don't", "avoid", "must not", "no longer poll",
  "stop using", "we replaced … with"), a ban after it ("… is forbidden", "… is deprecated for
  us", "… was replaced by") or "instead of / rather than" before it: ``avoid``;
- a preference ("use", "prefer", "always", "instead", "switched to", …): ``prefer``.

Refs the text does not settle fall back on the memory's kind: a decision prefers the ref it names
first, a procedure prefers the endpoints its steps call, a warning asks for ``caution``, facts
and episodes stay ``neutral``. When the text avoids some ref, the other refs it names (or, when
it says "instead", the ones it leaves open) are the ones to use.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from apiatlas.graph.signatures import HTTP_METHODS, endpoint_key
from apiatlas.rag.memory.model import Memory
from apiatlas.rag.answer.result import MemoryStance as Stance

_CLAUSES = re.compile(
    r"(?<=[.;!?])\s+|;\s*|,\s+|\s+but\s+|\s+and\s+|\s+whereas\s+|\s+[—–]\s+|\s+-\s+|\n+|:\s+",
    re.I,
)
_GIVE_UP = r"(use|call|poll|hit|query|fetch|rely\s+on|depend\s+on|page\s+through|go\s+through)"
"""What a team no longer does with an endpoint ("we no longer poll X")."""
_PROHIBIT = re.compile(
    r"\b(never|don'?t|do\s+not|must\s+not|mustn'?t|should\s+not|shouldn'?t|avoid|avoids|"
    r"stop(s|ped|ping)?\s+\w+ing|no\s+longer\s+" + _GIVE_UP + r"|not\s+to|not\s+allowed\s+to|"
    r"forbid|forbids|forbidden\s+to|ban|bans|prohibit|prohibits|"
    # "we replaced X with Y" gives X up; what follows "with"/"by" is what replaced it
    r"replac(e|es|ed|ing)(?!.*\b(with|by)\b)|(have|'ve|we)\s+(deprecated|retired|dropped)|"
    # a negated passive: "SKUs are not removed with X", "it is never done through X"
    r"(is|are|was|were|be|get|gets)\s+(not|never)\s+\w+ed\s+(with|via|through|using|by))\b",
    re.I,
)
_BANNED = re.compile(
    r"\b(is|are)\s+(forbidden|banned|prohibited|not\s+allowed|off[- ]limits|not\s+to\s+be\s+used)"
    r"|\bmust\s+(not|never)\s+be\s+(used|called)\b|\bshould\s+(not\s+|never\s+)?be\s+avoided\b"
    r"|^\S+(\s+\S+)?\s+(is|are|was|were|has\s+been|have\s+been)\s+(now\s+)?"
    r"(deprecated|retired|dead|replaced)\s+(for\s+us|here|internally|in\s+our|by|with)\b",
    re.I,
)
_INSTEAD_OF = re.compile(r"\b(instead\s+of|rather\s+than|in\s+place\s+of)\b", re.I)
_NOT_THIS = re.compile(r"^\s*(and\s+|but\s+)?not\b", re.I)
_PREFER = re.compile(
    r"\b(use|uses|using|prefer|prefers|preferred|always|only|instead|switch(ed)?\s+to|"
    r"migrat(e|ed)\s+to|mov(e|ed)\s+to|stick\s+(to|with)|recommend(s|ed)?|standardi[sz]ed\s+on)\b",
    re.I,
)
_SIGNATURE = re.compile(r"\b(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+(/[^\s,;()'\"`?#]*)", re.I)
"""``METHOD /path`` as prose writes it (a query string after the path is not part of it)."""
_BARE_PATH = re.compile(r"(?<![\w/])(/[A-Za-z0-9_{}\-/.]+)")
_VERSION = re.compile(r"^v\d+$")
STANCE_CACHE = 20_000
"""Memories whose stances are kept, a team's memory at the scale ``make bench`` measures."""
ACTION_CUE_LETTERS = 6
"""A memory's word names an endpoint by its action segment when it starts with this many of the
segment's letters ("cancel" for "cancelled", "cancelling")."""

_METHOD_VERBS = {
    "DELETE": ("delet", "remov"),
    "PUT": ("updat", "replac", "edit"),
    "PATCH": ("updat", "edit", "modif"),
    "GET": ("retriev", "fetch", "list"),
}


def classify_stances(memory: Memory) -> dict[str, Stance]:
    """The stance of ``memory`` towards each endpoint ref it names (resource refs are left out).

    Cached by what it reads (kind, text, steps, endpoint refs): an answer reviews every memory
    linked to the endpoints it presents, hundreds at a team's scale, and the next question
    reviews most of them again.
    """
    refs = memory.endpoint_refs
    if not refs:
        return {}
    return dict(_stances(memory.kind, memory.text, tuple(memory.steps), tuple(refs)))


@lru_cache(maxsize=STANCE_CACHE)
def _stances(
    kind: str, body: str, steps: tuple[str, ...], refs: tuple[str, ...]
) -> dict[str, Stance]:
    text = "\n".join([body, *steps])
    clauses = [c.strip() for c in _CLAUSES.split(text) if c and c.strip()]
    explicit: dict[str, Stance | None] = {}
    located: dict[str, int] = {}
    for ref in refs:
        found: Stance | None = None
        for i, clause in enumerate(clauses):
            at = _mention(ref, refs, clause)
            if at < 0:
                continue
            located.setdefault(ref, i)
            stance = _clause_stance(clause, at)
            if stance == "avoid" or (stance == "prefer" and found is None):
                found = stance
        explicit[ref] = found
    return _with_defaults(kind, refs, explicit, located, text)


def named_endpoints(memory: Memory) -> list[str]:
    """The endpoints a memory names: its endpoint refs, then any ``METHOD /path`` in its text
    or steps, unique by signature (parameter names ignored), in that order."""
    found = {endpoint_key(r): r for r in memory.endpoint_refs}
    for text in [memory.text, *memory.steps]:
        for match in _SIGNATURE.finditer(text):
            ref = f"{match.group(1).upper()} {match.group(2).rstrip('.:').rstrip('/') or '/'}"
            found.setdefault(endpoint_key(ref), ref)
    return list(found.values())


def _clause_stance(clause: str, at: int) -> Stance | None:
    """The stance a clause takes towards the ref mentioned at character ``at``."""
    before, after = clause[:at], clause[at:]
    if _PROHIBIT.search(before) or _BANNED.search(after):
        return "avoid"
    if _INSTEAD_OF.search(before) or _NOT_THIS.match(before):
        # "use X instead of Y", "…, not Y": what follows the cue is what the team gave up.
        return "avoid"
    if _PREFER.search(clause):
        return "prefer"
    return None


def _with_defaults(
    kind: str,
    refs: Sequence[str],
    explicit: dict[str, Stance | None],
    located: dict[str, int],
    text: str,
) -> dict[str, Stance]:
    out: dict[str, Stance] = {r: s for r, s in explicit.items() if s is not None}
    open_refs = [r for r in refs if r not in out]
    if not open_refs:
        return out
    if len(refs) == 1 and refs[0] not in located:
        # One ref the text never names outright: the text as a whole is about it.
        if _PROHIBIT.search(text) or _BANNED.search(text):
            return {refs[0]: "avoid"}
        if _PREFER.search(text):
            return {refs[0]: "prefer"}
    if "avoid" in out.values():
        # Next to what the team gave up, another endpoint it names is the way to go; one it
        # does not name outright only when the text says "instead".
        instead = re.search(r"\binstead\b", text, re.I) is not None
        return {
            **out,
            **{r: "prefer" if r in located or instead else "neutral" for r in open_refs},
        }
    if kind == "procedure":
        return {**out, **{r: "prefer" for r in open_refs}}
    if kind == "decision":
        if out:
            return {**out, **{r: "neutral" for r in open_refs}}
        first = min(open_refs, key=lambda r: (located.get(r, len(text)), refs.index(r)))
        return {r: "prefer" if r == first else "neutral" for r in refs}
    default: Stance = "caution" if kind == "warning" else "neutral"
    return {**out, **{r: default for r in open_refs}}


def _mention(ref: str, refs: Sequence[str], clause: str) -> int:
    """Where ``clause`` names ``ref`` (-1: it does not), telling it apart from ``refs``."""
    method, path = ref.split(" ", 1)
    signatures = list(_SIGNATURE.finditer(clause))
    bare = list(_BARE_PATH.finditer(clause))
    for match in signatures:
        if match.group(1).upper() == method and _same_path(match.group(2), path):
            return match.start()
    for match in bare:
        before = clause[: match.start()].rstrip().split(" ")[-1].upper()
        if before not in HTTP_METHODS and _same_path(match.group(1), path):
            if sum(r.split(" ", 1)[1] == path for r in refs) == 1:
                return match.start()
    # A word inside a path the clause writes out is part of that path's name, not a cue for
    # this ref ("v3" in "not POST /v3/contacts/search" does not name /v3/contacts/search/emails).
    written = [m.span() for m in [*signatures, *bare]]
    words = [
        (m.start(), m.group(0).lower())
        for m in re.finditer(r"[A-Za-z0-9]+", clause)
        if not any(a <= m.start() < b for a, b in written)
    ]
    others = [r for r in refs if r != ref]
    for cue in _distinct_cues(method, path, others):
        exact = _VERSION.match(cue) is not None
        for start, word in words:
            if word == cue or (not exact and word.startswith(cue)):
                return start
    return -1


def _distinct_cues(method: str, path: str, others: Sequence[str]) -> list[str]:
    """Words that name this ref and none of ``others``: version, action segment, method verb."""
    literals = _literals(path)
    other_literals = [set(_literals(o.split(" ", 1)[1])) for o in others]
    cues = [s for s in literals if _VERSION.match(s) and all(s not in o for o in other_literals)]
    segments = path.strip("/").split("/")
    if len(segments) >= 2 and "{" in segments[-2] and not segments[-1].startswith("{"):
        action = segments[-1].lower()
        if all(action not in o for o in other_literals):
            cues.append(action[:ACTION_CUE_LETTERS])
    other_methods = {o.split(" ", 1)[0] for o in others}
    if method not in other_methods:
        cues += _METHOD_VERBS.get(method, ())
        if method == "POST" and not segments[-1].startswith("{") and "{" not in path:
            cues.append("creat")
    return cues


def _literals(path: str) -> list[str]:
    return [s.lower() for s in path.strip("/").split("/") if s and not s.startswith("{")]


def _same_path(written: str, path: str) -> bool:
    """Whether a path as written in prose names ``path``: equal, or a shorthand of its segments.

    ``/shipments`` names ``/v2/shipments/{shipment_id}``: its literal segments appear in order
    and the last ones agree.
    """
    written = written.rstrip(".:")
    if endpoint_key(f"GET {written}") == endpoint_key(f"GET {path}"):
        return True
    mine, theirs = _literals(written), _literals(path)
    if not mine or not theirs or mine[-1] != theirs[-1]:
        return False
    it = iter(theirs)
    return all(seg in it for seg in mine)
