"""Malformed structure is loaded around with a warning that names its JSON pointer, never
skipped in silence; a spec location without any endpoint is an error."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiatlas.errors import SpecError
from apiatlas.loaders.openapi import load_openapi, require_endpoints

HEAD = "openapi: 3.0.3\ninfo: {title: Shop, version: '1'}\n"
GET = "responses: {'200': {description: ok}}"


def _load(tmp_path: Path, body: str) -> tuple[list[str], dict[str, str]]:
    path = tmp_path / "spec.yaml"
    path.write_text(HEAD + body, encoding="utf-8")
    [spec] = load_openapi(path)
    assert all(w.source == str(path) for w in spec.warnings)
    return [f"{e.method} {e.path}" for e in spec.endpoints], {
        w.pointer: w.message for w in spec.warnings
    }


def test_a_path_item_that_is_a_list_is_skipped_with_its_pointer(tmp_path: Path) -> None:
    endpoints, warnings = _load(
        tmp_path, f"paths:\n  /listy: [1, 2]\n  /orders:\n    get: {{{GET}}}\n"
    )
    assert endpoints == ["GET /orders"]
    assert "a path item must be an object of operations, but is a list" in warnings["/paths/~1listy"]


def test_an_operation_that_is_not_an_object_is_skipped_with_its_pointer(tmp_path: Path) -> None:
    endpoints, warnings = _load(
        tmp_path, f"paths:\n  /orders:\n    get: {{{GET}}}\n    post: nope\n"
    )
    assert endpoints == ["GET /orders"]
    assert "the POST operation must be an object, but is a string" in warnings["/paths/~1orders/post"]


@pytest.mark.parametrize("where", ["path", "operation"])
def test_parameters_that_are_not_a_list_are_ignored_with_their_pointer(
    tmp_path: Path, where: str
) -> None:
    if where == "path":
        body = f"paths:\n  /orders:\n    parameters: oops\n    get: {{{GET}}}\n"
        pointer = "/paths/~1orders/parameters"
    else:
        body = f"paths:\n  /orders:\n    get: {{parameters: oops, {GET}}}\n"
        pointer = "/paths/~1orders/get/parameters"
    endpoints, warnings = _load(tmp_path, body)
    assert endpoints == ["GET /orders"]
    assert "'parameters' must be a list of parameter objects, but is a string" in warnings[pointer]


def test_a_duplicate_operation_id_is_named_with_both_operations(tmp_path: Path) -> None:
    endpoints, warnings = _load(
        tmp_path,
        "paths:\n"
        f"  /orders:\n    get: {{operationId: listOrders, {GET}}}\n"
        f"  /carts:\n    get: {{operationId: listOrders, {GET}}}\n"
        f"  /users:\n    get: {{operationId: listUsers, {GET}}}\n",
    )
    assert len(endpoints) == 3
    assert list(warnings) == ["/paths/~1carts/get"]
    assert "operationId 'listOrders' is also the id of GET /orders (#/paths/~1orders/get)" in (
        warnings["/paths/~1carts/get"]
    )


@pytest.mark.parametrize("paths", ["[1, 2]", "null", "oops"])
def test_paths_that_are_not_an_object_warn_and_the_location_is_refused(
    tmp_path: Path, paths: str
) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(HEAD + f"paths: {paths}\n", encoding="utf-8")
    specs = load_openapi(path)
    assert specs[0].endpoints == []
    assert "'paths' must be an object of path items" in specs[0].warnings[0].message
    with pytest.raises(SpecError, match="no endpoint found.*'paths' must be an object") as e:
        require_endpoints(specs, path)
    assert e.value.source == str(path)


def test_a_spec_with_only_webhooks_is_kept(tmp_path: Path) -> None:
    path = tmp_path / "hooks.yaml"
    path.write_text(
        "openapi: 3.1.0\ninfo: {title: Hooks, version: '1'}\n"
        f"webhooks:\n  orderPlaced:\n    post: {{{GET}}}\n",
        encoding="utf-8",
    )
    specs = require_endpoints(load_openapi(path), path)
    assert [e.webhook for e in specs[0].endpoints] == [True]


def test_a_spec_with_empty_paths_is_refused_without_warnings(tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text(HEAD + "paths: {}\n", encoding="utf-8")
    with pytest.raises(SpecError, match=r"no endpoint found: the spec's 'paths'.* hold no operation\."):
        require_endpoints(load_openapi(path), path)
