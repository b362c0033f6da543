"""The metrics of issue 3, as pure functions over per-case records.

Every metric is over answerable cases unless noted, and ``None`` when it does not apply (no
answerable cases, no unanswerable cases, nothing presented, no citations). ``memory_precedence``
(issue 5) is over the memory cases, those with ``expected_memories``, and ``None`` for a strategy
that does not read project memory.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, Field

from apiatlas.graph.signatures import endpoint_key

RECALL_KS: tuple[int, ...] = (1, 3, 5, 10)
METRIC_KEYS: tuple[str, ...] = (
    "cases", "top1", "recall@1", "recall@3", "recall@5", "recall@10", "all_expected@10",
    "precision", "abstention_accuracy", "false_abstention", "citation_validity",
    "latency_ms_p50", "latency_ms_p95", "memory_precedence", "top1_acceptable",
    "primary_precision", "ordered_pairs", "latency_warm_ms_p50", "latency_warm_ms_p95",
    "confident_precision", "confident_coverage", "unanswerable_answered", "ece",
    "control_clean", "memory_cited_mean",
)
"""The keys of one strategy's results in ``report.json``: issue 3's contract order, the
additive ``memory_precedence`` of issue 5, then issue 10's: ``top1_acceptable`` (the lenient
top1, acceptable endpoints counted), ``primary_precision`` (precision of the endpoints presented
as the answer itself, without prerequisites and related calls), ``ordered_pairs`` (multi-step
cases: the share of expected endpoint pairs ranked in call order) and warm latency, then issue
52's, over the agent's outcomes (``None`` for a plain strategy, which has no confidence):
``confident_precision`` (answerable cases with outcome ``answer`` whose first endpoint is
expected), ``confident_coverage`` (the share of answerable cases with outcome ``answer``),
``unanswerable_answered`` (the share of unanswerable cases with outcome ``answer``) and ``ece``
(the expected calibration error of ``confidence`` over :data:`ECE_BINS` bins, every case: an
unanswerable case's first endpoint is never right), then issue 54's, over the memory and control
cases (``None`` where there are none, or for a strategy that does not read memory):
``control_clean`` (the share of control cases, ``expected_memories: []``, citing no memory) and
``memory_cited_mean`` (memories cited per answer). ``top1`` counts expected endpoints only,
and ``latency_ms_*`` are cold: the question's embedding is not cached."""
ECE_BINS = 10

Metrics = dict[str, float | int | None]


class CaseRecord(BaseModel):
    """What one strategy did on one case.

    Attributes:
        dataset: Dataset name.
        case_id: The case's id.
        strategy: Strategy name.
        question: The question asked.
        answerable: Whether the case expects endpoints.
        expected: Expected endpoints (``METHOD /path``).
        acceptable: Acceptable endpoints.
        ranked: The strategy's ranked endpoints, best first.
        presented: The endpoints shown to the developer.
        citations_valid: How many of the shown citations resolve.
        citations_total: How many citations were shown.
        primary: The endpoints presented as the answer itself (the agent's ``primary`` role;
            a plain strategy's presented list).
        latency_ms: Cold wall time of the call: the question's embedding was not cached.
        latency_warm_ms: Wall time of the same call again, everything cached.
        expected_memories: Dataset memory keys the answer must cite (``[]``: none may be
            cited); ``None`` when the case is not a memory case.
        cited_memories: The memories the answer cites, as dataset keys (a memory the dataset
            did not record shows as its ``memory:<id>``); ``None`` when the strategy does not
            read project memory.
        superseded_memories: Keys of the dataset's memories that newer ones replaced: citing
            one means an outdated memory won.
        confidence: The agent's confidence in its first endpoint (``None``: a plain strategy).
        outcome: The agent's outcome, ``answer``, ``unsure`` or ``none`` (``None``: a plain
            strategy).
        tags: The case's tags (``multi-step``...).
    """

    dataset: str
    case_id: str
    strategy: str
    question: str = ""
    answerable: bool = True
    expected: list[str] = Field(default_factory=list)
    acceptable: list[str] = Field(default_factory=list)
    ranked: list[str] = Field(default_factory=list)
    presented: list[str] = Field(default_factory=list)
    primary: list[str] | None = None
    citations_valid: int = 0
    citations_total: int = 0
    latency_ms: float = 0.0
    latency_warm_ms: float = 0.0
    expected_memories: list[str] | None = None
    cited_memories: list[str] | None = None
    superseded_memories: list[str] = Field(default_factory=list)
    confidence: float | None = None
    outcome: str | None = None
    tags: list[str] = Field(default_factory=list)


def _keys(signatures: Sequence[str]) -> list[str]:
    return [endpoint_key(s) for s in signatures]


def is_top1(record: CaseRecord, *, lenient: bool = False) -> bool:
    """The first ranked endpoint is expected (``lenient``: expected or acceptable)."""
    ranked = _keys(record.ranked[:1])
    wanted = record.expected + record.acceptable if lenient else record.expected
    return bool(ranked) and ranked[0] in set(_keys(wanted))


def recall_at(record: CaseRecord, k: int) -> float:
    """Share of the expected endpoints in the top ``k`` (0.0 when nothing is expected)."""
    expected = set(_keys(record.expected))
    if not expected:
        return 0.0
    return len(expected & set(_keys(record.ranked[:k]))) / len(expected)


def precision_of(record: CaseRecord, *, primary: bool = False) -> float | None:
    """Share of the presented (``primary``: the primary) endpoints that are expected or
    acceptable; ``None`` if none."""
    shown = record.primary if primary and record.primary is not None else record.presented
    presented = set(_keys(shown))
    if not presented:
        return None
    return len(presented & set(_keys(record.expected + record.acceptable))) / len(presented)


def ordered_pairs(record: CaseRecord) -> float | None:
    """Share of the expected endpoint pairs (dataset order = call order) that are both in the
    top 10 in that order; ``None`` for a case expecting fewer than two endpoints."""
    expected = list(dict.fromkeys(_keys(record.expected)))
    if len(expected) < 2:
        return None
    position = {key: i for i, key in reversed(list(enumerate(_keys(record.ranked[:10]))))}
    pairs = [(a, b) for i, a in enumerate(expected) for b in expected[i + 1:]]
    kept = [a in position and b in position and position[a] < position[b] for a, b in pairs]
    return sum(kept) / len(pairs)


def case_ok(record: CaseRecord) -> bool:
    """A case passes when it is right at the top and complete, or rightly presents nothing.

    Answerable: the first endpoint is expected and every expected endpoint is in the top 10.
    Unanswerable: nothing is presented.
    """
    if not record.answerable:
        return not record.presented
    return is_top1(record) and recall_at(record, 10) == 1.0


def memory_ok(record: CaseRecord) -> bool | None:
    """Whether the answer followed project memory; ``None`` when that does not apply.

    A memory case passes when the answer cites every expected memory and no superseded one, and
    its first presented endpoint is expected or acceptable. A control case (``[]`` expected)
    passes when it cites no memory and its first presented endpoint is right.
    """
    if record.expected_memories is None or record.cited_memories is None:
        return None
    cited = set(record.cited_memories)
    if record.expected_memories:
        memories = set(record.expected_memories) <= cited
    else:
        memories = not cited
    first = _keys(record.presented[:1])
    right = bool(first) and first[0] in set(_keys(record.expected + record.acceptable))
    return memories and not cited & set(record.superseded_memories) and right


def percentile(values: Sequence[float], q: float) -> float | None:
    """Nearest-rank percentile (``q`` in 0..100); ``None`` for no values."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(q / 100 * len(ordered)))
    return ordered[rank - 1]


def _mean(values: Sequence[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def compute_metrics(records: Sequence[CaseRecord]) -> Metrics:
    """The metrics of one strategy on one dataset, keyed as in ``report.json``.

    ``precision`` is the mean over answerable cases that presented something (a case that
    presents nothing counts in ``false_abstention`` instead). ``citation_validity`` pools the
    citations of every case.
    """
    answerable = [r for r in records if r.answerable]
    unanswerable = [r for r in records if not r.answerable]
    metrics: Metrics = {"cases": len(records)}
    metrics["top1"] = _mean([float(is_top1(r)) for r in answerable])
    metrics["top1_acceptable"] = _mean([float(is_top1(r, lenient=True)) for r in answerable])
    for k in RECALL_KS:
        metrics[f"recall@{k}"] = _mean([recall_at(r, k) for r in answerable])
    metrics["all_expected@10"] = _mean([float(recall_at(r, 10) == 1.0) for r in answerable])
    precisions = [p for r in answerable if (p := precision_of(r)) is not None]
    metrics["precision"] = _mean(precisions)
    metrics["primary_precision"] = _mean(
        [p for r in answerable if (p := precision_of(r, primary=True)) is not None]
    )
    metrics["ordered_pairs"] = _mean([p for r in answerable if (p := ordered_pairs(r)) is not None])
    metrics["abstention_accuracy"] = _mean([float(not r.presented) for r in unanswerable])
    metrics["false_abstention"] = _mean([float(not r.presented) for r in answerable])
    total = sum(r.citations_total for r in records)
    valid = sum(r.citations_valid for r in records)
    metrics["citation_validity"] = round(valid / total, 4) if total else None
    latencies = [r.latency_ms for r in records]
    p50, p95 = percentile(latencies, 50), percentile(latencies, 95)
    metrics["latency_ms_p50"] = round(p50, 2) if p50 is not None else None
    metrics["latency_ms_p95"] = round(p95, 2) if p95 is not None else None
    warm = [r.latency_warm_ms for r in records]
    w50, w95 = percentile(warm, 50), percentile(warm, 95)
    metrics["latency_warm_ms_p50"] = round(w50, 2) if w50 is not None else None
    metrics["latency_warm_ms_p95"] = round(w95, 2) if w95 is not None else None
    followed = [ok for r in records if (ok := memory_ok(r)) is not None]
    metrics["memory_precedence"] = _mean([float(ok) for ok in followed])
    metrics.update(confidence_metrics(records))
    metrics.update(citation_metrics(records))
    return {key: metrics[key] for key in METRIC_KEYS}


def citation_metrics(records: Sequence[CaseRecord]) -> Metrics:
    """Issue 54's two figures of one strategy on one dataset (see :data:`METRIC_KEYS`)."""
    cited = [
        r for r in records if r.expected_memories is not None and r.cited_memories is not None
    ]
    controls = [r for r in cited if not r.expected_memories]
    return {
        "control_clean": _mean([float(not r.cited_memories) for r in controls]),
        "memory_cited_mean": _mean([float(len(r.cited_memories or [])) for r in cited]),
    }


def confidence_metrics(records: Sequence[CaseRecord]) -> Metrics:
    """Issue 52's four figures of one strategy on one dataset (see :data:`METRIC_KEYS`)."""
    rated = [r for r in records if r.confidence is not None]
    answerable = [r for r in rated if r.answerable]
    unanswerable = [r for r in rated if not r.answerable]
    confident = [r for r in answerable if r.outcome == "answer"]
    return {
        "confident_precision": _mean([float(is_top1(r)) for r in confident]),
        "confident_coverage": _mean([float(r.outcome == "answer") for r in answerable]),
        "unanswerable_answered": _mean([float(r.outcome == "answer") for r in unanswerable]),
        "ece": (round(e, 4) if (e := calibration_error(
            [r.confidence or 0.0 for r in rated], [is_top1(r) for r in rated])) is not None
            else None),
    }


def calibration_error(confidence: Sequence[float], right: Sequence[bool],
                      bins: int = ECE_BINS) -> float | None:
    """Expected calibration error over ``bins`` equal-width bins: the case-weighted mean gap
    between each bin's mean confidence and its share right; ``None`` for no cases."""
    if not confidence:
        return None
    total, n = 0.0, len(confidence)
    for b in range(bins):
        inside = [(c, r) for c, r in zip(confidence, right, strict=True)
                  if min(int(c * bins), bins - 1) == b]
        if inside:
            gap = sum(c for c, _ in inside) / len(inside) - sum(r for _, r in inside) / len(inside)
            total += len(inside) / n * abs(gap)
    return total


def risk_coverage(records: Sequence[CaseRecord]) -> list[tuple[float, float, float]]:
    """``(threshold, coverage, precision)`` of answering only at a confidence of at least each
    case's own, highest first: the agent's risk-coverage curve over answerable and unanswerable
    cases that it did not abstain on (an unanswerable case answered counts as wrong)."""
    rated = sorted((r for r in records if r.confidence is not None and r.outcome != "none"),
                   key=lambda r: -(r.confidence or 0.0))
    answerable = sum(r.answerable for r in records if r.confidence is not None)
    curve, right = [], 0
    for n, r in enumerate(rated, 1):
        right += is_top1(r)
        if n == len(rated) or (rated[n].confidence or 0.0) < (r.confidence or 0.0):
            covered = sum(x.answerable for x in rated[:n])
            curve.append((r.confidence or 0.0, covered / max(answerable, 1), right / n))
    return curve
