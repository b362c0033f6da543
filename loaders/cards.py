"""Endpoint cards: one LangChain :class:`Document` per operation, ready for a vector store.

A card leads with what a developer searches for (``METHOD /path``, operationId, summary, tags),
then the description, parameters, request-body fields (required first) and an example request.
Only the first :data:`CARD_TOKENS` tokens are embedded, one vector per endpoint; the rest of the
card is kept beside them for keyword search and display, so the order matters more than the
length.
"""

from __future__ import annotations

import json
from typing import Any

from langchain_core.documents import Document

from apiatlas.loaders.models import ApiSpec, Endpoint, FieldInfo, ParameterInfo

CARD_TOKENS = 256
"""Tokens of a card that are embedded: one vector per endpoint, the local model's whole window;
the rest goes to keyword search (see ``TokenSplitter.compact_documents``). Chosen on the dev
sets' out-of-fold ranking (``make ablation``, 2026-11-24): 256 gave top1 0.484 and 0.572 with
acceptable endpoints, 128 gave 0.472 and 0.544, and the earlier split cards (all of each card,
in 256-token chunks, about three per endpoint) 0.479 and 0.559."""
DESCRIPTION_LIMIT = 1200
"""Characters of the description kept on a card."""
_FIELD_LIMIT = 40
"""Request-body fields listed on a card."""
_LINE_LIMIT = 200
"""Characters of a parameter's or a field's description."""
_EXAMPLE_LIMIT = 1500
"""Characters of the example request."""
_CONTENT_TYPES = 3
"""Request content types named on a card."""
_ENUM_VALUES = 8
"""Enum values listed per field."""
_PLACEHOLDERS: dict[str, Any] = {"integer": 0, "number": 0, "boolean": False}


def endpoint_documents(spec: ApiSpec, *, project: str) -> list[Document]:
    """One endpoint card per operation of ``spec``.

    Args:
        spec: A loaded API.
        project: The project the cards belong to (part of every id).

    Returns:
        Documents with a stable ``id`` (``project:api:METHOD /path``) and Chroma-safe metadata
        (str/int/float/bool values only).
    """
    return [endpoint_document(spec, endpoint, project=project) for endpoint in spec.endpoints]


def endpoint_document(spec: ApiSpec, endpoint: Endpoint, *, project: str) -> Document:
    """The card of one endpoint (see :func:`endpoint_documents`)."""
    metadata: dict[str, str | int | float | bool] = {
        "project": project,
        "api": spec.name,
        "kind": "endpoint",
        "method": endpoint.method,
        "path": endpoint.path,
        "operation_id": endpoint.operation_id,
        "summary": endpoint.summary,
        "tags": ",".join(endpoint.tags),
        "source": endpoint.provenance.source,
        "pointer": endpoint.provenance.pointer,
        "deprecated": endpoint.deprecated,
        "webhook": endpoint.webhook,
        "title": endpoint.key,
    }
    return Document(
        id=f"{project}:{spec.name}:{endpoint.key}",
        page_content=card_text(spec, endpoint),
        metadata=metadata,
    )


def card_text(spec: ApiSpec, endpoint: Endpoint) -> str:
    """The readable text of an endpoint card."""
    head = [f"{'WEBHOOK' if endpoint.webhook else endpoint.method} {endpoint.path}"]
    if endpoint.webhook:
        head[0] += f" (webhook, {endpoint.method})"
    if endpoint.operation_id:
        head.append(f"Operation: {endpoint.operation_id}")
    if endpoint.summary and endpoint.summary != endpoint.operation_id:
        head.append(f"Summary: {endpoint.summary}")
    if endpoint.tags:
        head.append(f"Tags: {', '.join(endpoint.tags)}")
    head.append(f"API: {spec.title}")
    if endpoint.deprecated:
        head.append("Deprecated: yes")
    parts = ["\n".join(head)]
    if endpoint.description:
        parts.append(truncate(endpoint.description, DESCRIPTION_LIMIT))
    if endpoint.parameters:
        parts.append("Parameters:\n" + "\n".join(_parameter_line(p) for p in endpoint.parameters))
    body = endpoint.request_body
    if body is not None:
        title = "Request body"
        named = [body.schema_name] if body.schema_name else []
        detail = ", ".join(body.content_types[:_CONTENT_TYPES] + named)
        lines = [f"{title} ({detail}):" if detail else f"{title}:"]
        fields = ordered_fields(body.fields)
        lines += [_field_line(f, required=r) for f, r in fields[:_FIELD_LIMIT]]
        if len(fields) > _FIELD_LIMIT:
            lines.append(f"- … and {len(fields) - _FIELD_LIMIT} more fields")
        if body.alternatives:
            lines.append("One of: " + ", ".join(body.alternatives))
        parts.append("\n".join(lines))
    example = example_request(endpoint)
    if example:
        parts.append(f"Example request:\n{endpoint.method} {endpoint.path}\n{example}")
    return "\n\n".join(parts)


