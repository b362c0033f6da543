"""How sure the ranker is of its first endpoint, and what the answer does with it.

The confidence model is a small logistic model, like the ranker's two, over what the ranking
already knows about one question once its candidates are scored: how far the first candidate
stands above the second, how many endpoints of its own resource and kind compete with it, how
similar it is to the question, whether the dense vectors, the text and the graph each rank it
first over the whole API, whether it is of the resource and kind of operation asked for, how
much of the question the API knows, and the answer model's probability. It is fitted and
calibrated on the dev datasets, out of fold (:mod:`apiatlas.evals.confidence`), so that its
probability reads as "the first presented endpoint is one a correct answer starts with" on an
API it has never seen.

Three outcomes follow (:func:`~apiatlas.rag.answer.composer.with_outcome`):

- ``answer``: a first endpoint an agent may act on (confidence at least the threshold);
- ``unsure``: candidates, none marked primary;
- ``none``: no endpoint does this (the answer model's abstention).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from apiatlas.rag.ranking.features import FEATURES, Pool

CONFIDENCE_FEATURES: tuple[str, ...] = (
    "p_first", "p_second", "margin", "p_answer",
    "card", "card_margin", "card_gap", "about", "about_margin", "name", "agree", "text_rr",
    "coverage", "coverage_head", "first_resource", "first_kind", "kind_on_subject", "family",
    "pool", "unknown_share", "unmatched_share", "explicit",
)
"""Question-level features of the confidence model, in vector order: the candidate and answer
probabilities; the first candidate's dense similarities, absolute and against the second and the
API's best; how many signals rank it first over the whole API; its lexical coverage of the
question; whether it is of the resource and kind asked for; how many candidates of its own
resource and kind compete; and how much of the question the API knows."""

_I = {name: FEATURES.index(name) for name in FEATURES}
_FIRST_RANKS = tuple(_I[name] for name in (
    "card_dense_rr", "about_dense_rr", "name_dense_rr", "text_rr", "graph_rr"))


def confidence_vector(
    pool: Pool, order: Sequence[int], probabilities: Sequence[float], p_answer: float
) -> list[float]:
    """The confidence model's features of one question (:data:`CONFIDENCE_FEATURES`).

    Args:
        pool: The question's candidates.
        order: Candidate indices as presented, first endpoint first
            (:func:`~apiatlas.rag.ranking.model.presented_order`).
        probabilities: The candidate model's probability of each candidate, in pool order.
        p_answer: The answer model's probability that the question is answerable.
    """
    if not order:
        return [0.0] * len(CONFIDENCE_FEATURES)
    vectors, refs = pool.vectors, pool.refs
    first = order[0]
    v = vectors[first]
    second = vectors[order[1]] if len(order) > 1 else [0.0] * len(FEATURES)
    p1 = probabilities[first]
    p2 = probabilities[order[1]] if len(order) > 1 else 0.0
    family = sum(refs[i].resource == refs[first].resource and refs[i].kind == refs[first].kind
                 for i in order[1:])
    kind_on_subject = max((x[_I["resource_match"]] * x[_I["kind_any"]] for x in vectors),
                          default=0.0)
    return [
        p1, p2, p1 - p2, p_answer,
        v[_I["card_dense"]], v[_I["card_dense"]] - second[_I["card_dense"]],
        v[_I["card_dense_gap"]],
        v[_I["about_dense"]], v[_I["about_dense"]] - second[_I["about_dense"]],
        v[_I["name_dense"]],
        float(sum(v[i] == 1.0 for i in _FIRST_RANKS)), v[_I["text_rr"]],
        v[_I["cov_all"]], v[_I["cov_head"]],
        v[_I["resource_match"]], v[_I["kind_first"]], kind_on_subject,
        math.log1p(family), math.log1p(len(order)),
        pool.unknown_share, pool.unmatched_share, v[_I["explicit"]],
    ]
