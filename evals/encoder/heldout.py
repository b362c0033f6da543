"""The APIs no training set may contain (``evals/heldout.txt``), and the rule that finds them in a
spec collection: by provider domain or by whole title words."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from apiatlas.files import sha256_of

HELDOUT = Path(__file__).resolve().parent.parent / "heldout.txt"
NEVER_TRAINED = ("test", "validation", "aside")
"""The splits that no training pair of any model may come from; ``dev`` APIs are left out of
the encoder's pairs by the recipe (see the file), and the ranker is fitted on them."""
_URL = re.compile(r"\(?\bhttps?://\S+")


@dataclass(frozen=True)
class HeldOut:
    """One API of the list."""

    split: str
    name: str
    providers: tuple[str, ...]
    words: tuple[str, ...]

    def matches(self, provider: str, title: str) -> bool:
        """Whether a spec of ``provider`` titled ``title`` is this API."""
        if provider.lower() in self.providers:
            return True
        text = " ".join(_URL.sub(" ", title).lower().split())
        return any(re.search(rf"(?<![\w.]){re.escape(w)}(?![\w])", text) for w in self.words)


def load_heldout(path: Path = HELDOUT) -> list[HeldOut]:
    """Every API of the list at ``path``.

    Raises:
        ValueError: A line does not have four ``|``-separated columns, or names an unknown split.
    """
    found: list[HeldOut] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cols = [c.strip() for c in line.split("|")]
        if len(cols) != 4 or cols[0] not in (*NEVER_TRAINED, "dev"):
            raise ValueError(f"{path}:{number}: expected 'split | name | providers | title "
                             f"words' with split one of {(*NEVER_TRAINED, 'dev')}: {line!r}")
        found.append(HeldOut(
            split=cols[0], name=cols[1],
            providers=tuple(p.strip().lower() for p in cols[2].split(",") if p.strip()),
            words=tuple(" ".join(w.lower().split()) for w in cols[3].split(",") if w.strip()),
        ))
    return found


def held_out_as(provider: str, title: str, heldout: list[HeldOut]) -> HeldOut | None:
    """The first API of ``heldout`` that a spec of ``provider`` titled ``title`` is, if any."""
    return next((h for h in heldout if h.matches(provider, title)), None)


def heldout_sha256(path: Path = HELDOUT) -> str:
    """sha256 of the list's file, recorded in every artifact trained without it."""
    return sha256_of(path)