def truncate(text: str, limit: int) -> str:
    """Cut ``text`` to about ``limit`` characters, at a sentence boundary when there is one."""
    if len(text) <= limit:
        return text
    window = text[:limit]
    cut = max(window.rfind(mark) for mark in (". ", ".\n", "! ", "? "))
    if cut >= limit // 2:
        return window[: cut + 1]
    space = window.rfind(" ")
    return (window[:space] if space > 0 else window) + "…"


def ordered_fields(fields: list[FieldInfo]) -> list[tuple[FieldInfo, bool]]:
    """Fields with whether each is required (it and every object above it), required first."""
    flagged = [(f, f.required) for f in fields]
    return [x for x in flagged if x[1]] + [x for x in flagged if not x[1]]


def example_request(endpoint: Endpoint) -> str:
    """JSON of the first request example in the spec, else a minimal one from required fields."""
    for example in endpoint.examples:
        if example.kind == "request" and example.value is not None:
            return _dump(example.value)
    body = endpoint.request_body
    if body is None:
        return ""
    required = [f for f, r in ordered_fields(body.fields) if r]
    if not required or any(f.path.startswith("[]") for f in required):
        return ""
    return _dump(_synthesise(required))


def _synthesise(fields: list[FieldInfo]) -> dict[str, Any]:
    root: dict[str, Any] = {}
    for field in fields:
        target: Any = root
        parts = field.path.split(".")
        for part in parts[:-1]:
            key = part.removesuffix("[]")
            if part.endswith("[]"):
                items = target.setdefault(key, [])
                if not items or not isinstance(items[0], dict):
                    items[:] = [{}]
                target = items[0]
            else:
                child = target.get(key)
                target = child if isinstance(child, dict) else target.setdefault(key, {})
        if parts[-1] not in target:
            target[parts[-1]] = _sample_value(field)
    return root


def _sample_value(field: FieldInfo) -> Any:
    if field.example is not None:
        return field.example
    if field.enum:
        return field.enum[0]
    base = field.type.split("|")[0]
    if base.startswith("array"):
        return []
    if base == "string":
        return "string"
    return _PLACEHOLDERS.get(base, {})


def _dump(value: Any) -> str:
    text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    return truncate(text, _EXAMPLE_LIMIT) if len(text) > _EXAMPLE_LIMIT else text


def _parameter_line(param: ParameterInfo) -> str:
    flags = [param.location, "required" if param.required else "optional"]
    if param.type:
        flags.append(param.type)
    if param.deprecated:
        flags.append("deprecated")
    line = f"- {param.name} ({', '.join(flags)})"
    return f"{line}: {truncate(param.description, _LINE_LIMIT)}" if param.description else line


def _field_line(field: FieldInfo, *, required: bool) -> str:
    flags = [field.type] if field.type else []
    flags.append("required" if required else "optional")
    if field.deprecated:
        flags.append("deprecated")
    if field.read_only:
        flags.append("read-only")
    line = f"- {field.path} ({', '.join(flags)})"
    if field.enum:
        line += " one of " + ", ".join(str(v) for v in field.enum[:_ENUM_VALUES])
    return f"{line}: {truncate(field.description, _LINE_LIMIT)}" if field.description else line
