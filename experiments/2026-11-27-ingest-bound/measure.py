"""What bounds issue 12's ingest ratio on Square: the embedding time of what an apiatlas ingest
embeds (card heads, names, ``about`` texts) against the yardstick's chunks, with the same model
object in one process, so that only the texts differ.

    python experiments/2026-11-27-ingest-bound/measure.py HOME [ROUNDS]

``HOME`` holds an ingested Square project named ``default`` (``apiatlas ingest --home HOME
--openapi ../shared/data/square/spec/api.json``); its graph gives the endpoints' name and
``about`` texts. Each round embeds the four sets in turn. About 3 min a round on a 2-core AVX2
machine.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from langchain_text_splitters import RecursiveCharacterTextSplitter

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.loaders.cards import CARD_TOKENS, endpoint_documents
from apiatlas.loaders.openapi import load_openapi
from apiatlas.rag.ranking.fields import about_text, name_text

SPEC = Path(__file__).resolve().parents[3] / "shared" / "data" / "square" / "spec" / "api.json"


def main(home: Path, rounds: int) -> None:
    atlas = ApiAtlas(Settings(home=home))
    (spec,) = load_openapi(SPEC)
    documents = endpoint_documents(spec, project="default")
    endpoints = atlas.graph.nodes("default", "Endpoint")
    texts = {
        "cards": [d.page_content for d in
                  atlas.splitter.compact_documents(documents, max_tokens=CARD_TOKENS)],
        "names": [name_text(n) for n in endpoints],
        "abouts": [about_text(n) for n in endpoints],
        "yardstick": RecursiveCharacterTextSplitter(chunk_size=1000, chunk_overlap=100)
        .split_text(SPEC.read_text(encoding="utf-8")),
    }
    print(", ".join(f"{name} {len(group)}" for name, group in texts.items()), "texts")
    atlas.embeddings.embed_documents(texts["cards"][:16])  # the session's first runs
    seconds: dict[str, list[float]] = {name: [] for name in texts}
    for _ in range(rounds):
        for name, group in texts.items():
            started = time.perf_counter()
            atlas.embeddings.embed_documents(group)
            seconds[name].append(time.perf_counter() - started)
    for name, values in seconds.items():
        print(name, " ".join(f"{v:.1f}" for v in values), "s")
    yardstick = min(seconds["yardstick"])
    for name in ("cards", "names", "abouts"):
        print(f"{name} / yardstick embedding: {min(seconds[name]) / yardstick:.3f}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 1)
