"""Loading OpenAPI 3.0/3.1 and Swagger 2.0 documents into :class:`ApiSpec` models.

Entry point: :func:`load_openapi`, which takes a spec file, a directory of specs, or a URL.
``$ref`` handling lives in :mod:`apiatlas.loaders.refs`, schema flattening in
:mod:`apiatlas.loaders.schemas`; this module walks the document and builds the endpoints.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from apiatlas.errors import SpecError
from apiatlas.files import read_bounded
from apiatlas.loaders.endpoints import (
    EndpointBuilder,
    SpecContext,
    malformed,
    server_urls,
    strings,
)
from apiatlas.loaders.models import ApiSpec, Endpoint, LoadWarning, SchemaInfo, TagInfo
from apiatlas.loaders import limits
from apiatlas.loaders.refs import Loc, Node, RefResolver, Warnings, is_remote, parse_document
from apiatlas.loaders.schemas import SchemaFlattener, text
from apiatlas.loaders.scrubbing import scrub_spec

if TYPE_CHECKING:
    from apiatlas.loaders.fetch import FetchPolicy

_SPEC_SUFFIXES = (".json", ".yaml", ".yml")
_ROOT_HINT = re.compile(r"""^\s*["']?(openapi|swagger)["']?\s*:""", re.MULTILINE)


def load_openapi(
    location: str | Path,
    *,
    api: str | None = None,
    fetch_policy: FetchPolicy | None = None,
) -> list[ApiSpec]:
    """Load one spec file, every root spec under a directory, or a spec at an http(s) URL.

    Args:
        location: A spec file, a directory (searched recursively for documents whose top level
            has ``openapi`` or ``swagger``; fragments are skipped), or an http(s) URL.
        api: API name to use instead of the slug of ``info.title``.
        fetch_policy: Allows remote ``$ref``s to be fetched under this policy. Without it,
            remote references of local files are recorded as warnings, never fetched.

    Returns:
        One :class:`ApiSpec` per root document, in path order, with secrets scrubbed from its
        texts and examples (each recorded as a ``secret scrubbed: <kind>`` warning).

    Raises:
        SpecError: If a document is unreadable, invalid, not OpenAPI/Swagger, or has a dangling
            ``$ref``; or if a directory holds no spec. Nothing is returned for a bad spec.
        FetchError: If ``location`` is a URL that cannot be fetched.
    """
    if isinstance(location, str) and is_remote(location):
        # Secrets are scrubbed before anything is stored: here, at the loader's output.
        return [scrub_spec(_load_url(location, api=api, fetch_policy=fetch_policy))]
    path = Path(location).expanduser().resolve()
    outside = fetch_policy is not None and fetch_policy.read_outside
    root = None if outside else path if path.is_dir() else path.parent
    resolver = RefResolver(fetch_policy=fetch_policy, root=root)
    if path.is_dir():
        roots = discover_roots(path, resolver)
        if not roots:
            raise SpecError(
                "no OpenAPI/Swagger document found (no JSON/YAML file with a top-level"
                " 'openapi' or 'swagger' key): point at a spec file or the right directory.",
                source=str(path),
            )
    elif not path.exists():
        raise SpecError("file not found: check the path.", source=str(path))
    else:
        roots = [str(path)]
    flattener = SchemaFlattener(resolver)
    specs = [_SpecBuilder(resolver, flattener, root).build(api) for root in roots]
    # One resolver serves every root, so each spec lists all documents read: a superset of its
    # own, which is what a check for changed inputs needs.
    for spec in specs:
        spec.documents = resolver.sources
    # Secrets are scrubbed before anything is stored: here, at the loader's output.
    return [scrub_spec(spec) for spec in _dedupe_names(specs, roots)]


def require_endpoints(specs: list[ApiSpec], location: str | Path) -> list[ApiSpec]:
    """``specs`` when at least one of them has an endpoint (an operation or a webhook).

    Raises:
        SpecError: None has: ingesting the location would store an API nobody can ask about.
            The message gives the first warnings, which usually say why (``paths`` is a list,
            path items that are not objects).
    """
    if any(spec.endpoints for spec in specs):
        return specs
    warnings = [w for spec in specs for w in spec.warnings][:3]
    why = "; ".join(f"#{w.pointer}: {w.message}" for w in warnings)
    raise SpecError(
        "no endpoint found: the spec's 'paths' (and 'webhooks') hold no operation"
        + (f" ({why})" if why else "") + ". Point at the spec that has the operations.",
        source=str(location),
    )


def discover_roots(directory: Path, resolver: RefResolver) -> list[str]:
    """Root spec documents under ``directory`` (recursively), parsing only likely candidates."""
    roots: list[str] = []
    for path in sorted(directory.rglob("*")):
        if not path.is_file() or path.suffix.lower() not in _SPEC_SUFFIXES:
            continue
        if any(part.startswith(".") for part in path.relative_to(directory).parts):
            continue
        head = read_bounded(path, limits.MAX_DOCUMENT_BYTES, SpecError).decode("utf-8-sig", "replace")
        # A cheap textual test first: parsing every fragment of a split spec would be wasteful.
        if not _ROOT_HINT.search(head):
            continue
        doc = resolver.document(str(path))
        if isinstance(doc, dict) and ("openapi" in doc or "swagger" in doc):
            roots.append(str(path))
    return roots


def slugify(title: str) -> str:
    """A lowercase, dash-separated slug (``"Commerce Admin REST"`` -> ``commerce-admin-rest``)."""
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def _dedupe_names(specs: list[ApiSpec], roots: list[str]) -> list[ApiSpec]:
    counts: dict[str, int] = {}
    for spec in specs:
        counts[spec.name] = counts.get(spec.name, 0) + 1
    return [
        spec.model_copy(update={"name": f"{spec.name}-{slugify(Path(root).stem)}"})
        if counts[spec.name] > 1
        else spec
        for spec, root in zip(specs, roots, strict=True)
    ]


def _load_url(url: str, *, api: str | None, fetch_policy: FetchPolicy | None) -> ApiSpec:
    from apiatlas.loaders.fetch import fetch_text  # the only module allowed on the network

    fetched = fetch_text(url, fetch_policy)
    hint = fetched.content_type or urlsplit(fetched.url).path
    # The user asked for a remote spec, so its relative references are fetched the same way.
    resolver = RefResolver(fetch_policy=fetch_policy, allow_remote=True)
    doc = parse_document(fetched.text, fetched.url, hint=hint, sink=resolver.warnings)
    resolver.add_document(fetched.url, doc)
    return _SpecBuilder(resolver, SchemaFlattener(resolver), fetched.url).build(api)


def spec_format(doc: Any, source: str) -> str:
    """``swagger 2.0`` / ``openapi 3.x.y`` for a supported document.

    Raises:
        SpecError: If the document is not OpenAPI/Swagger or has an unsupported version.
    """
    if not isinstance(doc, dict) or not ("openapi" in doc or "swagger" in doc):
        raise SpecError(
            "not an OpenAPI/Swagger document (no top-level 'openapi' or 'swagger' key): load an"
            " OpenAPI 3.x or Swagger 2.0 root document.",
            source=source,
            pointer="",
        )
    if "swagger" in doc:
        if str(doc["swagger"]) != "2.0":
            raise SpecError(
                f"unsupported Swagger version {doc['swagger']!r}: only 2.0 is supported.",
                source=source,
                pointer="/swagger",
            )
        return "swagger 2.0"
    version = str(doc["openapi"])
    if not re.fullmatch(r"3\.[01](\.\d+)?(-[\w.]+)?", version):
        raise SpecError(
            f"unsupported OpenAPI version {version!r}: only 3.0 and 3.1 are supported.",
            source=source,
            pointer="/openapi",
        )
    return f"openapi {version}"


class _SpecBuilder:
    """Builds one :class:`ApiSpec` from a root document."""

    def __init__(self, resolver: RefResolver, flattener: SchemaFlattener, source: str) -> None:
        self._resolver = resolver
        self._flattener = flattener
        self._source = source
        self._doc = resolver.document(source)
        self._format = spec_format(self._doc, source)
        self._root = Node(self._doc, Loc(source))
        self._sink = Warnings()

    def build(self, api: str | None) -> ApiSpec:
        """Walk the document and return the spec (raising on the first hard error)."""
        swagger = self._format.startswith("swagger")
        info = self._deref(self._root.get("info"))
        info_value = info.mapping if info is not None else {}
        title = text(info_value.get("title")) or Path(urlsplit(self._source).path).stem
        servers = _swagger_servers(self._doc) if swagger else self._servers(self._root)
        schemas = self._component_schemas(swagger)
        context = SpecContext(
            swagger=swagger,
            servers=servers,
            security=self._doc.get("security"),
            consumes=strings(self._doc.get("consumes")),
            produces=strings(self._doc.get("produces")),
            schemas=schemas,
        )
        builder = EndpointBuilder(self._resolver, self._flattener, context)
        endpoints = []
        for section, webhook in (("paths", False), ("webhooks", True)):
            group = self._root.get(section)
            if group is not None and not isinstance(group.value, dict):
                self._sink.add(malformed(group, f"'{section}'", "an object of path items"))
            for name, item in group.items() if group is not None else []:
                resolved = self._deref(item)
                if resolved is not None:
                    endpoints.extend(builder.path_item(name, resolved, self._sink, webhook=webhook))
        for endpoint in endpoints:
            self._sink.extend(endpoint.warnings)
        self._sink.extend(duplicate_operation_ids(endpoints))
        base_path = self._doc.get("basePath") if swagger else None
        return ApiSpec(
            name=api or slugify(title) or "api",
            title=title,
            version=str(info_value.get("version", "")),
            description=self._description(info),
            spec_format=self._format,
            source=self._source,
            servers=servers,
            base_path=(text(base_path) or _server_path(servers)).rstrip("/"),
            tags=self._tags(),
            security_schemes=self._security_schemes(swagger),
            endpoints=endpoints,
            schemas=schemas,
            warnings=self._resolver.warnings.items + self._sink.items,
        )

    def _deref(self, node: Node | None) -> Node | None:
        return self._resolver.deref(node, self._sink) if node is not None else None

    def _description(self, info: Node | None) -> str:
        description = self._deref(info.get("description")) if info is not None else None
        return text(description.value) if description is not None else ""

    def _servers(self, owner: Node) -> list[str]:
        return server_urls(owner, self._resolver, self._sink)

    def _component_schemas(self, swagger: bool) -> dict[str, SchemaInfo]:
        if swagger:
            group = self._root.get("definitions")
        else:
            components = self._deref(self._root.get("components"))
            group = components.get("schemas") if components is not None else None
        return {
            name: self._flattener.schema_info(node, name, self._sink)
            for name, node in (group.items() if group is not None else [])
        }

    def _tags(self) -> list[TagInfo]:
        tags = self._root.get("tags")
        found: list[TagInfo] = []
        for tag in tags.elements() if tags is not None else []:
            resolved = self._deref(tag)
            value = resolved.mapping if resolved is not None else {}
            if "name" in value:
                description = text(value.get("description"))
                found.append(TagInfo(name=str(value["name"]), description=description))
        return found

    def _security_schemes(self, swagger: bool) -> dict[str, str]:
        if swagger:
            group = self._root.get("securityDefinitions")
        else:
            components = self._deref(self._root.get("components"))
            group = components.get("securitySchemes") if components is not None else None
        schemes: dict[str, str] = {}
        for name, node in group.items() if group is not None else []:
            resolved = self._deref(node)
            value = resolved.mapping if resolved is not None else {}
            detail = [str(value.get(k)) for k in ("type", "scheme", "in", "name") if value.get(k)]
            schemes[name] = " ".join(detail)
        return schemes


def duplicate_operation_ids(endpoints: list[Endpoint]) -> list[LoadWarning]:
    """A warning on each operation whose ``operationId`` an earlier one already has: the ids must
    be unique, and links, code generators and tools that name an operation by it pick one."""
    first: dict[str, Endpoint] = {}
    found = []
    for endpoint in endpoints:
        if not endpoint.operation_id:
            continue
        other = first.setdefault(endpoint.operation_id, endpoint)
        if other is not endpoint:
            found.append(LoadWarning(
                message=f"operationId {endpoint.operation_id!r} is also the id of {other.method} "
                f"{other.path} (#{other.provenance.pointer}): operationIds must be unique; "
                "rename one.",
                source=endpoint.provenance.source,
                pointer=endpoint.provenance.pointer,
            ))
    return found


def _swagger_servers(doc: dict[str, Any]) -> list[str]:
    host = text(doc.get("host"))
    if not host:
        return []
    schemes = strings(doc.get("schemes")) or ["https"]
    base = text(doc.get("basePath"))
    return [f"{scheme}://{host}{base}" for scheme in schemes]


def _server_path(servers: list[str]) -> str:
    return urlsplit(servers[0]).path if servers else ""
