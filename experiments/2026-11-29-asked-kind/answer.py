"""Does the learned asked kind help the answer model abstain? Dev only.

    python experiments/2026-11-29-asked-kind/answer.py WRITTEN_ALL POOLS HOMES

``WRITTEN_ALL`` and ``POOLS`` as for ``run.py``; ``HOMES`` holds the dev datasets' ingested
homes (``make train``'s ``--homes``), read for every endpoint's resource and kind, so a
resource's kinds come from the whole graph, not only from its candidates in the pool.

The candidate probabilities are the shipped setting's (no adapter, without ``text``), out of
fold on the eight training sets as ``make train`` computes them. Each variant adds question-level
features to the answer model, which is fitted and its threshold chosen as ``make train`` does
(out of fold on the training sets); validation is scored by the model fitted on all eight.
"""

from __future__ import annotations

import gzip
import json
import pickle
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
import yaml
from sklearn.linear_model import LogisticRegression

from run import card_kind  # this folder's run.py

from apiatlas.evals.calibration import answer_threshold
from apiatlas.evals.encoder.quick import onnx_embed
from apiatlas.evals.train import (
    DISABLED, answer_rows, answers_out_of_fold, fit_candidates, fit_linear, out_of_fold,
)
from apiatlas.graph.sqlite.store import SqliteGraphStore
from apiatlas.rag.ranking.features import FEATURES
from apiatlas.rag.ranking.model import ANSWER_FEATURES, masked

RESOURCE = FEATURES.index("resource_match")


def unanswerable(folders):
    """(question, asked kind) of the unanswerable written questions with one kind tag."""
    kinds = {"create", "read", "list", "update", "delete", "action", "search"}
    for folder in folders:
        for path in sorted(Path(folder).glob("*.yaml")):
            for case in yaml.safe_load(path.read_text(encoding="utf-8"))["cases"]:
                tagged = kinds & set(case.get("tags", ()))
                if not case.get("answerable", True) and len(tagged) == 1:
                    yield case["question"], tagged.pop()


def resource_kinds(home: Path, project: str) -> dict[str, set[str]]:
    store = SqliteGraphStore(home / "graph.sqlite")
    try:
        out: dict[str, set[str]] = defaultdict(set)
        for node in store.nodes(project, "Endpoint"):
            out[str(node.props.get("resource", ""))].add(str(node.props.get("kind", "")))
        return dict(out)
    finally:
        store.close()


def extra(example, probs, p_kind: dict[str, float], kinds: dict[str, set[str]]) -> dict:
    """Candidate question-level features from the learned kind distribution ``p_kind``."""
    refs = example.pool.refs
    if not refs:
        return {"asked_top": 0.0, "asked_top_resource": 0.0, "asked_subject": 1.0,
                "asked_top5": 0.0}
    order = sorted(range(len(probs)), key=lambda i: -probs[i])
    top = refs[order[0]]
    mass = lambda resources: sum(  # noqa: E731
        p for k, p in p_kind.items() if any(k in kinds.get(r, ()) for r in resources))
    subject = {r.resource for r, v in zip(refs, example.pool.vectors) if v[RESOURCE] >= 0.99}
    return {
        "asked_top": p_kind.get(top.kind, 0.0),
        "asked_top_resource": mass({top.resource}),
        "asked_subject": mass(subject) if subject else 1.0,
        "asked_top5": max(p_kind.get(refs[i].kind, 0.0) for i in order[:5]),
    }


def evaluate(train_ex, train_rows, val_ex, val_rows, names) -> str:
    answerable = np.array([e.case.answerable for e in train_ex]).astype(int)
    p_oof = answers_out_of_fold(train_ex, train_rows, names)
    threshold = answer_threshold(p_oof, list(answerable.astype(bool)))
    model = fit_linear(train_rows, answerable, names)
    line = []
    for label, exs, p in (
        ("training sets (out of fold)", train_ex, p_oof),
        ("validation", val_ex, [model.probability(r) for r in val_rows]),
    ):
        un = [pi < threshold for e, pi in zip(exs, p) if not e.case.answerable]
        an = [pi < threshold for e, pi in zip(exs, p) if e.case.answerable]
        line.append(f"{label}: abstained {sum(un)}/{len(un)} ({sum(un) / len(un):.3f}), "
                    f"false {sum(an)}/{len(an)} ({sum(an) / len(an):.3f})")
    return f"threshold {threshold:.4f}; " + "; ".join(line)


def main() -> None:
    written, pools, homes = sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3])
    with gzip.open(written, "rt", encoding="utf-8") as f:
        pairs = [json.loads(line) for line in f]
    embed = onnx_embed(None)
    queries = [p["query"] for p in pairs]
    labels = [card_kind(p["endpoint"], p["positive"]) for p in pairs]
    if len(sys.argv) > 4:  # the question folders: add the unanswerable ones by their kind tag
        for question, kind in unanswerable(sys.argv[4:]):
            queries.append(question)
            labels.append(kind)
        print(f"{len(queries) - len(pairs)} unanswerable questions added")
    classifier = LogisticRegression(max_iter=2000).fit(embed(queries), labels)
    _, train_ex, _, val_ex = pickle.loads(pools.read_bytes())
    fit = lambda exs: fit_candidates(exs, DISABLED)  # noqa: E731
    train_probs = out_of_fold(train_ex, fit, DISABLED)
    full = fit(train_ex)
    val_probs = [[full.probability(masked(v, DISABLED)) for v in e.pool.vectors] for e in val_ex]
    kinds = {name: resource_kinds(homes / name, name)
             for name in sorted({e.dataset for e in train_ex + val_ex})}
    rows, extras = {}, {}
    for label, exs, probs in (("train", train_ex, train_probs), ("val", val_ex, val_probs)):
        p = classifier.predict_proba(embed([e.case.question for e in exs]))
        dists = [dict(zip(classifier.classes_, map(float, row))) for row in p]
        rows[label] = answer_rows(exs, probs)
        extras[label] = [extra(e, pr, d, kinds[e.dataset])
                         for e, pr, d in zip(exs, probs, dists)]
    names = list(extras["train"][0])
    print("base:", evaluate(train_ex, rows["train"], val_ex, rows["val"], ANSWER_FEATURES))
    kos = ANSWER_FEATURES.index("kind_on_subject")
    for chosen in [[n] for n in names] + [names]:
        for drop in (False, True):
            def build(label):
                base = rows[label]
                if drop:
                    base = np.delete(base, kos, axis=1)
                add = np.array([[x[n] for n in chosen] for x in extras[label]])
                return np.hstack([base, add])
            feature_names = [n for n in ANSWER_FEATURES if not (drop and n == "kind_on_subject")]
            print(f"+{'+'.join(chosen)}{' -kind_on_subject' if drop else ''}:",
                  evaluate(train_ex, build("train"), val_ex, build("val"),
                           feature_names + chosen))
    for label, exs in (("train", train_ex), ("val", val_ex)):
        for n in names:
            a = [x[n] for x, e in zip(extras[label], exs) if e.case.answerable]
            u = [x[n] for x, e in zip(extras[label], exs) if not e.case.answerable]
            auc = np.mean([(x > y) + 0.5 * (x == y) for x in a for y in u]) if u else float("nan")
            print(f"{label} {n}: answerable mean {np.mean(a):.3f}, unanswerable mean "
                  f"{np.mean(u):.3f}, AUC {auc:.3f}")


if __name__ == "__main__":
    main()
