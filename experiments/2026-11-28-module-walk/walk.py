"""Which of the project's modules one question walks through, in order (issue 35, item 1).

    python experiments/2026-11-28-module-walk/walk.py HOME "QUESTION" [--project sample]

``HOME`` holds an ingested project (``make demo`` writes ``.apiatlas`` with ``sample``). The
question is asked once to warm the caches, then once under :func:`sys.setprofile`: every call
into a function of the project's own files is recorded by module. Leaf modules (whose functions
call no function of another project module: word helpers, records, the BM25 formula) are
helpers, not steps. The walk is the sequence of the other modules' calls with consecutive calls
in one module joined, and two figures, as issue 35's review gave them: the visits (entries into
a module) and the returns (entries into a module already left).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("apiatlas", "rag", "graph", "loaders", "evals")


def module_of(filename: str) -> str | None:
    path = Path(filename)
    try:
        parts = path.resolve().relative_to(ROOT).with_suffix("").parts
    except ValueError:
        return None
    if not parts or parts[0] not in PACKAGES:
        return None
    return "/".join(parts)


def trace(ask) -> tuple[list[str], set[str]]:
    """The modules of the project's calls, in order, and the modules that call another."""
    calls: list[str] = []
    callers: set[str] = set()

    def profile(frame, event, arg):  # noqa: ANN001
        if event == "call":
            name = module_of(frame.f_code.co_filename)
            if name is not None:
                calls.append(name)
                back = frame.f_back
                while back is not None and module_of(back.f_code.co_filename) is None:
                    back = back.f_back
                caller = None if back is None else module_of(back.f_code.co_filename)
                if caller is not None and caller != name:
                    callers.add(caller)

    sys.setprofile(profile)
    try:
        ask()
    finally:
        sys.setprofile(None)
    return calls, callers


def walk(calls: list[str], helpers: set[str]) -> list[str]:
    steps: list[str] = []
    for name in calls:
        if name in helpers:
            continue
        if not steps or steps[-1] != name:
            steps.append(name)
    return steps


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("home", type=Path)
    parser.add_argument("question")
    parser.add_argument("--project", default="sample")
    args = parser.parse_args()
    from apiatlas.atlas import ApiAtlas
    from apiatlas.config import Settings

    with ApiAtlas(Settings(home=args.home, project=args.project)) as atlas:
        atlas.ask(args.question)
        calls, callers = trace(lambda: atlas.ask(args.question))
    modules = set(calls)
    helpers = modules - callers
    steps = walk(calls, helpers)
    seen: set[str] = set()
    returns = 0
    for step in steps:
        returns += step in seen
        seen.add(step)
    print(f"calls into the project: {len(calls)} in {len(modules)} modules")
    print(f"helpers ({len(helpers)}): {', '.join(sorted(helpers))}")
    print(f"walk: {len(steps)} visits of {len(set(steps))} modules, {returns} returns")
    for name, count in Counter(steps).most_common():
        if count > 1:
            print(f"  {name}: entered {count} times")
    print("order:", " -> ".join(steps))


if __name__ == "__main__":
    main()
