"""Flattening JSON Schemas into :class:`SchemaInfo` / :class:`FieldInfo` lists.

``allOf`` parts are merged, ``oneOf``/``anyOf`` alternatives are listed by name, and nested object
properties become dotted paths (``address.city``; array items as ``lines[].name``) down to a fixed
depth, so a huge schema stays bounded. A schema that contains itself is cut where the cycle
closes and the field's type names the schema, marked ``(recursive)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from apiatlas.loaders.models import FieldInfo, LoadWarning, Provenance, SchemaInfo
from apiatlas.loaders.refs import Loc, Node, RefResolver, Warnings, ref_name
from apiatlas.loaders.limits import first_enum_values

MAX_DEPTH = 4
_MAX_ALTERNATIVES_IN_TYPE = 5


def provenance(loc: Loc) -> Provenance:
    """The :class:`Provenance` of a location."""
    return Provenance(source=loc.source, pointer=loc.pointer)


def text(value: Any) -> str:
    """A description-like value as stripped text (non-strings become empty)."""
    return value.strip() if isinstance(value, str) else ""


def first_example(schema: dict[str, Any]) -> Any:
    """``example``, or the first of the JSON-Schema ``examples`` list, or ``None``."""
    if "example" in schema:
        return schema["example"]
    examples = schema.get("examples")
    if isinstance(examples, list) and examples:
        return examples[0]
    return None


@dataclass
class _Shape:
    properties: dict[str, Node] = field(default_factory=dict)
    required: set[str] = field(default_factory=set)
    alternatives: list[tuple[str, Node | None]] = field(default_factory=list)


@dataclass(frozen=True)
class _Needed:
    """What the objects above a field say about sending it.

    Attributes:
        always: Every object above it is required (at the top: there is none).
        within: The path of the nearest optional object above it whose fields, down to this
            one, are each required inside their parent (``""``: none such).
    """

    always: bool = True
    within: str = ""

    def child(self, path: str, required_here: bool) -> _Needed:
        """What the fields of the object at ``path`` inherit."""
        if self.always and required_here:
            return _Needed()
        return _Needed(False, self.within if required_here else path)


@dataclass(frozen=True)
class Flat:
    """A flattened schema.

    Attributes:
        node: The dereferenced schema (``None`` when its ``$ref`` could not be resolved).
        name: The referenced schema's name, when the schema was a ``$ref``.
        type: Rendered type (``string|null``, ``array[Item]``, ``Location``).
        fields: Flattened properties.
        alternatives: ``oneOf``/``anyOf`` alternatives by name.
        warnings: Warnings met while flattening (replayed for every user of a cached result).
    """

    node: Node | None
    name: str | None
    type: str
    fields: list[FieldInfo]
    alternatives: list[str]
    warnings: list[LoadWarning]


class SchemaFlattener:
    """Flattens schemas, caching each referenced schema so shared components are done once.

    Args:
        resolver: Resolves ``$ref``s.
        max_depth: Deepest dotted path emitted (``a.b.c.d`` is depth 4).
    """

    def __init__(self, resolver: RefResolver, *, max_depth: int = MAX_DEPTH) -> None:
        self._resolver = resolver
        self._max_depth = max_depth
        self._cache: dict[Loc, Flat] = {}

    def flatten(self, node: Node, sink: Warnings) -> Flat:
        """Flatten the schema at ``node`` (a ``$ref`` or an inline schema)."""
        local = Warnings()
        resolved = self._resolver.deref(node, local)
        cacheable = resolved is not None and resolved.ref_name is not None
        if cacheable and resolved.loc in self._cache:  # type: ignore[union-attr]
            flat = self._cache[resolved.loc]  # type: ignore[union-attr]
            sink.extend(local.items + flat.warnings)
            return flat
        if resolved is None:
            flat = Flat(None, None, "", [], [], local.items)
        else:
            # A top-level array (a bulk request) lists its items' fields as `[].name`.
            is_array = isinstance(resolved.value, dict) and "items" in resolved.value
            root, prefix = self._descend(resolved, "", local) if is_array else (resolved, "")
            stack = (resolved.loc,) if root is None else (resolved.loc, root.loc)
            shape = self._shape(root, local, stack) if root is not None else _Shape()
            if not shape.properties:
                self._merge_alternatives(shape, local, stack)
            fields: list[FieldInfo] = []
            self._emit(shape, prefix, 1, stack, local, fields, _Needed())
            flat = Flat(
                node=resolved,
                name=resolved.ref_name,
                type=self.type_of(resolved, local),
                fields=fields,
                alternatives=[label for label, _ in shape.alternatives],
                warnings=list(local.items),
            )
            if cacheable:
                self._cache[resolved.loc] = flat
        sink.extend(flat.warnings)
        return flat

    def schema_info(self, node: Node, name: str | None, sink: Warnings) -> SchemaInfo:
        """A :class:`SchemaInfo` for the schema at ``node``.

        Args:
            node: The schema (a ``$ref`` or inline).
            name: Its name; ``None`` takes the referenced schema's name ("" when inline).
            sink: Receives warnings met on the way.
        """
        flat = self.flatten(node, sink)
        target = flat.node or node
        value = target.value if isinstance(target.value, dict) else {}
        example = first_example(value)
        if example is not None:
            self._resolver.check_refs(example, target.loc.child("example"), sink)
        return SchemaInfo(
            name=name if name is not None else flat.name or "",
            description=text(value.get("description")) or text(value.get("title")),
            type=flat.type,
            fields=flat.fields,
            alternatives=flat.alternatives,
            example=example,
            provenance=provenance(target.loc),
        )

    def type_of(self, node: Node, sink: Warnings, _depth: int = 0) -> str:
        """Render the type of a dereferenced schema node."""
        value = node.value if isinstance(node.value, dict) else {}
        raw = value.get("type")
        kind = "|".join(str(t) for t in raw) if isinstance(raw, list) else text(raw)
        if not kind and ("properties" in value or "allOf" in value):
            kind = "object"
        if kind == "array" or (not kind and "items" in value):
            item = node.get("items")
            resolved = self._resolver.deref(item, sink, lenient=True) if item else None
            inner = self.type_of(resolved, sink, _depth + 1) if resolved and _depth < 3 else ""
            kind = f"array[{inner}]" if inner else "array"
        elif kind == "object" and node.ref_name:
            kind = node.ref_name
        elif not kind:
            labels = [label for label, _ in self._alternatives(node, sink)]
            if labels:
                kind = "|".join(labels[:_MAX_ALTERNATIVES_IN_TYPE])
                kind += "|…" if len(labels) > _MAX_ALTERNATIVES_IN_TYPE else ""
            elif node.ref_name:
                kind = node.ref_name
        if value.get("nullable") is True and "null" not in kind:
            kind += "|null"
        return kind

    def _alternatives(self, node: Node, sink: Warnings) -> list[tuple[str, Node | None]]:
        found: list[tuple[str, Node | None]] = []
        for keyword in ("oneOf", "anyOf"):
            group = node.get(keyword)
            for index, option in enumerate(group.elements() if group else [], start=1):
                resolved = self._resolver.deref(option, sink, lenient=True)
                value = resolved.value if resolved and isinstance(resolved.value, dict) else {}
                if resolved is not None and resolved.ref_name:
                    label = resolved.ref_name
                elif value.get("type") == "null":
                    label = "null"
                else:
                    label = text(value.get("title")) or f"option {index}"
                found.append((label, resolved))
        return found

    def _shape(self, node: Node, sink: Warnings, stack: tuple[Loc, ...]) -> _Shape:
        shape = _Shape()
        value = node.value if isinstance(node.value, dict) else {}
        parts = node.get("allOf")
        for part in parts.elements() if parts else []:
            resolved = self._resolver.deref(part, sink)
            if resolved is None or resolved.loc in stack:
                continue
            inner = self._shape(resolved, sink, stack + (resolved.loc,))
            shape.properties.update(inner.properties)
            shape.required |= inner.required
            shape.alternatives.extend(inner.alternatives)
        props = node.get("properties")
        shape.properties.update(props.items() if props else [])
        required = value.get("required")
        if isinstance(required, list):
            shape.required |= {r for r in required if isinstance(r, str)}
        shape.alternatives.extend(self._alternatives(node, sink))
        return shape

    def _merge_alternatives(self, shape: _Shape, sink: Warnings, stack: tuple[Loc, ...]) -> None:
        """Give a body that is only ``oneOf``/``anyOf`` the union of its alternatives' fields.

        A field is required when every alternative requires it. Only done at the top level:
        nested alternatives (Adyen's 40 payment methods) would multiply the field count.
        """
        required: set[str] | None = None
        for _, option in shape.alternatives:
            if option is None or option.loc in stack:
                continue
            inner = self._shape(option, sink, stack + (option.loc,))
            for name, prop in inner.properties.items():
                shape.properties.setdefault(name, prop)
            required = inner.required if required is None else required & inner.required
        shape.required = required or set()

    def _emit(
        self,
        shape: _Shape,
        prefix: str,
        depth: int,
        stack: tuple[Loc, ...],
        sink: Warnings,
        out: list[FieldInfo],
        needed: _Needed,
    ) -> None:
        """Emit ``shape``'s fields under ``prefix``, and their nested fields.

        A field is ``required`` only when it and every object above it are required: a field
        required inside an optional object is sent only with that object, so it is
        ``required_if`` that object instead. ``nullable`` changes neither: a required field
        that may be ``null`` is still sent.
        """
        for name, prop in shape.properties.items():
            resolved = self._resolver.deref(prop, sink, lenient=True)
            path = prefix + name
            here = name in shape.required
            required = here and needed.always
            within = needed.within if here and not needed.always else ""
            if resolved is None:
                out.append(_unresolved_field(name, path, prop, required, within))
                continue
            value = resolved.value if isinstance(resolved.value, dict) else {}
            recursive = resolved.ref_name is not None and resolved.loc in stack
            kind = self.type_of(resolved, sink)
            example = first_example(value)
            if example is not None:
                self._resolver.check_refs(example, resolved.loc.child("example"), sink)
            out.append(
                FieldInfo(
                    name=name,
                    path=path,
                    type=f"{kind} (recursive)" if recursive else kind,
                    required=required,
                    required_if=within,
                    description=text(value.get("description")) or text(value.get("title")),
                    enum=(
                        first_enum_values(value["enum"])
                        if isinstance(value.get("enum"), list)
                        else []
                    ),
                    example=example,
                    deprecated=value.get("deprecated") is True,
                    read_only=value.get("readOnly") is True,
                    provenance=provenance(resolved.loc),
                )
            )
            if recursive or depth >= self._max_depth:
                continue
            child, child_prefix = self._descend(resolved, path, sink)
            if child is None or child.loc in stack:
                continue
            child_shape = self._shape(child, sink, stack + (child.loc,))
            self._emit(child_shape, child_prefix, depth + 1, stack + (child.loc,), sink, out,
                       needed.child(path, here))

    def _descend(self, node: Node, path: str, sink: Warnings) -> tuple[Node | None, str]:
        """The object schema whose properties nest under ``path``, and their path prefix."""
        items = node.get("items")
        if items is not None:
            resolved = self._resolver.deref(items, sink, lenient=True)
            return resolved, f"{path}[]."
        return node, f"{path}." if path else ""


def _unresolved_field(name: str, path: str, prop: Node, required: bool, within: str
                      ) -> FieldInfo:
    """A field whose ``$ref`` cannot be resolved: keep what its own keys say about it."""
    value = prop.value if isinstance(prop.value, dict) else {}
    base, _, fragment = str(value.get("$ref", "")).partition("#")
    return FieldInfo(
        name=name,
        path=path,
        type=ref_name(Loc(base, fragment)),
        required=required,
        required_if=within,
        description=text(value.get("description")),
        deprecated=value.get("deprecated") is True,
        provenance=provenance(prop.loc),
    )
