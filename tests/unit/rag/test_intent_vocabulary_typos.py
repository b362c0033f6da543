"""Typo correction against a project's vocabulary, and the richer verb lexicon."""

from __future__ import annotations

from apiatlas.graph.lexicon import VERB_WORDS
from apiatlas.rag.question.intent import analyse_question
from apiatlas.rag.question.vocabulary import Vocabulary, edit_distance

VOCAB = Vocabulary(["shipment", "shipments", "location", "webhook", "carrier", "cancel", "id"])


def test_edit_distance_counts_a_swap_as_one_edit() -> None:
    assert edit_distance("cancle", "cancel", 2) == 1
    assert edit_distance("shipmnet", "shipment", 2) == 1
    assert edit_distance("abcdef", "uvwxyz", 1) == 2  # stops early past the limit


def test_typos_are_corrected_towards_known_words() -> None:
    fixed = VOCAB.correct("how to cancle a shipmnet the buyer doesnt want", extra=VERB_WORDS)
    assert fixed == "how to cancel a shipment the buyer doesnt want"


def test_names_identifiers_and_short_words_are_left_alone() -> None:
    assert VOCAB.correct("Leeds getLocatoin CSV rid") == "Leeds getLocatoin CSV rid"


def test_plural_forms_are_known() -> None:
    assert VOCAB.knows("carriers") and VOCAB.knows("Webhooks")
    assert not VOCAB.knows("invoices")


def test_phrasal_verbs_give_their_own_kind() -> None:
    assert analyse_question("How do I get rid of a warehouse?").kinds[0] == "delete"
    assert analyse_question("unsubscribe our old callback endpoint").kinds[:2] == [
        "action", "delete",
    ]


def test_reading_a_plural_is_listing() -> None:
    assert analyse_question("show me the verified hauliers").kinds[:2] == ["list", "read"]
    assert analyse_question("show me one haulier").kinds[0] == "read"
