"""How well an endpoint fits a question's intent, from the endpoint's own strings: its operation
kind, the verbs of its name, its HTTP shape, its API version; whether the question names it
outright; and the live replacement of a deprecated one. The graph retriever scores with these,
the ranker reads them as features."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from apiatlas.graph.model import EndpointRef
from apiatlas.graph.words import is_plural, singular, split_words
from apiatlas.rag.question.intent import (
    ExplicitEndpoint,
    Intent,
    asked_after_mention,
    normalise_path,
)


_SHAPES: dict[str, tuple[tuple[str, ...], bool | None]] = {
    # kind -> (methods, ends with a path parameter?)
    "create": (("POST", "PUT"), False),
    "list": (("GET",), False),
    "read": (("GET",), True),
    "update": (("PUT", "PATCH"), True),
    "delete": (("DELETE",), None),
    "search": (("GET", "POST"), None),
}


NO_KIND_FIT = 10.0
"""The fit of every endpoint when the question asks no operation kind."""
KIND_POINTS = 30.0
"""The endpoint's kind is the first kind the question asks."""
KIND_STEP = 5.0
"""What each later asked kind is worth less than the one before it."""
VERB_POINTS = 20.0
"""The question's cue verb is in the endpoint's operation id or summary."""
SHAPE_POINTS = 15.0
"""The endpoint has the method and path shape of the asked kind (only beside other evidence)."""
MAX_FIT = KIND_POINTS + VERB_POINTS + SHAPE_POINTS
"""The largest :func:`intent_fit`."""
VERSION_POINTS = 20.0
"""Added by :func:`version_bias` when the path has a version the question names."""
OTHER_VERSION_POINTS = -10.0
"""Added by :func:`version_bias` when the path has a version, but not one the question names."""


def intent_fit(ref: EndpointRef, intent: Intent) -> float:
    """How well an endpoint does what the question asks (0 = not at all, at most
    :data:`MAX_FIT`)."""
    if not intent.kinds:
        return NO_KIND_FIT
    score = 0.0
    verbs = {w for v in intent.verbs for w in v.split()}
    verb_named = bool(verbs & _verb_words(ref.path, ref.kind, ref.operation_id, ref.summary))
    # An action endpoint does one specific thing: "verify" must not pick "send a test event".
    if ref.kind in intent.kinds and (ref.kind != "action" or verb_named):
        score += KIND_POINTS - KIND_STEP * intent.kinds.index(ref.kind)
    if verb_named:
        score += VERB_POINTS
    methods, item = _SHAPES.get(intent.kinds[0], ((), None))
    ends_with_param, collection = _last_segment(ref.path)
    if ref.method in methods and (item is None or (ends_with_param if item else collection)):
        # The HTTP shape alone is weak evidence: it only ranks, never qualifies on its own when
        # the kind itself is known to differ (a POST .../cancel is not a create).
        score += SHAPE_POINTS if score or ref.kind in ("action", "") else 0.0
    return score


# The caches below hold what an endpoint's own strings give, the same for every question: a
# question scores about 70 candidates, mostly the same endpoints question after question.
_CACHED = 1 << 16


@lru_cache(maxsize=_CACHED)
def _last_segment(path: str) -> tuple[bool, bool]:
    """Whether ``path`` ends with a parameter, and whether it ends with a plural (a collection)."""
    last = path.rstrip("/").rsplit("/", 1)[-1]
    ends_with_param = last.startswith("{")
    words = split_words(last)
    return ends_with_param, not ends_with_param and bool(words) and is_plural(words[-1])


@lru_cache(maxsize=_CACHED)
def _verb_words(path: str, kind: str, operation_id: str, summary: str) -> frozenset[str]:
    """Words of an endpoint that may name what it does, without the resource nouns of its path.

    "tracking" in ``/shipments/{id}/tracking-events`` names a thing, not a doing: counting it
    would make a question about receiving tracking updates pick the call that records them.
    An action's last segment (``/carriers/{id}/verify``) is its verb and stays.
    """
    segments = [s for s in path.lower().strip("/").split("/") if s and not s.startswith("{")]
    nouns = segments[:-1] if kind == "action" and segments else segments
    resource_words = words_of(" ".join(nouns))
    return (words_of(f"{operation_id} {summary}") - resource_words) | (
        words_of(segments[-1]) if kind == "action" and segments else frozenset()
    )


def version_bias(ref: EndpointRef, intent: Intent) -> float:
    if not intent.versions:
        return 0.0
    segments = ref.path.lower().split("/")
    if any(v in segments for v in intent.versions):
        return VERSION_POINTS
    return OTHER_VERSION_POINTS if any(s[:1] == "v" and s[1:].isdigit() for s in segments) else 0.0


