"""Question analysis: what the developer wants to do (kinds), to what (resource terms), and any
endpoints or operation ids named outright.

Analysis is purely lexical and deterministic; :class:`ResourceMatcher` then maps the resource
terms onto the graph's resources, lexically and by embedding similarity.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Literal

from langchain_core.embeddings import Embeddings
from pydantic import BaseModel, Field

from apiatlas.graph.model import OperationKindName, ResourceInfo
from apiatlas.graph.words import is_plural, singular, split_words

_METHODS = "GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS|TRACE"
_EXPLICIT = re.compile(
    rf"(?<![A-Za-z])({_METHODS})\s+`?((?:https?://[^\s/`]+)?/[^\s?#,;)'\"`]*)", re.IGNORECASE
)
_BARE_PATH = re.compile(
    r"(?:https?://[^\s/`]+|(?<![\w/:.]))(/[A-Za-z0-9_{}:.\-]+(?:/[A-Za-z0-9_{}:.\-]+)*)"
)
_CAMEL = re.compile(r"\b(?:[a-z]+(?:[A-Z][a-z0-9]*)+|(?:[A-Z][a-z0-9]+){2,})\b")
_SNAKE_OP = re.compile(r"\b[a-z]+(?:_[a-z0-9]+){1,}\b")
# Calibrated with all-MiniLM-L6-v2 against the sample API's resource names and aliases
# (carrier, location, quote, shipment, tracking event, webhook + their prose aliases), cosine of
# single terms. True synonyms that are not aliases: quotation 0.76, price 0.80, transporter 0.64,
# freight 0.63, package 0.63, shipper 0.60, store 0.54, hub 0.42. Unrelated words: invoice 0.50,
# payment 0.53, account 0.56, user 0.48, customer 0.47, email 0.48, product 0.45, method 0.38,
# payment method 0.36 (outliers: order 0.62 -> shipment, discount 0.73 -> pricing). 0.60 keeps
# the strong synonyms and leaves >= 0.04 margin above every unrelated word but those two
# commerce near-synonyms: missing things must abstain, so precision wins over recall here;
# aliases mined from the spec's prose ("also called couriers") cover most synonyms lexically.
SEMANTIC_THRESHOLD = 0.60

_WORD = re.compile(r"[a-z0-9]+")
_VERSION = re.compile(r"\bv(\d+)\b", re.IGNORECASE)

# Multi-word cues are matched before single words so that "set up" is not read as "set".
# Common English phrasal verbs: their parts alone mean something else ("get" is not "get rid of").
_PHRASES: dict[str, tuple[OperationKindName, ...]] = {
    "set up": ("create",),
    "sign up": ("create",),
    "show all": ("list",),
    "get all": ("list",),
    "see all": ("list",),
    "look at": ("read",),
    "look up": ("search",),
    "get rid of": ("delete",),
    "throw away": ("delete",),
    "throw out": ("delete",),
    "take down": ("delete",),
    "clean up": ("delete",),
    "opt out": ("delete",),
    "turn off": ("update", "action"),
    "switch off": ("update", "action"),
    "shut off": ("update", "action"),
    "turn on": ("update", "action"),
    "switch on": ("update", "action"),
    "find out": ("read",),
    "fill in": ("update",),
}

_VERBS: dict[str, tuple[OperationKindName, ...]] = {}
for _kinds, _words in (
    (
        ("create",),
        "create add new register open make onboard post book submit generate report record "
        "establish insert issue",
    ),
    (("list",), "list all enumerate browse every"),
    (
        ("read",),
        "get fetch retrieve read details detail view show see inspect check display return "
        "returns obtain",
    ),
    (
        ("update",),
        "update change edit modify rename patch set replace move adjust amend upsert fix "
        "correct reschedule alter tweak switch",
    ),
    (
        ("delete",),
        "delete remove drop destroy erase purge discard trash scrap wipe unregister",
    ),
    (("search",), "find search filter query lookup locate"),
    (("search", "read"), "look"),
    # Cancelling, archiving or deactivating is usually its own action endpoint; fall back to delete.
    (
        ("action", "delete"),
        "cancel void archive deactivate disable unsubscribe revoke withdraw disconnect",
    ),
    # Pausing is an action where the API has one, else usually an update of a status flag.
    (("action", "update"), "pause suspend stop halt mute"),
    (
        ("action",),
        "accept verify validate test refund capture send resend retry publish complete approve "
        "reject confirm assign dispatch rotate subscribe upload download print clone "
        "copy import export sync merge pause resume reset authorize charge pay track ping trigger "
        "redeliver replay sign activate reactivate enable restore schedule redeem transfer link "
        "unlink attach detach fire emit notify",
    ),
):
    for _word in _words.split():
        _VERBS[_word] = _kinds

VERB_WORDS: frozenset[str] = frozenset(
    [*_VERBS, *(w for phrase in _PHRASES for w in phrase.split())]
)
"""Every cue word of the verb lexicon (typo correction accepts and corrects towards them)."""

_HOWTO = re.compile(
    r"\b(how (do|can|should|would|does|to)|how to|guide|tutorial|explain|walk me through|"
    r"what is the (process|flow)|steps to|best practice)",
    re.IGNORECASE,
)
_ID_WORDS = frozenset({"id", "identifier"})
_OLD = {"deprecated", "legacy", "old", "older", "previous", "outdated", "obsolete"}

STOPWORDS = frozenset(
    """a an the and or of to for in on at by with from into about as is are was be been being
    do does did can could should would will shall may might must i me my we our you your it its
    this that these those there here what which who whom whose when where why how please want
    need needs use using used way ways some any one ones via without within across than then so
    if not no yes just also only like kind kinds type types first next after before able let
    tell know give work works working done happen happens have has had having got
    go goes going went gone keep keeps still already yet ever never always again too
    very much many more most less few each own other another same such both either
    neither but though although because since until while whether however anymore anyway
    ago later earlier soon now today tonight yesterday tomorrow recently currently far
    through off out up down over under between among per s t d ll re ve m don doesn didn
    isn aren wasn weren won wouldn shouldn couldn can cannot dont doesnt didnt isnt cant wont
    wheres whats hows thats theres haven hasn hadn us them they their theirs him her his she
    he our ours mine yours am good bad wrong right best better worse fine possible""".split()
)
# Words that describe the asking, not the thing asked about.
GENERIC = frozenset(
    """endpoint endpoints api apis call calls calling request requests operation operations route
    routes url urls resource resources thing things existing id ids info information data field
    fields parameter parameters param params example examples body payload response responses
    guide guides tutorial explain process flow steps step practice practices doc docs
    documentation""".split()
)


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

    @property
    def explicit(self) -> bool:
        """True when the question names endpoints or operation ids outright."""
        return bool(self.endpoints or self.operation_ids)


def normalise_path(path: str) -> str:
    """Lower-case, drop scheme/host and trailing slash, and blank out parameter names."""
    p = re.sub(r"^https?://[^/]+", "", path.strip().strip("`.")).split("?")[0]
    segments = []
    for seg in p.lower().strip("/").split("/"):
        if seg.startswith("{") or seg.startswith(":"):
            seg = "{}"
        if seg:
            segments.append(seg)
    return "/" + "/".join(segments)


def _verb_kinds(word: str) -> tuple[OperationKindName, ...] | None:
    if word in _VERBS:
        return _VERBS[word]
    # Only -ing/-ed: a plural -s is far more often a noun ("posts", "issues") than a verb.
    for suffix, repl in (("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            stem = word[: -len(suffix)] + repl
            if stem in _VERBS:
                return _VERBS[stem]
    return None


def analyse_question(question: str) -> Intent:
    """Parse a question into an :class:`Intent` (deterministic, no I/O)."""
    text = question.strip()
    endpoints = [
        ExplicitEndpoint(method=m.group(1).upper(), path=normalise_path(m.group(2)))
        for m in _EXPLICIT.finditer(text)
    ]
    rest = _EXPLICIT.sub(" ", text)
    for m in _BARE_PATH.finditer(rest):
        path = normalise_path(m.group(1))
        if re.search(r"[a-z]{2}", path):
            endpoints.append(ExplicitEndpoint(path=path))
    rest = _BARE_PATH.sub(" ", rest)
    op_ids = list(dict.fromkeys(_CAMEL.findall(rest) + _SNAKE_OP.findall(rest)))
    for op in op_ids:
        rest = rest.replace(op, " ")

    lowered = rest.lower()
    kinds: list[OperationKindName] = []
    cue_words: set[str] = set()
    hits: list[tuple[int, str, tuple[OperationKindName, ...]]] = []
    for phrase, phrase_kinds in _PHRASES.items():
        for m in re.finditer(rf"\b{phrase}\b", lowered):
            hits.append((m.start(), phrase, phrase_kinds))
            cue_words.update(phrase.split())
    masked = re.sub("|".join(rf"\b{p}\b" for p in _PHRASES), " ", lowered)
    words = [(m.start(), m.group()) for m in _WORD.finditer(masked)]
    for pos, word in words:
        found = _verb_kinds(word)
        if found and word not in STOPWORDS:
            hits.append((pos, word, found))
            cue_words.add(word)
    hits.sort(key=lambda h: h[0])
    for _, _, found in hits:
        kinds.extend(k for k in found if k not in kinds)

    versions = [f"v{v}" for v in _VERSION.findall(lowered)]
    content = [w for _, w in words if w not in STOPWORDS and not w.isdigit()]
    keywords = list(dict.fromkeys(content))
    nouns = [
        w
        for w in content
        if w not in cue_words and w not in GENERIC and w not in _OLD and w not in versions
    ]
    terms = _terms(nouns, [w for _, w in words])
    things = [n for n in nouns if not n.endswith(("ed", "ing"))]
    if "read" in kinds and "list" not in kinds and things and is_plural(things[0]):
        # "show me the verified hauliers": reading a plural is listing.
        kinds.insert(kinds.index("read"), "list")
    if _by_id(kinds, things, [w for _, w in words]):
        # "look up one depot by its id": a single thing whose id is known is read, not searched.
        kinds.insert(0, "read")
    crud = any(k != "action" for k in kinds)
    return Intent(
        question=question,
        kinds=kinds,
        resource_terms=terms,
        endpoints=endpoints,
        operation_ids=op_ids,
        is_howto=bool(_HOWTO.search(text)) and not crud and not endpoints and not op_ids,
        wants_deprecated=bool(_OLD & set(keywords)),
        versions=list(dict.fromkeys(versions)),
        verbs=list(dict.fromkeys(h[1] for h in hits)),
        keywords=keywords,
    )


def _by_id(kinds: list[OperationKindName], things: list[str], words: list[str]) -> bool:
    """True when a search/list ask is about one thing the developer has the id of."""
    if "read" in kinds or not kinds or kinds[0] not in ("search", "list"):
        return False
    return bool(_ID_WORDS & set(words)) and bool(things) and not is_plural(things[0])


def _terms(nouns: list[str], words: list[str]) -> list[str]:
    """Adjacent noun pairs (``payment method``) first, then single nouns, in question order."""
    pairs = [f"{a} {b}" for a, b in zip(words, words[1:]) if a in nouns and b in nouns]
    return list(dict.fromkeys(pairs + nouns))


class ResourceMatch(BaseModel):
    """A question term matched to a graph resource.

    Attributes:
        resource: The matched resource.
        term: The question term that matched.
        score: 1.0 for a lexical match, the cosine similarity for a semantic one.
        how: ``lexical`` (name or alias) or ``semantic`` (embedding similarity).
    """

    resource: ResourceInfo
    term: str
    score: float
    how: Literal["lexical", "semantic"]


def _norm(phrase: str) -> str:
    words = split_words(phrase)
    if words:
        words[-1] = singular(words[-1])
    return " ".join(words)


class ResourceMatcher:
    """Maps question terms onto resources: names and aliases first, then embedding similarity.

    The resource names are embedded once when the matcher is built; build one per
    (project, api) and rebuild it when the resources change (see
    :class:`~apiatlas.rag.kg_retriever.KnowledgeGraphRetriever`).

    Args:
        resources: The resources of one project (optionally one API).
        embeddings: The embedding model used for the semantic step.
        threshold: Minimum cosine similarity for a semantic match.
    """

    def __init__(
        self,
        resources: Sequence[ResourceInfo],
        embeddings: Embeddings,
        *,
        threshold: float = SEMANTIC_THRESHOLD,
    ) -> None:
        self.resources = list(resources)
        self.threshold = threshold
        self._embeddings = embeddings
        self._names: dict[str, list[int]] = {}
        for i, res in enumerate(self.resources):
            for name in [res.name, *res.aliases]:
                norm = _norm(name)
                if norm:
                    self._names.setdefault(norm, []).append(i)
        self._texts = list(self._names)
        vectors = embeddings.embed_documents(self._texts) if self._texts else []
        self._vectors = [_unit(v) for v in vectors]

    def match(self, terms: Sequence[str]) -> list[ResourceMatch]:
        """Resources named by ``terms``, best first; lexical matches beat semantic ones.

        A term already covered by a longer matched phrase (``payment`` inside ``payment method``)
        is not matched again, so a phrase's parts cannot drag in unrelated resources.
        """
        matches: dict[str, ResourceMatch] = {}
        covered: set[str] = set()
        pending: list[str] = []
        for term in terms:
            if set(term.split()) <= covered:
                continue
            hit = self._names.get(_norm(term))
            if hit is None:
                pending.append(term)
                continue
            covered.update(term.split())
            for i in hit:
                self._keep(matches, ResourceMatch(
                    resource=self.resources[i], term=term, score=1.0, how="lexical"
                ))
        pending = [t for t in pending if not set(t.split()) <= covered]
        if pending and self._vectors:
            for term, scores in zip(pending, self.similarities(pending)):
                best = max(range(len(scores)), key=scores.__getitem__)
                if scores[best] >= self.threshold:
                    for i in self._names[self._texts[best]]:
                        self._keep(matches, ResourceMatch(
                            resource=self.resources[i], term=term, score=scores[best],
                            how="semantic",
                        ))
        return sorted(matches.values(), key=lambda m: -m.score)

    def similarities(self, terms: Sequence[str]) -> list[list[float]]:
        """Cosine similarity of each term to each known resource name (rows follow ``terms``)."""
        vectors = [_unit(v) for v in self._embeddings.embed_documents(list(terms))]
        return [[sum(a * b for a, b in zip(v, r)) for r in self._vectors] for v in vectors]

    def closest(self, terms: Sequence[str], n: int = 3) -> list[ResourceInfo]:
        """The resources nearest to ``terms`` regardless of threshold (for "did you mean")."""
        if not terms or not self._vectors:
            return []
        best: dict[int, float] = {}
        for scores in self.similarities(terms):
            for j, score in enumerate(scores):
                for i in self._names[self._texts[j]]:
                    best[i] = max(best.get(i, -1.0), score)
        ranked = sorted(best, key=lambda i: -best[i])[:n]
        return [self.resources[i] for i in ranked]

    @staticmethod
    def _keep(matches: dict[str, ResourceMatch], match: ResourceMatch) -> None:
        old = matches.get(match.resource.key)
        if old is None or match.score > old.score:
            matches[match.resource.key] = match


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(sum(x * x for x in vector)) or 1.0
    return [x / norm for x in vector]
