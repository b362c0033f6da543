"""Dense retrieval alone, question against endpoint card, for choosing among encoders quickly.

    python -m apiatlas.evals.encoder.quick build OUT.json.gz [DATASET.yaml ...]
    python -m apiatlas.evals.encoder.quick score OUT.json.gz [--model FOLDER_OR_ONNX]

``build`` loads each dataset's specs with the product's loader and writes every endpoint's card
(the text the vector store embeds) and the answerable cases; the file travels where the product
does not (a GPU machine for training), and :func:`score` needs only an embedding function.
Only dev datasets may be built (validation included): the test sets are never used to choose.
The figures are the ``dense`` plain strategy's to within the card's token cut: top1 counts
expected endpoints, ``top1_acceptable`` acceptable ones too, ``recall@5`` the expected ones in
the first five.
"""

from __future__ import annotations

import argparse
import gzip
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

Embed = Callable[[list[str]], np.ndarray]


def build(datasets: list[Path]) -> dict[str, Any]:
    """Cards and answerable cases of ``datasets`` (dev only).

    Raises:
        ValueError: A dataset is not under a ``dev`` folder.
    """
    from apiatlas.evals.dataset import load_dataset
    from apiatlas.graph.signatures import normalise_endpoint
    from apiatlas.loaders.cards import card_text
    from apiatlas.loaders.openapi import load_openapi

    found: dict[str, Any] = {}
    for path in datasets:
        if path.resolve().parent.name != "dev":
            raise ValueError(f"{path}: only dev datasets are used to choose an encoder")
        dataset = load_dataset(path)
        cards: dict[str, str] = {}
        for source in dataset.sources.openapi:
            for spec in load_openapi(source):
                for e in spec.endpoints:
                    if not e.webhook:
                        cards.setdefault(normalise_endpoint(e.key), card_text(spec, e))
        cases = [{"question": c.question, "expected": c.expected, "acceptable": c.acceptable}
                 for c in dataset.cases if c.answerable and c.expected]
        found[dataset.name] = {"cards": cards, "cases": cases}
    return found


def score(embed: Embed, data: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per dataset: ``top1``, ``top1_acceptable`` and ``recall@5`` of dense retrieval."""
    result: dict[str, dict[str, float]] = {}
    for name, item in sorted(data.items()):
        keys = list(item["cards"])
        cards = embed([item["cards"][k] for k in keys])
        questions = embed([c["question"] for c in item["cases"]])
        order = np.argsort(-(questions @ cards.T), axis=1, kind="stable")
        top1 = top1_ok = recall = 0.0
        for case, row in zip(item["cases"], order, strict=True):
            ranked = [keys[i] for i in row[:5]]
            top1 += ranked[0] in case["expected"]
            top1_ok += ranked[0] in case["expected"] or ranked[0] in case["acceptable"]
            recall += sum(e in ranked for e in case["expected"]) / len(case["expected"])
        n = max(1, len(item["cases"]))
        result[name] = {"top1": top1 / n, "top1_acceptable": top1_ok / n, "recall@5": recall / n,
                        "cases": len(item["cases"])}
    return result


def means(result: dict[str, dict[str, float]], names: tuple[str, ...]) -> dict[str, float]:
    """Mean of each metric over the datasets of ``names`` present in ``result``."""
    rows = [result[n] for n in names if n in result]
    return {m: sum(r[m] for r in rows) / max(1, len(rows))
            for m in ("top1", "top1_acceptable", "recall@5")}


def onnx_embed(model: Path | None) -> Embed:
    """An :data:`Embed` of the product's ONNX runtime: the packaged model by default, a model
    folder, or an ONNX file (with the packaged tokenizer, which every export carries)."""
    from apiatlas.rag.runtime import onnx_minilm

    if model is not None and model.is_file():
        found = onnx_minilm.OnnxEmbeddings(model, onnx_minilm.model_dir())
    else:
        found = onnx_minilm.OnnxEmbeddings(onnx_minilm.onnx_path(model),
                                           model or onnx_minilm.model_dir())
    return lambda texts: np.asarray(found.embed_documents(texts), dtype=np.float32)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("out", type=Path)
    b.add_argument("datasets", type=Path, nargs="*")
    s = sub.add_parser("score")
    s.add_argument("data", type=Path)
    s.add_argument("--model", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.command == "build":
        from apiatlas.evals.train import DATASETS
        files = args.datasets or sorted((DATASETS / "dev").glob("*.yaml"))
        data = build([f for f in files if not f.stem.startswith("sample")])
        with gzip.open(args.out, "wt", encoding="utf-8") as f:
            json.dump(data, f)
        print(f"{len(data)} datasets -> {args.out}")
        return
    with gzip.open(args.data, "rt", encoding="utf-8") as f:
        data = json.load(f)
    print(json.dumps(score(onnx_embed(args.model), data), indent=1))


if __name__ == "__main__":
    main()
