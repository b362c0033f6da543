"""Example requests: the spec's own request examples first, else one synthesised from the
required parameters and request fields, rendered as a curl command against the API's server."""

from __future__ import annotations

import json
from typing import Any

from apiatlas.graph.model import EndpointDetail, FieldRef
from apiatlas.rag.answer.citations import CitationRegistry
from apiatlas.rag.answer.result import AnswerExample

BASE_URL_PLACEHOLDER = "{base_url}"
_SHELL_LANGS = {"curl", "shell", "bash", "sh", "http"}
EXAMPLE_BODY_FIELDS = 3  # fields a synthesised body holds when none is required


def example_for(detail: EndpointDetail, citations: CitationRegistry) -> AnswerExample:
    """The best example request for one endpoint.

    Order: a spec request example (rendered as curl); else a spec ``x-codeSamples`` curl/shell
    sample (verbatim); else a request synthesised from required parameters and body fields.
    Spec-derived examples cite the spec item they came from.
    """
    ep = detail.endpoint
    for ex in detail.examples:
        if ex.get("kind") == "request" and ex.get("value") is not None:
            n = citations.spec(
                str(ex.get("source") or ep.source),
                str(ex.get("pointer") or ep.pointer),
                f"{ep.signature} request example",
            )
            content = render_curl(detail, ex["value"], str(ex.get("media_type") or ""))
            return AnswerExample(endpoint=ep.signature, language="bash", content=content,
                                 origin="spec", citation=n)
    for sample in detail.code_samples:
        if str(sample.get("lang", "")).lower() in _SHELL_LANGS and sample.get("source"):
            # Stored as CodeSample.model_dump(): "source" is the code, provenance is where.
            where = sample.get("provenance") or {}
            n = citations.spec(
                str(where.get("source") or ep.source),
                str(where.get("pointer") or ep.pointer),
                f"{ep.signature} code sample",
            )
            return AnswerExample(endpoint=ep.signature, language="bash",
                                 content=str(sample["source"]).strip(), origin="spec", citation=n)
    has_body = bool(detail.request_schema or detail.request_fields)
    body = synthesise_body(detail.request_fields) if has_body else None
    return AnswerExample(endpoint=ep.signature, language="bash",
                         content=render_curl(detail, body, "application/json"),
                         origin="synthesised")


def render_curl(detail: EndpointDetail, body: Any, media_type: str) -> str:
    """A curl command for ``detail`` with ``body`` (``None`` for no body)."""
    ep = detail.endpoint
    base = (detail.servers[0] if detail.servers else BASE_URL_PLACEHOLDER).rstrip("/")
    query: list[str] = []
    headers: list[str] = []
    for p in detail.parameters:
        # Path parameters stay in the spec's {name} form; the others get a <name> placeholder.
        value = f"<{p.name}>"
        if p.location == "path":
            continue
        if p.required and p.location == "query":
            query.append(f"{p.name}={value}")
        elif p.required and p.location == "header":
            headers.append(f"{p.name}: {value}")
    url = base + ep.path + ("?" + "&".join(query) if query else "")
    lines = [f'curl -X {ep.method} "{url}"']
    if detail.security:
        # The scheme's details are not in the read model; a bearer token is the common case.
        lines.append('-H "Authorization: Bearer $API_TOKEN"')
    lines += [f'-H "{h}"' for h in headers]
    if body is not None:
        lines.append(f'-H "Content-Type: {media_type or "application/json"}"')
        text = body if isinstance(body, str) else json.dumps(body, indent=2)
        lines.append("-d '" + text.replace("'", "'\\''") + "'")
    return " \\\n  ".join(lines)


def synthesise_body(fields: list[FieldRef]) -> dict[str, Any]:
    """A JSON body holding the required fields: a field required only inside an optional object
    is left out with that object. When none is required, the first few top-level fields that
    are not objects.

    Dotted names (``address.city``) become nested objects and ``items[]`` an array of objects;
    values are typed placeholders.
    """
    chosen = [f for f in fields if f.required] or [
        f for f in fields if "." not in f.name and not _is_object(f.type)
    ][:EXAMPLE_BODY_FIELDS]
    body: dict[str, Any] = {}
    for f in chosen:
        parts = [p for p in f.name.split(".") if p]
        if not parts:
            continue
        node: dict[str, Any] = body
        for part in parts[:-1]:
            node = _child(node, part)
        leaf = parts[-1]
        if leaf.endswith("[]"):
            node[leaf[:-2]] = [_sample_value(f.type, leaf[:-2])]
        elif leaf not in node:
            node[leaf] = _sample_value(f.type, leaf)
    return body


def _is_object(type_: str) -> bool:
    """A field type naming an object: ``object`` or a schema's name (capitalised)."""
    t = type_.split("|", 1)[0].strip()
    return t == "object" or t[:1].isupper()


def _child(node: dict[str, Any], part: str) -> dict[str, Any]:
    if part.endswith("[]"):
        items = node.setdefault(part[:-2], [{}])
        if not items or not isinstance(items[0], dict):
            items[:] = [{}]
        return items[0]
    child = node.get(part)
    if not isinstance(child, dict):
        child = node[part] = {}
    return child


def _sample_value(type_: str, name: str) -> Any:
    t = type_.lower()
    if t.startswith(("integer", "int")):
        return 0
    if t.startswith(("number", "float", "double")):
        return 0.0
    if t.startswith("bool"):
        return False
    if t.startswith("array") or t.endswith("[]"):
        return []
    if t.startswith("object"):
        return {}
    return f"<{name}>"
