"""The typed API model produced by the loaders.

Every item carries its provenance: the file (or URL) it was defined in and the JSON pointer to it
inside that file. After ``$ref`` resolution that is the file where the referenced object lives, so
a citation always points at real text.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

HttpMethod = Literal["GET", "PUT", "POST", "DELETE", "OPTIONS", "HEAD", "PATCH", "TRACE"]
ParameterLocation = Literal["path", "query", "header", "cookie"]


class Provenance(BaseModel):
    """Where an item was defined.

    Attributes:
        source: Absolute file path or URL of the document the item lives in.
        pointer: RFC 6901 JSON pointer inside that document ("" is the root).
    """

    model_config = ConfigDict(frozen=True)

    source: str
    pointer: str = ""

    @property
    def uri(self) -> str:
        """``source#pointer``, the form used in citations."""
        return f"{self.source}#{self.pointer}"


class LoadWarning(BaseModel):
    """Something that could not be loaded, recorded on the item instead of failing the spec."""

    message: str
    source: str
    pointer: str = ""


class FieldInfo(BaseModel):
    """One property of a schema, flattened (``address.city`` for nested objects)."""

    name: str
    path: str
    type: str = ""
    required: bool = False
    """Whether every request must send it: it and every object above it are required."""
    required_if: str = ""
    """The path of the optional object above it that, when sent, must hold it (``""``: none)."""
    description: str = ""
    enum: list[Any] = Field(default_factory=list)
    example: Any = None
    deprecated: bool = False
    read_only: bool = False
    provenance: Provenance


class SchemaInfo(BaseModel):
    """A schema: a named component, or an inline schema named after its operation."""

    name: str
    description: str = ""
    type: str = ""
    fields: list[FieldInfo] = Field(default_factory=list)
    alternatives: list[str] = Field(
        default_factory=list, description="Names of oneOf/anyOf alternatives."
    )
    example: Any = None
    provenance: Provenance


class ParameterInfo(BaseModel):
    """An operation parameter, after merging path-level and operation-level parameters."""

    name: str
    location: ParameterLocation
    required: bool = False
    type: str = ""
    description: str = ""
    deprecated: bool = False
    example: Any = None
    provenance: Provenance


class RequestBodyInfo(BaseModel):
    """The request body (OpenAPI 3 ``requestBody`` or a Swagger 2 ``in: body`` parameter)."""

    required: bool = False
    content_types: list[str] = Field(default_factory=list)
    description: str = ""
    schema_name: str | None = None
    fields: list[FieldInfo] = Field(default_factory=list)
    alternatives: list[str] = Field(default_factory=list)
    provenance: Provenance


class ResponseInfo(BaseModel):
    """One response of an operation."""

    status: str
    description: str = ""
    content_types: list[str] = Field(default_factory=list)
    schema_name: str | None = None
    fields: list[FieldInfo] = Field(default_factory=list)
    provenance: Provenance


class ExampleInfo(BaseModel):
    """An example taken from the spec (request body, response, or parameter)."""

    kind: Literal["request", "response", "parameter"]
    name: str = ""
    media_type: str = ""
    status: str | None = None
    value: Any = None
    provenance: Provenance


class CodeSample(BaseModel):
    """An ``x-codeSamples`` / ``x-code-samples`` entry."""

    lang: str
    label: str = ""
    source: str
    provenance: Provenance


class Endpoint(BaseModel):
    """One operation: a method on a path (or a 3.1 webhook, with ``webhook=True``)."""

    method: HttpMethod
    path: str
    operation_id: str = ""
    summary: str = ""
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    deprecated: bool = False
    webhook: bool = False
    parameters: list[ParameterInfo] = Field(default_factory=list)
    request_body: RequestBodyInfo | None = None
    responses: list[ResponseInfo] = Field(default_factory=list)
    security: list[str] = Field(default_factory=list)
    servers: list[str] = Field(default_factory=list)
    examples: list[ExampleInfo] = Field(default_factory=list)
    code_samples: list[CodeSample] = Field(default_factory=list)
    provenance: Provenance
    warnings: list[LoadWarning] = Field(default_factory=list)

    @property
    def key(self) -> str:
        """``METHOD /path``: unique within one API."""
        return f"{self.method} {self.path}"


class TagInfo(BaseModel):
    """A tag declared at the top of the spec."""

    name: str
    description: str = ""


class ApiSpec(BaseModel):
    """A whole API, as loaded from one root spec document.

    Attributes:
        name: Stable slug identifying the API within a project (from the title, or given).
        spec_format: e.g. ``swagger 2.0``, ``openapi 3.0.3``, ``openapi 3.1.0``.
        base_path: Swagger 2 ``basePath`` or the path part of the first server URL.
        schemas: Named component schemas (``definitions`` in Swagger 2).
    """

    name: str
    title: str
    version: str = ""
    description: str = ""
    spec_format: str
    source: str
    servers: list[str] = Field(default_factory=list)
    base_path: str = ""
    tags: list[TagInfo] = Field(default_factory=list)
    security_schemes: dict[str, str] = Field(default_factory=dict)
    endpoints: list[Endpoint] = Field(default_factory=list)
    schemas: dict[str, SchemaInfo] = Field(default_factory=dict)
    warnings: list[LoadWarning] = Field(default_factory=list)
    documents: list[str] = Field(default_factory=list)
    """Every document the spec was read from: its root and each ``$ref``'d file or URL."""


class DocSection(BaseModel):
    """A section of a guide page, split at headings.

    Attributes:
        source: Absolute file path or URL of the page.
        title: The page title.
        section_path: Heading trail from the page title down to this section.
        anchor: Slug of the section's own heading (for ``source#anchor`` links).
        text: Readable text of the section (HTML stripped and sanitised).
    """

    source: str
    title: str
    section_path: list[str] = Field(default_factory=list)
    anchor: str = ""
    text: str

    @property
    def uri(self) -> str:
        """``source#anchor``, the form used in citations."""
        return f"{self.source}#{self.anchor}" if self.anchor else self.source


class DocPage(BaseModel):
    """A guide page and its sections."""

    source: str
    title: str
    sections: list[DocSection] = Field(default_factory=list)
