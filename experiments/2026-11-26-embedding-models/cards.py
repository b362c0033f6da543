"""Rank every endpoint card of each dev API by its similarity to each answerable question, per
embedding model: top1 and recall@5 of the expected endpoints, card vectors alone (no ranker, no
adapter). Reads the card texts of the dev homes `make train` keeps (.apiatlas/train); run from
the repository root after `make train` and `./fetch.sh`:

    python experiments/2026-11-26-embedding-models/cards.py [MODELS_DIR]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from onnx_model import OnnxSentenceModel  # noqa: E402

from apiatlas.atlas import ApiAtlas  # noqa: E402
from apiatlas.config import Settings  # noqa: E402
from apiatlas.evals.dataset import load_dataset  # noqa: E402
from apiatlas.evals.train import DATASETS, HOMES, VALIDATION  # noqa: E402
from apiatlas.rag.retrieval.dense import load_card_texts  # noqa: E402
from apiatlas.rag.runtime.embeddings import load_embeddings  # noqa: E402

TRAINED = ("box", "kubernetes", "openai", "sample", "sendgrid", "slack", "twilio", "xero")


def main() -> None:
    folder = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).parent / "models")
    models = {
        "all-MiniLM-L6-v2 (shipped)": load_embeddings(Settings()),
        "bge-small-en-v1.5": OnnxSentenceModel(folder, "bge-small-en-v1.5"),
        "bge-small-en-v1.5, no query prefix": OnnxSentenceModel(folder, "bge-small-en-v1.5", ""),
        "e5-small-v2": OnnxSentenceModel(folder, "e5-small-v2"),
    }
    scores: dict[tuple[str, str], tuple[float, float]] = {}
    for name in (*TRAINED, *sorted(VALIDATION)):
        dataset = load_dataset(DATASETS / "dev" / f"{name}.yaml")
        with ApiAtlas(Settings(home=HOMES / name, project=name)) as atlas:
            texts = load_card_texts(atlas.vector_store, name)
        endpoints = [f"{method} {path}" for _, method, path in texts]
        for label, model in models.items():
            cards = np.asarray(model.embed_documents(list(texts.values())))
            top1, recall = [], []
            for case in dataset.cases:
                if not case.answerable or not case.expected_endpoints:
                    continue
                order = np.argsort(-(cards @ np.asarray(model.embed_query(case.question))))
                expected = set(case.expected_endpoints)
                top1.append(endpoints[order[0]] in expected)
                recall.append(len(expected & {endpoints[i] for i in order[:5]}) / len(expected))
            scores[name, label] = (float(np.mean(top1)), float(np.mean(recall)))
            print(f"{name:11s} {label:36s} top1 {scores[name, label][0]:.3f} "
                  f"recall@5 {scores[name, label][1]:.3f}", flush=True)
    for split, names in (("dev, trained on", TRAINED), ("validation", sorted(VALIDATION))):
        for label in models:
            top1 = np.mean([scores[n, label][0] for n in names])
            recall = np.mean([scores[n, label][1] for n in names])
            print(f"{split:16s} {label:36s} mean top1 {top1:.3f} recall@5 {recall:.3f}")


if __name__ == "__main__":
    main()
