"""The scrubber at HEAD against the working tree's, over every spec and doc in ../shared/data.

Usage: .venv/bin/python experiments/2026-11-27-scrub/compare.py [--shared DIR] [--no-timing]

Each dataset's specs (every root under spec/, as ``load_openapi`` finds them) and docs (every
Markdown/HTML page under the dataset, as ``load_docs`` finds them) are loaded once unscrubbed,
then scrubbed by the loaders' own ``scrub_spec``/``scrub_pages`` with each scrubber in turn. Every
string that differs is listed with the pointer of its item and each change in context (a removed
value cut to its first 6 characters). Then the near misses: what the new high-entropy rule looked
at and kept. Last, Square's spec is timed under both scrubbers, in turn (median of 9).
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any, Iterator

import apiatlas.loaders.scrubbing as scrubbing
from apiatlas import scrub as new_scrub
from apiatlas.errors import LoaderError
from apiatlas.loaders.docs import load_docs
from apiatlas.loaders.models import ApiSpec, DocPage
from apiatlas.loaders.openapi import load_openapi

REPO = Path(__file__).resolve().parents[2]


def old_scrub() -> ModuleType:
    """``apiatlas/scrub.py`` as committed at HEAD, imported as a module of its own."""
    source = subprocess.run(
        ["git", "show", "HEAD:apiatlas/scrub.py"], cwd=REPO, check=True, capture_output=True
    ).stdout
    path = Path(tempfile.mkdtemp()) / "scrub_old.py"
    path.write_bytes(source)
    spec = importlib.util.spec_from_file_location("scrub_old", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["scrub_old"] = module
    spec.loader.exec_module(module)
    return module


def use(module: ModuleType | None) -> None:
    """Point the loaders' scrubbing at ``module``; ``None`` turns scrubbing off."""
    if module is None:
        scrubbing.scrub_text = lambda text: new_scrub.ScrubResult(text)  # type: ignore[assignment]
        scrubbing.scrub_value = lambda value, key=None: (value, ())  # type: ignore[assignment]
    else:
        module.scrub_text.cache_clear()
        scrubbing.scrub_text = module.scrub_text  # type: ignore[assignment]
        scrubbing.scrub_value = module.scrub_value  # type: ignore[assignment]


def load_raw(dataset: Path) -> tuple[list[ApiSpec], list[DocPage]]:
    """Every spec and doc page of ``dataset``, unscrubbed."""
    use(None)
    specs: list[ApiSpec] = []
    try:
        specs = load_openapi(dataset / "spec")
    except LoaderError as error:
        print(f"  specs not loaded: {error}", file=sys.stderr)
    try:
        pages = load_docs(dataset)
    except LoaderError:
        pages = []
    return specs, pages


def scrubbed(module: ModuleType, specs: list[ApiSpec], pages: list[DocPage]) -> Any:
    use(module)
    return (
        [scrubbing.scrub_spec(s).model_dump(exclude={"warnings"}) for s in specs],
        [p.model_dump() for p in scrubbing.scrub_pages(pages)[0]],
    )


def differences(old: Any, new: Any, where: str = "") -> Iterator[tuple[str, str, str]]:
    """``(where, old, new)`` for every string that differs between two dumps of one shape."""
    if isinstance(old, dict):
        for key in old:
            if key == "warnings":
                continue
            yield from differences(old[key], new[key], f"{where}/{key}")
    elif isinstance(old, (list, tuple)):
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            yield from differences(a, b, f"{where}/{i}")
    elif old != new:
        yield where, str(old), str(new)


_TOKEN = re.compile(r"\[REDACTED:[\w-]+\]|\w+|\W")


def changes(old: str, new: str, context: int = 12) -> Iterator[str]:
    """Each changed span of ``old`` -> ``new``, with ``context`` tokens either side.

    The diff is over tokens (a redaction marker, a word, one other character): a character diff
    of a long guide section takes minutes.
    """
    a, b = _TOKEN.findall(old), _TOKEN.findall(new)
    matcher = difflib.SequenceMatcher(None, a, b)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag != "equal":
            before = "".join(a[max(0, i1 - context) : i1]).replace("\n", "\\n")
            after = "".join(a[i2 : i2 + context]).replace("\n", "\\n")
            yield f"...{before}«{shown(''.join(a[i1:i2]))}» -> «{''.join(b[j1:j2])}»{after}..."


def shown(value: str) -> str:
    """``value`` cut to its first 6 characters, so that this output holds no whole credential."""
    return value if len(value) <= 8 else f"{value[:6]}…({len(value)})"


