"""Which words of a question say what is asked: the main verb, the subject, and names."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from apiatlas.graph.model import ResourceInfo
from apiatlas.rag.question.intent import analyse_question
from apiatlas.rag.retrieval.resource_matcher import ResourceMatcher


class _LetterEmbeddings:
    """Deterministic vectors from letter counts: enough to give every term *some* neighbour."""

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [[float(t.count(c)) + 0.1 for c in "abcdefghijklmnopqrstuvwxyz"] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


def test_a_participle_describes_a_state_not_the_operation_asked_for() -> None:
    intent = analyse_question("a parcel that was already booked, can I move it to Monday?")
    assert intent.kinds[0] == "update"
    assert intent.kinds.index("update") < intent.kinds.index("create")


def test_a_purpose_clause_names_the_goal_not_the_call() -> None:
    intent = analyse_question("register a hook so that we receive payment updates")
    assert intent.kinds[0] == "create"
    assert intent.resource_terms == ["hook"]
    assert "payment" in intent.keywords  # still searched as text


def test_a_purpose_clause_alone_keeps_its_nouns() -> None:
    intent = analyse_question("so we can see the invoices")
    assert "invoices" in intent.resource_terms


def test_capitalised_words_after_the_first_are_names() -> None:
    intent = analyse_question("We closed the Leeds depot of Acme. How do I remove it?")
    assert intent.names == ["leeds", "acme"]
    assert "we" not in intent.names


def test_nouns_after_a_preposition_qualify_the_subject() -> None:
    intent = analyse_question("list every order with a given customer")
    assert "customer" in intent.qualifiers
    assert intent.subject_terms(["order", "customer"]) == ["order"]


def test_without_a_verb_no_term_is_a_mere_qualifier() -> None:
    intent = analyse_question("orders for a customer")
    assert intent.subject_terms(["orders", "customer"]) == ["orders", "customer"]


def test_when_only_qualifiers_match_they_are_the_subject() -> None:
    intent = analyse_question("how do I check the signature on incoming hook calls")
    assert intent.subject_terms(["hook"]) == ["hook"]


def test_a_word_in_a_verb_slot_is_not_a_thing() -> None:
    assert "bump" not in analyse_question("How do I bump the stock level?").resource_terms
    assert "save" not in analyse_question("I want to save a contact").resource_terms
    assert "stock" in analyse_question("How do I bump the stock level?").resource_terms


def test_a_cue_word_ending_a_noun_phrase_is_a_thing() -> None:
    intent = analyse_question("mail a paper check to a vendor")
    assert "check" in intent.resource_terms
    assert "read" not in intent.kinds
    # Followed by its noun, the cue word keeps its verb reading.
    assert analyse_question("add a new depot").verbs == ["add", "new"]


def test_names_never_match_a_resource_by_similarity() -> None:
    resources = [ResourceInfo(key="api/resource/shipment", api="api", name="shipment")]
    embeddings: Any = _LetterEmbeddings()
    matcher = ResourceMatcher(resources, embeddings, threshold=-1.0)
    assert [m.how for m in matcher.match(["acme"])] == ["semantic"]
    assert matcher.match(["acme"], names={"acme"}) == []
    assert matcher.match(["acme hub"], names={"acme"}) == []
    # A resource really called by that name still matches lexically.
    assert [m.how for m in matcher.match(["shipment"], names={"shipment"})] == ["lexical"]


def test_a_path_keeps_no_punctuation_of_the_sentence_after_it() -> None:
    [named] = analyse_question("I call GET /v2/quotes: what does it return?").endpoints
    assert named.path == "/v2/quotes"
    [batch] = analyse_question("What does POST /v1/things:batchGet take?").endpoints
    assert batch.path == "/v1/things:batchget"  # a colon inside a path is the path's
