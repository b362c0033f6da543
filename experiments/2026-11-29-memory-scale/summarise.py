"""One line per eval run of a memory dataset: the agent's top1, top1 with acceptable endpoints,
primary precision and memory precedence, with how many memories an answer cites, how many memory
cases cite every expected memory and how many controls cite none (issue 35).

    .venv/bin/python experiments/2026-11-29-memory-scale/summarise.py RUN_DIR...

Each ``RUN_DIR`` is the ``OUT`` of ``../2026-11-28-memory-thresholds/run.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def summary(run: Path) -> str:
    report = json.loads((run / "report.json").read_text(encoding="utf-8"))
    [(_, result)] = report["results"].items()
    agent = result["agent"]
    cases = [c for c in report["cases"] if c["strategy"] == "agent"]
    followed = [c["memory_ok"] for c in cases if c["memory_ok"] is not None]
    memory = [c for c in cases if c["expected_memories"]]
    controls = [c for c in cases if c["expected_memories"] == []]
    cited = sum(len(c["cited_memories"]) for c in cases) / len(cases)
    complete = sum(all(m in c["cited_memories"] for m in c["expected_memories"]) for c in memory)
    silent = sum(not c["cited_memories"] for c in controls)
    return (f"{run.name:<18} top1 {agent['top1']:.3f} +acc {agent['top1_acceptable']:.3f} "
            f"primary {agent['primary_precision']:.3f} memory_precedence "
            f"{agent['memory_precedence']:.3f} ({sum(followed)}/{len(followed)}) "
            f"cited/answer {cited:.2f} expected cited {complete}/{len(memory)} "
            f"controls citing none {silent}/{len(controls)}")


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(summary(Path(arg)))
