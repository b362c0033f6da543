"""The grammar words the question analysis reads a question by, and nothing else reads: where a
noun phrase starts, what introduces a qualifier, who acts, what asks for one thing by its
identifier, and what asks for the old version of something.

The verbs (what a question asks to do), the words about APIs themselves and the stop words are
shared with the graph builder, in :mod:`apiatlas.graph.lexicon`.
"""

from __future__ import annotations

OLD_WORDS: frozenset[str] = frozenset(
    "deprecated legacy old older previous outdated obsolete".split()
)
"""Words that ask for the old version of something."""

DETERMINERS: frozenset[str] = frozenset(
    "a an the our my your their its this that these those some any each every one all no "
    "given particular specific certain".split()
)
PREPOSITIONS: frozenset[str] = frozenset(
    "with from for of on in at to into onto by under across within via through between "
    "among per".split()
)
SUBJECTS: frozenset[str] = frozenset({"i", "we", "you", "they"})
ADVERBS: frozenset[str] = frozenset("just still only also already actually really then now first".split())
WANTING: frozenset[str] = frozenset("want wants need needs how like trying try able".split())
ID_WORDS: frozenset[str] = frozenset({"id", "identifier"})

# Questions about the team's code (rag.question.code).
CODE_OWNERS: frozenset[str] = frozenset("we our us ours code codebase repo repository app service".split())
"""Words that put a question in the team's own code."""
CALLING: frozenset[str] = frozenset(
    "call calls called calling use uses used using hit hits invoke invokes invoked reach reaches "
    "send sends".split()
)
"""Verbs of code calling an endpoint."""
CODE_PLACES: frozenset[str] = frozenset("where file files function functions module modules".split())
"""What asks for a place in the code."""
ENDPOINT_NOUNS: frozenset[str] = frozenset(
    "endpoint endpoints api apis call calls operation operations method methods route routes".split()
)
NOT_IN_SPEC: tuple[str, ...] = (
    "not in the spec", "not in spec", "not in the openapi", "missing from the spec",
    "undocumented", "not documented", "unknown endpoint", "unknown call",
)
"""Phrases that ask for calls the spec does not have."""
