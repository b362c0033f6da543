"""Classify an endpoint into an operation kind (create/list/read/update/delete/search/action).

The operationId verb wins when it is meaningful (``CreateLocation``, ``SearchCustomers``);
generated ids that merely repeat the HTTP method (Adobe's ``PostV1InventorySources``) fall back
to the method and the path shape (collection vs item).
"""

from __future__ import annotations

from apiatlas.graph.model import OperationKindName
from apiatlas.graph.words import is_param, is_plural, is_version, path_segments, split_words
from apiatlas.loaders.models import Endpoint

VERB_KINDS: dict[str, OperationKindName] = {
    "create": "create",
    "add": "create",
    "insert": "create",
    "new": "create",
    "list": "list",
    "retrieve": "read",
    "fetch": "read",
    "read": "read",
    "show": "read",
    "describe": "read",
    "update": "update",
    "upsert": "update",
    "edit": "update",
    "modify": "update",
    "replace": "update",
    "set": "update",
    "delete": "delete",
    "remove": "delete",
    "destroy": "delete",
    "search": "search",
    "find": "search",
    "query": "search",
    "lookup": "search",
}

# Verbs that name an operation on something rather than a thing; a path segment starting with
# one of these is not a resource, and an operation named by one is an "action".
ACTION_VERBS = frozenset(
    {
        "accept", "activate", "adjust", "approve", "authorize", "batch", "bulk", "calculate",
        "cancel", "capture", "clone", "complete", "confirm", "copy", "deactivate", "decline",
        "disable", "enable", "estimate", "execute", "hold", "merge", "move", "notify",
        "pause", "pay", "preview", "publish", "redeem", "refund", "register", "reject",
        "resend", "resume", "retry", "revoke", "run", "send", "ship", "start", "stop", "submit",
        "swap", "unhold", "unlink", "unpublish", "unregister", "validate", "verify",
        "void", "accumulate", "obtain", "clear", "reset", "unassign", "assign",
    }
)  # fmt: skip

_HTTP_WORDS = frozenset({"get", "post", "put", "patch", "delete", "head", "options"})


def operation_verbs(operation_id: str) -> list[str]:
    """The words of an operationId after any leading HTTP-method word and version tokens."""
    words = split_words(operation_id)
    if words and words[0] in _HTTP_WORDS - {"delete"}:
        words = words[1:]
    return [w for w in words if not is_version(w)]


def _verb_kind(words: list[str], item: bool, method: str) -> OperationKindName | None:
    if not words:
        return None
    first = words[0]
    if first in ACTION_VERBS:
        return "action"
    if "search" in words:
        return "search"
    kind = VERB_KINDS.get(first)
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
    if last and last[0] in ACTION_VERBS:
        return "action"
    if len(last) > 1 and VERB_KINDS.get(last[-1]) in ("delete", "update", "create"):
        return VERB_KINDS[last[-1]]  # Adobe's ".../source-items-delete"
    verb = _verb_kind(operation_verbs(endpoint.operation_id), item, method)
    if verb is None and endpoint.summary and not endpoint.summary.strip().startswith("/"):
        summary_words = split_words(endpoint.summary)[:1]
        verb = _verb_kind(summary_words, item, method)
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
