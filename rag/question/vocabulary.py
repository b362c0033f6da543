"""The words a project's APIs use, and typo correction against them.

The vocabulary is every word of the knowledge graph's names and prose: endpoint paths, operation
ids, summaries and descriptions, parameter and field names and descriptions, schema and tag names,
resource names and aliases, guide section titles. Two things use it: typo correction (``cancle a
shipmnet`` -> ``cancel a shipment``) and abstention (a question whose subject is a word the API
never uses is most likely about something the API does not have).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from apiatlas.graph.model import NodeLabel
from apiatlas.graph.store import KnowledgeGraphStore
from apiatlas.graph.words import singular, split_words

# Node properties that carry names or prose; examples, servers and security are left out because
# their values (URLs, sample payloads) would add noise words such as host names.
_TEXT_PROPS = (
    "name", "title", "summary", "description", "operation_id", "path", "aliases",
    "section_path", "tags",
)
_LABELS: tuple[NodeLabel, ...] = (
    "Resource", "Endpoint", "Parameter", "Schema", "Field", "Tag", "DocSection",
)
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9]*")
# Short words are too easily one edit away from an unrelated word ("rid" -> "id"): leave them.
MIN_TYPO_LENGTH = 5
TWO_EDITS_FROM = 8
"""Words of at least this many letters may be corrected by two edits; shorter ones by one."""
SHORTEST_CORRECTION = MIN_TYPO_LENGTH - 1
"""Vocabulary words shorter than this are never what a word is corrected to."""


def word_forms(word: str) -> set[str]:
    """The lowercase word and its singular."""
    low = word.lower()
    return {low, singular(low)}


class Vocabulary:
    """A set of lowercase words (and their singulars) with edit-distance lookup.

    Args:
        words: The words; each is stored with its singular form.
    """

    def __init__(self, words: Iterable[str]) -> None:
        known: set[str] = set()
        for word in set(words):  # each distinct word once: a spec repeats most of its words
            known |= word_forms(word)
        self.words = frozenset(w for w in known if w)
        self._by_initial: dict[str, list[str]] = {}
        for word in self.words:
            self._by_initial.setdefault(word[0], []).append(word)

    @classmethod
    def of_words(cls, words: Iterable[str]) -> Vocabulary:
        """A vocabulary of exactly ``words`` (the :attr:`words` of another one)."""
        vocab = cls.__new__(cls)
        vocab.words = frozenset(words)
        vocab._by_initial = {}
        for word in vocab.words:
            vocab._by_initial.setdefault(word[0], []).append(word)
        return vocab

    @classmethod
    def from_store(
        cls, store: KnowledgeGraphStore, project: str, api: str | None = None
    ) -> Vocabulary:
        """The words of every name and description of ``project`` (all APIs: guides span them)."""
        texts: set[str] = set()  # each distinct text once: field descriptions repeat a lot
        for label in _LABELS:
            for node in store.nodes(project, label):
                if api is not None and node.props.get("api") not in (None, api):
                    continue
                texts.update(str(node.props[p]) for p in _TEXT_PROPS if node.props.get(p))
        return cls(w for text in texts for w in split_words(text) if not w.isdigit())

    def __len__(self) -> int:
        return len(self.words)

    def knows(self, word: str) -> bool:
        """True when ``word`` (or its singular) is in the vocabulary."""
        return bool(word_forms(word) & self.words)

    def nearest(self, word: str) -> str | None:
        """The known word one edit away (two for words of 8+ letters), or ``None``.

        Edits are insertions, deletions, substitutions and swaps of adjacent letters (the
        optimal-string-alignment distance). Only words with the same first letter are
        considered: typos rarely hit the first letter, and this keeps the lookup fast and
        precise. Ties go to the longest shared prefix, then alphabetically, so the result is
        deterministic.
        """
        low = word.lower()
        if len(low) < MIN_TYPO_LENGTH or self.knows(low):
            return None
        limit = 2 if len(low) >= TWO_EDITS_FROM else 1
        best: tuple[int, int, str] | None = None
        for cand in self._by_initial.get(low[0], []):
            if abs(len(cand) - len(low)) > limit or len(cand) < SHORTEST_CORRECTION:
                continue
            dist = edit_distance(low, cand, limit)
            if dist <= limit:
                key = (dist, -_common_prefix(low, cand), cand)
                if best is None or key < best:
                    best = key
        return best[2] if best else None

    def correct(self, text: str, extra: Iterable[str] = ()) -> str:
        """``text`` with each unknown word replaced by its nearest known word.

        Args:
            text: The question.
            extra: More words to accept and correct towards (e.g. the verb lexicon).
        """
        more = Vocabulary(extra) if extra else None

        def fix(m: re.Match[str]) -> str:
            word = m.group()
            if not word.islower():
                return word  # names, identifiers and acronyms (Leeds, getLocation, CSV)
            if self.knows(word) or (more is not None and more.knows(word)):
                return word
            found = (more.nearest(word) if more is not None else None) or self.nearest(word)
            return found if found else word

        return _TOKEN.sub(fix, text)


def edit_distance(a: str, b: str, limit: int) -> int:
    """Optimal-string-alignment distance of ``a`` and ``b``, stopping early past ``limit``."""
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        if min(cur) > limit:
            return limit + 1
        prev2, prev = prev, cur
    return prev[-1]


def _common_prefix(a: str, b: str) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n
