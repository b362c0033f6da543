"""Reciprocal rank fusion arithmetic and de-duplication."""

from __future__ import annotations

import pytest
from langchain_core.documents import Document

from apiatlas.errors import UsageError
from apiatlas.rag.retrieval.fusion import doc_key, reciprocal_rank_fusion


def _doc(name: str, **meta: object) -> Document:
    return Document(page_content=f"text of {name}", metadata={"source": "s", **meta}, id=name)


def test_doc_first_in_both_lists_beats_doc_first_in_one() -> None:
    both, only_a, only_b = _doc("both"), _doc("a"), _doc("b")
    fused = reciprocal_rank_fusion([[only_a, both], [both, only_b]], k=60)
    assert [d.id for d in fused][0] == "both"
    assert fused[0].metadata["rrf_score"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused[1].metadata["rrf_score"] == pytest.approx(1 / 61)


def test_top_of_both_lists_wins() -> None:
    top, x, y = _doc("top"), _doc("x"), _doc("y")
    fused = reciprocal_rank_fusion([[top, x], [top, y]])
    assert fused[0].id == "top"
    assert fused[0].metadata["rrf_score"] == pytest.approx(2 / 61)
    assert {d.id for d in fused} == {"top", "x", "y"}


def test_weights_shift_the_order() -> None:
    a, b = _doc("a"), _doc("b")
    fused = reciprocal_rank_fusion([[a], [b]], weights=[1.0, 2.0])
    assert [d.id for d in fused] == ["b", "a"]


def test_dedupe_falls_back_to_source_and_chunk_without_ids() -> None:
    one = Document(page_content="x", metadata={"source": "f.md", "chunk": 0})
    same = Document(page_content="x changed", metadata={"source": "f.md", "chunk": 0})
    other = Document(page_content="y", metadata={"source": "f.md", "chunk": 1})
    assert doc_key(one) == doc_key(same) != doc_key(other)
    fused = reciprocal_rank_fusion([[one, other], [same]])
    assert len(fused) == 2 and fused[0].page_content == "x"


def test_inputs_are_not_mutated_and_duplicates_in_one_list_count_once() -> None:
    a = _doc("a")
    fused = reciprocal_rank_fusion([[a, a]])
    assert "rrf_score" not in a.metadata
    assert fused[0].metadata["rrf_score"] == pytest.approx(1 / 61)


def test_bad_arguments_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        reciprocal_rank_fusion([[_doc("a")]], weights=[1.0, 1.0])
    with pytest.raises(UsageError):
        reciprocal_rank_fusion([[_doc("a")]], k=0)


def test_a_limit_keeps_the_best_in_the_same_order() -> None:
    docs = [_doc(name) for name in "abcdef"]
    every = reciprocal_rank_fusion([docs, list(reversed(docs[:3]))])
    best = reciprocal_rank_fusion([docs, list(reversed(docs[:3]))], limit=2)
    assert [d.id for d in best] == [d.id for d in every[:2]]
    assert [d.metadata["rrf_score"] for d in best] == [d.metadata["rrf_score"] for d in every[:2]]
