"""Lookup before action: which ids a question names by another value, and the call that finds
each one."""

from __future__ import annotations

import pytest

from apiatlas.graph.model import Dependency, EndpointRef, ResourceInfo
from apiatlas.rag.ranking.lookups import id_mentions, lookup_calls

API = "crm"


def ref(method: str, path: str, kind: str, resource: str, deprecated: bool = False) -> EndpointRef:
    return EndpointRef(
        key=f"{API}/endpoint/{method} {path}", api=API, method=method, path=path, kind=kind,
        resource=f"{API}/resource/{resource}", deprecated=deprecated,
    )


RESOURCES = {
    f"{API}/resource/{name}": ResourceInfo(key=f"{API}/resource/{name}", api=API, name=name,
                                           aliases=aliases)
    for name, aliases in [("contact group", ["audience"]), ("contact", []), ("service", []),
                          ("deployment", [])]
}
ADD = ref("PUT", "/ContactGroups/{ContactGroupID}/Contacts", "create", "contact group")
CREATE_GROUP = ref("PUT", "/ContactGroups", "create", "contact group")
LIST_GROUPS = ref("GET", "/ContactGroups", "list", "contact group")
SEARCH_GROUPS = ref("POST", "/ContactGroups/search", "search", "contact group")
TRAIL = [
    Dependency(endpoint=ADD, parameter="ContactGroupID", provider=p)
    for p in (CREATE_GROUP, LIST_GROUPS, SEARCH_GROUPS)
]


def no_collection(provider: EndpointRef) -> EndpointRef | None:
    return None


def finders(question: str, trail: list[Dependency] = TRAIL, first: EndpointRef = ADD,
            collection=no_collection) -> list[tuple[str, str]]:  # type: ignore[no-untyped-def]
    found = lookup_calls(id_mentions(question, first, trail, RESOURCES), first, trail, collection)
    assert all(d.endpoint == first for d in found)
    return [(d.provider.signature, d.parameter) for d in found]


@pytest.mark.parametrize(
    "question",
    [
        "Add Bob to our contact group 'Preferred Suppliers'.",
        "Add Bob to the 'Preferred Suppliers' group.",
        'Put him in the group called "Preferred Suppliers"',
        "Add Bob to the group named ‘Preferred Suppliers’, whose id I do not have",
        "Add bob@example.com to a group; all I have is the group's name: 'VIP'",
        "Add Bob to the audience 'VIP'",  # an alias of the resource
    ],
)
def test_a_group_named_by_a_value_is_listed_first(question: str) -> None:
    assert finders(question) == [("GET /ContactGroups", "ContactGroupID")]


@pytest.mark.parametrize(
    "question",
    [
        "How do I add a contact to a contact group?",  # no value at all
        "Add 'Bob' to contact group 4411",  # the id is given
        "Add 'Bob' to the group, id 4411",
        "Add someone to a group and later, after lunch, email 'Welcome aboard' to them",
    ],
)
def test_no_lookup_without_a_value_next_to_the_resource_or_with_its_id(question: str) -> None:
    assert finders(question) == []


def test_a_parameter_that_is_the_name_itself_needs_no_lookup() -> None:
    scale = ref("PATCH", "/deployments/{name}/scale", "update", "deployment")
    trail = [Dependency(endpoint=scale, parameter="name",
                        provider=ref("GET", "/deployments", "list", "deployment"))]
    assert finders("Scale the 'checkout' deployment to 6", trail, scale) == []


def test_a_search_when_there_is_no_list_and_the_collection_when_there_is_neither() -> None:
    assert finders("Add Bob to the 'VIP' group", TRAIL[::2]) == [
        ("POST /ContactGroups/search", "ContactGroupID")
    ]
    only_create = TRAIL[:1]
    assert finders("Add Bob to the 'VIP' group", only_create) == []
    listed = ref("GET", "/ContactGroups", "read", "contact group")
    assert finders(
        "Add Bob to the 'VIP' group", only_create,
        collection=lambda p: listed if p.path == "/ContactGroups" else None,
    ) == [("GET /ContactGroups", "ContactGroupID")]


def test_deprecated_finders_are_not_offered() -> None:
    old = ref("GET", "/v1/ContactGroups", "list", "contact group", deprecated=True)
    trail = [Dependency(endpoint=ADD, parameter="ContactGroupID", provider=old)]
    assert finders("Add Bob to the 'VIP' group", trail) == []


def listed_by(endpoint: EndpointRef, *needs: tuple[str, str, str]) -> list[Dependency]:
    """``endpoint``'s direct needs: ``(parameter, list path, resource)`` each."""
    return [Dependency(endpoint=endpoint, parameter=parameter,
                       provider=ref("GET", path, "list", resource))
            for parameter, path, resource in needs]  # fmt: skip


def test_each_named_thing_gets_its_finder_in_call_order() -> None:
    attach = ref("POST", "/Services/{ServiceSid}/Contacts/{ContactSid}", "create", "service")
    trail = listed_by(attach, ("ServiceSid", "/Services", "service"),
                      ("ContactSid", "/Contacts", "contact"))
    trail.append(Dependency(endpoint=attach, parameter="ServiceSid", depth=2,
                            provider=ref("GET", "/Accounts", "list", "service")))
    question = "Attach the contact +44 20 7946 0958 to my messaging service named 'Marketing'"
    assert finders(question, trail, attach) == [
        ("GET /Services", "ServiceSid"), ("GET /Contacts", "ContactSid")
    ]


def test_ids_the_question_gives_and_names_are_told_apart() -> None:
    ship = ref("POST", "/shipments", "create", "shipment")
    trail = listed_by(ship, ("service_id", "/services", "service"),
                      ("contact_id", "/contacts", "contact"),
                      ("group_id", "/ContactGroups", "contact group"))
    question = "Ship to contact 4411 with the service called 'Express'"
    assert id_mentions(question, ship, trail, RESOURCES) == {
        "service_id": "named", "contact_id": "given"
    }
