"""Ship a trained encoder: ONNX export, weights stored as float16, provenance.

    python -m apiatlas.evals.encoder.export MODEL_FOLDER --record TRAIN_JSON
        [--corpus .apiatlas/corpus/provenance.json] [--scores SCORES_JSON] [--target DIR]

The folder's model is exported with the product's recipe (``onnx_minilm.export_onnx``: mean
pooling and normalisation inside the graph, attention fused). Its weight matrices are then stored
as float16, each behind a Cast to float32, which ONNX Runtime folds when it loads the model: the
file is half the size and the arithmetic stays float32. ``tokenizer.json`` is copied beside it,
and ``provenance.json`` records the corpus, the held-out list, the recipe and the figures.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from apiatlas.evals.encoder.heldout import heldout_sha256
from apiatlas.files import sha256_of
from apiatlas.rag.runtime.onnx_minilm import export_onnx

TARGET = Path(__file__).resolve().parents[2] / "apiatlas" / "models" / "encoder"
HALF_MIN_ELEMENTS = 1024
"""Initializers this large or larger are stored as float16 (the weight matrices and embeddings);
smaller ones (biases, layer-norm scales) stay float32."""


def store_half(source: Path, target: Path) -> None:
    """``source`` with its large float32 initializers stored as float16 behind a Cast."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    model = onnx.load(str(source))
    graph = model.graph
    kept, casts = [], []
    for init in graph.initializer:
        if init.data_type == TensorProto.FLOAT and int(np.prod(init.dims)) >= HALF_MIN_ELEMENTS:
            half = numpy_helper.from_array(
                numpy_helper.to_array(init).astype(np.float16), f"{init.name}__half")
            kept.append(half)
            casts.append(helper.make_node("Cast", [half.name], [init.name],
                                          to=TensorProto.FLOAT, name=f"{init.name}__cast"))
        else:
            kept.append(init)
    del graph.initializer[:]
    graph.initializer.extend(kept)
    nodes = list(graph.node)
    del graph.node[:]
    graph.node.extend(casts + nodes)
    onnx.checker.check_model(model)
    onnx.save(model, str(target))


def ship(folder: Path, target: Path, provenance: dict[str, Any]) -> dict[str, Any]:
    """Export ``folder``'s model into ``target`` (``model.onnx``, ``tokenizer.json``,
    ``provenance.json``); returns the provenance written."""
    target.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        full = Path(tmp) / "full.onnx"
        export_onnx(folder, full)
        store_half(full, target / "model.onnx")
    shutil.copy2(folder / "tokenizer.json", target / "tokenizer.json")
    record = {
        **provenance,
        "heldout_sha256": heldout_sha256(),
        "files": {name: sha256_of(target / name) for name in ("model.onnx", "tokenizer.json")},
    }
    (target / "provenance.json").write_text(json.dumps(record, indent=1) + "\n",
                                            encoding="utf-8")
    return record


def provenance(record: dict[str, Any], corpus: dict[str, Any],
               scores: dict[str, Any] | None) -> dict[str, Any]:
    """What ``provenance.json`` records: the corpus (its package, integrity, counts and what the
    held-out rule removed), the written questions (round one's and every version's), the
    training run (with its base's run, ``base_recipe``, when it had one) and, when given, the
    figures that chose it."""
    found: dict[str, Any] = {
        "model": "all-MiniLM-L6-v2 fine-tuned for API retrieval (make corpus, make train-encoder)",
        "corpus": {k: corpus[k] for k in (
            "package", "version", "integrity", "cap_per_provider", "seed", "specs",
            "operations", "pairs", "providers", "pairs_by_source", "operations_skipped")},
        "corpus_heldout_removed": sorted({r["as"] for r in corpus["removed_heldout"]}),
        "corpus_heldout_removed_specs": len(corpus["removed_heldout"]),
        "written_questions": corpus.get("written"),
        "written_questions_all": corpus.get("written_all"),
        "recipe": record,
        "command": "make corpus && make train-encoder",
    }
    if scores:
        found["selection"] = scores
    return found


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--target", type=Path, default=TARGET)
    parser.add_argument("--record", type=Path, required=True, help="the run's train.json")
    parser.add_argument("--corpus", type=Path, default=Path(".apiatlas/corpus/provenance.json"))
    parser.add_argument("--scores", type=Path, default=None,
                        help="a JSON file of the figures that chose this model, recorded as is")
    args = parser.parse_args(argv)

    def read(path: Path) -> dict[str, Any]:
        return json.loads(path.read_text(encoding="utf-8"))

    record = provenance(read(args.record), read(args.corpus),
                        read(args.scores) if args.scores else None)
    print(json.dumps(ship(args.folder, args.target, record)["files"], indent=1))


if __name__ == "__main__":
    main()
