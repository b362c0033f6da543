"""Derive resources (and their aliases) from an API spec: path segments, tags, schema names.

A resource is identified by its chain of path nouns: ``/v2/shipments/{id}/tracking-events``
gives ``shipment/tracking-event`` ("tracking event" under "shipment"); ``/V1/inventory/sources``
gives ``inventory/source``. Everything here is rule-based and deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from apiatlas.graph.build.kinds import HTTP_WORDS, classify, verb_kind
from apiatlas.graph.lexicon import STOP_WORDS
from apiatlas.graph.words import (
    is_param,
    is_version,
    noun_phrase,
    param_name,
    path_segments,
    singular,
    slug,
    split_words,
)
from apiatlas.graph.model import Node, ResourceInfo
from apiatlas.loaders.models import ApiSpec, Endpoint

VERSION_PREFIX_SEGMENTS = 4
"""Leading path segments searched for a version: resource names skip the path up to the last
version found there (``/rest/default/V1``)."""
# Segments that select a view or scope rather than name a thing (Adobe's store codes and
# "mine"/"me" shortcuts, generic prefixes).
_FILLER = frozenset({"rest", "default", "all", "mine", "me", "current", "self", "api"})
_QUALIFIER_NOISE = frozenset(
    {"api", "repository", "interface", "management", "service", "data", "v1", "v2", "v3"}
)
_SCHEMA_SUFFIXES = frozenset(
    {"request", "response", "result", "results", "body", "payload", "input", "output", "dto"}
)
_ARTICLES = re.compile(r"^(?:a|an|the)\s+", re.IGNORECASE)
_WORD = r"[A-Za-z][\w-]*"
ALIAS_CHARS = (2, 40)
"""Shortest and longest alias (or definition subject) kept, in characters."""
SUBJECT_WORDS = 3
"""Longest subject of "X (also called Y)" and "X, also known as Y", in words."""
ALIAS_WORDS = 3
"""Longest alias after "also called" / "also known as" outside parentheses, in words."""
PAREN_ALIAS_CHARS = 80
"""Longest text read inside "(also called …)"; it may list several aliases."""
ARE_ALIAS_WORDS = 4
"""Longest plural noun phrase read after "Xs are (the)" (the subject is one word)."""


def definition_patterns(
    subject_words: int = SUBJECT_WORDS, alias_words: int = ALIAS_WORDS,
    paren_chars: int = PAREN_ALIAS_CHARS, are_words: int = ARE_ALIAS_WORDS,
) -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The parenthesised, inline and "are" definition patterns for these phrase lengths."""
    subject = rf"((?:{_WORD}\s+){{0,{subject_words - 1}}}{_WORD})"
    paren = re.compile(
        rf"\b{subject}\s*\(\s*(?:also\s+called|also\s+known\s+as|a\.k\.a\.?|aka)"
        rf"\s+([^)]{{2,{paren_chars}}})\)",
        re.IGNORECASE,
    )
    inline = re.compile(
        rf"\b{subject},?\s+(?:also\s+called|also\s+known\s+as|a\.k\.a\.?)\s+"
        rf"((?:an?\s+|the\s+)?{_WORD}(?:\s+{_WORD}){{0,{alias_words - 1}}})",
        re.IGNORECASE,
    )
    are = re.compile(
        rf"(?:^|[.!?]\s+)\**({_WORD})\**\s+are\s+(?:the\s+)?"
        rf"({_WORD}(?:\s+{_WORD}){{0,{are_words - 1}}})"
    )
    return paren, inline, are


_PAREN_DEF, _INLINE_DEF, _ARE_DEF = definition_patterns()


@dataclass
class ResourceDef:
    """A derived resource.

    Attributes:
        key_name: Chain of slugs, e.g. ``shipment/tracking-event``.
        name: Readable singular name, e.g. ``tracking event``.
        parent: ``key_name`` of the parent resource, if nested.
        aliases: Other names the spec uses for it.
    """

    key_name: str
    name: str
    parent: str | None = None
    aliases: set[str] = field(default_factory=set)


def resource_chain(path: str) -> list[str]:
    """Readable singular nouns of a path, outermost first.

    Segments up to and including the version (``/rest/default/V1``), path parameters, filler
    (``mine``, store codes) and verb segments (``search``, ``batch-retrieve``) are skipped.
    """
    segments = path_segments(path)
    versions = [i for i, s in enumerate(segments[:VERSION_PREFIX_SEGMENTS]) if is_version(s)]
    if versions:
        segments = segments[versions[-1] + 1 :]
    chain: list[str] = []
    for seg in segments:
        if is_param(seg) or seg.lower() in _FILLER or is_version(seg):
            continue
        words = split_words(seg)
        if not words or verb_kind(words[0]) or words[0] == "by":
            continue
        if len(words) > 1 and verb_kind(words[-1]):
            continue  # "source-items-delete" names an operation on source items
        chain.append(noun_phrase(seg))
    if not chain:
        params = [param_name(s) for s in segments if is_param(s)]
        chain = [_id_phrase(params[0]) or "root"] if params else ["root"]
    return chain


