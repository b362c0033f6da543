"""Look it up first: when a question names a thing by a value that is not its id ("the group
called 'Finance'", "the #design channel", "jane@example.com's record"), the call that needs the
thing's id comes after the call that finds it.

Which ids a call needs, and which calls yield them, is the graph's REQUIRES trail; whether the
question names the thing by something else is read from the question's shape alone: a quoted
value, an email address, a phone number, a URL or a ``#channel`` / ``@handle`` next to a name of
the needed resource, and no id-like value (``folder 555``) right after it. No word list here.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

from apiatlas.graph.lexicon import IDENTIFIER_SUFFIXES
from apiatlas.graph.model import Dependency, EndpointRef, ResourceInfo
from apiatlas.graph.words import singular, split_words

NAMED_VALUE = re.compile(
    r"""(?<![\w'])'[^'\n]+?'(?!\w)"""  # 'single quoted' (an apostrophe inside a word is not one)
    r'|"[^"\n]+?"|[‘“][^’”\n]+?[’”]'  # "double" or typographic quotes
    r"|[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # an email address
    r"|\+\d[\d -]{5,}\d"  # a phone number in international form
    r"|https?://\S+"  # a URL
    r"|(?<![\w@])[#@][A-Za-z][\w.-]*"  # a #channel or an @handle
)
"""A value the developer knows the thing by, which is not its id."""
ID_VALUE = re.compile(r"^[A-Za-z_-]*\d[\w:-]*$")
"""A bare token with a digit in it (``555``, ``C0INCIDENT``, ``1:2``): an id given outright."""
WINDOW = 2
"""How many words apart a value and the resource name it belongs to may be ("the group called
'Finance'"), calibrated on dev: ``python -m apiatlas.evals.lookups``."""
FINDER_KINDS = ("list", "search")

_MARK = "\x00"

Mention = Literal["given", "named"]


def id_mentions(
    question: str,
    first: EndpointRef,
    trail: Sequence[Dependency],
    resources: Mapping[str, ResourceInfo],
) -> dict[str, Mention]:
    """How the question gives each id ``first`` needs directly: ``given`` (an id-like value
    follows a name of its resource: "folder 555") or ``named`` (a named value sits next to one:
    "the group called 'Finance'"); ids the question says nothing about are left out.

    Args:
        question: The question as asked.
        first: The endpoint that answers it.
        trail: ``first``'s REQUIRES trail (only its direct needs are read).
        resources: The project's resources by key.
    """
    tokens = _tokens(question)
    out: dict[str, Mention] = {}
    for dep in trail:
        if dep.depth != 1 or dep.endpoint.key != first.key or dep.parameter in out:
            continue
        resource = resources.get(dep.provider.resource)
        if resource is not None and _is_identifier(dep.parameter):
            mention = _mention(tokens, resource)
            if mention is not None:
                out[dep.parameter] = mention
    return out


def lookup_calls(
    mentions: Mapping[str, Mention],
    first: EndpointRef,
    trail: Sequence[Dependency],
    collection: Callable[[EndpointRef], EndpointRef | None],
) -> list[Dependency]:
    """The lookups ``first`` needs before it can run, in the trail's (call) order.

    Args:
        mentions: :func:`id_mentions` of the question for ``first``.
        first: The endpoint that answers it.
        trail: ``first``'s REQUIRES trail (only its direct needs are read).
        collection: The list endpoint of a provider's collection (``GET`` on the path a create
            endpoint posts to), or ``None``; used when the trail names no list or search call.

    Returns:
        One dependency per needed id the question names by another value: ``provider`` is the
        list or search call that finds it, ``parameter`` the id ``first`` needs.
    """
    out: list[Dependency] = []
    for parameter, mention in mentions.items():
        if mention != "named":
            continue
        group = [
            d for d in trail
            if d.depth == 1 and d.endpoint.key == first.key and d.parameter == parameter
        ]
        finder = _finder(group, collection)
        if finder is not None and finder.key != first.key:
            out.append(Dependency(endpoint=first, parameter=parameter, provider=finder))
    return out


def _tokens(question: str) -> list[str]:
    """The question's lower-cased words, each named value replaced by one marker token."""
    words: list[str] = []
    for part in NAMED_VALUE.sub(f" {_MARK} ", question).split():
        if part == _MARK:
            words.append(_MARK)
            continue
        word = part.strip(".,;:!?()[]{}\"'’").lower()
        word = re.sub(r"['’]s$", "", word)  # a possessive: "the group's name"
        if word:
            words.append(word)
    return words


def _is_identifier(parameter: str) -> bool:
    """Whether a parameter holds an id (``group_id``, ``ServiceSid``, a bare ``{id}``), rather
    than a value the developer may know outright (``{name}``, ``{namespace}``, ``{email}``)."""
    words = split_words(parameter)
    return bool(words) and words[-1] in IDENTIFIER_SUFFIXES


def _mention(tokens: list[str], resource: ResourceInfo) -> Mention | None:
    """``given`` when an id-like value follows a mention of ``resource``, else ``named`` when a
    named value sits next to one, else ``None``."""
    heads = {singular(w[-1]) for n in [resource.name, *resource.aliases] if (w := split_words(n))}
    mentions = [i for i, t in enumerate(tokens) if t != _MARK and singular(t) in heads]
    for i in mentions:
        if any(t != _MARK and ID_VALUE.match(t) for t in tokens[i + 1 : i + 1 + WINDOW]):
            return "given"  # "folder 555", "team id 12345": the id is known
    for i in mentions:
        if _MARK in tokens[max(i - WINDOW, 0) : i] + tokens[i + 1 : i + 1 + WINDOW]:
            return "named"
    return None


def _finder(
    group: list[Dependency], collection: Callable[[EndpointRef], EndpointRef | None]
) -> EndpointRef | None:
    """The call that finds the needed thing: a live list or search provider, else the list of
    the collection its create call posts to."""
    live = [d.provider for d in group if not d.provider.deprecated]
    for kind in FINDER_KINDS:
        for provider in live:
            if provider.kind == kind:
                return provider
    for provider in live:
        if provider.kind == "create":
            found = collection(provider)
            if found is not None:
                return found
    return None
