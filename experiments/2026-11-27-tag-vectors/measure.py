"""A dense tag feature for the ranker, measured on dev (nothing in the library or the artifact
changes). Per candidate: the cosine between the question's vector and the vector of its tags'
names and descriptions (``"<tag>. <description>"`` joined, at most 600 characters), and that
cosine's gap to the pool's best; the tags' words already feed the lexical ``tag`` field, and
their names the card's head.

    python experiments/2026-11-26-ranker-features/measure.py pools WORK   # the pools
    python experiments/2026-11-27-tag-vectors/measure.py WORK             # about 2 min

Scored like ``../2026-11-26-ranker-features/``: dev out of fold by API, validation (DocuSign,
Figma, Intercom) by the ranker of all dev, with the answer decision and always answering. No
test set is read.
"""

from __future__ import annotations

import importlib.util
import pickle
import sys
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings

from apiatlas.config import Settings
from apiatlas.evals import train as T
from apiatlas.evals.train import Example
from apiatlas.graph.sqlite.store import SqliteGraphStore
from apiatlas.rag.runtime.embeddings import load_embeddings

_RANKER_FEATURES = Path(__file__).resolve().parents[1] / "2026-11-26-ranker-features"
_SPEC = importlib.util.spec_from_file_location("ranker_features", _RANKER_FEATURES / "measure.py")
RF = importlib.util.module_from_spec(_SPEC)  # type: ignore[arg-type]
_SPEC.loader.exec_module(RF)  # type: ignore[union-attr]
TAG_CHARS = 600


def tag_vectors(names: list[str], embeddings: Embeddings
                ) -> dict[str, dict[str, np.ndarray | None]]:
    """Dataset -> endpoint key -> the vector of its tags' text (``None`` without tags)."""
    out: dict[str, dict[str, np.ndarray | None]] = {}
    for name in names:
        graph = SqliteGraphStore(T.HOMES / name / "graph.sqlite")
        described = {(n.props.get("api"), n.props.get("name")): n.props.get("description", "")
                     for n in graph.nodes(name, "Tag")}
        endpoints = graph.nodes(name, "Endpoint")
        graph.close()
        texts = {}
        for node in endpoints:
            api = node.props.get("api")
            parts = [f"{t}. {described.get((api, t), '')}" for t in node.props.get("tags", [])]
            texts[node.key] = " ".join(parts).strip()[:TAG_CHARS]
        unique = sorted({t for t in texts.values() if t})
        vectors = dict(zip(unique, np.array(embeddings.embed_documents(unique)))) if unique else {}
        out[name] = {key: vectors.get(text) for key, text in texts.items()}
        print(f"{name}: {len(texts)} endpoints, {len(unique)} distinct tag texts", flush=True)
    return out


def main(work: Path) -> None:
    with (work / "pools.pkl").open("rb") as f:
        pools = pickle.load(f)
    dev, val = pools["dev"], pools["val"]
    embeddings = load_embeddings(Settings())
    tags = tag_vectors(sorted({e.dataset for e in dev + val}), embeddings)
    questions = sorted({e.case.question for e in dev + val})
    asked = dict(zip(questions, np.array(embeddings.embed_documents(questions))))

    def table(e: Example) -> np.ndarray:
        q = asked[e.case.question]
        cosines = []
        for ref in e.pool.refs:
            v = tags[e.dataset].get(ref.key)
            cosines.append(float(q @ v) if v is not None else 0.0)
        t = np.array(cosines).reshape(-1, 1)
        return np.hstack([t, t.max(axis=0, keepdims=True) - t])

    RF.score(dev, val, "shipped features")
    for label, columns in (("tag vector", (0,)), ("tag vector + gap", (0, 1))):
        RF.score(RF.with_columns(dev, table, columns), RF.with_columns(val, table, columns), label)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
