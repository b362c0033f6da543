"""Candidate features and training sets for the ranker, measured on dev (the run behind this
folder's README). Nothing in the library or the artifact changes.

    python experiments/2026-11-26-ranker-features/measure.py pools WORK    # about 5 min
    python experiments/2026-11-26-ranker-features/measure.py tokens WORK   # about 1 min, torch
    python experiments/2026-11-26-ranker-features/measure.py run WORK      # about 3 min

``pools`` builds the dev pools as ``make train`` does (out-of-fold query adapters,
``apiatlas.evals.train.stacked`` over the homes in ``.apiatlas/train``) and the validation
pools with the adapter of all dev, and pickles them into ``WORK``. ``tokens`` keeps MiniLM's
token vectors (last hidden states, unit length; punctuation and, in questions, scikit-learn's
stop words left out) of every endpoint's name and ``about`` texts and of every question. ``run``
adds each variant's features to every candidate and scores it as ``measure.py`` of
``../2026-11-26-more-dev-questions/`` does: dev out of fold by API, validation by the ranker of
all dev. No test set is read.
"""

from __future__ import annotations

import dataclasses
import pickle
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from apiatlas.evals import train as T
from apiatlas.evals.ablation import _decide, ranking_metrics
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import Example

METRICS = ("top1", "top1_acceptable", "recall@5", "abstention_accuracy", "false_abstention")


def pools(work: Path) -> None:
    dev = T.stacked(T.dev_datasets(), T.HOMES)
    held = [load_dataset(f) for f in dataset_files(T.DATASETS / "dev", T.VALIDATION)]
    scored = T.collect(held, T.HOMES, {d.name: dev.adapter for d in held})
    with (work / "pools.pkl").open("wb") as f:
        pickle.dump({"dev": dev.examples, "val": scored}, f)