def endpoint_chain(endpoint: Endpoint) -> list[str]:
    """:func:`resource_chain` of an endpoint; an action's trailing verb (``/{id}/test``) is not a
    resource, so an action acts on the resource before it."""
    chain = resource_chain(endpoint.path)
    segments = path_segments(endpoint.path)
    after_item = len(segments) > 1 and is_param(segments[-2])
    if len(chain) > 1 and after_item and classify(endpoint) == "action":
        chain = chain[:-1]
    return chain


def resource_of(endpoint: Endpoint) -> str:
    """The primary resource key name of an endpoint, e.g. ``location`` or ``inventory/source``."""
    return "/".join(slug(n) for n in endpoint_chain(endpoint))


def _id_phrase(name: str) -> str:
    words = split_words(name)
    if words and words[-1] in ("id", "ids", "code", "key", "uuid"):
        words = words[:-1]
    return noun_phrase(" ".join(words)) if words else ""


def id_resource_phrase(name: str) -> str | None:
    """The resource phrase an id-like name refers to: ``origin_location_id`` ->
    ``origin location``; ``id`` or a name without an id suffix -> ``None``."""
    words = split_words(name)
    if len(words) < 2 or words[-1] not in ("id", "ids"):
        return None
    return noun_phrase(" ".join(words[:-1]))


def qualified_alias(text: str, leaf: str, *, drop: Iterable[str] = ()) -> str | None:
    """A longer name for ``leaf`` found in a tag or schema name, or ``None``.

    ``inventoryApiSourceRepositoryV1`` -> ``inventory source`` for leaf ``source``;
    ``CustomerGroup`` -> ``customer group`` for leaf ``group``. Names that do not end with the
    leaf (or that equal it) give ``None``: that keeps aliases conservative.
    """
    if re.search(r"[/{}]", text):
        return None  # a path used as a tag name restates the path, it is not another name
    drop_set = _QUALIFIER_NOISE | set(drop)
    words: list[str] = []
    for w in split_words(text):
        # Generated names repeat words ("tax-data-tax-class-interface"): keep the first.
        if w not in drop_set and w not in words:
            words.append(w)
    while words and (verb_kind(words[0]) or words[0] in HTTP_WORDS):
        words = words[1:]
    if any(w in STOP_WORDS or w == "id" for w in words):
        return None  # a sentence-like operation name, not a name for the thing
    while words and words[-1] in _SCHEMA_SUFFIXES:
        words = words[:-1]
    if not words:
        return None
    words[-1] = singular(words[-1])
    phrase = " ".join(words)
    leaf_words = leaf.split()
    if phrase == leaf or words[-len(leaf_words) :] != leaf_words:
        return None
    return phrase


def _clean_alias(text: str) -> str | None:
    text = _ARTICLES.sub("", text.strip().strip(".,;:*`\"'"))
    words = [w.lower() for w in text.split()]
    while words and words[-1] in STOP_WORDS:
        words = words[:-1]
    shortest, longest = ALIAS_CHARS
    if (not words or not shortest <= len(" ".join(words)) <= longest
            or all(w in STOP_WORDS for w in words)):
        return None
    words[-1] = singular(words[-1])
    return " ".join(words)


def definitions(text: str) -> list[tuple[str, str]]:
    """Definitional phrases in prose, as ``(subject, alias)`` pairs of singular phrases.

    Recognises "a location (also called a facility or site)", "segments, also known as smart
    groups" and "**Sources** are the physical locations from which ...".
    """
    found: list[tuple[str, str]] = []
    for match in _PAREN_DEF.finditer(text):
        for part in re.split(r",\s*|\s+or\s+|\s+and\s+", match.group(2)):
            _add(found, match.group(1), part)
    for match in _INLINE_DEF.finditer(text):
        _add(found, match.group(1), match.group(2))
    for match in _ARE_DEF.finditer(text):
        words = match.group(2).split()
        cut = next((i for i, w in enumerate(words) if w.lower() in STOP_WORDS), len(words))
        phrase = words[:cut]
        # Only "Xs are (the) <adjective> <plural noun>" counts, not "Xs are created when...".
        last = phrase[-1].lower() if phrase else ""
        if last.endswith("s") and singular(last) != last:
            _add(found, match.group(1), " ".join(phrase))
    return sorted(set(found))


def _add(found: list[tuple[str, str]], subject: str, alias: str) -> None:
    words = subject.split()
    # "Creates a location (also called ...)": the subject starts after the last article.
    cut = max((i + 1 for i, w in enumerate(words) if w.lower() in ("a", "an", "the")), default=0)
    subj = _clean_alias(" ".join(words[cut:]))
    clean = _clean_alias(alias)
    if subj and clean and clean != subj:
        found.append((subj, clean))


def subject_matches(subject: str, name: str) -> bool:
    """True when a definition's subject ends with the resource name (``customer segment`` ~
    ``segment``)."""
    subject_words, name_words = subject.split(), name.split()
    return subject_words[-len(name_words) :] == name_words


