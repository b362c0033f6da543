"""Classify an endpoint into an operation kind (create/list/read/update/delete/search/action).

The operationId verb wins when it is meaningful (``CreateLocation``, ``SearchCustomers``);
generated ids that merely repeat the HTTP method (Adobe's ``PostV1InventorySources``) fall back
to the method and the path shape (collection vs item).
"""

from __future__ import annotations

from apiatlas.graph.model import OperationKindName
from apiatlas.graph.lexicon import HTTP_WORDS, verb_kinds
from apiatlas.graph.words import is_param, is_plural, is_version, path_segments, split_words
from apiatlas.loaders.models import Endpoint

OPERATION_VERB_WORDS = 2
"""Leading words of an operation id searched for its verb ("BatchRetrieveOrders" retrieves)."""
SUMMARY_VERB_WORDS = 1
"""Leading words of the summary read for the kind (a verb, or "search") when the operation id
gives none."""


def operation_verbs(operation_id: str) -> list[str]:
    """The words of an operationId after any leading HTTP-method word and version tokens."""
    words = split_words(operation_id)
    if words and words[0] in HTTP_WORDS - {"delete"}:
        words = words[1:]
    return [w for w in words if not is_version(w)]


def verb_kind(word: str) -> OperationKindName | None:
    """The usual kind of ``word`` as a verb (:mod:`apiatlas.graph.lexicon`), or ``None``."""
    kinds = verb_kinds(word, inflected=False)
    return kinds[0] if kinds else None


def _verb_kind(words: list[str], item: bool, method: str, leading: int
               ) -> OperationKindName | None:
    # The first verb among the ``leading`` words.
    kind = next((k for w in words[:leading] if (k := verb_kind(w)) is not None), None)
    if kind == "action":
        return kind
    if "search" in words:
        return "search"
    if kind == "create" and method in ("PUT", "PATCH") and item:
        return "update"
    return kind


def classify(endpoint: Endpoint) -> OperationKindName:
    """The operation kind of an endpoint.

    Args:
        endpoint: A loaded endpoint.

    Returns:
        One of ``create``, ``list``, ``read``, ``update``, ``delete``, ``search``, ``action``.
    """
    segments = [s for s in path_segments(endpoint.path) if not is_version(s)]
    item = bool(segments) and is_param(segments[-1])
    last = split_words(segments[-1]) if segments and not item else []
    method = endpoint.method

    if "search" in last or (last and last[-1] in ("query", "find", "lookup")):
        return "search"
    if last and verb_kind(last[0]) == "action":
        return "action"
    trailing = verb_kind(last[-1]) if len(last) > 1 else None
    if trailing in ("delete", "update", "create"):
        return trailing  # Adobe's ".../source-items-delete"
    verb = _verb_kind(operation_verbs(endpoint.operation_id), item, method,
                      OPERATION_VERB_WORDS)
    if verb is None and endpoint.summary and not endpoint.summary.strip().startswith("/"):
        summary_words = split_words(endpoint.summary)[:SUMMARY_VERB_WORDS]
        verb = _verb_kind(summary_words, item, method, SUMMARY_VERB_WORDS)
    if method == "DELETE":
        return "delete" if verb in (None, "delete") else verb
    if verb is not None:
        return verb
    return _kind_from_shape(method, item, segments, last)


def _kind_from_shape(
    method: str, item: bool, segments: list[str], last: list[str]
) -> OperationKindName:
    after_item = len(segments) >= 2 and is_param(segments[-2]) and not item
    if method == "GET":
        if item:
            return "read"
        return "list" if last and is_plural(last[-1]) else "read"
    if method in ("PUT", "PATCH"):
        return "update"
    if method == "POST":
        # POST /x/{id}/cancel is an action; POST /x/{id}/items creates a sub-resource.
        if after_item and last and not is_plural(last[-1]):
            return "action"
        return "update" if item else "create"
    return "action"
