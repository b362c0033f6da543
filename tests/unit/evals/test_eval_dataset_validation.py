"""Eval datasets: endpoint normalisation and every validation error of ``load_dataset``."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiatlas.errors import UsageError
from apiatlas.evals.dataset import load_dataset
from apiatlas.graph.signatures import endpoint_key, normalise_endpoint

GOOD = """\
name: mini
description: a tiny dataset
sources:
  openapi: [spec/openapi.yaml]
  docs: [guides, "https://docs.example.com/sitemap.xml"]
cases:
  - id: c1
    question: "What endpoints can I use to create a location?"
    expected_endpoints: ["POST /v2/locations"]
    acceptable_endpoints: ["post /v2/locations/bulk/"]
    tags: [synonym]
  - id: 2
    question: "How do I create an invoice?"
    answerable: false
"""


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    (tmp_path / "spec").mkdir()
    (tmp_path / "spec" / "openapi.yaml").write_text("openapi: 3.0.3\n")
    (tmp_path / "guides").mkdir()
    return tmp_path


def write(folder: Path, text: str) -> Path:
    path = folder / "dataset.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("post /v2/locations/{id}/", "POST /v2/locations/{}"),
        ("GET /v2/locations/{location_id}", "GET /v2/locations/{}"),
        ("  delete   /Items/{a}/Parts/{b}  ", "DELETE /Items/{}/Parts/{}"),
        ("GET /", "GET /"),
        ("GET /files/{name}.json", "GET /files/{}.json"),
    ],
)
def test_normalise_endpoint_ignores_parameter_names_and_trailing_slash(
    raw: str, expected: str
) -> None:
    assert normalise_endpoint(raw) == expected


def test_normalise_endpoint_keeps_the_case_of_the_path() -> None:
    assert normalise_endpoint("get /V2/Locations") != normalise_endpoint("GET /v2/locations")


@pytest.mark.parametrize("raw", ["/v2/locations", "POST v2/locations", "FETCH /x", "POST", ""])
def test_normalise_endpoint_refuses_malformed_strings(raw: str) -> None:
    with pytest.raises(UsageError, match="METHOD /path"):
        normalise_endpoint(raw)


def test_endpoint_key_accepts_webhook_names_without_failing() -> None:
    assert endpoint_key("post newPet") == "POST newPet"
    assert endpoint_key("get /a/{x}/") == "GET /a/{}"


def test_a_good_dataset_loads_with_sources_resolved_from_its_folder(folder: Path) -> None:
    dataset = load_dataset(write(folder, GOOD))
    assert dataset.name == "mini"
    assert dataset.sources.openapi == [str((folder / "spec" / "openapi.yaml").resolve())]
    assert dataset.sources.docs == [
        str((folder / "guides").resolve()),
        "https://docs.example.com/sitemap.xml",
    ]
    first, second = dataset.cases
    assert first.expected == ["POST /v2/locations"]
    assert first.acceptable == ["POST /v2/locations/bulk"]
    assert first.tags == ["synonym"]
    assert second.id == "2" and second.answerable is False and second.expected == []


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: [unclosed\n", r"dataset\.yaml:\d+: invalid YAML"),
        ("- just\n- a list\n", "a dataset is a YAML mapping"),
        (GOOD.replace("description:", "descripton:"), r"descripton: unknown key"),
        (GOOD.replace("description:", "path: x\ndescription:"), r"path: unknown key"),
        (GOOD.replace("    tags: [synonym]", "    tag: [synonym]"), r"case 'c1': tag: unknown key"),
        (GOOD.replace("  - id: 2", "  - id: c1"), r"case 'c1': duplicate case id"),
        (
            GOOD.replace('    expected_endpoints: ["POST /v2/locations"]\n', ""),
            r"case 'c1': an answerable case needs `expected_endpoints`",
        ),
        (
            GOOD.replace("    answerable: false", "    answerable: false\n    expected_endpoints: ["
                         '"GET /v2/invoices"]'),
            r"case '2': an unanswerable case cannot expect endpoints",
        ),
        (
            GOOD.replace('["POST /v2/locations"]', '["create location"]'),
            r"case 'c1': expected_endpoints: 'create location' is not an endpoint",
        ),
        (GOOD.replace("spec/openapi.yaml", "spec/missing.yaml"), "'spec/missing.yaml' does not"),
        (GOOD.replace("name: mini", "name: 'two words'"), "name: String should match"),
        (GOOD.split("cases:")[0] + "cases: []\n", "cases: List should have at least 1 item"),
    ],
)
def test_bad_datasets_are_usage_errors_naming_the_file(
    folder: Path, text: str, message: str
) -> None:
    path = write(folder, text)
    with pytest.raises(UsageError, match=message) as caught:
        load_dataset(path)
    assert str(path) in str(caught.value)


def test_a_single_source_string_is_read_as_a_one_item_list(folder: Path) -> None:
    text = GOOD.replace("openapi: [spec/openapi.yaml]", "openapi: spec/openapi.yaml")
    dataset = load_dataset(write(folder, text))
    assert dataset.sources.openapi == [str((folder / "spec" / "openapi.yaml").resolve())]
    assert dataset.path == folder / "dataset.yaml"


def test_a_missing_dataset_file_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="no such dataset file"):
        load_dataset(tmp_path / "nope.yaml")