def named_outright(ref: EndpointRef, intent: Intent) -> bool:
    """Whether the question names ``ref`` by method and path or by its operation id."""
    if any(_path_named(ref, mention) for mention in intent.endpoints):
        return True
    ops = {o.lower() for o in intent.operation_ids}
    return bool(ref.operation_id) and ref.operation_id.lower() in ops


def _path_named(ref: EndpointRef, mention: ExplicitEndpoint) -> bool:
    if mention.method and mention.method != ref.method.upper():
        return False
    path = _normalised(ref.path)
    # Tolerate a base prefix on either side (/api/v2/locations vs /v2/locations).
    if path == mention.path or path.endswith(mention.path) or mention.path.endswith(path):
        return min(len(path), len(mention.path)) > 1
    return False


def named_in(refs: Iterable[EndpointRef], intent: Intent) -> list[EndpointRef]:
    """The endpoints of ``refs`` the question names (:func:`named_outright`), and for each path
    it writes that none of them has as such, those whose path template the written one fills
    with values (``GET /files/12345/versions`` names ``GET /files/{file_id}/versions``): the
    most specific, with the most literal segments, when several fit."""
    refs = list(refs)
    named = [ref for ref in refs if named_outright(ref, intent)]
    for mention in intent.endpoints:
        if any(_path_named(ref, mention) for ref in named):
            continue
        fits = [(n, ref) for ref in refs if (n := _filled(ref, mention))]
        best = max((n for n, _ in fits), default=0)
        named += [ref for n, ref in fits if n == best and ref not in named]
    return named


def _filled(ref: EndpointRef, mention: ExplicitEndpoint) -> int:
    """How many literal segments ``ref``'s path template shares with the written ``mention``
    when the mention fills the template's parameters with values (0: it does not), the paths
    aligned at their ends (a base prefix on either side), over two segments at least."""
    if mention.method and mention.method != ref.method.upper():
        return 0
    template = _normalised(ref.path).strip("/").split("/")
    written = mention.path.strip("/").split("/")
    n = min(len(template), len(written))
    if n < 2:
        return 0
    pairs = list(zip(template[-n:], written[-n:]))
    if not all(t in ("{}", w) for t, w in pairs) or all(t == w for t, w in pairs):
        return 0
    return sum(t != "{}" for t, _ in pairs)


@lru_cache(maxsize=_CACHED)
def _normalised(path: str) -> str:
    """:func:`normalise_path` of an endpoint's own path (the graph matches a named endpoint
    against every endpoint of the API)."""
    return normalise_path(path)


def named_as_context(refs: list[EndpointRef], intent: Intent) -> bool:
    """Whether the question names ``refs`` only as what was used before it asks for something
    none of them does (:func:`~apiatlas.rag.question.intent.asked_after_mention`): "we book
    pickups with POST /pickups; how do I cancel one?" wants another endpoint."""
    after = asked_after_mention(intent.question)
    return after is not None and all(intent_fit(ref, after) == 0 for ref in refs)


def answered_alone(intent: Intent, named: list[EndpointRef]) -> bool:
    """Whether the question is answered by the endpoints it names (``named``, those the graph
    found that it names, :func:`named_in`), without ranking: it names some, asks for no how-to,
    and does not name them only as what was used before asking for something else
    (:func:`named_as_context`)."""
    return (intent.explicit and not intent.is_howto and bool(named)
            and not named_as_context(named, intent))


def replacements(primary: list[EndpointRef], pool: list[EndpointRef]) -> dict[str, EndpointRef]:
    """For each deprecated primary endpoint, a live endpoint of the same kind and resource path."""
    out: dict[str, EndpointRef] = {}
    for old in (p for p in primary if p.deprecated):
        shape = _unversioned(old.path)
        for new in pool + primary:
            if not new.deprecated and new.method == old.method and _unversioned(new.path) == shape:
                out[old.key] = new
                break
    return out


def _unversioned(path: str) -> str:
    segments = normalise_path(path).split("/")
    return "/".join(s for s in segments if not (s[:1] == "v" and s[1:].isdigit()))


def endpoint_text(ref: EndpointRef) -> str:
    return f"{ref.path} {ref.operation_id} {ref.summary} {ref.resource}"


@lru_cache(maxsize=_CACHED)
def words_of(text: str) -> frozenset[str]:
    return frozenset(singular(w) for w in split_words(text))
