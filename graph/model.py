"""Backend-neutral knowledge-graph data: what builders emit and what stores return.

Builders turn loader output into :class:`GraphBatch` objects (nodes and edges owned by one scope).
Stores persist batches and answer the queries of :class:`~apiatlas.graph.store.KnowledgeGraphStore`
with the typed read models below.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

NodeLabel = Literal[
    "Api",
    "Resource",
    "Endpoint",
    "OperationKind",
    "Parameter",
    "Schema",
    "Field",
    "Tag",
    "DocSection",
    "CodeFile",
    "CodeFunction",
    "CodeSite",
]

EdgeType = Literal[
    "HAS_RESOURCE",  # Api -> Resource
    "HAS_ENDPOINT",  # Resource -> Endpoint
    "SUB_RESOURCE",  # Resource -> Resource (parent -> child)
    "OF_KIND",  # Endpoint -> OperationKind
    "HAS_PARAMETER",  # Endpoint -> Parameter
    "ACCEPTS",  # Endpoint -> Schema (request body)
    "RETURNS",  # Endpoint -> Schema (success response)
    "HAS_FIELD",  # Schema -> Field
    "TAGGED",  # Endpoint -> Tag
    "REQUIRES",  # Endpoint -> Endpoint (the target produces an id the source needs)
    "DESCRIBES",  # DocSection -> Endpoint
    "DEFINES",  # CodeFile -> CodeFunction
    "HAS_SITE",  # CodeFile or CodeFunction -> CodeSite
    "CALLS",  # CodeSite -> Endpoint
]

OperationKindName = Literal["create", "list", "read", "update", "delete", "search", "action"]

OPERATION_KINDS: tuple[OperationKindName, ...] = (
    "create",
    "list",
    "read",
    "update",
    "delete",
    "search",
    "action",
)


class Node(BaseModel):
    """A node. ``key`` is unique within a project; ``props`` hold JSON-serialisable values only."""

    model_config = ConfigDict(frozen=True)

    key: str
    label: NodeLabel
    props: dict[str, Any] = Field(default_factory=dict)


class Edge(BaseModel):
    """A directed, typed edge between two node keys of the same project."""

    model_config = ConfigDict(frozen=True)

    src: str
    type: EdgeType
    dst: str
    props: dict[str, Any] = Field(default_factory=dict)


class GraphBatch(BaseModel):
    """Everything one scope owns in one project: the complete new state of that scope.

    A scope is one API (``api:<name>``), one documentation set (``docs:<name>``), or the
    project's derived links (``links``). Applying a batch makes the store hold exactly these
    nodes and edges for the scope: new ones are added, changed ones updated, missing ones removed.
    """

    project: str
    scope: str
    nodes: list[Node] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)


class ChangeSummary(BaseModel):
    """What applying batches changed. All zeros except ``*_unchanged`` means a no-op."""

    nodes_added: int = 0
    nodes_updated: int = 0
    nodes_removed: int = 0
    nodes_unchanged: int = 0
    edges_added: int = 0
    edges_removed: int = 0
    edges_unchanged: int = 0

    @property
    def changed(self) -> bool:
        """True when anything was added, updated or removed."""
        return any(
            (
                self.nodes_added,
                self.nodes_updated,
                self.nodes_removed,
                self.edges_added,
                self.edges_removed,
            )
        )

    def __add__(self, other: ChangeSummary) -> ChangeSummary:
        return ChangeSummary(
            **{name: getattr(self, name) + getattr(other, name) for name in type(self).model_fields}
        )


class EndpointRef(BaseModel):
    """An endpoint as retrieval sees it: enough to rank, present and cite it."""

    key: str
    api: str
    method: str
    path: str
    operation_id: str = ""
    summary: str = ""
    deprecated: bool = False
    resource: str = ""
    kind: str = ""
    source: str = ""
    pointer: str = ""
    score: float = 0.0

    @property
    def signature(self) -> str:
        """``METHOD /path``."""
        return f"{self.method} {self.path}"


class LinkNotes(NamedTuple):
    """What a memory says about the refs it is linked by, kept with its links
    (:meth:`~apiatlas.graph.store.MemoryLinks.link_memory`)."""

    avoid: frozenset[str] = frozenset()
    """The refs the memory forbids (read back as :attr:`MemoryLink.avoids`)."""
    inferred: frozenset[str] = frozenset()
    """The refs found in the memory's text rather than given by the team."""
    rank: str = ""
    """Where the memory comes in reading order: links are listed by it."""


class MemoryLink(NamedTuple):
    """A project memory linked to one endpoint, with what the memory's refs say about it
    (:meth:`~apiatlas.graph.store.MemoryLinks.memory_links`)."""

    memory_id: str
    avoids: bool
    """A ref naming the endpoint is one the memory forbids (or the link predates the flag)."""
    named: bool
    """A ref the team gave names the endpoint itself: not only its resource, not a ref inferred
    from the memory's text (or the link predates the flag)."""
    rank: str
    """The memory's place in reading order, as given when it was linked."""


class ParameterRef(BaseModel):
    """A parameter of an endpoint."""

    name: str
    location: str
    required: bool = False
    type: str = ""
    description: str = ""
    source: str = ""
    pointer: str = ""


class FieldRef(BaseModel):
    """A field of a request or response schema.

    Attributes:
        name: Its dotted path (``address.city``; array items as ``lines[].name``).
        required: Every request must send it: it and every object above it are required.
        required_if: The optional object above it that must hold it when it is sent (``""``:
            none), e.g. ``cash_details`` for ``cash_details.seller_supplied_money``.
    """

    name: str
    type: str = ""
    required: bool = False
    required_if: str = ""
    description: str = ""


class DocSectionRef(BaseModel):
    """A guide section, enough to cite it."""

    key: str
    source: str
    title: str = ""
    section_path: list[str] = Field(default_factory=list)
    anchor: str = ""


class EndpointDetail(BaseModel):
    """Everything the composer needs about one endpoint."""

    endpoint: EndpointRef
    description: str = ""
    tags: list[str] = Field(default_factory=list)
    parameters: list[ParameterRef] = Field(default_factory=list)
    request_schema: str | None = None
    request_fields: list[FieldRef] = Field(default_factory=list)
    response_schema: str | None = None
    examples: list[dict[str, Any]] = Field(
        default_factory=list,
        description="Spec examples: {kind, name, media_type, value, source, pointer}.",
    )
    code_samples: list[dict[str, Any]] = Field(default_factory=list)
    security: list[str] = Field(default_factory=list)
    servers: list[str] = Field(default_factory=list)
    docs: list[DocSectionRef] = Field(default_factory=list)


class Dependency(BaseModel):
    """``endpoint`` needs ``parameter``, which ``provider`` returns. ``depth`` 1 = direct."""

    endpoint: EndpointRef
    parameter: str
    provider: EndpointRef
    depth: int = 1


class ResourceInfo(BaseModel):
    """A resource and the names it is known by."""

    key: str
    api: str
    name: str
    aliases: list[str] = Field(default_factory=list)
    parent: str | None = None


class Neighbourhood(BaseModel):
    """The nodes and edges within ``depth`` hops of a node."""

    center: str
    nodes: list[Node] = Field(default_factory=list)
    edges: list[Edge] = Field(default_factory=list)


class GraphStats(BaseModel):
    """Counts per label and per edge type, and the APIs present."""

    project: str | None = None
    apis: list[str] = Field(default_factory=list)
    nodes: dict[str, int] = Field(default_factory=dict)
    edges: dict[str, int] = Field(default_factory=dict)
