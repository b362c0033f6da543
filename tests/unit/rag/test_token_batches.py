"""The local model's documents run in batches packed up to a token budget."""

from __future__ import annotations

from apiatlas.rag.runtime.onnx_minilm import token_batches


def test_batches_pack_sorted_lengths_up_to_the_budget() -> None:
    lengths = [10, 10, 20, 30, 30, 40, 256, 256, 256, 256, 256]
    got = token_batches(lengths, 100)
    assert [list(b) for b in got] == [[0, 1, 2], [3, 4], [5], [6], [7], [8], [9], [10]]
    # Every text runs exactly once, in order, and no batch is padded past the budget unless it
    # holds one text longer than the budget on its own.
    assert [i for b in got for i in b] == list(range(len(lengths)))
    for b in got:
        assert len(b) * max(lengths[i] for i in b) <= 100 or len(b) == 1


def test_short_texts_share_a_run_and_no_texts_mean_no_runs() -> None:
    assert [list(b) for b in token_batches([12] * 5, 1024)] == [[0, 1, 2, 3, 4]]
    assert [list(b) for b in token_batches([256] * 9, 1024)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8]]
    assert token_batches([], 1024) == []


def test_the_tokenizer_pads_nothing_so_a_short_question_runs_short() -> None:
    # The model's tokenizer.json pads every text to 128 tokens; a run padded that far costs a
    # one-line question 5-6x its own length's time.
    from apiatlas.rag.runtime.onnx_minilm import MAX_TOKENS, tokenizer

    found = tokenizer()
    assert found.encode("list customers").tokens == ["[CLS]", "list", "customers", "[SEP]"]
    assert len(found.encode("word " * 600).ids) == MAX_TOKENS
