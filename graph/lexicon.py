"""All the hand knowledge of apiatlas, in one place, and kept small.

- :data:`VERBS`: general English verbs (and phrasal verbs) -> operation kinds, shared by the
  graph builder (what an operation does, from its operationId or summary) and the question
  analysis (what a developer asks for). The first kind of an entry is its usual meaning; a
  second is what it falls back to where an API has no endpoint of the first ("cancel" is an
  action where one exists, else a delete).
- :data:`META_WORDS`: words a developer uses about APIs themselves ("endpoint", "call"), which
  never name a thing the question is about.
- :data:`IDENTIFIER_SUFFIXES`: how a parameter name says it holds an id.
- :data:`STOP_WORDS`: scikit-learn's English stop-word list, taken from the library rather than
  copied, less the words the two tables above give a meaning.

The grammar the question analysis reads a question by (determiners, prepositions, subjects,
words that ask for an old version) is :mod:`apiatlas.rag.question.lexicon`; plurals and
identifier words are :mod:`apiatlas.graph.words`. Everything else the ranking knows about an
API's words comes from the API's own text.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from apiatlas.graph.model import OperationKindName

_TABLE: tuple[tuple[tuple[OperationKindName, ...], str], ...] = (
    (("create",), "create add insert new make build generate issue open post book record "
                  "establish onboard set_up sign_up"),
    (("create", "action"), "register submit"),
    (("list",), "list enumerate browse show_all get_all see_all"),
    (("read",), "get fetch retrieve read view show see inspect check display describe obtain "
                "look_at find_out"),
    (("update",), "update change edit modify rename patch set replace amend upsert fix correct "
                  "alter reschedule switch fill_in"),
    (("update", "action"), "adjust move turn_on turn_off switch_on switch_off"),
    (("delete",), "delete remove drop destroy erase purge discard trash wipe unregister dismiss "
                  "get_rid_of throw_away throw_out clean_up take_down opt_out"),
    (("search",), "search find filter query lookup look_up locate"),
    (("search", "read"), "look"),
    (("action", "delete"), "cancel void archive deactivate disable unsubscribe revoke withdraw "
                           "disconnect"),
    (("action", "update"), "pause suspend stop halt mute"),
    (("action",), "accept verify validate test refund capture send resend retry publish "
                  "unpublish complete approve reject decline confirm assign unassign dispatch "
                  "rotate subscribe upload download print clone copy import export sync merge "
                  "resume reset authorize charge pay track ping trigger redeliver replay sign "
                  "activate reactivate enable restore schedule redeem transfer link unlink attach "
                  "detach notify execute run start calculate estimate preview hold unhold ship "
                  "swap clear fire emit"),
)

VERBS: dict[str, tuple[OperationKindName, ...]] = {
    word.replace("_", " "): kinds for kinds, words in _TABLE for word in words.split()
}
"""Verb or phrasal verb -> operation kinds, usual meaning first."""

PHRASES: dict[str, tuple[OperationKindName, ...]] = {w: k for w, k in VERBS.items() if " " in w}
"""The multi-word entries: matched before single words, so "set up" is not read as "set"."""

VERB_WORDS: frozenset[str] = frozenset(w for verb in VERBS for w in verb.split())
"""Every word of the verb table (typo correction accepts them)."""

HTTP_WORDS: frozenset[str] = frozenset({"get", "post", "put", "patch", "delete", "head", "options"})
"""HTTP methods, which operationIds and questions use as words."""

META_WORDS: frozenset[str] = frozenset(
    """endpoint endpoints api apis call calls calling use uses using used request requests
    operation operations route routes url urls resource resources thing things existing id ids
    info information data field fields parameter parameters param params example examples body
    payload response responses guide guides tutorial explain process flow steps step practice
    practices doc docs documentation""".split()
)
"""Words about asking and about APIs in general, not about a thing an API manages."""

def _library_stop_words() -> frozenset[str]:
    """scikit-learn's ``ENGLISH_STOP_WORDS``, read from its own module file.

    Importing ``sklearn`` costs about a second (numpy, scipy) and the list is a plain literal,
    so its module is loaded alone: start-up stays fast and the list is still the library's.
    """
    found = importlib.util.find_spec("sklearn")
    if found is None or found.origin is None:
        raise ImportError("scikit-learn is not installed: reinstall apiatlas (`make setup`)")
    path = Path(found.origin).parent / "feature_extraction" / "_stop_words.py"
    spec = importlib.util.spec_from_file_location("apiatlas_sklearn_stop_words", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot read scikit-learn's stop words at {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return frozenset(module.ENGLISH_STOP_WORDS)


STOP_WORDS: frozenset[str] = _library_stop_words() - set(VERBS) - HTTP_WORDS
"""The one stop-word list: scikit-learn's English list, less the verbs (the particles of phrasal
verbs stay stop words) and HTTP methods above."""

IDENTIFIER_SUFFIXES: frozenset[str] = frozenset({"id", "ids", "sid", "key", "uuid"})
"""Last words of a parameter name that hold an id (``group_id``, ``ServiceSid``, ``file_key``),
not a value a developer may know outright (``name``, ``namespace``, ``email``)."""


SHORTEST_STEM = 3
"""Letters an -ing or -ed form must keep, once the suffix is cut, to read as its verb."""


def verb_kinds(word: str, *, inflected: bool = True) -> tuple[OperationKindName, ...] | None:
    """The kinds of ``word`` (with ``inflected``, also of its -ing / -ed form's stem); ``None``
    when it is no verb here.

    A plural -s is not stripped: it is far more often a noun ("posts", "issues") than a verb.
    Identifiers name operations by bare verbs, so the graph reads them without inflection:
    there "tracking" and "billing" are things.
    """
    if word in VERBS:
        return VERBS[word]
    if not inflected:
        return None
    for suffix, repl in (("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e")):
        if word.endswith(suffix) and len(word) - len(suffix) >= SHORTEST_STEM:
            stem = word[: -len(suffix)] + repl
            if stem in VERBS:
                return VERBS[stem]
    return None
