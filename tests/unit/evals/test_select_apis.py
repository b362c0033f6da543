"""The draw of corpus APIs the testers write questions for (evals/encoder/select_apis.py)."""

from __future__ import annotations

import json
from pathlib import Path

from apiatlas.evals.encoder.select_apis import main


def _spec(folder: Path, name: str, provider: str, ops: int, *, summaries: bool = True,
          title: str = "") -> None:
    paths = {}
    for i in range(ops):
        op: dict[str, str] = {"operationId": f"op{i}", "description": f"Does thing {i}."}
        if summaries:
            op["summary"] = f"Thing {i}"
        paths[f"/things{i}"] = {"get": op}
    spec = {"openapi": "3.0.0", "paths": paths,
            "info": {"title": title or name, "version": "1", "x-providerName": provider,
                     "x-apisguru-categories": ["tools"]}}
    (folder / f"{name}.json").write_text(json.dumps(spec), encoding="utf-8")


def _drawn(api: Path, out: Path, *extra: str) -> set[str]:
    main([str(api), str(out), "--count", "50", *extra])
    return {item["spec"] for item in json.loads((out / "index.json").read_text("utf-8"))}


def test_the_default_draw_keeps_v1s_filters(tmp_path: Path) -> None:
    api = tmp_path / "api"
    api.mkdir()
    _spec(api, "small", "small.example", 10)
    _spec(api, "large", "large.example", 200)
    _spec(api, "bare", "bare.example", 10, summaries=False)
    _spec(api, "tiny", "tiny.example", 3)
    _spec(api, "square", "squareup.com", 10, title="Square Connect API")  # held out
    _spec(api, "twin", "small.example", 10)  # a second API of a provider already drawn
    drawn = _drawn(api, tmp_path / "out")
    assert drawn in ({"small.json"}, {"twin.json"})
    listing = (tmp_path / "out" / f"{next(iter(drawn)).removesuffix('.json')}.tsv").read_text()
    assert len(listing.splitlines()) == 11  # a header and one line per operation


def test_a_wider_draw_admits_larger_and_described_apis_of_new_providers(tmp_path: Path) -> None:
    api = tmp_path / "api"
    api.mkdir()
    _spec(api, "small", "small.example", 10)
    _spec(api, "large", "large.example", 200)
    _spec(api, "huge", "huge.example", 700)
    _spec(api, "bare", "bare.example", 10, summaries=False)
    _spec(api, "twin", "small.example", 10)
    earlier = tmp_path / "v1-apis.json"
    earlier.write_text(json.dumps([{"spec": "small.json"}]), encoding="utf-8")
    drawn = _drawn(api, tmp_path / "out", "--max-ops", "600", "--described",
                   "--new-providers", str(earlier))
    assert drawn == {"large.json", "bare.json"}  # small.example is taken; huge is too large
