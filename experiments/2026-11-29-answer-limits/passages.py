"""How many guide passages each dev question finds, so how often ``GUIDE_PASSAGES`` (2) would cut
a guide answer (issue 35). No dev answer is a guide answer, since those come only when the
ranker presents no endpoint, so this counts what each answer's composer was given.

    .venv/bin/python experiments/2026-11-29-answer-limits/passages.py HOMES

``HOMES`` holds the dev datasets' homes (``apiatlas eval --keep-homes``). Every question of the
dev sets with guides is asked; the composer's inputs are captured and
:func:`~apiatlas.rag.answer.composer.relevant_passages` counted. No question text is printed.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any
from unittest.mock import patch

from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.evals.dataset import load_dataset
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DATASETS
from apiatlas.rag.agent import nodes
from apiatlas.rag.answer import composer


def main(homes: Path) -> None:
    found: list[int] = []
    compose = nodes.compose_answer

    def counting(question: str, **kwargs: Any) -> Any:
        found.append(len(composer.relevant_passages(kwargs["lookup"], kwargs["documents"])))
        return compose(question, **kwargs)

    with patch.object(nodes, "compose_answer", counting):
        for path in dataset_files(DATASETS / "dev"):
            data = load_dataset(path)
            if not data.sources.docs:
                continue
            atlas = ApiAtlas(Settings(home=homes / data.name, project=data.name))
            for case in data.cases:
                atlas.ask(case.question, project=data.name)
    limit = composer.GUIDE_PASSAGES
    print(f"{len(found)} answers of the dev sets with guides; relevant passages per answer: "
          f"{dict(sorted(Counter(found).items()))}; over GUIDE_PASSAGES ({limit}): "
          f"{sum(n > limit for n in found)}; over 1: {sum(n > 1 for n in found)}; "
          f"over 3: {sum(n > 3 for n in found)}")


if __name__ == "__main__":
    main(Path(sys.argv[1]))
