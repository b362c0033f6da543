"""One encoder at the ranking level on dev, validation and test: the ranker refit on its
similarities (the shipped setting), and its card cosine alone.

    python experiments/2026-11-29-encoder-ablation/run.py ENCODER_DIR HOMES OUT.json [adapter]

ENCODER_DIR is a model folder as the product runs one: ``model.onnx`` and ``tokenizer.json``,
or a sentence-transformers folder (``model.safetensors``), exported once to ONNX (needs the
``train`` extra). It stands in for ``apiatlas/models/encoder`` in this process only. HOMES gets
``dev/`` and ``test/``, one fresh home per dataset ingested with that encoder (a home keeps the
vectors it was first ingested with, so each encoder needs its own HOMES).

With ``adapter``, the ranker with the query adapter (fitted out of fold on the training dev sets,
and on all of them for the other sets) is added, as ``make ablation``'s row of that name.

As ``make ablation`` does: the training dev sets are ranked out of fold, and the validation and
test sets by the model fitted on all training dev sets. The test sets are only scored.
"""

import json
import sys
from pathlib import Path

from apiatlas.evals.ablation import evaluate, ranking_metrics
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DATASETS, DISABLED, VALIDATION, collect, dev_datasets, stacked
from apiatlas.rag.ranking.features import FEATURES
from apiatlas.rag.runtime import onnx_minilm


def pools(homes: Path) -> tuple[list, list, list, list, list, dict[str, list[float]]]:
    """The validation and test datasets, and the pools of the training dev, validation and
    test sets (``homes/dev``, ``homes/test``), with the card-vector memo they share."""
    validation_sets = [load_dataset(f) for f in dataset_files(DATASETS / "dev", VALIDATION)]
    test_sets = [load_dataset(f) for f in dataset_files(DATASETS / "test")]
    embedded: dict[str, list[float]] = {}
    train_sets = collect(dev_datasets(), homes / "dev", embedded=embedded)
    held = collect(validation_sets, homes / "dev", embedded=embedded)
    tests = collect(test_sets, homes / "test", embedded=embedded)
    return validation_sets, test_sets, train_sets, held, tests, embedded


def main() -> None:
    encoder, homes, out = Path(sys.argv[1]).resolve(), Path(sys.argv[2]), Path(sys.argv[3])
    onnx_minilm.model_dir = lambda: encoder  # the product's loader reads the module's attribute
    validation_sets, test_sets, train_sets, held, tests, embedded = pools(homes)
    card = FEATURES.index("card_dense")
    results = {"learned, as shipped": evaluate(train_sets, held + tests, DISABLED),
               "one dense vector (the card's)": evaluate(
                   train_sets, held + tests, (*DISABLED, "dense:name", "dense:about")),
               "card cosine alone (no learning)": {}}
    for name in sorted({ex.dataset for ex in train_sets + held + tests}):
        cases = [ex for ex in train_sets + held + tests if ex.dataset == name]
        scores = [[v[card] for v in ex.pool.vectors] for ex in cases]
        results["card cosine alone (no learning)"][name] = ranking_metrics(
            cases, scores, [True] * len(cases))
    if sys.argv[4:] == ["adapter"]:
        dev = stacked(dev_datasets(), homes / "dev")
        adapters = {d.name: dev.adapter for d in validation_sets + test_sets}
        adapted = (collect(validation_sets, homes / "dev", adapters, embedded)
                   + collect(test_sets, homes / "test", adapters, embedded))
        results["with the query adapter"] = evaluate(dev.examples, adapted, DISABLED)
    splits = {**{ex.dataset: "dev" for ex in train_sets + held},
              **{ex.dataset: "test" for ex in tests}}
    out.write_text(json.dumps({"encoder": str(encoder), "splits": splits, "results": results},
                              indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
