"""Secret scrubbing at the loaders' output boundary: specs and guide pages.

What ``load_openapi`` and ``load_docs`` return has passed through here, so nothing a store keeps
or an answer quotes carries a credential. The detection itself lives in :mod:`apiatlas.scrub`.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

from apiatlas.loaders.models import ApiSpec, DocPage, Endpoint, LoadWarning, Provenance
from apiatlas.scrub import scrub_text, scrub_value


class _Collector:
    """Scrubs the parts of the items of one endpoint or spec and records what it removed."""

    def __init__(self) -> None:
        self.warnings: list[LoadWarning] = []

    def text(self, value: str, where: Provenance) -> str:
        result = scrub_text(value)
        if not result.findings:
            return value  # the caller's own object, so an unchanged part is not copied
        self._record(result.findings, where)
        return result.text

    def value(self, value: Any, where: Provenance, *, key: str | None = None) -> Any:
        scrubbed, kinds = scrub_value(value, key=key)
        self._record(kinds, where)
        return scrubbed

    def part(
        self,
        model: _Part,
        texts: tuple[str, ...] = ("description",),
        values: tuple[str, ...] = (),
        key: str | None = None,
    ) -> _Part:
        """``model`` with its ``texts`` and ``values`` (and its ``fields``) scrubbed."""
        where: Provenance = model.provenance  # type: ignore[attr-defined]
        update = {name: self.text(getattr(model, name), where) for name in texts}
        update |= {name: self.value(getattr(model, name), where, key=key) for name in values}
        fields = getattr(model, "fields", None)  # schemas, request bodies and responses
        if isinstance(fields, list):
            update["fields"] = [self.part(f, values=("example",), key=f.name) for f in fields]
        # Nearly every part is clean: keep it rather than copy thousands of models.
        if all(_same(getattr(model, name), value) for name, value in update.items()):
            return model
        return model.model_copy(update=update)

    def _record(self, kinds: tuple[str, ...], where: Provenance) -> None:
        for kind in dict.fromkeys(kinds):
            warning = LoadWarning(
                message=f"secret scrubbed: {kind}", source=where.source, pointer=where.pointer
            )
            if warning not in self.warnings:
                self.warnings.append(warning)


_Part = TypeVar("_Part", bound=BaseModel)


def _same(old: Any, new: Any) -> bool:
    if isinstance(old, list) and isinstance(new, list):
        return len(old) == len(new) and all(a is b for a, b in zip(old, new))
    return old is new


def scrub_spec(spec: ApiSpec) -> ApiSpec:
    """A copy of ``spec`` with secrets removed from every text a store or an answer could see.

    Descriptions, summaries, servers, examples (request, response, parameter, field, schema) and
    code samples are scrubbed. Each removal is recorded as a :class:`LoadWarning`
    (``secret scrubbed: <kind>``) with the source and pointer of the item it came from, on the
    endpoint and on the spec. Names, paths and pointers are structure and are left as they are.
    """
    c = _Collector()
    endpoints = [_scrub_endpoint(endpoint) for endpoint in spec.endpoints]
    tags = Provenance(source=spec.source, pointer="/tags")
    update: dict[str, Any] = {
        "description": c.text(spec.description, Provenance(source=spec.source, pointer="/info")),
        "servers": [c.text(url, Provenance(source=spec.source)) for url in spec.servers],
        "tags": [
            t.model_copy(update={"description": c.text(t.description, tags)}) for t in spec.tags
        ],
        "endpoints": endpoints,
        "schemas": {name: c.part(s, values=("example",)) for name, s in spec.schemas.items()},
    }
    # Endpoint findings are repeated on the spec, as the builder does with its other warnings.
    found = [w for e in endpoints for w in e.warnings if w.message.startswith("secret scrubbed")]
    unique = {(w.message, w.source, w.pointer): w for w in found + c.warnings}
    for w in spec.warnings:  # scrubbing a scrubbed spec adds nothing
        unique.pop((w.message, w.source, w.pointer), None)
    warnings = spec.warnings + list(unique.values())
    return spec.model_copy(update=update | {"warnings": warnings})


def _scrub_endpoint(endpoint: Endpoint) -> Endpoint:
    c = _Collector()
    where = endpoint.provenance
    body = endpoint.request_body
    update: dict[str, Any] = {
        "summary": c.text(endpoint.summary, where),
        "description": c.text(endpoint.description, where),
        "servers": [c.text(url, where) for url in endpoint.servers],
        "parameters": [c.part(p, values=("example",), key=p.name) for p in endpoint.parameters],
        "request_body": c.part(body) if body is not None else None,
        "responses": [c.part(r) for r in endpoint.responses],
        # A parameter example is named after its parameter, and the name says what it holds.
        "examples": [
            c.part(x, (), ("value",), x.name.split(" ", 1)[0] if x.kind == "parameter" else None)
            for x in endpoint.examples
        ],
        "code_samples": [c.part(s, ("label", "source")) for s in endpoint.code_samples],
    }
    return endpoint.model_copy(update=update | {"warnings": endpoint.warnings + c.warnings})


def scrub_pages(pages: list[DocPage]) -> tuple[list[DocPage], int]:
    """Copies of ``pages`` with secrets removed from every section's text.

    Returns:
        The scrubbed pages and how many secrets were removed in all.
    """
    removed = 0
    scrubbed: list[DocPage] = []
    for page in pages:
        sections = []
        for section in page.sections:
            result = scrub_text(section.text)
            removed += len(result.findings)
            if result.findings:
                section = section.model_copy(update={"text": result.text})
            sections.append(section)
        scrubbed.append(page.model_copy(update={"sections": sections}))
    return scrubbed, removed
