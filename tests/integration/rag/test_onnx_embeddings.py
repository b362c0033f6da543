"""The export recipe gives sentence-transformers' vectors (checked on the base MiniLM, which has
torch weights), and the packaged encoder, exported by the same recipe, answers without torch."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from apiatlas.rag.runtime import onnx_minilm
from apiatlas.rag.runtime.embeddings import torch_embeddings

TEXTS = [
    "What endpoints can I use to create a location?",
    "delete a customer",
    "POST /v2/locations\nOperation: CreateLocation\nSummary: Creates a location.",
    "word " * 600,  # past the 256-token window: both truncate
    "",
]


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    cache = tmp_path_factory.mktemp("model-cache")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("APIATLAS_MODEL_CACHE", str(cache))
        path = onnx_minilm.onnx_path(onnx_minilm.base_model_dir())
        again = onnx_minilm.onnx_path(onnx_minilm.base_model_dir())
    assert path == again and path.parent == cache
    assert path.name.startswith("minilm-") and path.stat().st_size > 50_000_000
    return path


def test_export_matches_sentence_transformers(exported: Path) -> None:
    base = onnx_minilm.base_model_dir()
    onnx = onnx_minilm.OnnxEmbeddings(exported, base)
    got = np.array(onnx.embed_documents(TEXTS))
    want = np.array(torch_embeddings(base).embed_documents(TEXTS))
    assert got.shape == (len(TEXTS), 384)
    assert (got * want).sum(axis=1).min() > 0.9999
    # Batched by length, returned in input order; one text alone gives the same vector.
    assert np.allclose(onnx.embed_query(TEXTS[2]), got[2], atol=1e-5)
    # Its threads stop spinning when a run is over, leaving the cores to the rest of the answer.
    options = onnx._session.get_session_options()
    assert options.get_session_config_entry("session.force_spinning_stop") == "1"


@pytest.mark.parametrize("which", ["export", "packaged"])
def test_export_fuses_each_layer_into_onnx_runtime_operators(exported: Path, which: str) -> None:
    import onnx

    path = exported if which == "export" else onnx_minilm.onnx_path()
    graph = onnx.load(str(path)).graph
    ops = Counter(node.op_type for node in graph.node)
    # MiniLM-L6 has six layers: one fused attention and one fused GELU each, and no attention
    # left as loose MatMul/Softmax nodes (the SDPA trace fused none of them).
    assert ops["Attention"] == 6 and ops["BiasGelu"] == 6
    assert ops["Softmax"] == 0 and ops["EmbedLayerNormalization"] == 1
    if which == "packaged":  # weights stored as float16, each cast to float32 once at load
        halves = {i.name for i in graph.initializer if i.data_type == onnx.TensorProto.FLOAT16}
        casts = [n for n in graph.node if n.op_type == "Cast" and n.input[0] in halves]
        assert len(casts) == len(halves) > 30


def test_a_question_in_a_fresh_process_never_imports_torch(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from apiatlas.rag.runtime import onnx_minilm\n"
        "e = onnx_minilm.OnnxEmbeddings(onnx_minilm.onnx_path(), onnx_minilm.model_dir())\n"
        "assert len(e.embed_query('create a location')) == 384\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') "
        "if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert out.stdout.strip() == "[]"
