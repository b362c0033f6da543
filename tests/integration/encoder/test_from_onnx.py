"""The shipped encoder reads back from its fused ONNX graph into a trainable folder: what lets
`make train-encoder ROUND_ONE=<commit>` start round two from a shipped round one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from apiatlas.errors import UsageError
from apiatlas.evals.encoder import from_onnx
from apiatlas.rag.runtime import onnx_minilm


def test_the_shipped_encoder_reads_back_with_its_recipe(tmp_path: Path) -> None:
    folder = onnx_minilm.model_dir()
    from_onnx.main([str(tmp_path), "--onnx", str(folder / "model.onnx"),
                    "--provenance", str(folder / "provenance.json")])
    prov = json.loads((folder / "provenance.json").read_text(encoding="utf-8"))
    record = json.loads((tmp_path / "train.json").read_text(encoding="utf-8"))
    # float16 storage is the only difference between the folder and the ONNX file.
    assert record["read_back_cosine"] >= from_onnx.MIN_COSINE
    assert record["read_back_from"] == prov["files"]["model.onnx"]
    assert {k: record[k] for k in prov["recipe"]} == prov["recipe"]
    assert (tmp_path / "model" / "tokenizer.json").exists()


def test_an_onnx_file_of_another_architecture_is_refused(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "other",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
    onnx.save(helper.make_model(graph), str(tmp_path / "model.onnx"))
    with pytest.raises(UsageError, match="model.onnx: not an all-MiniLM-L6-v2 export"):
        from_onnx.convert(tmp_path / "model.onnx", tmp_path / "out")
