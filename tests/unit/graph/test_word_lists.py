"""The singular's word lists hold only what its suffix rules get wrong."""

from __future__ import annotations

from apiatlas.graph import words


def test_every_irregular_plural_is_one_the_suffix_rules_get_wrong() -> None:
    covered = [w for w, one in words._IRREGULAR.items() if words._by_suffix(w) == one]
    assert covered == [], f"the suffix rules already give these: {covered}"


def test_every_singular_s_word_is_one_the_suffix_rules_would_shorten() -> None:
    covered = sorted(w for w in words._SINGULAR_S if words._by_suffix(w) == w)
    assert covered == [], f"the suffix rules already keep these: {covered}"


def test_the_words_the_rules_cover_come_out_as_before() -> None:
    # Formerly listed by hand; the rules give the same.
    for plural, one in (("responses", "response"), ("invoices", "invoice"),
                        ("addresses", "address"), ("statuses", "status")):  # fmt: skip
        assert words.singular(plural) == one
    for word in ("address", "status", "business", "metadata", "analysis", "canvas"):
        assert words.singular(word) == word
