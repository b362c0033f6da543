"""Embedding time of Square's 316 cards (the first 256 tokens, as ingest embeds them) with the
shipped encoder, its float32 and int8 forms (int8.py), and the cards cut at 128 tokens; and how
far each int8 vector is from the shipped one (cosine).

    .venv/bin/python experiments/2026-11-27-abstention/speed.py /tmp/q8 [ROUNDS]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

from apiatlas.loaders.cards import CARD_TOKENS, endpoint_documents
from apiatlas.loaders.openapi import load_openapi
from apiatlas.rag.runtime import onnx_minilm
from apiatlas.rag.runtime.onnx_minilm import OnnxEmbeddings, model_dir
from apiatlas.loaders.splitting import TokenSplitter
from apiatlas.rag.runtime.embeddings import local_tokenizer

SPEC = Path(__file__).resolve().parents[3] / "shared" / "data" / "square" / "spec" / "api.json"


def main(folder: Path, rounds: int) -> None:
    (spec,) = load_openapi(SPEC)
    documents = endpoint_documents(spec, project="default")
    cards = [d.page_content for d in TokenSplitter(local_tokenizer()).compact_documents(
        documents, max_tokens=CARD_TOKENS)]
    models = {"shipped": folder / "half.onnx", "float32": folder / "float32.onnx",
              "int8": folder / "int8.onnx"}
    vectors = {}
    for name, path in models.items():
        embeddings = OnnxEmbeddings(path, model_dir())
        embeddings.embed_documents(cards[:16])
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            vectors[name] = np.array(embeddings.embed_documents(cards))
            times.append(time.perf_counter() - started)
        print(f"{name}: {min(times):.2f} s (best of {rounds})", flush=True)
        if name in ("shipped", "int8"):
            onnx_minilm.MAX_TOKENS = 128
            short = OnnxEmbeddings(path, model_dir())
            onnx_minilm.MAX_TOKENS = 256
            times = []
            for _ in range(rounds):
                started = time.perf_counter()
                short.embed_documents(cards)
                times.append(time.perf_counter() - started)
            print(f"{name} at 128 tokens: {min(times):.2f} s", flush=True)
    cos = np.sum(vectors["shipped"] * vectors["int8"], axis=1)
    print(f"int8 vs shipped cosine: min {cos.min():.4f}, median {np.median(cos):.4f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 2)