def tokens(work: Path) -> None:
    import torch
    from transformers import AutoModel

    from apiatlas.graph.lexicon import STOP_WORDS
    from apiatlas.graph.sqlite.store import SqliteGraphStore
    from apiatlas.rag.ranking.fields import about_text, name_text
    from apiatlas.rag.runtime.onnx_minilm import model_dir, tokenizer

    torch.set_num_threads(2)
    tok = tokenizer(model_dir())
    model = AutoModel.from_pretrained(str(model_dir()), local_files_only=True).eval()

    def vectors(texts: Sequence[str], stop: bool) -> list[np.ndarray]:
        encoded = tok.encode_batch(list(texts))
        out: list[np.ndarray] = [np.zeros(0)] * len(texts)
        order = sorted(range(len(texts)), key=lambda i: len(encoded[i].ids))
        for start in range(0, len(order), 32):
            rows = order[start:start + 32]
            width = max(len(encoded[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            mask = np.zeros_like(ids)
            for r, i in enumerate(rows):
                ids[r, :len(encoded[i].ids)] = encoded[i].ids
                mask[r, :len(encoded[i].ids)] = 1
            with torch.no_grad():
                hidden = model(input_ids=torch.tensor(ids), attention_mask=torch.tensor(mask),
                               token_type_ids=torch.zeros_like(torch.tensor(ids)))
            states = hidden.last_hidden_state.numpy()
            for r, i in enumerate(rows):
                e, keep = encoded[i], []
                for t in range(len(e.ids)):
                    if e.special_tokens_mask[t]:
                        continue
                    span = [j for j in range(len(e.ids)) if e.word_ids[j] == e.word_ids[t]]
                    word = texts[i][e.offsets[span[0]][0]:e.offsets[span[-1]][1]].lower()
                    if any(c.isalnum() for c in word) and (stop or word not in STOP_WORDS):
                        keep.append(t)
                v = states[r, keep or [1]]
                out[i] = (v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float32)
        return out

    with (work / "pools.pkl").open("rb") as f:
        ex = pickle.load(f)
    data: dict[str, dict] = {"endpoints": {}, "questions": {}}
    for name in sorted({e.dataset for e in ex["dev"] + ex["val"]}):
        nodes = SqliteGraphStore(T.HOMES / name / "graph.sqlite").nodes(name, "Endpoint")
        names = vectors([name_text(n) for n in nodes], stop=True)
        abouts = vectors([about_text(n) for n in nodes], stop=True)
        data["endpoints"][name] = {n.key: (a, b) for n, a, b in zip(nodes, names, abouts)}
    questions = sorted({e.case.question for e in ex["dev"] + ex["val"]})
    data["questions"] = dict(zip(questions, vectors(questions, stop=False)))
    with (work / "tokens.pkl").open("wb") as f:
        pickle.dump(data, f)


def score(dev: list[Example], val: list[Example], label: str,
          train: Callable[[list[Example]], object] = T.train) -> None:
    """Dev out of fold by API and validation by the ranker of all dev, as in ``measure.py`` of
    ``../2026-11-26-more-dev-questions/``; both with the answer decision and always answering."""
    for always in (False, True):
        rows: dict[str, list[dict]] = {"dev": [], "validation": []}
        for name in sorted({e.dataset for e in dev}):
            mine = [e for e in dev if e.dataset == name]
            s, a = _decide(train([e for e in dev if e.dataset != name]), mine)
            rows["dev"].append(ranking_metrics(mine, s, [True] * len(mine) if always else a))
        full = train(dev)
        for name in sorted(T.VALIDATION):
            mine = [e for e in val if e.dataset == name]
            s, a = _decide(full, mine)
            rows["validation"].append(ranking_metrics(mine, s, [True] * len(mine) if always
                                                      else a))
        for split, per in rows.items():
            means = {m: sum(r[m] or 0.0 for r in per) / len(per) for m in METRICS}
            print(label.ljust(34), ("always" if always else "decide").ljust(7), split.ljust(10),
                  " ".join(f"{m} {v:.3f}" for m, v in means.items()), flush=True)


def with_columns(examples: list[Example], extra: Callable[[Example], np.ndarray],
                 columns: Sequence[int]) -> list[Example]:
    """``examples`` with ``extra``'s chosen columns added to every candidate's features."""
    out = []
    for e in examples:
        table = extra(e)
        vectors = [list(v) + [float(table[i, c]) for c in columns]
                   for i, v in enumerate(e.pool.vectors)]
        out.append(dataclasses.replace(e, pool=dataclasses.replace(e.pool, vectors=vectors)))
    return out


def late_interaction(tokens: dict) -> Callable[[Example], np.ndarray]:
    """Per candidate, for its name and its ``about`` text: the mean over the question's words
    of their best cosine to one of the text's tokens (MaxSim), the worst such word, and the
    mean's gap to the pool's best."""
    memo: dict[int, np.ndarray] = {}

    def table(e: Example) -> np.ndarray:
        if id(e) not in memo:
            q = tokens["questions"][e.case.question]
            rows = []
            for ref in e.pool.refs:
                values = []
                for text in tokens["endpoints"][e.dataset].get(ref.key, (None, None)):
                    best = (q @ text.T).max(axis=1) if text is not None else np.zeros(1)
                    values += [float(best.mean()), float(best.min())]
                rows.append(values)
            t = np.array(rows).reshape(len(rows), 4)
            memo[id(e)] = np.hstack([t, t.max(axis=0, keepdims=True) - t])
        return memo[id(e)]

    return table


def path_words(e: Example) -> np.ndarray:
    """Per candidate: the share of its path's words the question uses, whether the question
    uses a word of its last (non-parameter) segment, and its path words the question does not
    use (at most 4, over 4)."""
    from apiatlas.graph.words import is_param, is_version, path_segments
    from apiatlas.rag.ranking.fields import terms

    asked = set(terms(e.case.question))
    rows = []
    for ref in e.pool.refs:
        segments = [s for s in path_segments(ref.path) if not is_param(s) and not is_version(s)]
        words = [w for s in segments for w in terms(s)]
        last = terms(segments[-1]) if segments else []
        rows.append([sum(w in asked for w in words) / len(words) if words else 0.0,
                     float(any(w in asked for w in last)),
                     min(sum(w not in asked for w in words), 4) / 4])
    return np.array(rows).reshape(len(rows), 3)


def run(work: Path) -> None:
    with (work / "pools.pkl").open("rb") as f:
        ex = pickle.load(f)
    with (work / "tokens.pkl").open("rb") as f:
        li = late_interaction(pickle.load(f))
    dev, val = ex["dev"], ex["val"]
    score(dev, val, "shipped features")
    # columns of late_interaction: name mean, name min, about mean, about min, then the gaps
    for label, columns in (("MaxSim means", (0, 2)), ("MaxSim means + gaps", (0, 2, 4, 6)),
                           ("MaxSim means + worst words", (0, 1, 2, 3)),
                           ("MaxSim all", (0, 1, 2, 3, 4, 6))):
        score(with_columns(dev, li, columns), with_columns(val, li, columns), label)
    for label, columns in (("path words: share used", (0,)), ("path words: last used", (1,)),
                           ("path words: unused", (2,)), ("path words: all three", (0, 1, 2))):
        score(with_columns(dev, path_words, columns), with_columns(val, path_words, columns),
              label)
    shipped = T.C
    for c in (0.03, 0.1, 0.3, 3.0):
        T.C = c
        score(dev, val, f"logistic C={c}")
    T.C = shipped
    # The validation APIs' own questions as more training data for the ranker: each
    # validation API ranked by a ranker fitted on the eight dev APIs and the other two.
    for always in (False, True):
        per = []
        for name in sorted(T.VALIDATION):
            mine = [e for e in val if e.dataset == name]
            others = [e for e in val if e.dataset != name]
            s, a = _decide(T.train(dev + others), mine)
            per.append(ranking_metrics(mine, s, [True] * len(mine) if always else a))
        means = {m: sum(r[m] or 0.0 for r in per) / len(per) for m in METRICS}
        print("ranker on dev + other validation".ljust(34),
              ("always" if always else "decide").ljust(7), "validation",
              " ".join(f"{m} {v:.3f}" for m, v in means.items()), flush=True)


def main() -> None:
    step, work = sys.argv[1], Path(sys.argv[2])
    work.mkdir(parents=True, exist_ok=True)
    {"pools": pools, "tokens": tokens, "run": run}[step](work)


if __name__ == "__main__":
    main()
