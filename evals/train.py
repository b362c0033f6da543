"""``make train``: fit the ranker on the dev datasets and write ``rag/ranking/ranker.json``.

Reads only ``evals/datasets/dev`` (and the specs those datasets name), never a test dataset:
:func:`dev_datasets` refuses any file outside the dev folder. Deterministic: the same data gives
the same artifact byte for byte (fixed solver, no sampling, rounded coefficients).

Thresholds are chosen on out-of-fold predictions (each dev API scored by models fitted on the
other dev APIs), so they reflect how the ranker does on an API it has not seen.

The ranker is trained without the signal groups of :data:`DISABLED` and, by :data:`ADAPTER`,
without a query adapter. When the adapter is on (:mod:`apiatlas.rag.ranking.adapter`) it is
stacked the same way as the thresholds: each dev API's candidate pools, on which the ranker is
fitted, are built with an adapter fitted on the other dev APIs, and the artifact carries the
adapter fitted on all of them. ``make ablation`` measures both choices again.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import platform
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore

from apiatlas.config import Settings
from apiatlas.errors import UsageError
from apiatlas.evals.dataset import VALIDATION, Case, Dataset, load_dataset
from apiatlas.evals.homes import dataset_atlas, dataset_files
from apiatlas.graph.signatures import endpoint_key
from apiatlas.rag.runtime.embeddings import load_embeddings, model_id
from apiatlas.evals.adapter_fit import adapters_out_of_fold, fit_adapter, sweep
from apiatlas.evals.calibration import answer_threshold, fit_linear, primary_threshold
from apiatlas.evals.confidence import fit_confidence, named_confidence
from apiatlas.rag.ranking.adapter import QueryAdapter
from apiatlas.rag.retrieval.graph import KnowledgeGraphRetriever
from apiatlas.rag.ranking.features import FEATURES, Pool
from apiatlas.rag.ranking.model import (
    ANSWER_FEATURES,
    ARTIFACT,
    Linear,
    RankerModel,
    answer_vector,
    masked,
)
from apiatlas.rag.ranking.pipeline import FieldIndexCache, question_pool
from apiatlas.rag.retrieval.dense import load_card_texts

DATASETS = Path(__file__).resolve().parent / "datasets"
DEV = DATASETS / "dev"
HOMES = Path(".apiatlas") / "train"
MEASURED_ONLY = ("near-miss", "neighbour")
"""Tags of dev cases that are scored but not fitted on: the testers' questions about operations
an API does not have (issue 52). Fitted on as well (2026-12-02: 100 cases over the seven
training APIs, the candidate model then fitted on answerable cases only), they lowered the
validation sets' confident coverage from 0.18 to 0.04, raised their ECE from 0.09 to 0.14 and
cost expected-top1 cases on four sets (``experiments/2026-12-01-confidence/README.md``)."""
NAMED_ONLY = ("named",)
"""Tags of dev cases that measure only the confidence of an answer the graph gives alone
(:func:`~apiatlas.evals.confidence.named_confidence`): the testers' questions that name an
endpoint or operation (issue 52, 2026-12-04). Fitted on as well, they moved top1 and recall@5
on validation and test sets both ways by a case (DocuSign top1 one case lower, Lob recall@5 one
lower, Square's one higher: ``experiments/2026-12-01-confidence/README.md``); the confidence is
to change how answers are marked, not how they rank."""
DISABLED: tuple[str, ...] = ("text",)
"""Signal groups the ranker is trained without. Chosen on dev by backward elimination over the
groups (``experiments/2026-11-29-ranker-features``, the round-two encoder, pools without the
adapter): switching off the whole-text BM25 rank gained 9 expected-top1 cases of 390 pooled over
the eight training sets (out of fold) and the three validation sets (235 -> 244); no further
group gained two."""
ADAPTER = False
"""Whether a query adapter is fitted. Off since the round-two encoder, which was itself trained
on questions. On dev, all signals on (``experiments/2026-11-29-ranker-features``): pooled
expected-top1 cases 233 with the adapter, 235 without, lenient 261 and 270; the training sets
out of fold 0.594 -> 0.623 top1, 0.778 -> 0.797 recall@5; validation 0.590 -> 0.571 top1 (three
cases), 0.660 -> 0.667 lenient, 0.755 -> 0.775 recall@5. A smaller artifact and no adapter fit
are the tie-breakers."""


@dataclass
class Example:
    """One dev case with its candidate pool and labels.

    ``query`` (the question's vector, unadapted) and ``cards`` (the card vectors of the pool's
    candidates, one row each) are what the query adapter is fitted on; empty without
    embeddings."""

    dataset: str
    case: Case
    pool: Pool
    labels: list[int | None]
    """Per candidate: 1 expected, 0 not wanted, ``None`` acceptable (left out of training)."""
    query: np.ndarray = field(default_factory=lambda: np.zeros(0))
    cards: np.ndarray = field(default_factory=lambda: np.zeros((0, 0)))


def dev_datasets(folder: Path = DEV, names: Sequence[str] = ()) -> list[Dataset]:
    """The dev datasets used for training, refusing anything outside the dev folder.

    Raises:
        UsageError: ``folder`` is not the dev folder.
    """
    if folder.resolve().name != "dev":
        raise UsageError(f"{folder}: training reads dev datasets only (evals/datasets/dev)")
    files = [f for f in dataset_files(folder, names) if f.stem not in VALIDATION]
    return ranking_datasets(load_dataset(f) for f in files)


def ranking_datasets(datasets: Iterable[Dataset]) -> list[Dataset]:
    """The datasets the ranker learns from: those without project memory, whose expected
    answers follow the team's memory rather than the docs."""
    return [d for d in datasets if not d.memories]


def collect(
    datasets: Sequence[Dataset],
    homes: Path = HOMES,
    adapters: Mapping[str, QueryAdapter] | None = None,
    embedded: dict[str, list[float]] | None = None,
) -> list[Example]:
    """Ingest each dataset into its home under ``homes`` and build every case's pool (with
    ``adapters[dataset]``, when given), on card vectors embedded afresh
    (:func:`fresh_card_vectors`; ``embedded`` is its memo, to share between calls)."""
    embeddings = load_embeddings(Settings())
    embedded = {} if embedded is None else embedded
    examples: list[Example] = []
    for dataset in datasets:
        adapter = (adapters or {}).get(dataset.name)
        with dataset_atlas(dataset, homes, embeddings) as atlas:
            graph = KnowledgeGraphRetriever(store=atlas.graph, embeddings=atlas.embeddings)
            fields = FieldIndexCache(
                atlas.embeddings,
                partial(fresh_card_vectors, atlas.vector_store, embeddings, embedded),
            )
            index = fields.get(atlas.graph, dataset.name, None)
            card_rows = index.dense.get("card")
            for case in (c for c in dataset.cases if not set(c.tags) & set(MEASURED_ONLY)):
                pool = question_pool(case.question, graph=graph, fields=fields,
                                     project=dataset.name, adapter=adapter)
                example = Example(dataset.name, case, pool, labels(case, pool))
                query = fields.query_vector(case.question)
                found = index.positions(ref.key for ref in pool.refs)  # in the pool's order
                if query is not None and card_rows is not None and len(found) == len(pool.refs):
                    example.query = np.asarray(query, dtype=np.float64)
                    example.cards = card_rows[list(found.values())].astype(np.float64)
                examples.append(example)
    return examples


def fresh_card_vectors(
    vector_store: VectorStore,
    embeddings: Embeddings,
    embedded: dict[str, list[float]],
    project: str,
    api: str | None = None,
) -> dict[tuple[str, str, str], list[float]]:
    """The card vectors training reads, keyed like
    :func:`~apiatlas.rag.retrieval.dense.load_card_vectors`, embedded afresh instead of read
    from the store.

    A stored vector depends in its last bits on the batch it was embedded in at ingest, and so
    on what the home held before; the adapter's fit and the thresholds carry such differences
    into the artifact's rounded numbers. Here the texts not yet in ``embedded`` (a memo shared
    by one training run) are embedded in one batch in sorted order, so every run from the same
    files gives the same vectors, whatever the homes went through.
    """
    texts = load_card_texts(vector_store, project, api)
    todo = sorted({t for t in texts.values() if t not in embedded})
    if todo:
        embedded.update(zip(todo, embeddings.embed_documents(todo), strict=True))
    return {key: embedded[text] for key, text in texts.items()}


def labels(case: Case, pool: Pool) -> list[int | None]:
    """1 for an expected candidate, ``None`` for an acceptable one, 0 otherwise."""
    expected, acceptable = set(case.expected), set(case.acceptable)
    out: list[int | None] = []
    for ref in pool.refs:
        key = endpoint_key(ref.signature)
        out.append(1 if key in expected else None if key in acceptable else 0)
    return out


def fit_candidates(examples: Sequence[Example], disabled: Sequence[str] = ()) -> Linear:
    """The candidate model over every labelled candidate of ``examples``."""
    rows, ys = [], []
    for ex in examples:
        for vector, label in zip(ex.pool.vectors, ex.labels, strict=True):
            if label is not None:
                rows.append(masked(vector, disabled))
                ys.append(label)
    return fit_linear(np.array(rows), np.array(ys), FEATURES)


def held_out(examples: Sequence[Example], fitted: Sequence[Example],
             fit: Callable[[Sequence[Example]], Linear], disabled: Sequence[str] = ()
             ) -> list[list[float]]:
    """Candidate probabilities of ``examples`` (not fitted on) from models fitted on the
    ``fitted`` examples of the other datasets."""
    models = {name: fit([ex for ex in fitted if ex.dataset != name])
              for name in sorted({ex.dataset for ex in examples})}
    return [[models[ex.dataset].probability(masked(v, disabled)) for v in ex.pool.vectors]
            for ex in examples]


def out_of_fold(
    examples: Sequence[Example], fit: Callable[[Sequence[Example]], Linear],
    disabled: Sequence[str] = (),
) -> list[list[float]]:
    """Candidate probabilities of each example from a model fitted without its dataset."""
    return held_out(examples, examples, fit, disabled)


def answer_rows(examples: Sequence[Example], probabilities: Sequence[Sequence[float]]
                ) -> np.ndarray:
    """The answer model's feature vectors of ``examples`` given candidate probabilities."""
    rows = []
    for ex, probs in zip(examples, probabilities, strict=True):
        order = sorted(range(len(probs)), key=lambda i: -probs[i])
        best = ex.pool.vectors[order[0]] if order else [0.0] * len(FEATURES)
        rows.append(answer_vector(ex.pool, [probs[i] for i in order], best))
    return np.array(rows) if rows else np.zeros((0, len(ANSWER_FEATURES)))


def answers_out_of_fold(examples: Sequence[Example], rows: np.ndarray, names: Sequence[str]
                        ) -> list[float]:
    """Each example's answer probability from an answer model fitted on ``rows`` (its
    features, named ``names``) of the other datasets' examples."""
    answerable = np.array([ex.case.answerable for ex in examples]).astype(int)
    out = [0.0] * len(examples)
    for name in sorted({ex.dataset for ex in examples}):
        inside = np.array([ex.dataset != name for ex in examples])
        held = fit_linear(rows[inside], answerable[inside], names)
        for i in np.flatnonzero(~inside):
            out[i] = held.probability(rows[i])
    return out


def named_only(example: Example) -> bool:
    """Whether ``example`` only measures the named confidence (:data:`NAMED_ONLY`)."""
    return bool(set(example.case.tags) & set(NAMED_ONLY))


def train(examples: Sequence[Example], disabled: Sequence[str] = (),
          meta: dict[str, object] | None = None) -> RankerModel:
    """Fit the three models on ``examples`` and calibrate their thresholds out of fold; the
    examples of :data:`NAMED_ONLY` only measure the named confidence."""
    fit = lambda exs: fit_candidates(exs, disabled)  # noqa: E731
    named = [ex for ex in examples if named_only(ex)]
    examples = [ex for ex in examples if not named_only(ex)]
    candidate = fit(examples)
    oof = out_of_fold(examples, fit, disabled)
    answerable = np.array([ex.case.answerable for ex in examples])
    rows = answer_rows(examples, oof)
    answer = fit_linear(rows, answerable.astype(int), ANSWER_FEATURES)
    # The answer threshold, too, is chosen on answer probabilities of unseen APIs.
    p_answer = answers_out_of_fold(examples, rows, ANSWER_FEATURES)
    threshold = answer_threshold(p_answer, list(answerable))
    answered = [ex.pool.explicit or p >= threshold for ex, p in zip(examples, p_answer,
                                                                     strict=True)]
    confidence = fit_confidence(examples, oof, p_answer, answered)
    return RankerModel(
        candidate=candidate,
        answer=answer,
        confidence=confidence.model,
        answer_threshold=threshold,
        primary_threshold=primary_threshold(examples, oof),
        confidence_threshold=confidence.threshold,
        named_confidence=named_confidence([*examples, *named],
                                          [*oof, *held_out(named, examples, fit, disabled)]),
        disabled=tuple(disabled),
        meta=dict(meta or {}),
    )


@dataclass
class Stacked:
    """Dev examples for a ranker with a query adapter (see the module's docstring).

    Attributes:
        plain: Pools built without an adapter (what the adapter is fitted on).
        examples: Pools built with each dataset's out-of-fold adapter (what the ranker is
            fitted on).
        adapter: The adapter fitted on every dataset (the artifact's).
    """

    plain: list[Example]
    examples: list[Example]
    adapter: QueryAdapter


def stacked(datasets: Sequence[Dataset], homes: Path = HOMES) -> Stacked:
    """Collect ``datasets`` twice: plainly, then with out-of-fold query adapters."""
    embedded: dict[str, list[float]] = {}
    plain = collect(datasets, homes, embedded=embedded)
    model = model_id(load_embeddings(Settings()))
    examples = collect(datasets, homes, adapters_out_of_fold(plain, model), embedded)
    return Stacked(plain, examples, fit_adapter(plain, model))


def digest(datasets: Sequence[Dataset]) -> dict[str, str]:
    """sha256 of every dataset file and every source file it names (prefix, 16 hex digits)."""
    out: dict[str, str] = {}
    for dataset in datasets:
        for path in [dataset.path, *map(Path, dataset.sources.openapi)]:
            if path is not None and path.is_file():
                key = f"{dataset.name}:{path.name}"
                out[key] = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    return dict(sorted(out.items()))


def numerics() -> str:
    """The processor's kind of float arithmetic (architecture and widest vector extension).

    ONNX Runtime and BLAS pick their kernels by it, and kernels of another width sum in another
    order: the vectors, and so the artifact's last digits, differ in the last bits between kinds
    (measured 2026-11-27: an AVX2 machine rebuilt the AVX-512 artifact with 83 of the adapter's
    24,576 numbers one unit of the fifth decimal apart and the answer threshold 0.48214 ->
    0.4871). Training records it, so a check can ask for the same bytes only on the same kind.
    """
    flags: set[str] = set()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("flags"):
                flags = set(line.partition(":")[2].split())
                break
    except OSError:
        pass
    width = next((f for f in ("avx512f", "avx2") if f in flags), "other")
    return f"{platform.machine()}/{width}"


def write_artifact(model: RankerModel, path: Path = ARTIFACT) -> None:
    """Write the artifact as stable, sorted JSON."""
    path.write_text(json.dumps(model.to_json(), indent=1, sort_keys=True) + "\n", encoding="utf-8")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m apiatlas.evals.train", description=__doc__)
    parser.add_argument("--out", type=Path, default=ARTIFACT, help="where to write the artifact")
    parser.add_argument("--homes", type=Path, default=HOMES, help="ingested dataset homes")
    parser.add_argument("--sweep", action="store_true",
                        help="compare the query adapter's settings on every dev dataset "
                        "(validation sets included) instead of training")
    args = parser.parse_args(argv)
    if args.sweep:
        every = ranking_datasets(load_dataset(f) for f in dataset_files(DEV))
        model = model_id(load_embeddings(Settings()))
        for line in sweep(collect(every, args.homes), model):
            print(line, flush=True)
        return 0
    datasets = dev_datasets()
    if ADAPTER:
        dev = stacked(datasets, args.homes)
        examples, adapter = dev.examples, dev.adapter
    else:
        examples, adapter = collect(datasets, args.homes), None
    model = train(examples, DISABLED, meta={
        "datasets": sorted(d.name for d in datasets),
        "cases": sum(not named_only(ex) for ex in examples),
        "named_cases": sum(named_only(ex) for ex in examples),
        "digests": digest(datasets),
        "numerics": numerics(),
    })
    model = dataclasses.replace(model, adapter=adapter)
    write_artifact(model, args.out)
    print(f"trained on {model.meta['cases']} dev cases of {len(datasets)} datasets, "
          f"{model.meta['named_cases']} more measuring the named confidence -> {args.out}")
    print(f"answer threshold {model.answer_threshold}, primary threshold "
          f"{model.primary_threshold}, confidence threshold {model.confidence_threshold}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
