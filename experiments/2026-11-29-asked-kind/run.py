"""Can the asked operation kind be learned from the question's vector? Dev only.

    python experiments/2026-11-29-asked-kind/run.py WRITTEN_ALL POOLS

``WRITTEN_ALL`` is ``make corpus``'s ``written-all.jsonl.gz`` (corpus APIs only; the held-out
APIs are not in it). Each pair's label is the kind the graph builder gives its endpoint
(``graph/build/kinds.classify`` on the method, path, operationId and summary of its card). A
multinomial logistic regression on the shipped encoder's question vectors learns it.

``POOLS`` is ``../2026-11-29-ranker-features/run.py``'s ``examples.pkl``: the dev questions with
their candidate pools (validation and the eight training sets). On them, the script compares the
classifier with the verb table's kind (``rag/question/intent.analyse_question``) against the
kind of the expected endpoint. It then asks whether "no candidate of the matched resource has the
predicted kind" tells unanswerable questions from answerable ones.
"""

from __future__ import annotations

import gzip
import json
import pickle
import sys
from collections import Counter
from pathlib import Path
from types import SimpleNamespace

import numpy as np
from sklearn.linear_model import LogisticRegression

from apiatlas.evals.encoder.quick import onnx_embed
from apiatlas.graph.build.kinds import classify
from apiatlas.graph.signatures import endpoint_key
from apiatlas.rag.question.intent import analyse_question
from apiatlas.rag.ranking.features import FEATURES

VALIDATION = ("docusign", "figma", "intercom")


def card_kind(endpoint: str, card: str) -> str:
    method, path = endpoint.split(" ", 1)
    fields = dict(line.split(": ", 1) for line in card.splitlines()[1:] if ": " in line)
    return classify(SimpleNamespace(method=method, path=path,
                                    operation_id=fields.get("Operation", ""),
                                    summary=fields.get("Summary", "")))


def main() -> None:
    with gzip.open(sys.argv[1], "rt", encoding="utf-8") as f:
        pairs = [json.loads(line) for line in f]
    embed = onnx_embed(None)
    x = embed([p["query"] for p in pairs])
    y = [card_kind(p["endpoint"], p["positive"]) for p in pairs]
    print("training labels:", dict(Counter(y).most_common()))
    model = LogisticRegression(max_iter=2000).fit(x, y)
    _, dev_plain, _, plain = pickle.loads(Path(sys.argv[2]).read_bytes())
    res, kind_any = FEATURES.index("resource_match"), FEATURES.index("kind_any")
    for label, examples in (("training dev sets", dev_plain), ("validation", plain)):
        q = embed([e.case.question for e in examples])
        predicted = model.predict(q)
        right = {"classifier": 0, "verb table": 0}
        scored = 0
        table = Counter()
        for e, kind in zip(examples, predicted):
            subject = [r for r, v in zip(e.pool.refs, e.pool.vectors) if v[res] >= 0.99]
            lacks = bool(subject) and all(r.kind != kind for r in subject)
            table[(e.case.answerable, "resource matched" if subject else "no resource",
                   "lacks predicted kind" if lacks else "has it")] += 1
            if not e.case.answerable:
                continue
            expected = [r.kind for r in e.pool.refs
                        if endpoint_key(r.signature) in set(e.case.expected)]
            if not expected:
                continue
            scored += 1
            right["classifier"] += kind == expected[0]
            asked = analyse_question(e.case.question).kinds
            right["verb table"] += bool(asked) and asked[0] == expected[0]
        print(f"\n{label}: kind of the first expected endpoint found in the pool, {scored} "
              "answerable questions")
        for name, n in right.items():
            print(f"  {name}: {n} right ({n / max(1, scored):.3f})")
        for key, n in sorted(table.items()):
            print(f"  {'answerable' if key[0] else 'unanswerable'}, {key[1]}, {key[2]}: {n}")


if __name__ == "__main__":
    main()
