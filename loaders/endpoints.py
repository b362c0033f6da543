"""Building :class:`Endpoint`s from OpenAPI 3 / Swagger 2 operations.

Parameters are merged (path level, then operation level), Swagger 2 ``body``/``formData``
parameters become the request body, and examples and code samples are collected with the
location they were read from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from apiatlas.errors import SpecError
from apiatlas.loaders.models import (
    CodeSample,
    Endpoint,
    ExampleInfo,
    FieldInfo,
    ParameterInfo,
    RequestBodyInfo,
    ResponseInfo,
    SchemaInfo,
)
from apiatlas.loaders.refs import Loc, Node, RefResolver, Warnings
from apiatlas.loaders.schemas import SchemaFlattener, provenance, text
from apiatlas.loaders.limits import first_enum_values
from apiatlas.loaders.spec_values import malformed, server_urls, strings

__all__ = ["EndpointBuilder", "SpecContext", "malformed", "server_urls", "strings"]

_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
_PARAM_LOCATIONS = ("path", "query", "header", "cookie")
_FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")


@dataclass(frozen=True)
class SpecContext:
    """Spec-wide defaults that operations inherit."""

    swagger: bool
    servers: list[str]
    security: Any
    consumes: list[str]
    produces: list[str]
    schemas: dict[str, SchemaInfo]


class EndpointBuilder:
    """Builds the :class:`Endpoint`s of path items (or 3.1 webhooks) of one spec."""

    def __init__(self, resolver: RefResolver, flattener: SchemaFlattener, ctx: SpecContext):
        self._resolver = resolver
        self._flattener = flattener
        self._ctx = ctx

    def path_item(self, path: str, item: Node, sink: Warnings, *, webhook: bool) -> list[Endpoint]:
        """One endpoint per operation of a dereferenced path item; a path item or an operation
        that is not an object is skipped with a warning in ``sink`` that names its pointer."""
        if not isinstance(item.value, dict):
            sink.add(malformed(item, "a path item", "an object of operations"))
            return []
        endpoints = []
        for method in _METHODS:
            op = item.get(method)
            if op is None:
                continue
            if isinstance(op.value, dict):
                endpoints.append(self._endpoint(path, method, op, item, webhook))
            else:
                sink.add(malformed(op, f"the {method.upper()} operation", "an object"))
        return endpoints

    def _endpoint(self, path: str, method: str, op: Node, item: Node, webhook: bool) -> Endpoint:
        sink = Warnings()
        value: dict[str, Any] = op.value
        examples: list[ExampleInfo] = []
        params, body_param, form = self._parameters(op, item, sink)
        parameters = [self._parameter(p, sink, examples) for p in params]
        if self._ctx.swagger:
            body = self._swagger_body(value, op, body_param, form, sink, examples)
        else:
            body = self._request_body(op.get("requestBody"), sink, examples)
        servers = self._ctx.servers
        if not self._ctx.swagger:
            # The most specific `servers` wins: operation, then path item, then the spec.
            own = server_urls(op, self._resolver, sink) or server_urls(item, self._resolver, sink)
            servers = own or servers
        security = value["security"] if "security" in value else self._ctx.security
        return Endpoint(
            method=method.upper(),  # type: ignore[arg-type]
            path=path,
            operation_id=text(value.get("operationId")),
            summary=text(value.get("summary")) or text(item.value.get("summary")),
            description=text(value.get("description")) or text(item.value.get("description")),
            tags=strings(value.get("tags")),
            deprecated=value.get("deprecated") is True,
            webhook=webhook,
            parameters=parameters,
            request_body=body,
            responses=self._responses(op, sink, examples),
            security=_requirement_names(security),
            servers=servers,
            examples=examples,
            code_samples=self._code_samples(op, sink),
            provenance=provenance(op.loc),
            warnings=sink.items,
        )

    def _parameters(
        self, op: Node, item: Node, sink: Warnings
    ) -> tuple[list[Node], Node | None, list[Node]]:
        """Path-level then operation-level parameters (the operation wins on name + in).

        Returns:
            Plain (path/query/header/cookie) parameters, the Swagger 2 body parameter, and the
            Swagger 2 form parameters.

        Raises:
            SpecError: If a parameter has no ``name`` or no ``in``.
        """
        merged: dict[tuple[str, str], Node] = {}
        for owner in (item, op):
            group = owner.get("parameters")
            if group is not None and not isinstance(group.value, list):
                sink.add(malformed(group, "'parameters'", "a list of parameter objects"))
            for param in group.elements() if group is not None else []:
                resolved = self._resolver.deref(param, sink)
                if resolved is None:
                    continue
                value = resolved.value
                if not isinstance(value, dict) or "name" not in value or "in" not in value:
                    raise SpecError(
                        "a parameter needs 'name' and 'in': add them or remove the parameter.",
                        source=resolved.loc.source,
                        pointer=resolved.loc.pointer,
                    )
                merged[(str(value["name"]), str(value["in"]))] = resolved
        plain = [p for p in merged.values() if p.value.get("in") in _PARAM_LOCATIONS]
        body = next((p for p in merged.values() if p.value.get("in") == "body"), None)
        form = [p for p in merged.values() if p.value.get("in") == "formData"]
        return plain, body, form

    def _parameter(self, node: Node, sink: Warnings, examples: list[ExampleInfo]) -> ParameterInfo:
        value = node.value
        schema = node.get("schema")
        resolved = self._resolver.deref(schema, sink) if schema is not None else node
        kind = self._flattener.type_of(resolved, sink) if resolved is not None else ""
        found = self._examples(node, "parameter", "", sink, name=str(value["name"]))
        if "x-example" in value:
            loc = node.loc.child("x-example")
            found.append(_example("parameter", str(value["name"]), "", value["x-example"], loc))
        examples.extend(found)
        return ParameterInfo(
            name=str(value["name"]),
            location=value["in"],
            required=value.get("required") is True,
            type=kind,
            description=text(value.get("description")),
            deprecated=value.get("deprecated") is True,
            example=found[0].value if found else None,
            provenance=provenance(node.loc),
        )

    def _swagger_body(
        self,
        value: dict[str, Any],
        op: Node,
        body: Node | None,
        form: list[Node],
        sink: Warnings,
        examples: list[ExampleInfo],
    ) -> RequestBodyInfo | None:
        consumes = strings(value.get("consumes")) or self._ctx.consumes
        if body is not None:
            schema = body.get("schema")
            info = self._flattener.schema_info(schema, None, sink) if schema is not None else None
            media = (consumes or ["application/json"])[0]
            found = self._examples(body, "request", media, sink)
            x_examples = body.get("x-examples")
            for mime, example in x_examples.items() if x_examples is not None else []:
                found.append(_example("request", "", mime, example.value, example.loc))
            examples.extend(found or self._schema_example(info, "request", media, None, sink))
            return RequestBodyInfo(
                required=body.value.get("required") is True,
                content_types=consumes or ["application/json"],
                description=text(body.value.get("description")),
                schema_name=self._register(info),
                fields=info.fields if info else [],
                alternatives=info.alternatives if info else [],
                provenance=provenance(body.loc),
            )
        if not form:
            return None
        fields = []
        for param in form:
            pv = param.value
            fields.append(
                FieldInfo(
                    name=str(pv["name"]),
                    path=str(pv["name"]),
                    type=self._flattener.type_of(param, sink),
                    required=pv.get("required") is True,
                    description=text(pv.get("description")),
                    enum=(
                        first_enum_values(pv["enum"])
                        if isinstance(pv.get("enum"), list)
                        else []
                    ),
                    example=pv.get("x-example"),
                    provenance=provenance(param.loc),
                )
            )
        has_file = any(p.value.get("type") == "file" for p in form)
        default = "multipart/form-data" if has_file else "application/x-www-form-urlencoded"
        return RequestBodyInfo(
            required=any(f.required for f in fields),
            content_types=[c for c in consumes if c in _FORM_TYPES] or [default],
            fields=fields,
            provenance=provenance(op.loc.child("parameters")),
        )

    def _request_body(
        self, node: Node | None, sink: Warnings, examples: list[ExampleInfo]
    ) -> RequestBodyInfo | None:
        resolved = self._resolver.deref(node, sink) if node is not None else None
        if resolved is None or not isinstance(resolved.value, dict):
            return None
        media_types, info, found = self._content(resolved, "request", None, sink)
        examples.extend(found)
        return RequestBodyInfo(
            required=resolved.value.get("required") is True,
            content_types=media_types,
            description=text(resolved.value.get("description")),
            schema_name=self._register(info),
            fields=info.fields if info else [],
            alternatives=info.alternatives if info else [],
            provenance=provenance(resolved.loc),
        )

    def _responses(
        self, op: Node, sink: Warnings, examples: list[ExampleInfo]
    ) -> list[ResponseInfo]:
        group = op.get("responses")
        found: list[ResponseInfo] = []
        for status, node in group.items() if group is not None else []:
            resolved = self._resolver.deref(node, sink)
            if resolved is None or not isinstance(resolved.value, dict):
                continue
            if self._ctx.swagger:
                produces = strings(op.value.get("produces")) or self._ctx.produces
                schema = resolved.get("schema")
                info = self._flattener.schema_info(schema, None, sink) if schema else None
                media = produces[0] if produces else ""
                mine = self._swagger_examples(resolved, status, sink)
                mine = mine or self._schema_example(info, "response", media, status, sink)
                media_types = produces if info else []
            else:
                media_types, info, mine = self._content(resolved, "response", status, sink)
            examples.extend(mine)
            found.append(
                ResponseInfo(
                    status=status,
                    description=text(resolved.value.get("description")),
                    content_types=media_types,
                    schema_name=self._register(info),
                    fields=info.fields if info else [],
                    provenance=provenance(resolved.loc),
                )
            )
        return found

    def _content(
        self, owner: Node, kind: str, status: str | None, sink: Warnings
    ) -> tuple[list[str], SchemaInfo | None, list[ExampleInfo]]:
        """Media types, the primary media type's schema, and every example of a ``content`` map."""
        content = owner.get("content")
        media = [(m, n) for m, n in content.items()] if content is not None else []
        primary = next((mn for mn in media if "json" in mn[0]), media[0] if media else None)
        info = None
        if primary is not None and primary[1].get("schema") is not None:
            info = self._flattener.schema_info(primary[1].get("schema"), None, sink)
        examples: list[ExampleInfo] = []
        for media_type, node in media:
            examples.extend(self._examples(node, kind, media_type, sink, status=status))
        if not examples and primary is not None:
            examples = self._schema_example(info, kind, primary[0], status, sink)
        return [m for m, _ in media], info, examples

    def _swagger_examples(self, response: Node, status: str, sink: Warnings) -> list[ExampleInfo]:
        """Swagger 2 response ``examples``: a map from media type to example value."""
        group = response.get("examples")
        found = []
        for media, example in group.items() if group is not None else []:
            self._resolver.check_refs(example.value, example.loc, sink)
            found.append(_example("response", "", media, example.value, example.loc, status))
        return found

    def _register(self, info: SchemaInfo | None) -> str | None:
        """Add a named body schema to the spec's schemas; return the name it is listed under."""
        if info is None or not info.name:
            return None
        name = info.name
        existing = self._ctx.schemas.get(name)
        if existing is not None and existing.provenance != info.provenance:
            name = f"{name}@{info.provenance.uri}"
            existing = self._ctx.schemas.get(name)
        if existing is None:
            self._ctx.schemas[name] = info
        return name

    def _schema_example(
        self, info: SchemaInfo | None, kind: str, media: str, status: str | None, sink: Warnings
    ) -> list[ExampleInfo]:
        if info is None or info.example is None:
            return []
        loc = Loc(info.provenance.source, info.provenance.pointer).child("example")
        return [_example(kind, "schema example", media, info.example, loc, status)]

    def _examples(
        self,
        node: Node,
        kind: str,
        media: str,
        sink: Warnings,
        *,
        name: str = "",
        status: str | None = None,
    ) -> list[ExampleInfo]:
        """``example`` and ``examples`` (OpenAPI 3 Example objects) of a media type or parameter."""
        found = []
        if "example" in node.value:
            loc = node.loc.child("example")
            self._resolver.check_refs(node.value["example"], loc, sink)
            found.append(_example(kind, name, media, node.value["example"], loc, status))
        group = node.get("examples")
        for key, example in group.items() if group is not None else []:
            resolved = self._resolver.deref(example, sink)
            if resolved is None or not isinstance(resolved.value, dict):
                continue
            if "value" in resolved.value:
                loc = resolved.loc.child("value")
                self._resolver.check_refs(resolved.value["value"], loc, sink)
                label = f"{name} {key}".strip() if name else key
                found.append(_example(kind, label, media, resolved.value["value"], loc, status))
        return found

    def _code_samples(self, op: Node, sink: Warnings) -> list[CodeSample]:
        group = op.get("x-codeSamples") or op.get("x-code-samples")
        samples = []
        for sample in group.elements() if group is not None else []:
            resolved = self._resolver.deref(sample, sink)
            value = resolved.mapping if resolved is not None else {}
            if resolved is not None and isinstance(value.get("source"), str):
                samples.append(
                    CodeSample(
                        lang=str(value.get("lang", "")),
                        label=str(value.get("label", "")),
                        source=value["source"],
                        provenance=provenance(resolved.loc),
                    )
                )
        return samples


def _example(
    kind: str, name: str, media: str, value: Any, loc: Loc, status: str | None = None
) -> ExampleInfo:
    return ExampleInfo(
        kind=kind,  # type: ignore[arg-type]
        name=name,
        media_type=media,
        status=status,
        value=value,
        provenance=provenance(loc),
    )



def _requirement_names(security: Any) -> list[str]:
    """Scheme names of a ``security`` requirement list, in order, without duplicates."""
    names: list[str] = []
    for requirement in security if isinstance(security, list) else []:
        for name in requirement if isinstance(requirement, dict) else []:
            if name not in names:
                names.append(str(name))
    return names
