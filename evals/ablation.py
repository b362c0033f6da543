"""``make ablation``: the ranker as shipped, with each signal switched in turn (off where the
shipped ranker has it, on where it does not: :data:`~apiatlas.evals.train.DISABLED`), with and
without the query adapter (:data:`~apiatlas.evals.train.ADAPTER`), and against plain RRF.

Every variant is trained on the dev datasets only. Dev figures are out of fold (each dev API
ranked by a model fitted on the other dev APIs); test figures come from the model fitted on all
of dev, and the test datasets are only scored, never fitted or calibrated on. The figures are
the ranking's (the candidate pool ordered by each variant's probabilities as the agent presents
them, an endpoint the question names first, and its answer decision), which is what the agent
presents before prerequisites are added.

Writes ``evals/results/ablation.md`` and ``ablation.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path

from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import (
    ADAPTER, DATASETS, DISABLED, HOMES, VALIDATION, Example, collect, dev_datasets, stacked, train,
)  # fmt: skip
from apiatlas.graph.signatures import endpoint_key
from apiatlas.rag.ranking.features import FEATURES, GROUPS
from apiatlas.rag.ranking.model import RankerModel, presented_order

RESULTS = Path(__file__).resolve().parent / "results"
TEST_HOMES = Path(".apiatlas") / "report"
RRF_K = 3.0
_RANK_LISTS = [FEATURES.index(f) for f in ("graph_rr", "name_dense_rr", "text_rr")]


def rrf_scores(example: Example) -> list[float]:
    """Reciprocal-rank fusion of the graph, name-dense and whole-text BM25 rankings (no learning)."""
    out = []
    for vector in example.pool.vectors:
        out.append(sum(1.0 / (RRF_K + 1.0 / vector[i]) for i in _RANK_LISTS if vector[i] > 0))
    return out


def ranking_metrics(examples: Sequence[Example], scores: Sequence[Sequence[float]],
                    answers: Sequence[bool], *, presented: bool = False
                    ) -> dict[str, float | None]:
    """top1 (expected only), top1 with acceptable, recall@5, abstention and false abstention.

    Candidates are ordered by ``scores`` (ties by key), or with ``presented`` as the ranker's
    :meth:`~apiatlas.rag.ranking.model.RankerModel.decide` presents them (an endpoint the
    question names first): the order the agent answers in.
    """
    top1, lenient, recall5, abstained_right, false_abstained = [], [], [], [], []
    for ex, score, answer in zip(examples, scores, answers, strict=True):
        order = (presented_order(ex.pool, score) if presented else
                 sorted(range(len(score)), key=lambda i: (-score[i], ex.pool.refs[i].key)))
        ranked = [endpoint_key(ex.pool.refs[i].signature) for i in order] if answer else []
        if not ex.case.answerable:
            abstained_right.append(float(not ranked))
            continue
        expected = set(ex.case.expected)
        false_abstained.append(float(not ranked))
        top1.append(float(bool(ranked) and ranked[0] in expected))
        lenient.append(float(bool(ranked) and ranked[0] in expected | set(ex.case.acceptable)))
        recall5.append(len(expected & set(ranked[:5])) / len(expected))
    mean = lambda xs: round(sum(xs) / len(xs), 3) if xs else None  # noqa: E731
    return {"top1": mean(top1), "top1_acceptable": mean(lenient), "recall@5": mean(recall5),
            "abstention_accuracy": mean(abstained_right),
            "false_abstention": mean(false_abstained)}


def _decide(model: RankerModel, examples: Sequence[Example]) -> tuple[list[list[float]], list[bool]]:
    scores, answers = [], []
    for ex in examples:
        scores.append(model.scores(ex.pool))
        answers.append(model.decide(ex.pool).answer)
    return scores, answers


def evaluate(dev: Sequence[Example], test: Sequence[Example], disabled: Sequence[str] | None
             ) -> dict[str, dict[str, float | None]]:
    """Metrics per dataset for one variant (``disabled=None``: RRF, always answering): ``dev``
    out of fold, ``test`` (and any other set kept out of training) by the model of all ``dev``."""
    out: dict[str, dict[str, float | None]] = {}
    names = sorted({ex.dataset for ex in dev})
    for name in names:
        held = [ex for ex in dev if ex.dataset == name]
        if disabled is None:
            scores, answers = [rrf_scores(ex) for ex in held], [True] * len(held)
        else:
            model = train([ex for ex in dev if ex.dataset != name], disabled)
            scores, answers = _decide(model, held)
        out[name] = ranking_metrics(held, scores, answers, presented=disabled is not None)
    full = train(dev, disabled or ()) if disabled is not None else None
    for name in sorted({ex.dataset for ex in test}):
        held = [ex for ex in test if ex.dataset == name]
        if full is None:
            scores, answers = [rrf_scores(ex) for ex in held], [True] * len(held)
        else:
            scores, answers = _decide(full, held)
        out[name] = ranking_metrics(held, scores, answers, presented=full is not None)
    return out


def variants() -> dict[str, Sequence[str] | None]:
    """Variant name -> disabled groups (``None`` is plain RRF): the shipped ranker, then each
    group switched from the shipped setting."""
    shipped = tuple(DISABLED)
    out: dict[str, Sequence[str] | None] = {
        "learned, as shipped (" + (", ".join(f"without {g}" for g in shipped) or "all signals")
        + ")": shipped}
    for group in GROUPS:
        if group in shipped:
            out[f"with {group}"] = tuple(g for g in shipped if g != group)
        else:
            out[f"without {group}"] = (*shipped, group)
    out["one dense vector (the card's; no name or about vector)"] = (
        *shipped, "dense:name", "dense:about")
    out["RRF (graph + name-dense + text BM25 ranks)"] = None
    return out


def markdown(results: dict[str, dict[str, dict[str, float | None]]], splits: dict[str, str]
             ) -> str:
    names = sorted(splits, key=lambda n: (splits[n] != "dev", n))
    lines = ["# Ranker ablation", "",
             "Ranking-level figures. Dev: out of fold (each dev API ranked by a model trained on "
             "the other dev APIs); the validation dev sets ("
             + ", ".join(VALIDATION) + ") are never trained on and are ranked by the model "
             "trained on all the others, like the test sets. Test: only scored. Candidates are "
             "in the order the agent presents them (an endpoint the question names first). "
             "`top1` counts expected endpoints only; `top1_acceptable` beside it.", ""]
    for metric in ("top1", "top1_acceptable", "recall@5", "abstention_accuracy",
                   "false_abstention"):
        lines += [f"## {metric}", "",
                  "| variant | " + " | ".join(f"{n} ({splits[n]})" for n in names)
                  + " | dev mean | test mean |",
                  "| --- | " + " | ".join("---:" for _ in names) + " | ---: | ---: |"]
        for variant, per in results.items():
            cells, means = [], {"dev": [], "test": []}
            for n in names:
                value = per[n][metric]
                cells.append("-" if value is None else f"{value:.2f}")
                if value is not None:
                    means[splits[n]].append(value)
            avg = [f"{sum(v) / len(v):.3f}" if v else "-" for v in means.values()]
            lines.append(f"| {variant} | " + " | ".join(cells) + f" | {avg[0]} | {avg[1]} |")
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m apiatlas.evals.ablation", description=__doc__)
    parser.add_argument("--homes", type=Path, default=HOMES, help="ingested dev dataset homes")
    parser.add_argument("--test-homes", type=Path, default=TEST_HOMES,
                        help="ingested test dataset homes (kept apart from training's)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    dev = stacked(dev_datasets(), args.homes)
    held = [load_dataset(f) for f in dataset_files(DATASETS / "dev", VALIDATION)]
    test_sets = [load_dataset(f) for f in dataset_files(DATASETS / "test")]
    # Validation sets (dev, never trained on) are scored like the test sets, by the full model
    # and its adapter (fitted on all of dev).
    adapters = {d.name: dev.adapter for d in [*held, *test_sets]}
    embedded: dict[str, list[float]] = {}  # card vectors, embedded once for both collections
    scored = (collect(held, args.homes, adapters, embedded)
              + collect(test_sets, args.test_homes, adapters, embedded))
    splits = {**{ex.dataset: "dev" for ex in dev.examples}, **{d.name: "dev" for d in held},
              **{d.name: "test" for d in test_sets}}
    plain = (collect(held, args.homes, embedded=embedded)
             + collect(test_sets, args.test_homes, embedded=embedded))
    # The shipped pools (with or without the adapter, as ADAPTER says) and the other kind.
    pools = {True: (dev.examples, scored), False: (dev.plain, plain)}
    results = {name: evaluate(*pools[ADAPTER], disabled)
               for name, disabled in variants().items()}
    other = "without the query adapter" if ADAPTER else "with the query adapter"
    results[other] = evaluate(*pools[not ADAPTER], DISABLED)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ablation.md").write_text(markdown(results, splits) + "\n", encoding="utf-8")
    (args.out / "ablation.json").write_text(
        json.dumps({"splits": splits, "results": results}, indent=1) + "\n", encoding="utf-8")
    print(markdown(results, splits))
    return 0


if __name__ == "__main__":
    sys.exit(main())
