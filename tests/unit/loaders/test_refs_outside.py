"""A local spec's ``$ref`` may read files in the folder given (the spec's own folder, or the
folder ingested) and nowhere else, unless the caller allows it; the refusal is the same whether
or not the file exists, so it says nothing about the machine (issue 53)."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiatlas.errors import SpecError
from apiatlas.loaders.fetch_policy import FetchPolicy
from apiatlas.loaders.openapi import load_openapi

SPEC = ("openapi: 3.0.3\ninfo: {{title: T, version: '1'}}\npaths:\n  /a:\n    get:\n"
        "      responses:\n        '200':\n          description: ok\n"
        "          content:\n            application/json:\n"
        "              schema: {{$ref: '{ref}'}}\n")


def _spec(folder: Path, ref: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    spec = folder / "openapi.yaml"
    spec.write_text(SPEC.format(ref=ref), encoding="utf-8")
    return spec


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    secret = tmp_path / "private" / "schema.yaml"
    secret.parent.mkdir()
    secret.write_text("Thing: {type: object, properties: {name: {type: string}}}\n")
    return secret


@pytest.mark.parametrize("ref", ["../private/schema.yaml#/Thing", "{outside}#/Thing"])
def test_a_ref_out_of_the_spec_folder_is_refused_and_says_nothing_of_the_file(
    tmp_path: Path, outside: Path, ref: str
) -> None:
    spec = _spec(tmp_path / "api", ref.format(outside=outside))
    with pytest.raises(SpecError, match="outside the folder of the spec") as there:
        load_openapi(spec)
    assert there.value.source == str(spec) and there.value.pointer.endswith("/schema")
    missing = _spec(tmp_path / "api", ref.format(outside=outside).replace("schema", "absent"))
    with pytest.raises(SpecError) as absent:
        load_openapi(missing)
    assert str(absent.value).replace("absent", "schema") == str(there.value)


def test_the_caller_may_allow_refs_outside(tmp_path: Path, outside: Path) -> None:
    spec = _spec(tmp_path / "api", "../private/schema.yaml#/Thing")
    [loaded] = load_openapi(spec, fetch_policy=FetchPolicy(read_outside=True))
    assert loaded.endpoints


def test_refs_within_the_folder_ingested_are_followed(tmp_path: Path) -> None:
    shared = tmp_path / "spec" / "shared" / "schema.yaml"
    shared.parent.mkdir(parents=True)
    shared.write_text("Thing: {type: object, properties: {name: {type: string}}}\n")
    _spec(tmp_path / "spec" / "api", "../shared/schema.yaml#/Thing")
    with pytest.raises(SpecError, match="outside the folder of the spec"):
        load_openapi(tmp_path / "spec" / "api" / "openapi.yaml")
    [loaded] = load_openapi(tmp_path / "spec")  # the folder given is the root
    assert loaded.endpoints
