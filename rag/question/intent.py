"""Question analysis: what the developer wants to do (kinds), to what (resource terms), and any
endpoints or operation ids named outright.

Analysis is purely lexical and deterministic;
:class:`~apiatlas.rag.retrieval.resource_matcher.ResourceMatcher` then maps the resource terms onto the
graph's resources, lexically and by embedding similarity.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from pydantic import BaseModel, Field

from apiatlas.graph.lexicon import META_WORDS, PHRASES, STOP_WORDS, VERBS, verb_kinds
from apiatlas.rag.question.lexicon import (
    ADVERBS,
    DETERMINERS,
    ID_WORDS,
    OLD_WORDS,
    PREPOSITIONS,
    SUBJECTS,
    WANTING,
)
from apiatlas.graph.model import OperationKindName
from apiatlas.graph.words import is_plural, split_words

_METHODS = "GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|TRACE"
_EXPLICIT = re.compile(
    rf"(?<![A-Za-z])({_METHODS})\s+`?((?:https?://[^\s/`]+)?/[^\s?#,;)'\"`]*)", re.IGNORECASE
)
_BARE_PATH = re.compile(
    r"(?:https?://[^\s/`]+|(?<![\w/:.]))(/[A-Za-z0-9_{}:.\-]+(?:/[A-Za-z0-9_{}:.\-]+)*)"
)
_CAMEL = re.compile(r"\b(?:[a-z]+(?:[A-Z][a-z0-9]*)+|(?:[A-Z][a-z0-9]+){2,})\b")
_SNAKE_OP = re.compile(r"\b[a-z]+(?:_[a-z0-9]+){1,}\b")
IDENTIFIER_TEXT = "none"
"""What an operation-id-shaped token leaves in the question's text, where it may name a resource
or a field rather than an operation: ``"none"`` (nothing), ``"words"`` (``ConfigMap`` -> "config
map"), ``"token"`` ("configmap") or ``"both"``. The dense similarity reads the whole question
either way; on dev the four are within a case of each other (``experiments/2026-11-29-shapes``)."""
PATH_LETTERS = 2
"""A bare ``/path`` names an endpoint only with this many lower-case letters in a row (not
``/1/2`` or a date)."""

_WORD = re.compile(r"[a-z0-9]+")
_VERSION = re.compile(r"\bv(\d+)\b", re.IGNORECASE)

_HOWTO = re.compile(
    r"\b(how (do|can|should|would|does|to)|how to|guide|tutorial|explain|walk me through|"
    r"what is the (process|flow)|steps to|best practice)",
    re.IGNORECASE,
)
_PURPOSE = re.compile(r"\b(so( that)? (we|i|they|you|it|he|she|the|our|my)|in order to)\b")
_NAME = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]+")
"""A capitalised word after the first one is a name ("our Leeds warehouse"), not a thing."""
class ExplicitEndpoint(BaseModel):
    """An endpoint named in the question, e.g. ``POST /v2/locations`` (method may be absent)."""

    method: str | None = None
    path: str


class Intent(BaseModel):
    """What a question asks for.

    Attributes:
        question: The question as asked.
        kinds: Operation kinds asked for, in the order their cue words appear.
        resource_terms: Phrases (adjacent pairs first) and words that may name a resource.
        endpoints: Endpoints named outright, with scheme, host and trailing punctuation removed.
        operation_ids: camelCase / PascalCase / snake_case tokens that may be operation ids.
        is_howto: A how-to or explanation request without a CRUD ask.
        wants_deprecated: The question asks for the old / legacy / deprecated variant.
        versions: API versions named (``v1``).
        verbs: The cue words that gave ``kinds`` (``register``, ``set up``), in order.
        keywords: Content words of the question (verbs included), in order.
        names: Capitalised words after the first one, lowercased: names of places, companies or
            products ("Leeds", "Northline"), which are not things an endpoint acts on.
        qualifiers: Nouns in a prepositional phrase after the thing asked about ("shipments
            *for one store*", "prices *from all vendors*"): they narrow it down.
    """

    question: str
    kinds: list[OperationKindName] = Field(default_factory=list)
    resource_terms: list[str] = Field(default_factory=list)
    endpoints: list[ExplicitEndpoint] = Field(default_factory=list)
    operation_ids: list[str] = Field(default_factory=list)
    is_howto: bool = False
    wants_deprecated: bool = False
    versions: list[str] = Field(default_factory=list)
    verbs: list[str] = Field(default_factory=list)
    keywords: list[str] = Field(default_factory=list)
    names: list[str] = Field(default_factory=list)
    qualifiers: list[str] = Field(default_factory=list)

    def subject_terms(self, terms: Sequence[str]) -> list[str]:
        """The ``terms`` that name what is asked about, not a qualifier of it.

        All of them when none is a subject, or when the question has no operation verb: a
        qualifier qualifies the object of a verb ("list consignments *with a carrier*"); a
        verbless list of things does not say which one the call acts on.
        """
        heads = [t for t in terms if not set(t.split()) <= set(self.qualifiers)]
        return heads if heads and self.kinds else list(terms)

    @property
    def explicit(self) -> bool:
        """True when the question names endpoints or operation ids outright."""
        return bool(self.endpoints or self.operation_ids)


def normalise_path(path: str) -> str:
    """Lower-case, drop scheme/host, trailing slash and the sentence's punctuation after it
    (``/v2/quotes:``), and blank out parameter names."""
    p = re.sub(r"^https?://[^/]+", "", path.strip().strip("`").rstrip(".:!")).split("?")[0]
    segments = []
    for seg in p.lower().strip("/").split("/"):
        if seg.startswith("{") or seg.startswith(":"):
            seg = "{}"
        if seg:
            segments.append(seg)
    return "/" + "/".join(segments)


def analyse_question(question: str) -> Intent:
    """Parse a question into an :class:`Intent` (deterministic, no I/O)."""
    text = question.strip()
    endpoints, op_ids, rest = _mentions(text)
    lowered = rest.lower()
    words, hits, cue_words = _cues(lowered)
    # The asked operation is the main clause's verb: a participle ("a load that's already
    # booked") or a verb of a purpose clause ("so we get updates") describes a state or a goal,
    # so its kinds come after those of the other cue verbs.
    purpose = _PURPOSE.search(lowered)
    goal_from = purpose.start() if purpose else len(lowered)
    hits.sort(key=lambda h: (_participle(h[1]) or h[0] >= goal_from, h[0]))
    kinds: list[OperationKindName] = []
    for _, _, found in hits:
        kinds.extend(k for k in found if k not in kinds)

    versions = [f"v{v}" for v in _VERSION.findall(lowered)]
    plain = [w for _, w in words]
    content = [w for w in plain if w not in STOP_WORDS and not w.isdigit()]
    keywords = list(dict.fromkeys(content))
    excluded = cue_words | META_WORDS | OLD_WORDS | set(versions) | _verb_slots(plain)
    nouns = [w for w in content if w not in excluded]
    # Nouns of a purpose clause name the goal ("so we get status alerts"), not the thing the
    # call acts on; they stay keywords but are not resource terms unless nothing else is.
    main = {w for pos, w in words if pos < goal_from}
    if any(n in main for n in nouns):
        nouns = [n for n in nouns if n in main]
    things = [n for n in nouns if not n.endswith(("ed", "ing"))]
    if "read" in kinds and "list" not in kinds and things and is_plural(things[0]):
        # "show me the verified hauliers": reading a plural is listing.
        kinds.insert(kinds.index("read"), "list")
    if _by_id(kinds, things, plain):
        # "look up one invoice by its number": a single thing whose id is known is read, not searched.
        kinds.insert(0, "read")
    crud = any(k != "action" for k in kinds)
    return Intent(
        question=question,
        kinds=kinds,
        resource_terms=_terms(nouns, plain),
        endpoints=endpoints,
        operation_ids=op_ids,
        is_howto=bool(_HOWTO.search(text)) and not crud and not endpoints and not op_ids,
        wants_deprecated=bool(OLD_WORDS & set(keywords)),
        versions=list(dict.fromkeys(versions)),
        verbs=list(dict.fromkeys(h[1] for h in hits)),
        keywords=keywords,
        names=list(dict.fromkeys(w.lower() for w in _NAME.findall(rest))),
        qualifiers=_qualifiers(nouns, plain),
    )


_ASK_AFTER = re.compile(r"\bhow (?:do|can|should|would) (?:i|we|you)\b|\bhow to\b", re.IGNORECASE)
"""A how-to cue that opens the question's own ask, after a clause naming what was used."""


def asked_after_mention(question: str) -> Intent | None:
    """What a how-to clause after the question's last named endpoint or operation id asks
    ("we fetch an order with GET /orders/{id}; *how do I change its address*?"): its intent,
    with only its first operation kind and cue verb, the clause's main verb. ``None`` when no
    how-to clause follows the last mention, or it asks no operation kind."""
    ends = [m.end() for pattern in (_EXPLICIT, _BARE_PATH, _CAMEL, _SNAKE_OP)
            for m in pattern.finditer(question)]
    if not ends:
        return None
    ask = _ASK_AFTER.search(question, max(ends))
    if ask is None:
        return None
    clause = analyse_question(question[ask.end():])
    if not clause.kinds:
        return None
    return clause.model_copy(update={"kinds": clause.kinds[:1], "verbs": clause.verbs[:1]})


def _mentions(text: str) -> tuple[list[ExplicitEndpoint], list[str], str]:
    """The endpoints (method and path, or a bare path) and operation ids the question names,
    and its text without them."""
    endpoints = [
        ExplicitEndpoint(method=m.group(1).upper(), path=normalise_path(m.group(2)))
        for m in _EXPLICIT.finditer(text)
    ]
    rest = _EXPLICIT.sub(" ", text)
    for m in _BARE_PATH.finditer(rest):
        path = normalise_path(m.group(1))
        if re.search(rf"[a-z]{{{PATH_LETTERS}}}", path):
            endpoints.append(ExplicitEndpoint(path=path))
    rest = _BARE_PATH.sub(" ", rest)
    op_ids = list(dict.fromkeys(_CAMEL.findall(rest) + _SNAKE_OP.findall(rest)))
    for op in op_ids:
        rest = rest.replace(op, _identifier_text(op))
    return endpoints, op_ids, rest


def _identifier_text(token: str) -> str:
    """What ``token`` leaves in the question's text under :data:`IDENTIFIER_TEXT`."""
    if IDENTIFIER_TEXT == "none":
        return " "
    parts = [token.lower()] if IDENTIFIER_TEXT in ("token", "both") else []
    if IDENTIFIER_TEXT in ("words", "both"):
        parts += split_words(token)
    return f" {' '.join(parts)} "


_Hit = tuple[int, str, tuple[OperationKindName, ...]]
"""A cue at a position: the phrase or verb, and the operation kinds it asks for."""


def _cues(lowered: str) -> tuple[list[tuple[int, str]], list[_Hit], set[str]]:
    """The question's words with their positions (cue phrases blanked out), its cues (phrases,
    then verbs that are not part of a noun phrase), and the words of those cues."""
    cue_words: set[str] = set()
    hits: list[_Hit] = []
    for phrase, phrase_kinds in PHRASES.items():
        for m in re.finditer(rf"\b{phrase}\b", lowered):
            hits.append((m.start(), phrase, phrase_kinds))
            cue_words.update(phrase.split())
    # Blanked to the same length, so word positions and phrase positions stay comparable.
    masked = re.sub(
        "|".join(rf"\b{p}\b" for p in PHRASES), lambda m: " " * len(m.group()), lowered
    )
    words = [(m.start(), m.group()) for m in _WORD.finditer(masked)]
    plain = [w for _, w in words]
    for i, (pos, word) in enumerate(words):
        found = verb_kinds(word)
        if found and word not in STOP_WORDS and not _in_noun_phrase(plain, i):
            hits.append((pos, word, found))
            cue_words.add(word)
    return words, hits, cue_words


def _qualifiers(nouns: list[str], words: list[str]) -> list[str]:
    """Nouns that follow a preposition after an earlier noun: "all open orders
    *of one customer*". The words between the preposition and the noun may be
    determiners, numbers or other nouns (adjectives look like nouns to a lexical parser)."""
    out: list[str] = []
    seen_head = False
    for i, word in enumerate(words):
        if word not in nouns:
            continue
        j = i - 1
        while j >= 0 and (words[j] in DETERMINERS or words[j].isdigit() or words[j] in nouns):
            j -= 1
        if seen_head and j >= 0 and words[j] in PREPOSITIONS:
            out.append(word)
        elif not (j >= 0 and words[j] in PREPOSITIONS):
            seen_head = True
    return list(dict.fromkeys(out))


def _in_noun_phrase(words: list[str], i: int) -> bool:
    """True when ``words[i]`` ends a noun phrase ("mail *a paper check*", "the order update"):
    a determiner comes before it with only plain words in between and no word of the phrase
    follows it, so it is a thing, not a verb ("a *new* depot" keeps its verb reading).
    """
    if i + 1 < len(words) and words[i + 1] not in STOP_WORDS:
        return False
    j = i - 1
    while j >= 0 and words[j] not in DETERMINERS and words[j] not in STOP_WORDS:
        if verb_kinds(words[j]) is not None:
            return False
        j -= 1
    return j >= 0 and j < i and words[j] in DETERMINERS and words[j] not in ("all", "every")


def _verb_slots(words: list[str]) -> set[str]:
    """Words in a verb's place: right after a subject pronoun ("can I *keep* a draft", "we
    just *received*") or after "want to" / "how to". Verbs outside the cue lexicon are not
    things the question is about, whatever the API's vocabulary says of them."""
    out: set[str] = set()
    for i, word in enumerate(words):
        j = i - 1
        while j >= 0 and words[j] in ADVERBS:
            j -= 1
        if j < 0:
            continue
        after_to = words[j] == "to" and j > 0 and words[j - 1] in WANTING
        if words[j] in SUBJECTS or after_to:
            out.add(word)
    return out - STOP_WORDS


def _participle(word: str) -> bool:
    """True for an -ed form of a cue verb ("booked"), which names a state, not a request."""
    return word.endswith("ed") and word not in VERBS and " " not in word


def _by_id(kinds: list[OperationKindName], things: list[str], words: list[str]) -> bool:
    """True when a search/list ask is about one thing the developer has the id of."""
    if "read" in kinds or not kinds or kinds[0] not in ("search", "list"):
        return False
    return bool(ID_WORDS & set(words)) and bool(things) and not is_plural(things[0])


def _terms(nouns: list[str], words: list[str]) -> list[str]:
    """Adjacent noun pairs (``payment method``) first, then single nouns, in question order."""
    pairs = [f"{a} {b}" for a, b in zip(words, words[1:]) if a in nouns and b in nouns]
    return list(dict.fromkeys(pairs + nouns))
