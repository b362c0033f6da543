"""Project memory's three similarity thresholds, set for the packaged all-MiniLM-L6-v2, measured on
the fine-tuned encoder: the agent over the dev dataset sample-memory with one threshold changed.

    .venv/bin/python experiments/2026-11-28-memory-thresholds/run.py NAME VALUE OUT

``NAME`` is ``min`` (``rag/memory/store.MIN_SEMANTIC_SCORE``, 0.30: least similarity for a
memory to be recalled), ``strong`` (``rag/memory/relevance.STRONG_SEMANTIC_SCORE``, 0.6: a
memory about the question on its own) or ``procedure``
(``rag/memory/precedence.PROCEDURE_ANSWER_SCORE``, 0.6: a team procedure answers alone); or one
of memory's three counts: ``candidates`` (``store.SEMANTIC_CANDIDATES``, 40), ``limit`` (the
recall ``limit``, 5) or ``first`` (``relevance.FIRST_PRESENTED``, 3); or ``cue``
(``stance.ACTION_CUE_LETTERS``, 6: the letters of an action segment a memory's word must start
with). ``DATASET`` in the environment names another dev dataset file (default sample-memory).
The ranker is not
refitted: it is trained without memory (sample-memory is not a training set).
``OUT`` receives the eval's reports. Dev only.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from apiatlas.cli import main as cli
from apiatlas.evals.homes import dataset_files
from apiatlas.evals.train import DEV
from apiatlas.rag.memory import precedence, relevance, stance, store
from apiatlas.rag.memory.store import ProjectMemory


def patch(name: str, value: float) -> None:
    if name == "min":
        ProjectMemory.recall.__kwdefaults__["min_score"] = value
    elif name == "strong":
        relevance.STRONG_SEMANTIC_SCORE = value
    elif name == "procedure":
        precedence.PROCEDURE_ANSWER_SCORE = value
    elif name == "candidates":
        store.SEMANTIC_CANDIDATES = int(value)
    elif name == "limit":
        ProjectMemory.recall.__kwdefaults__["limit"] = int(value)
    elif name == "first":
        relevance.FIRST_PRESENTED = int(value)
    elif name == "cue":
        stance.ACTION_CUE_LETTERS = int(value)
    else:
        raise SystemExit(f"unknown setting {name}: min, strong, procedure, candidates, limit, "
                         "first or cue")


if __name__ == "__main__":
    patch(sys.argv[1], float(sys.argv[2]))
    dataset = os.environ.get("DATASET") or str(dataset_files(DEV, ["sample-memory"])[0])
    sys.exit(cli(["eval", dataset, "--strategies", "agent", "--out", sys.argv[3]]))
