"""The never-trained list (evals/heldout.txt) and its rule, and the written questions against it."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from apiatlas.evals.encoder.corpus import QUESTIONS
from apiatlas.evals.encoder.heldout import HELDOUT, held_out_as, load_heldout

TEST_APIS = {"Square", "Lob", "Adyen", "Adobe Commerce"}
VALIDATION_APIS = {"DocuSign", "Figma", "Intercom"}
ASIDE_APIS = {"DigitalOcean", "Amazon Selling Partner", "Stripe", "GitHub", "Spotify", "TMDB",
              "Netlify", "Discord", "Asana"}


def test_the_list_names_every_test_validation_and_aside_api() -> None:
    by_split: dict[str, set[str]] = {}
    for h in load_heldout():
        by_split.setdefault(h.split, set()).add(h.name)
    assert by_split["test"] == TEST_APIS
    assert by_split["validation"] == VALIDATION_APIS
    assert by_split["aside"] == ASIDE_APIS


@pytest.mark.parametrize(("provider", "title", "name"), [
    ("squareup.com", "Square Connect API", "Square"),
    ("example.org", "Unofficial Square Connect mirror", "Square"),
    ("magento.com", "Magento B2B", "Adobe Commerce"),
    ("adyen.com", "Capital API", "Adyen"),  # by provider alone
    ("themoviedb.org", "Anything", "TMDB"),
    ("mirror.dev", "The Movie Database v3", "TMDB"),
    ("docusign.net", "DocuSign REST API", "DocuSign"),
    ("acme.io", "Stripe-compatible payments", "Stripe"),
])
def test_the_rule_matches_by_provider_or_whole_title_words(
    provider: str, title: str, name: str
) -> None:
    found = held_out_as(provider, title, load_heldout())
    assert found is not None and found.name == name


@pytest.mark.parametrize(("provider", "title"), [
    ("squares.example", "Squares and circles"),  # 'square' only inside a word
    ("blob.store", "Blob storage"),  # 'lob' only inside a word
    ("mastodon.local", "Mastodon API (https://github.com/mastodon/mastodon)"),  # a URL
])
def test_the_rule_leaves_other_apis(provider: str, title: str) -> None:
    assert held_out_as(provider, title, load_heldout()) is None


def test_a_malformed_line_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "heldout.txt"
    bad.write_text("test | Square | squareup.com\n", encoding="utf-8")
    with pytest.raises(ValueError, match="heldout.txt:1"):
        load_heldout(bad)


def test_no_written_question_is_about_a_held_out_api() -> None:
    heldout = load_heldout()
    # every version of the written questions, v1 (192 APIs) and any later one
    files = sorted(QUESTIONS.parent.glob("v*/*.yaml"))
    assert len(list(QUESTIONS.glob("*.yaml"))) >= 192
    cases = 0
    specs: set[str] = set()
    for file in files:
        raw = yaml.safe_load(file.read_text(encoding="utf-8"))
        spec = str(raw["spec"]).removesuffix(".json")
        assert spec not in specs, f"{file}: {spec} has questions in two files"
        specs.add(spec)
        provider = spec.split("/", 1)[0]
        assert held_out_as(provider, spec, heldout) is None, file
        cases += len(raw["cases"])
    assert cases >= 192 * 14
    assert HELDOUT.is_file()
