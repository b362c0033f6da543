"""The memory relevance fit: out of fold, the threshold chosen on citations, dev sets only."""

from __future__ import annotations

import json
from pathlib import Path

from apiatlas.evals.dataset import VALIDATION, load_dataset
from apiatlas.evals.encoder.heldout import held_out_as, load_heldout
from apiatlas.evals.memory_relevance import Case, cited, fit, memory_sets, outcome
from apiatlas.rag.review.relevance import ARTIFACT, RELEVANCE_FEATURES

N = len(RELEVANCE_FEATURES)
SCORE = RELEVANCE_FEATURES.index("score")
FORCED = RELEVANCE_FEATURES.index("forbids_first")


def row(score: float, *, forced: bool = False) -> list[float]:
    out = [0.0] * N
    out[SCORE] = score
    out[FORCED] = float(forced)
    return out


def team(name: str) -> list[Case]:
    """Memory cases whose expected memory scores high, controls whose memories score low."""
    cases = []
    for i in range(6):
        cases.append(Case(name, [f"{name}-a{i}"], [], [f"{name}-a{i}", f"{name}-b{i}"],
                          [row(0.8 + 0.01 * i), row(0.2)]))
        cases.append(Case(name, [], [], [f"{name}-c{i}"], [row(0.25 + 0.01 * i)]))
    return cases


def test_the_threshold_is_chosen_on_out_of_fold_citations() -> None:
    by_set = {name: team(name) for name in ("one", "two", "three")}
    fitted = fit(by_set)
    for name, cases in by_set.items():
        figures = outcome(cases, fitted.oof[name])
        assert figures == {"memory_cases": 1.0, "controls_clean": 1.0, "cited_mean": 0.5,
                           "right": 1.0}
    assert fitted.model.features == RELEVANCE_FEATURES


def test_a_ban_of_the_first_endpoint_is_cited_and_a_procedure_alone_keeps_its_citations() -> None:
    fitted = fit({name: team(name) for name in ("one", "two")})
    banned = Case("x", [], [], ["ban"], [row(0.1, forced=True)])
    assert cited(banned, fitted.model, fitted.threshold) == {"ban"}
    alone = Case("x", ["proc"], [], answered_alone=["proc"])
    assert cited(alone, fitted.model, fitted.threshold) == {"proc"}
    # A superseded memory cited makes the memory case wrong.
    stale = Case("x", ["new"], ["old"], ["new", "old"], [row(0.9), row(0.9)])
    assert outcome([stale], [cited(stale, fitted.model, fitted.threshold)])["right"] == 0.0


def test_the_shipped_model_was_fitted_on_dev_memory_sets_only() -> None:
    fit_paths, validation_paths = memory_sets()
    names = {load_dataset(p).name for p in fit_paths}
    assert names and not names & set(VALIDATION)
    assert {load_dataset(p).name for p in validation_paths} <= set(VALIDATION)
    assert all(p.parent.name == "dev" for p in [*fit_paths, *validation_paths])
    # No test or validation API reaches the fit (the validation team history is Intercom's).
    heldout = [h for h in load_heldout() if h.split in ("test", "validation")]

    def held_out(path: Path) -> bool:
        dataset = load_dataset(path)
        words = " ".join([dataset.name, *(str(s) for s in dataset.sources.openapi)])
        return held_out_as("", words.replace("/", " "), heldout) is not None

    assert not [p for p in fit_paths if held_out(p)]
    assert validation_paths and all(held_out(p) for p in validation_paths)
    shipped = json.loads(ARTIFACT.read_text(encoding="utf-8"))
    assert shipped["fitted_on"] == sorted(p.stem for p in fit_paths)
