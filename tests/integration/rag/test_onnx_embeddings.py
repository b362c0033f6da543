"""The ONNX export of the packaged MiniLM gives sentence-transformers' vectors, without torch."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from apiatlas.rag.retrieval import onnx_minilm
from apiatlas.rag.retrieval.embeddings import torch_embeddings

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
        path = onnx_minilm.onnx_path()
        again = onnx_minilm.onnx_path()
    assert path == again and path.parent == cache
    assert path.name.startswith("minilm-") and path.stat().st_size > 50_000_000
    return path


def test_export_matches_sentence_transformers(exported: Path) -> None:
    onnx = onnx_minilm.OnnxEmbeddings(exported, onnx_minilm.model_dir())
    got = np.array(onnx.embed_documents(TEXTS))
    want = np.array(torch_embeddings().embed_documents(TEXTS))
    assert got.shape == (len(TEXTS), 384)
    assert (got * want).sum(axis=1).min() > 0.9999
    # Batched by length, returned in input order; one text alone gives the same vector.
    assert np.allclose(onnx.embed_query(TEXTS[2]), got[2], atol=1e-5)
    # Its threads stop spinning when a run is over, leaving the cores to the rest of the answer.
    options = onnx._session.get_session_options()
    assert options.get_session_config_entry("session.force_spinning_stop") == "1"


def test_export_fuses_each_layer_into_onnx_runtime_operators(exported: Path) -> None:
    import onnx

    ops = Counter(node.op_type for node in onnx.load(str(exported)).graph.node)
    # MiniLM-L6 has six layers: one fused attention and one fused GELU each, and no attention
    # left as loose MatMul/Softmax nodes (the SDPA trace fused none of them).
    assert ops["Attention"] == 6 and ops["BiasGelu"] == 6
    assert ops["Softmax"] == 0 and ops["EmbedLayerNormalization"] == 1


def test_a_question_in_a_fresh_process_never_imports_torch(exported: Path, tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from apiatlas.rag.retrieval import onnx_minilm\n"
        "from pathlib import Path\n"
        f"e = onnx_minilm.OnnxEmbeddings(Path({str(exported)!r}), onnx_minilm.model_dir())\n"
        "assert len(e.embed_query('create a location')) == 384\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') "
        "if m in sys.modules))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=tmp_path
    )
    assert out.stdout.strip() == "[]"
