"""Bad input: every failure is a SpecError naming the file and the line or JSON pointer."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiatlas.errors import LoaderError, SpecError
from apiatlas.loaders.openapi import load_openapi

MINIMAL = "openapi: 3.0.3\ninfo: {title: Things, version: '1'}\n"


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_invalid_yaml_names_the_line(tmp_path: Path) -> None:
    spec = _write(tmp_path / "bad.yaml", MINIMAL + "paths:\n  /x:\n    get: [unclosed\n")
    with pytest.raises(SpecError) as info:
        load_openapi(spec)
    assert info.value.line is not None and info.value.line >= 5
    assert f"{spec}:{info.value.line}" in str(info.value)
    assert "invalid YAML" in str(info.value)


def test_json_syntax_error_names_the_line(tmp_path: Path) -> None:
    spec = _write(tmp_path / "bad.json", '{\n  "openapi": "3.0.0",\n  "info": {,}\n}\n')
    with pytest.raises(SpecError) as info:
        load_openapi(spec)
    assert info.value.line == 3
    assert f"{spec}:3" in str(info.value)


def test_not_openapi(tmp_path: Path) -> None:
    spec = _write(tmp_path / "notes.yaml", "title: just some yaml\nitems: [1, 2]\n")
    with pytest.raises(SpecError, match="not an OpenAPI/Swagger document") as info:
        load_openapi(spec)
    assert str(spec) in str(info.value)


def test_unsupported_version_points_at_the_version(tmp_path: Path) -> None:
    spec = _write(tmp_path / "v4.yaml", "openapi: 4.0.0\ninfo: {title: X, version: '1'}\n")
    with pytest.raises(SpecError, match="unsupported OpenAPI version") as info:
        load_openapi(spec)
    assert info.value.pointer == "/openapi"
    assert f"{spec}#/openapi" in str(info.value)


def test_dangling_local_ref_names_ref_and_pointer(tmp_path: Path) -> None:
    spec = _write(
        tmp_path / "dangling.yaml",
        MINIMAL
        + "paths:\n  /things:\n    post:\n      requestBody:\n        content:\n"
        + "          application/json:\n            schema:\n"
        + "              $ref: '#/components/schemas/Nope'\n      responses: {}\n",
    )
    with pytest.raises(SpecError) as info:
        load_openapi(spec)
    message = str(info.value)
    assert "#/components/schemas/Nope" in message
    assert info.value.pointer == "/paths/~1things/post/requestBody/content/application~1json/schema"
    assert f"{spec}#{info.value.pointer}" in message


def test_missing_file(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere.yaml"
    with pytest.raises(SpecError, match="file not found") as info:
        load_openapi(missing)
    assert str(missing) in str(info.value)


def test_missing_external_file_names_the_ref_and_where(tmp_path: Path) -> None:
    spec = _write(tmp_path / "root.yaml", MINIMAL + "paths:\n  /things:\n    $ref: items/things.yaml\n")
    with pytest.raises(SpecError) as info:
        load_openapi(spec)
    message = str(info.value)
    assert "items/things.yaml" in message and "file not found" in message
    assert info.value.source == str(spec)
    assert info.value.pointer == "/paths/~1things"


def test_directory_without_spec(tmp_path: Path) -> None:
    _write(tmp_path / "fragment.yaml", "type: object\nproperties: {a: {type: string}}\n")
    with pytest.raises(SpecError, match="no OpenAPI/Swagger document found") as info:
        load_openapi(tmp_path)
    assert str(tmp_path) in str(info.value)


def test_one_bad_spec_fails_the_whole_directory(tmp_path: Path) -> None:
    _write(tmp_path / "good.yaml", MINIMAL + "paths: {}\n")
    _write(tmp_path / "bad.yaml", MINIMAL + "paths:\n  /x: {$ref: '#/nope'}\n")
    with pytest.raises(SpecError, match="dangling"):
        load_openapi(tmp_path)


def test_ref_loop_is_an_error_not_a_hang(tmp_path: Path) -> None:
    spec = _write(
        tmp_path / "loop.yaml",
        MINIMAL
        + "paths:\n  /x:\n    $ref: '#/components/pathItems/A'\n"
        + "components:\n  pathItems:\n    A: {$ref: '#/components/pathItems/B'}\n"
        + "    B: {$ref: '#/components/pathItems/A'}\n",
    )
    with pytest.raises(SpecError, match=r"\$ref loop"):
        load_openapi(spec)


def test_spec_errors_are_loader_errors() -> None:
    assert issubclass(SpecError, LoaderError)
