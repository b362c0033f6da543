"""Cold and warm ``ask`` latency of two checkouts on the same home, alternating, in new processes:
what the confidence model, the name checks and the required-field rule cost per question.

    git worktree add /tmp/before <commit>
    .venv/bin/python experiments/2026-12-01-confidence/latency.py /tmp/before HOME PROJECT

HOME is an ingested home (``apiatlas eval``'s ``evals/results/embedded/homes/sample``); it is
only read. Each checkout answers the sample dataset's questions three times over, cold (the
question's embedding not cached) and then warm, in its own process; the runs alternate.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path

ROUNDS = 3
CHILD = r"""
import json, shutil, sys, tempfile, time
from pathlib import Path
tree, home, project = sys.argv[1], sys.argv[2], sys.argv[3]
if tree:
    import __editable___apiatlas_0_1_0_finder as finder
    root = str(Path(finder.MAPPING["apiatlas.rag"]).parent)  # this checkout
    for name, path in finder.MAPPING.items():
        finder.MAPPING[name] = tree + path[len(root):]
    for name, paths in finder.NAMESPACES.items():
        finder.NAMESPACES[name] = [tree + p[len(root):] for p in paths]
import apiatlas
from apiatlas.atlas import ApiAtlas
from apiatlas.config import Settings
from apiatlas.evals.dataset import load_dataset
copy = Path(tempfile.mkdtemp()) / "home"
shutil.copytree(home, copy)
questions = [c.question for c in load_dataset(sys.argv[4]).cases]
with ApiAtlas(Settings(home=copy, project=project)) as atlas:
    atlas.ask("list every endpoint", project=project)
    cold, warm = [], []
    for q in questions:
        atlas.embeddings.clear()
        t = time.perf_counter(); atlas.ask(q, project=project); cold.append(time.perf_counter() - t)
        t = time.perf_counter(); atlas.ask(q, project=project); warm.append(time.perf_counter() - t)
print(json.dumps({"code": apiatlas.__file__, "cold": cold, "warm": warm}))
"""


def run(tree: str, home: str, project: str, dataset: str) -> dict[str, object]:
    # From a neutral folder: run in the repository, `import apiatlas` would find its folder
    # on the path before the checkout's mapping.
    done = subprocess.run([sys.executable, "-c", CHILD, tree, str(Path(home).resolve()), project,
                           dataset], capture_output=True, text=True, check=True, cwd="/")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(before: str, home: str, project: str) -> None:
    dataset = str(Path(__file__).resolve().parents[2] / "evals" / "datasets" / "dev"
                  / f"{project}.yaml")
    times: dict[str, dict[str, list[float]]] = {"before": {"cold": [], "warm": []},
                                                 "after": {"cold": [], "warm": []}}
    for _ in range(ROUNDS):
        for label, tree in (("before", before), ("after", "")):
            out = run(tree, home, project, dataset)
            print(label, out["code"], file=sys.stderr)
            for kind in ("cold", "warm"):
                times[label][kind] += out[kind]  # type: ignore[operator]
    for kind in ("cold", "warm"):
        b = sorted(times["before"][kind])
        a = sorted(times["after"][kind])
        p95 = lambda v: v[int(0.95 * (len(v) - 1))]  # noqa: E731
        print(f"{kind}: before median {statistics.median(b) * 1000:.1f} ms, p95 "
              f"{p95(b) * 1000:.1f}; after median {statistics.median(a) * 1000:.1f} ms, p95 "
              f"{p95(a) * 1000:.1f}; ratio of medians {statistics.median(a) / statistics.median(b):.3f}")


if __name__ == "__main__":
    main(*sys.argv[1:4])
