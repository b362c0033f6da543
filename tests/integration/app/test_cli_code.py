"""``apiatlas ingest --code`` and ``apiatlas code report`` on the sample API and its team's code."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from apiatlas.atlas import ApiAtlas
from apiatlas.cli import main
from apiatlas.config import Settings
from apiatlas.sample import write_sample_api

API = "parcelroute-logistics-api"


@pytest.fixture(scope="module")
def sample(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_sample_api(tmp_path_factory.mktemp("sample"))


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, sample: Path) -> Path:
    home = tmp_path_factory.mktemp("code-home")
    args = ["ingest", "--home", str(home), "--project", "shop",
            "--openapi", str(sample / "openapi.yaml"), "--code", str(sample / "code")]  # fmt: skip
    assert main(args) == 0
    return home


def report(home: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:
    capsys.readouterr()
    assert main(["code", "report", "--home", str(home), "--project", "shop", "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)


def test_the_json_report_lists_every_site_with_the_contract_keys(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = report(home, capsys)
    sites = {(s["file"], s["line"]): s for s in found["sites"]}
    assert set(found["sites"][0]) >= {"file", "line", "endpoint", "api", "confidence", "matched_by"}
    assert {place: s["endpoint"] for place, s in sites.items()} == {
        ("shipping/client.py", 15): "POST /v2/locations",
        ("shipping/client.py", 19): "GET /v1/locations/{location_id}",
        ("shipping/client.py", 22): "POST /v2/quotes/{quote_id}/accept",
        ("shipping/client.py", 25): "POST /v2/shipments/{shipment_id}/cancel",
        ("shipping/client.py", 28): None,  # /v2/invoices: on the API's host, not in its spec
        ("web/quotes.ts", 5): "POST /v2/quotes",
        ("web/quotes.ts", 13): "GET /v2/shipments/{shipment_id}/tracking-events",
        ("worker/webhooks.go", 12): "POST /v2/webhooks/{webhook_id}/test",
    }
    assert all(s["api"] == API and 0.0 <= s["confidence"] <= 1.0 for s in sites.values())
    legacy = sites[("shipping/client.py", 19)]
    assert legacy["deprecated"] and legacy["replacement"] == ["GET /v2/locations/{location_id}"]
    assert legacy["function"] == "Parcelroute.legacy_location" and legacy["language"] == "python"
    assert found["counts"] == {"sites": 8, "unknown": 1, "deprecated": 1, "endpoints": 7}


def test_the_markdown_report_leads_with_deprecated_and_unknown_calls(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["code", "report", "--home", str(home), "--project", "shop"]) == 0
    out = capsys.readouterr().out
    assert "8 sites in 3 files: 7 call 7 endpoints, 1 call an API but no endpoint" in out
    deprecated, unknown = out.index("## Deprecated"), out.index("## Calls not in the spec")
    assert deprecated < unknown < out.index("## Endpoints called")
    assert "use `GET /v2/locations/{location_id}` instead" in out
    assert "`shipping/client.py:28`" in out and "/v2/invoices" in out


def test_an_unknown_api_is_an_error_listing_the_apis(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["code", "report", "--home", str(home), "--project", "shop", "--api", "parcel"]) == 2
    out = capsys.readouterr()
    assert "no API 'parcel' in project 'shop'" in out.out + out.err and API in out.out + out.err


def test_a_rescan_parses_only_changed_files_and_a_deleted_file_takes_its_sites(
    sample: Path, tmp_path: Path
) -> None:
    code = tmp_path / "code"
    shutil.copytree(sample / "code", code)
    with ApiAtlas(Settings(home=tmp_path / "home", project="p")) as atlas:
        first = atlas.ingest(openapi=[sample / "openapi.yaml"], code=[code])
        assert (first.code_files, first.code_parsed, first.code_sites) == (3, 3, 8)
        again = atlas.ingest(openapi=[sample / "openapi.yaml"], code=[code])
        assert (again.code_files, again.code_parsed, again.code_sites) == (3, 0, 8)
        (code / "worker" / "webhooks.go").unlink()
        after = atlas.ingest(code=[code])
        assert (after.code_files, after.code_parsed, after.code_sites) == (2, 0, 7)
        assert {s.file for s in atlas.code_report().sites} == {"shipping/client.py", "web/quotes.ts"}


def test_a_missing_code_folder_exits_2_naming_it_and_keeps_the_graph(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = report(home, capsys)
    missing = tmp_path / "nope"
    assert main(["ingest", "--home", str(home), "--project", "shop", "--code", str(missing)]) == 2
    out = capsys.readouterr()
    assert str(missing) in out.out + out.err
    assert report(home, capsys) == before
