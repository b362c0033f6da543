"""A sentence model from an ONNX file that outputs ``last_hidden_state`` (the exports in
langchain4j's jars), pooled and normalised here, truncating at 256 tokens like the packaged
MiniLM. Dev-only experiment code; nothing in the library imports it."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import onnxruntime as ort
from langchain_core.embeddings import Embeddings
from tokenizers import Tokenizer

from apiatlas.rag.runtime.onnx_minilm import MAX_TOKENS, embed_in_runs, padded_inputs

MODELS = {  # name: (pooling, query prefix, document prefix), as the models' cards say
    "bge-small-en-v1.5": ("cls", "Represent this sentence for searching relevant passages: ", ""),
    "e5-small-v2": ("mean", "query: ", "passage: "),
}


class OnnxSentenceModel(Embeddings):
    def __init__(self, folder: Path, name: str, query_prefix: str | None = None) -> None:
        self.pooling, prefix, self.document_prefix = MODELS[name]
        self.query_prefix = prefix if query_prefix is None else query_prefix
        options = ort.SessionOptions()
        options.add_session_config_entry("session.force_spinning_stop", "1")
        self.session = ort.InferenceSession(
            str(folder / f"{name}.onnx"), options, providers=["CPUExecutionProvider"]
        )
        self.tokenizer = Tokenizer.from_file(str(folder / f"{name}-tokenizer.json"))
        self.tokenizer.enable_truncation(MAX_TOKENS)
        self.tokenizer.no_padding()
        self.lock = threading.Lock()

    def _run(self, encoded: list) -> np.ndarray:
        feeds = padded_inputs(encoded)
        mask = feeds["attention_mask"]
        with self.lock:
            hidden = self.session.run(None, feeds)[0]
        if self.pooling == "cls":
            vectors = hidden[:, 0]
        else:
            vectors = (hidden * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        encoded = self.tokenizer.encode_batch([self.document_prefix + t for t in texts])
        return embed_in_runs(encoded, self._run)

    def embed_query(self, text: str) -> list[float]:
        return self._run(self.tokenizer.encode_batch([self.query_prefix + text]))[0].tolist()
