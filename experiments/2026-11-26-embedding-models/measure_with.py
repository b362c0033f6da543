"""`../2026-11-26-more-dev-questions/measure.py` with another local model in the packaged
MiniLM's place, in fresh dev homes (nothing in the library or the artifact changes):

    python experiments/2026-11-26-embedding-models/measure_with.py MODELS_DIR HOMES_DIR

The dev pools, out-of-fold adapters and rankers are all built and fitted with that model; the
validation sets are scored by the model trained on all of dev. No test set is read.
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from onnx_model import OnnxSentenceModel  # noqa: E402

import apiatlas.evals.train as train  # noqa: E402
import apiatlas.rag.runtime.embeddings as embeddings  # noqa: E402
from apiatlas.rag.runtime import onnx_minilm  # noqa: E402

MODELS_DIR, HOMES_DIR = Path(sys.argv[1]), Path(sys.argv[2])


class Stand(OnnxSentenceModel):
    """bge-small-en-v1.5 under the packaged model's id, so the eval homes and the adapter key
    take it for the local model."""

    def __init__(self) -> None:
        super().__init__(MODELS_DIR, "bge-small-en-v1.5")
        self.model_id = onnx_minilm.weights_id(onnx_minilm.model_dir())


embeddings._build_local = Stand
train.HOMES = HOMES_DIR
sys.argv = [str(HERE.parent / "2026-11-26-more-dev-questions" / "measure.py")]
runpy.run_path(sys.argv[0], run_name="__main__")