@dataclass
class ResourceIndex:
    """The resources of one API and which resource each endpoint belongs to.

    Attributes:
        resources: ``key_name`` -> resource.
        of_endpoint: ``METHOD /path`` -> ``key_name``.
    """

    resources: dict[str, ResourceDef]
    of_endpoint: dict[str, str]

    def find(self, phrase: str, context: str | None = None) -> str | None:
        """The resource a phrase such as ``location`` or ``origin location`` names.

        Tries the whole phrase, then drops leading qualifiers. Among resources with the same
        name, prefers one on ``context``'s own chain (an ancestor or itself), then a top-level
        one, then the only one; an ambiguous name gives ``None``.
        """
        words = phrase.split()
        for start in range(len(words)):
            name = " ".join(words[start:])
            found = self._by_name(name, context)
            if found is not None:
                return found
        return None

    def _by_name(self, name: str, context: str | None) -> str | None:
        candidates = sorted(k for k, r in self.resources.items() if r.name == name)
        if not candidates:
            return None
        if context is not None:
            parts = context.split("/")
            chain = {"/".join(parts[: i + 1]) for i in range(len(parts))}
            on_chain = [c for c in candidates if c in chain]
            if on_chain:
                return max(on_chain, key=len)
        top = [c for c in candidates if "/" not in c]
        if top:
            return top[0]
        return candidates[0] if len(candidates) == 1 else None


def derive_resources(spec: ApiSpec) -> ResourceIndex:
    """Resources of a spec with aliases from tags, schema names and definitional prose."""
    resources: dict[str, ResourceDef] = {}
    of_endpoint: dict[str, str] = {}
    for endpoint in spec.endpoints:
        chain = endpoint_chain(endpoint)
        parent: str | None = None
        for depth in range(len(chain)):
            key_name = "/".join(slug(n) for n in chain[: depth + 1])
            resources.setdefault(key_name, ResourceDef(key_name, chain[depth], parent))
            parent = key_name
        of_endpoint[endpoint.key] = parent or "root"

    tag_text = {t.name: t.description for t in spec.tags}
    for endpoint in spec.endpoints:
        res = resources[of_endpoint[endpoint.key]]
        names = list(endpoint.tags)
        if endpoint.request_body and endpoint.request_body.schema_name:
            names.append(endpoint.request_body.schema_name)
        names += [
            r.schema_name for r in endpoint.responses if r.schema_name and r.status.startswith("2")
        ]
        for name in names:
            alias = qualified_alias(name, res.name)
            if alias:
                res.aliases.add(alias)
        tag_prose = [tag_text.get(t, "") for t in endpoint.tags]
        prose = " ".join([endpoint.summary, endpoint.description, *tag_prose])
        _apply_definitions(prose, [res])
    # The spec's and its schemas' descriptions define things too ("Admins are teammate
    # accounts ..."); a definition names its subject, so it goes to the resource of that name.
    every = list(resources.values())
    _apply_definitions(spec.description, every)
    for name in sorted(spec.schemas):
        _apply_definitions(spec.schemas[name].description, every)
    for res in resources.values():
        # The chain read as a phrase adds nothing search does not already see in the path.
        res.aliases -= {res.name, res.key_name.replace("/", " ").replace("-", " ")}
    return ResourceIndex(resources, of_endpoint)


DEFINES = " = "
"""Joins a definition's subject and alias in a ``DocSection``'s ``definitions`` property."""


def guide_definitions(sections: Iterable[Node]) -> list[tuple[str, str]]:
    """The ``(subject, alias)`` definitions stored on guide sections' nodes."""
    found = {
        tuple(d.split(DEFINES, 1)) for n in sections for d in n.props.get("definitions") or ()
    }
    return sorted((s, a) for s, a in found)


def with_definitions(
    resources: Sequence[ResourceInfo], defined: Sequence[tuple[str, str]]
) -> list[ResourceInfo]:
    """``resources`` with the aliases definitions ``(subject, alias)`` give them: a guide's
    "Sources are the physical locations ..." names the ``source`` resource "physical location"
    too. A definition applies to the resources its subject names (:func:`subject_matches`)."""
    out = []
    for res in resources:
        extra = defined_aliases(res.name, defined)
        if extra - set(res.aliases):
            res = res.model_copy(update={"aliases": sorted(set(res.aliases) | extra)})
        out.append(res)
    return out


def defined_aliases(name: str, defined: Iterable[tuple[str, str]]) -> set[str]:
    """The aliases definitions ``(subject, alias)`` give the resource called ``name``: those
    whose subject names it (:func:`subject_matches`), its own name aside."""
    return {a for s, a in defined if a != name and subject_matches(s, name)}


def _apply_definitions(text: str, targets: list[ResourceDef]) -> None:
    if not text:
        return
    found = definitions(text)
    for res in targets:
        res.aliases |= defined_aliases(res.name, found)
