"""Hostile specs fail with a clear error naming the file and the limit, never a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiatlas.errors import SpecError
from apiatlas.loaders import limits
from apiatlas.loaders.openapi import load_openapi
from tests.unit.loaders import hostile_specs as hostile


@pytest.mark.parametrize("write", [hostile.deep_json, hostile.deep_yaml])
def test_deep_nesting_is_refused_by_name(tmp_path: Path, write) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path)
    with pytest.raises(SpecError, match="nested more than 100 levels") as e:
        load_openapi(path)
    assert e.value.source == str(path)


def test_nesting_just_under_the_limit_loads(tmp_path: Path) -> None:
    path = hostile.deep_json(tmp_path, levels=limits.MAX_DEPTH - 2)
    assert [e.key for e in load_openapi(path)[0].endpoints] == ["GET /things"]


def test_a_yaml_alias_bomb_is_refused_without_expanding_it(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="YAML aliases are expanded") as e:
        load_openapi(hostile.alias_bomb(tmp_path))
    assert e.value.source.endswith("bomb.yaml")


def test_an_alias_inside_itself_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="refers to a node that contains it"):
        load_openapi(hostile.alias_loop(tmp_path))


def test_huge_strings_are_cut_and_enormous_enums_trimmed(tmp_path: Path) -> None:
    spec = load_openapi(hostile.huge_texts(tmp_path))[0]
    endpoint = spec.endpoints[0]
    assert endpoint.description.startswith("Creates a thing.")
    assert len(endpoint.description) <= limits.MAX_TEXT_CHARS + 1
    assert any("longer than 100,000 characters were cut" in w.message for w in spec.warnings)
    body = endpoint.request_body
    assert body is not None
    color = next(f for f in body.fields if f.name == "color")
    assert color.enum == [f"c{i}" for i in range(limits.MAX_ENUM_VALUES)]


def test_a_document_over_the_size_limit_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = hostile.many_refs(tmp_path, n=30)
    monkeypatch.setattr(limits, "MAX_DOCUMENT_BYTES", 1024)
    with pytest.raises(SpecError, match=r"over the 1,024-byte limit") as e:
        load_openapi(path)
    assert e.value.source == str(path)


def test_ref_resolutions_are_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = hostile.many_refs(tmp_path, n=50)
    assert load_openapi(path)[0].endpoints  # a long chain is fine under the default limit
    monkeypatch.setattr("apiatlas.loaders.refs.MAX_REF_RESOLUTIONS", 10)
    with pytest.raises(SpecError, match=r"more than 10 \$ref resolutions") as e:
        load_openapi(path)
    assert e.value.source == str(path)
