"""What each hand-set limit of the endpoint cards changes, on the dev APIs (issue 35).

    .venv/bin/python experiments/2026-11-29-card-limits/measure.py [OUT.json]

A card is embedded only up to its first ``CARD_TOKENS`` tokens (its head); the rest of its text is
kept for keyword search and display. For each limit of ``loaders/cards.py``, the cards of every
dev API are built again with that limit lifted (every other limit as shipped), and the script
counts the cards whose embedded head changes and those whose whole text changes. A limit that
changes no head changes no vector. Dev datasets only; no question is read.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from apiatlas.evals.homes import dataset_files
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.train import DEV
from apiatlas.loaders import cards
from apiatlas.loaders.openapi import load_openapi
from apiatlas.loaders.splitting import TokenSplitter
from apiatlas.rag.runtime.embeddings import LOCAL_MAX_TOKENS, local_tokenizer

LIMITS = ("DESCRIPTION_LIMIT", "_FIELD_LIMIT", "_LINE_LIMIT", "_EXAMPLE_LIMIT",
          "_CONTENT_TYPES", "_ENUM_VALUES")
LIFTED = 10**9


def texts(specs: list) -> list[str]:
    return [cards.card_text(spec, endpoint) for spec in specs for endpoint in spec.endpoints]


def main(out: Path | None) -> None:
    splitter = TokenSplitter(local_tokenizer(), max_tokens=LOCAL_MAX_TOKENS)
    head = lambda text: splitter.head(text, cards.CARD_TOKENS)[0]  # noqa: E731
    results: dict[str, dict[str, int]] = {}
    seen: set[str] = set()
    for path in dataset_files(DEV):
        dataset = load_dataset(path)
        key = "|".join(dataset.sources.openapi)
        if key in seen:  # sample-memory reads the sample API again
            continue
        seen.add(key)
        specs = [s for source in dataset.sources.openapi for s in load_openapi(source)]
        shipped = texts(specs)
        heads = [head(t) for t in shipped]
        row = {"cards": len(shipped), "cut_before_embedding": sum(t != h for t, h in zip(shipped, heads))}
        for name in LIMITS:
            kept = getattr(cards, name)
            setattr(cards, name, LIFTED)
            try:
                lifted = texts(specs)
            finally:
                setattr(cards, name, kept)
            row[f"{name}:text"] = sum(a != b for a, b in zip(shipped, lifted))
            row[f"{name}:head"] = sum(h != head(b) for h, b in zip(heads, lifted))
        results[path.stem] = row
        print(path.stem, row, flush=True)
    total = {k: sum(r[k] for r in results.values()) for k in next(iter(results.values()))}
    results["all"] = total
    print("all", total)
    if out:
        out.write_text(json.dumps(results, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else None)
