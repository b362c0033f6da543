"""The memories recalled per question under the learned relevance (issue 54): refit and score.

    .venv/bin/python experiments/2026-12-03-learned-relevance/recall_limit.py N OUT_DIR

Recall returns N semantic hits instead of its default; the relevance model is fitted again on
what the review is then handed (``python -m apiatlas.evals.memory_relevance --out``), and
``apiatlas eval`` scores the dev memory sets and the test one with it. Nothing in the
repository is written.
"""

from __future__ import annotations

import sys
from pathlib import Path

from apiatlas.cli import main as cli
from apiatlas.evals import memory_relevance
from apiatlas.rag.memory import store
from apiatlas.rag.review import relevance


def main() -> None:
    limit, out = int(sys.argv[1]), Path(sys.argv[2])
    out.mkdir(parents=True, exist_ok=True)
    recall = store.ProjectMemory.recall

    def wider(self, question, *, limit_=limit, **kw):  # noqa: ANN001, ANN003, ANN202
        kw.setdefault("limit", limit_)
        return recall(self, question, **kw)

    store.ProjectMemory.recall = wider
    artifact = out / "relevance.json"
    memory_relevance.main(["--out", str(artifact), "--root", str(out / "fit-homes")])
    relevance.ARTIFACT = artifact
    relevance.shipped_model.cache_clear()
    sets = sorted(str(p) for p in Path("evals/datasets/dev").glob("*memory*.yaml"))
    sys.exit(cli(["eval", *sets, "evals/datasets/test/memory-square.yaml",
                  "--strategies", "agent", "--out", str(out / "eval")]))


if __name__ == "__main__":
    main()
