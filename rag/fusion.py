"""Fusing the knowledge graph's candidates with the hybrid retriever's endpoint cards, and
deciding from the combined evidence whether to answer at all.

The graph is precise when the question's words are the API's words (resource + kind); the
hybrid retriever (BM25 + dense over endpoint cards) catches paraphrases the lexicon misses.
Weighted reciprocal-rank fusion combines the two rankings, and agreement of an endpoint's
operation kind and HTTP shape with the question's intent breaks near-ties, so a paraphrase still
ranks well while the graph keeps the top right when it is sure.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass

from apiatlas.graph.model import EndpointRef
from apiatlas.graph.words import split_words
from apiatlas.rag.intent import Intent
from apiatlas.rag.kg_retriever import EXPLICIT_SCORE, GraphLookup, intent_fit
from apiatlas.rag.vocabulary import Vocabulary

# Small damping: with only ~10 candidates per list, rank 1 vs rank 3 must matter (1/3 vs 1/5);
# the usual k=60 would flatten the lists into a near-tie that the fit term would then decide.
FUSION_RRF_K = 3.0
GRAPH_WEIGHT = 1.0
# Equal weights: after the verb-word fix in intent_fit the graph no longer needs a head start;
# card weight 0.6 / 0.8 / 1.0 gave sample top1 0.77 / 0.77 / 0.79 (recall@5 0.90 throughout),
# and the held-out sets agreed in aggregate (mean top1 0.49 / 0.51 / 0.51).
CARD_WEIGHT = 1.0
FIT_WEIGHT = 0.3
MAX_FIT = 65.0
"""The largest :func:`~apiatlas.rag.kg_retriever.intent_fit` (kind 30 + verb named 20 + shape 15)."""

# Dense cosine (all-MiniLM-L6-v2) of the question to its best endpoint card. Calibrated on the
# sample dataset (60 cases): questions about things the API lacks ("invoices", "customs
# declaration", "graphql") score 0.12-0.50, overlapping answerable paraphrases (0.23-0.80), so
# the score alone cannot decide; the vocabulary test separates them (7 of 8 unanswerable cases
# have a subject word the API never uses, no answerable case does). The strong threshold only
# rescues a question with an unknown subject whose best card is unmistakable; the weak one
# lets a question the graph could not place (an action verb it has no endpoint for) be answered
# from the cards: answerable ones of that shape scored 0.31-0.67 on the sample.
# Fusion weights (RRF k 1-3, fit weight 0.15-0.5) moved top1 by at most 0.04 and recall@5 by
# 0.03 on the sample: the middle of that range is used.
STRONG_CARD_SCORE = 0.62
# Questions with a subject word outside the vocabulary, best-card score by outcome (sample, Lob,
# Adyen, Square pooled; the sample alone has only unanswerable ones of this shape): unanswerable
# 0.12-0.43 (10 of 12) and 0.50, 0.54; answerable 0.44-0.59 (13 of 16) and 0.29, 0.34, 0.40.
UNKNOWN_SUBJECT_SCORE = 0.44
WEAK_CARD_SCORE = 0.30
# A capitalised word after the first one is a name ("our Leeds warehouse"), not a thing asked for.
_WORD = re.compile(r"[A-Za-z0-9]+")
_DETERMINERS = frozenset(
    "a an the our my your their its his her this that these those some any each every one "
    "all no".split()
)
_CIRCUMSTANCE = frozenset(
    "in at within near of from into on onto around across inside outside during via by "
    "through throughout".split()
)
_CAPITALISED = re.compile(r"(?<=[a-z,;:] )[A-Z][a-z]+")


@dataclass(frozen=True)
class Evidence:
    """What the decision to answer rests on.

    Attributes:
        explicit: The question named an endpoint or operation id that exists.
        graph_found: The graph found endpoints fitting the question.
        matched: The question's terms matched resources of the graph.
        unknown_terms: Subject words that neither the API's vocabulary nor its resources know.
        best_card_score: Dense similarity of the best endpoint card (0 when there is none).
        other_subjects: Known subject words besides the unknown ones and the API's own name:
            when there are none, the unknown words are all the question is about.
    """

    explicit: bool
    graph_found: bool
    matched: bool
    unknown_terms: tuple[str, ...]
    best_card_score: float
    other_subjects: bool = True


def fuse(
    graph: Sequence[EndpointRef],
    cards: Sequence[EndpointRef],
    intent: Intent,
    *,
    subjects: Collection[str] = (),
    qualifiers: Collection[str] = (),
) -> list[EndpointRef]:
    """Graph candidates and endpoint cards as one ranking, best first.

    Args:
        graph: The graph's candidates, best first (their ``score`` is the graph's score).
        cards: Endpoints of the hybrid retriever's endpoint cards, best first, resolved to
            graph references (so ``kind`` is known).
        intent: The analysed question.
        subjects: Keys of the resources the question names. When given, an action endpoint
            (one specific doing) earns the bonus for doing what the question asks only on these
            resources or those under them: "verify the signature of a webhook" must not pick
            the call that verifies a carrier because its verb is "verify". Create, read, list...
            are generic, so a needed call on another resource ("create a location" for
            "create a shipment") keeps its bonus.
        qualifiers: Keys of the resources only the question's qualifiers name ("shipments
            *with a given carrier*"): their endpoints never earn the bonus, since listing
            carriers is not what was asked.

    Returns:
        Distinct endpoints; explicitly named ones first, then by fused score. Each carries its
        fused score in ``score``.
    """
    scores: dict[str, float] = {}
    refs: dict[str, EndpointRef] = {}
    for weight, ranking in ((GRAPH_WEIGHT, graph), (CARD_WEIGHT, cards)):
        for rank, ref in enumerate(_unique(ranking), start=1):
            refs.setdefault(ref.key, ref)
            scores[ref.key] = scores.get(ref.key, 0.0) + weight / (FUSION_RRF_K + rank)
    explicit = {r.key for r in graph if r.score >= EXPLICIT_SCORE}
    for key, ref in refs.items():
        if _about(ref, subjects) or not (ref.kind == "action" or _about(ref, qualifiers, True)):
            scores[key] += FIT_WEIGHT * intent_fit(ref, intent) / MAX_FIT
        if ref.deprecated and not intent.wants_deprecated and not intent.versions:
            scores[key] -= FIT_WEIGHT  # a live endpoint is the better answer when both fit
    order = sorted(refs, key=lambda k: (k not in explicit, -scores[k], len(refs[k].path), k))
    return [refs[k].model_copy(update={"score": round(scores[k], 4)}) for k in order]


def gather_evidence(
    lookup: GraphLookup,
    vocabulary: Vocabulary,
    *,
    best_card_score: float,
    retrieved_text: str = "",
    api_names: Collection[str] = (),
) -> Evidence:
    """Collect the evidence for :func:`should_answer`.

    A question word counts as known when the graph's vocabulary has it, when a retrieved card
    or guide passage uses it (the guides' prose is not in the graph), or when it matched a
    resource. Capitalised words in the question are names (cities, companies) and are skipped.

    Args:
        lookup: The graph lookup (its intent holds the question's terms).
        vocabulary: The project's vocabulary.
        best_card_score: Dense similarity of the best endpoint card.
        retrieved_text: Text of the retrieved cards and passages.
        api_names: Words of the APIs' own names ("parcelroute"): asking whether the API has
            something names the API, not a thing in it.
    """
    matched_words = {w for m in lookup.matched_resources for w in m.term.split()}
    seen = Vocabulary(split_words(retrieved_text)) if retrieved_text else None
    names = {w.lower() for w in _CAPITALISED.findall(lookup.intent.question)}
    words = [w.lower() for w in _WORD.findall(lookup.intent.question)]
    unknown = tuple(
        term
        for term in lookup.intent.resource_terms
        if " " not in term
        and term not in matched_words
        and term not in names
        and not term.endswith(("ing", "ed"))  # verb forms and participles, not things
        and not vocabulary.knows(term)
        and not (seen is not None and seen.knows(term))
        and not _circumstantial(term, words)
    )
    others = [
        t
        for t in lookup.intent.resource_terms
        if " " not in t and t not in unknown and t not in names and t not in api_names
    ]
    return Evidence(
        other_subjects=bool(lookup.matched_resources or others),
        explicit=any(p.score >= EXPLICIT_SCORE for p in lookup.primary),
        graph_found=bool(lookup.primary),
        matched=bool(lookup.matched_resources),
        unknown_terms=unknown,
        best_card_score=best_card_score,
    )


def should_answer(evidence: Evidence, intent: Intent) -> bool:
    """Decide whether the evidence supports presenting endpoints at all.

    - A named endpoint that exists is always answered.
    - A question whose subject the API never mentions (a word outside its vocabulary) is
      about something the API lacks, unless an endpoint card matches it closely and the
      question names something else the API knows.
    - A create/read/list/update/delete/search ask the graph cannot place is a missing operation
      on a known resource ("delete a carrier" where carriers cannot be deleted) or a missing
      resource ("create a shipping label"): abstain, unless a card matches the latter
      unmistakably.
    - Otherwise answer when the graph found something or the best card is reasonably close.
    """
    if evidence.explicit:
        return True
    if evidence.unknown_terms:
        # A card can only vouch for a paraphrase when the question says something else the API
        # knows; "does <the API> have a graphql api" is about the unknown word alone.
        return evidence.other_subjects and evidence.best_card_score >= UNKNOWN_SUBJECT_SCORE
    if not evidence.graph_found and intent.kinds[:1] not in ([], ["action"]):
        # A CRUD ask the graph cannot place is a missing operation on a known resource, or a
        # resource the graph does not have; only an unmistakable card overrules the latter.
        # Action verbs are too varied to be trusted this way ("fire a sample event" is the
        # API's "send a test event"), so those go to the card test below.
        return not evidence.matched and evidence.best_card_score >= STRONG_CARD_SCORE
    return evidence.graph_found or evidence.best_card_score >= WEAK_CARD_SCORE


def _circumstantial(term: str, words: list[str]) -> bool:
    """True when every use of ``term`` sits in a phrase of place, time or manner.

    "warehouses in germany", "the port of Rotterdam", "in a loop": such words say where or how,
    not what is asked for, so an API not knowing them is no sign the question is unanswerable.
    """
    uses = [i for i, w in enumerate(words) if w == term]
    for i in uses:
        j = i - 1
        while j >= 0 and (words[j] in _DETERMINERS or words[j].isdigit()):
            j -= 1
        if j < 0 or words[j] not in _CIRCUMSTANCE:
            return False
    return bool(uses)


def _about(ref: EndpointRef, resources: Collection[str], default: bool = False) -> bool:
    """True when ``ref`` belongs to one of ``resources`` (or to a resource under one);
    ``not default`` when ``resources`` is empty."""
    if not resources:
        return not default
    return any(ref.resource == r or ref.resource.startswith(r + "/") for r in resources)


def _unique(refs: Sequence[EndpointRef]) -> list[EndpointRef]:
    seen: set[str] = set()
    out = []
    for ref in refs:
        if ref.key not in seen:
            seen.add(ref.key)
            out.append(ref)
    return out