def strings(dump: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """``(key, string)`` for every string in a dump, with the key it sits under."""
    if isinstance(dump, dict):
        for k, v in dump.items():
            yield from strings(v, str(k))
    elif isinstance(dump, (list, tuple)):
        for v in dump:
            yield from strings(v, key)
    elif isinstance(dump, str):
        yield key, dump


def near_misses(specs: list[ApiSpec], pages: list[DocPage]) -> Iterator[str]:
    """What the new rules looked at and kept: a high-entropy value after a label word that names
    no credential (in text), or under a key whose last word is a credential word (in values)."""
    rule = new_scrub._rules()[-1]
    dump = ([s.model_dump(exclude={"warnings"}) for s in specs], [p.model_dump() for p in pages])
    seen: set[str] = set()
    for key, text in strings(dump):
        for match in rule.pattern.finditer(text):
            value = match.group("secret")
            if new_scrub.high_entropy(value) and new_scrub._decide(rule, match) is None:
                context = text[max(0, match.start() - 30) : match.start("secret")]
                seen.add(f"text: ...{context}{shown(value)}".replace("\n", "\\n"))
        words = new_scrub._normalise_key(key).split("_")
        if words[-1] in rule.triggers and new_scrub.high_entropy(text):
            if new_scrub.credential_label(key) is None:
                seen.add(f"value under {key!r}: {shown(text)}")
    yield from sorted(seen)


def time_square(shared: Path, old: ModuleType, repeat: int = 9) -> str:
    """Median seconds of ``scrub_spec`` over Square's spec under each scrubber, caches cleared,
    the two run in turn so that a busy machine slows both alike."""
    specs = load_raw(shared / "square")[0]
    if not specs:
        return "Square not loaded"
    modules = {"old": old, "new": new_scrub}
    runs: dict[str, list[float]] = {name: [] for name in modules}
    for module in modules.values():
        use(module)
        scrubbing.scrub_spec(specs[0])  # the first call imports detect-secrets (new)
    for _ in range(repeat):
        for name, module in modules.items():
            use(module)  # clears the module's cache
            start = time.perf_counter()
            scrubbing.scrub_spec(specs[0])
            runs[name].append(time.perf_counter() - start)
    # scrub_text alone, over the distinct texts that scrub_spec hands it for Square.
    texts: list[str] = []

    def recording(text: str) -> Any:
        texts.append(text)
        return new_scrub.scrub_text(text)

    use(new_scrub)
    scrubbing.scrub_text = recording  # type: ignore[assignment]
    scrubbing.scrub_spec(specs[0])
    distinct = list(dict.fromkeys(texts))
    alone: dict[str, list[float]] = {name: [] for name in modules}
    for _ in range(repeat):
        for name, module in modules.items():
            module.scrub_text.cache_clear()
            start = time.perf_counter()
            for text in distinct:
                module.scrub_text(text)
            alone[name].append(time.perf_counter() - start)
    return "\n".join(
        f"  {what} {name}: median {statistics.median(r):.3f} s (min {min(r):.3f}, max {max(r):.3f})"
        for what, results in (("scrub_spec", runs), (f"scrub_text x{len(distinct)}", alone))
        for name, r in results.items()
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=REPO.parent / "shared" / "data")
    parser.add_argument("--no-timing", action="store_true")
    args = parser.parse_args()
    old = old_scrub()
    counts: Counter[str] = Counter()
    misses: Counter[str] = Counter()
    for dataset in sorted(p for p in args.shared.iterdir() if p.is_dir()):
        specs, pages = load_raw(dataset)
        endpoints = sum(len(spec.endpoints) for spec in specs)
        print(f"== {dataset.name}: {len(specs)} specs, {endpoints} endpoints, {len(pages)} pages")
        counts[dataset.name] += 0
        before, after = scrubbed(old, specs, pages), scrubbed(new_scrub, specs, pages)
        for where, a, b in differences(before, after):
            counts[dataset.name] += 1
            print(f"  {where}")
            for change in changes(a, b):
                print(f"    {change}")
        for miss in near_misses(specs, pages):
            misses[dataset.name] += 1
            print(f"  kept: {miss}")
    print("\nstrings that differ (and near misses kept by the new rules), per dataset:")
    for name, count in counts.items():
        print(f"  {name}: {count} ({misses[name]})")
    if not args.no_timing:
        print("\nSquare's spec, old and new scrubber in turn:")
        print(time_square(args.shared, old))


if __name__ == "__main__":
    main()
