"""Fit and score a memory-relevance model on what ``capture.py`` recorded (issue 54, item 2).

Each (case, memory handed to the review) pair is one example, labelled 1 when the case expects
the memory. Dev sets are scored out of fold (leave one dataset out); the validation set by the
model fitted on every dev set. Citation outcomes per case: a memory case is right when it cites
every expected memory and no superseded one; a control when it cites none.

    .venv/bin/python experiments/2026-12-02-memory-relevance/fit.py DIR --dev A B C --validation D
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression

from apiatlas.graph.lexicon import STOP_WORDS
from apiatlas.graph.signatures import endpoint_key
from apiatlas.graph.words import singular


def sig(key: str) -> str:
    return endpoint_key(key.rsplit("/endpoint/", 1)[-1])

KINDS = ("fact", "decision", "procedure", "warning", "episode")
_WORD = re.compile(r"[a-z0-9]+")
_VERSION = re.compile(r"/v\d+(?=/|$)")


def words(text: str) -> set[str]:
    return {singular(w) for w in _WORD.findall(text.lower()) if w not in STOP_WORDS and len(w) > 1}


def family(key: str) -> str:
    return _VERSION.sub("", key)


FEATURES = (
    "score", "semantic", "linked", "sem_rank", "gap", "lex_q", "lex_jacc",
    "names_first", "names_top3", "names_presented", "names_resource", "no_refs",
    "forbids", "forbids_first", "prefers_presented", "importance", "supersedes", "ratio", "idf_q", "path_q", "kind_match", "says_first", "says_top3", "stance_first", "n_views", "share_first", *(f"kind_{k}" for k in KINDS),
)


def features(row: dict, view: dict) -> list[float]:
    global IDF, MAXIDF
    IDF, MAXIDF = row["idf"], row["maxidf"]
    rev = row["review"]
    q = words(row["question"])
    m = words(view["text"] + " " + " ".join(view["steps"]))
    sem = sorted((v["score"] for v in rev["views"] if v["matched"] != "ref"), reverse=True)
    best = sem[0] if sem else 0.0
    is_sem = view["matched"] != "ref"
    rank = sem.index(view["score"]) if is_sem and view["score"] in sem else len(sem)
    named = {e["key"] for found in view["resolved"].values() for e in found}
    resources = {e["resource"] for found in view["resolved"].values() for e in found if e["resource"]}
    resources |= {r for r in view["refs"] if " " not in r}
    primary = rev["primary"]
    said = {endpoint_key(r) for r in view["stances"]}
    presented = set(primary) | set(rev["prerequisites"]) | set(rev["related"])
    stance = {}
    for ref, s in view["stances"].items():
        for e in view["resolved"].get(ref, []):
            stance[e["key"]] = s
    return [
        view["score"],
        float(is_sem),
        float(view["matched"] != "semantic"),
        1.0 / (1 + rank),
        best - view["score"] if is_sem else 1.0,
        len(q & m) / max(1, len(q)),
        len(q & m) / max(1, len(q | m)),
        float(bool(primary) and family(primary[0]) in {family(k) for k in named}),
        float(bool(named & set(primary[:3]))),
        float(bool(named & presented)),
        float(bool(resources & set(rev["resources"]))),
        float(not view["refs"]),
        float(any(s == "avoid" and k in presented for k, s in stance.items())),
        float(any(s == "avoid" and k in primary[:1] for k, s in stance.items())),
        float(any(s == "prefer" and k in presented for k, s in stance.items())),
        view["importance"] / 10,
        float(view["supersedes"]),
        view["score"] / best if is_sem and best > 0 else 0.0,
        sum(IDF.get(w, 0.0) for w in q & m) / max(1e-9, sum(IDF.get(w, MAXIDF) for w in q)),
        len(q & {w for k in named for w in words(k.split(" ", 1)[-1])}) / max(1, len(q)),
        float(bool({e["kind"] for f in view["resolved"].values() for e in f} & set(rev["kinds"]))),
        float(bool(primary) and sig(primary[0]) in said),
        float(bool(said & {sig(k) for k in primary[:3]})),
        float(bool(primary) and any(s in ("prefer", "avoid") and family(k) == family(primary[0]) for k, s in stance.items())),
        float(np.log1p(len(rev["views"]))),
        (1.0 / max(1, sum(1 for v in rev["views"] if primary and family(primary[0]) in {family(e["key"]) for f in v["resolved"].values() for e in f})))
        if primary and family(primary[0]) in {family(k) for k in named} else 0.0,
        *(float(view["kind"] == k) for k in KINDS),
    ]


IDF: dict[str, float] = {}
MAXIDF = 1.0


def load(folder: Path, names: list[str]) -> dict[str, list[dict]]:
    out = {n: [json.loads(l) for l in (folder / f"{n}.jsonl").read_text().splitlines()] for n in names}
    for rows in out.values():
        texts = {v["id"]: v["text"] for r in rows if r["review"] for v in r["review"]["views"]}
        docs = [words(t) for t in texts.values()]
        n = len(docs)
        df: dict[str, int] = {}
        for d in docs:
            for w in d:
                df[w] = df.get(w, 0) + 1
        idf = {w: float(np.log((n + 1) / (c + 0.5))) for w, c in df.items()}
        for r in rows:
            r["idf"] = idf
            r["maxidf"] = float(np.log(n + 1) + 0.7)
    return out


def examples(rows: list[dict], mask: list[int]) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for row in rows:
        if row["review"] is None:
            continue
        for view in row["review"]["views"]:
            xs.append([features(row, view)[i] for i in mask])
            ys.append(float(view["id"] in row["expected"]))
    return np.array(xs), np.array(ys)


def fit(rows: list[dict], mask: list[int]) -> LogisticRegression:
    x, y = examples(rows, mask)
    model = LogisticRegression(C=1.0, max_iter=2000)
    mu, sd = x.mean(0), x.std(0) + 1e-9
    model.fit((x - mu) / sd, y)
    model.mu, model.sd = mu, sd
    return model


def cited_by_model(row: dict, model, mask: list[int], threshold: float) -> set[str]:
    if row["review"] is None:
        return set(row["cited"])
    out = set()
    for view in row["review"]["views"]:
        f = features(row, view)
        x = (np.array([[f[i] for i in mask]]) - model.mu) / model.sd
        p = model.predict_proba(x)[0, 1]
        if p >= threshold or (RULE and f[FEATURES.index(RULE)]):
            out.add(view["id"])
    return out


def outcome(rows: list[dict], cited: list[set[str]]) -> dict[str, float]:
    mem = [(r, c) for r, c in zip(rows, cited) if r["expected"]]
    ctl = [(r, c) for r, c in zip(rows, cited) if not r["expected"]]
    ok_mem = [set(r["expected"]) <= c and not c & set(r["superseded"]) for r, c in mem]
    ok_ctl = [not c for _, c in ctl]
    return {
        "mem_ok": float(np.mean(ok_mem)) if mem else float("nan"),
        "control_clean": float(np.mean(ok_ctl)) if ctl else float("nan"),
        "cited_mean": float(np.mean([len(c) for c in cited])),
        "all_ok": float(np.mean(ok_mem + ok_ctl)),
    }


def recall(rows: list[dict]) -> float:
    mem = [r for r in rows if r["expected"]]
    have = [
        r["review"] is not None and set(r["expected"]) <= {v["id"] for v in r["review"]["views"]}
        or (r["review"] is None and set(r["expected"]) <= set(r["cited"]))
        for r in mem
    ]
    return float(np.mean(have))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--dev", nargs="+", required=True)
    parser.add_argument("--validation", nargs="*", default=[])
    parser.add_argument("--drop", nargs="*", default=[], help="features left out")
    parser.add_argument("--rule", default="forbids", help="forbids, forbids_first or none")
    args = parser.parse_args()
    global RULE
    RULE = None if args.rule == "none" else args.rule
    mask = [i for i, f in enumerate(FEATURES) if f not in args.drop]
    dev = load(args.folder, args.dev)
    val = load(args.folder, args.validation)
    fmt = lambda d: " ".join(f"{k} {v:.3f}" for k, v in d.items())
    print("today's rules (the answer's citations):")
    for name, rows in {**dev, **val}.items():
        print(f"  {name:16} candidate recall {recall(rows):.3f}  {fmt(outcome(rows, [set(r['cited']) for r in rows]))}")
    oof: dict[str, object] = {}
    for name in dev:
        train = [r for n, rows in dev.items() if n != name for r in rows]
        oof[name] = fit(train, mask)
    grid = [round(t, 2) for t in np.arange(0.05, 0.96, 0.05)]
    pooled = {t: outcome(
        [r for rows in dev.values() for r in rows],
        [cited_by_model(r, oof[n], mask, t) for n, rows in dev.items() for r in rows],
    )["all_ok"] for t in grid}
    best = max(grid, key=lambda t: (pooled[t], -abs(t - 0.5)))
    print(f"threshold chosen on pooled dev out of fold: {best} (all_ok {pooled[best]:.3f})")
    for name, rows in dev.items():
        print(f"  dev {name:12} {fmt(outcome(rows, [cited_by_model(r, oof[name], mask, best) for r in rows]))}")
    full = fit([r for rows in dev.values() for r in rows], mask)
    for name, rows in val.items():
        print(f"  validation {name:5} {fmt(outcome(rows, [cited_by_model(r, full, mask, best) for r in rows]))}")
    print("coefficients (standardised):")
    for i, c in sorted(zip(mask, full.coef_[0]), key=lambda p: -abs(p[1])):
        print(f"  {FEATURES[i]:18} {c:+.2f}")


if __name__ == "__main__":
    main()
