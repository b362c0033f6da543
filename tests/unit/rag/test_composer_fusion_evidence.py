"""Fusion of graph candidates with endpoint cards, and the decision to answer."""

from __future__ import annotations

from apiatlas.graph.model import EndpointRef, ResourceInfo
from apiatlas.rag.fusion import (
    STRONG_CARD_SCORE,
    UNKNOWN_SUBJECT_SCORE,
    WEAK_CARD_SCORE,
    Evidence,
    fuse,
    gather_evidence,
    should_answer,
)
from apiatlas.rag.intent import analyse_question
from apiatlas.rag.resource_matcher import ResourceMatch
from apiatlas.rag.kg_retriever import EXPLICIT_SCORE, GraphLookup
from apiatlas.rag.vocabulary import Vocabulary


def ref(method: str, path: str, kind: str, score: float = 0.0, **kw: object) -> EndpointRef:
    return EndpointRef(key=f"api/endpoint/{method} {path}", api="api", method=method, path=path,
                       kind=kind, score=score, **kw)  # type: ignore[arg-type]


DELETE = ref("DELETE", "/locations/{id}", "delete")
READ = ref("GET", "/locations/{id}", "read")
LIST = ref("GET", "/locations", "list")


def test_agreement_of_both_rankings_and_the_intent_wins() -> None:
    intent = analyse_question("get rid of a warehouse")
    fused = fuse([READ, DELETE, LIST], [DELETE, LIST], intent)
    assert [f.key for f in fused][:1] == [DELETE.key]
    assert len(fused) == 3 and fused[0].score > fused[1].score


def test_an_explicitly_named_endpoint_stays_first() -> None:
    named = READ.model_copy(update={"score": EXPLICIT_SCORE})
    fused = fuse([named], [DELETE, LIST], analyse_question("delete GET /locations/{id}"))
    assert fused[0].key == READ.key


def evidence(**kw: object) -> Evidence:
    base = dict(explicit=False, graph_found=True, matched=True, unknown_terms=(),
                best_card_score=0.5)
    return Evidence(**{**base, **kw})  # type: ignore[arg-type]


def test_unknown_subject_abstains_unless_a_card_is_close() -> None:
    intent = analyse_question("download our invoices")
    assert not should_answer(evidence(unknown_terms=("invoice",), best_card_score=0.3), intent)
    assert should_answer(
        evidence(unknown_terms=("invoice",), best_card_score=UNKNOWN_SUBJECT_SCORE), intent
    )


def test_missing_crud_operation_on_a_known_resource_abstains() -> None:
    intent = analyse_question("delete a carrier")
    assert not should_answer(evidence(graph_found=False, best_card_score=0.9), intent)
    unmatched = evidence(graph_found=False, matched=False, best_card_score=STRONG_CARD_SCORE)
    assert should_answer(unmatched, intent)


def test_an_unplaced_action_is_answered_from_close_cards() -> None:
    intent = analyse_question("fire a sample event at my endpoint")
    assert should_answer(evidence(graph_found=False, best_card_score=WEAK_CARD_SCORE), intent)
    assert not should_answer(evidence(graph_found=False, best_card_score=0.1), intent)


def test_gather_evidence_skips_names_places_and_retrieved_words() -> None:
    resource = ResourceInfo(key="api/resource/location", api="api", name="location")
    question = "list all our Leeds locations in germany and their invoices and pallets"
    lookup = GraphLookup(
        intent=analyse_question(question),
        primary=[LIST],
        matched_resources=[ResourceMatch(resource=resource, term="locations", score=1.0,
                                         how="lexical")],
    )
    found = gather_evidence(lookup, Vocabulary(["location"]), best_card_score=0.4,
                            retrieved_text="Pallets are stacked.")
    assert found.unknown_terms == ("invoices",)
    assert found.graph_found and found.matched and not found.explicit
