"""Eval datasets with project memory (issue 5): the ``memories`` format and its validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from apiatlas.errors import UsageError
from apiatlas.evals.dataset import load_dataset

DATASETS = Path(__file__).resolve().parents[3] / "evals" / "datasets" / "dev"

GOOD = """\
name: team
sources:
  openapi: [openapi.yaml]
memories:
  - key: v1-locations
    kind: decision
    text: "We create locations with POST /v1/locations"
    refs: ["post /v1/locations/", "Locations"]
    importance: 8
  - {kind: fact, text: "Our account is on the EU region"}
  - key: v2-locations
    supersedes: v1-locations
    kind: decision
    text: "We create locations with POST /v2/locations now"
    refs: ["POST /v2/locations"]
  - key: onboarding
    kind: procedure
    text: "To onboard a carrier"
    steps: ["Register it with POST /v2/carriers", "Verify it"]
cases:
  - id: m1
    question: "How do I create a location?"
    expected_endpoints: ["POST /v2/locations"]
    expected_memories: [v2-locations]
  - id: control
    question: "How do I accept a quote?"
    expected_endpoints: ["POST /v2/quotes/{id}/accept"]
    expected_memories: []
  - id: plain
    question: "list quotes"
    expected_endpoints: ["GET /v2/quotes"]
"""


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "openapi.yaml").write_text("openapi: 3.0.3\n", encoding="utf-8")
    path = tmp_path / "dataset.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def test_memories_load_in_order_with_refs_in_stored_form(tmp_path: Path) -> None:
    dataset = load_dataset(write(tmp_path, GOOD))
    first, fact, second, procedure = dataset.memories
    assert first.key == "v1-locations" and first.kind == "decision" and first.importance == 8
    assert first.refs == ["POST /v1/locations", "locations"]
    assert fact.key is None and fact.importance == 5 and fact.refs == []
    assert second.supersedes == "v1-locations"
    assert procedure.steps == ["Register it with POST /v2/carriers", "Verify it"]
    m1, control, plain = dataset.cases
    assert m1.expected_memories == ["v2-locations"]
    assert control.expected_memories == []  # a control: the answer must cite no memory
    assert plain.expected_memories is None  # not a memory case


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("kind: fact", "kind: rumour", r"memory #2: kind: Input should be 'fact'"),
        ("importance: 8", "importance: 11", r"memory 'v1-locations': importance: Input should be"),
        ('"Locations"]', '"POST"]', r"memory 'v1-locations': refs: .*METHOD /path"),
        ("    importance: 8\n", "    importance: 8\n    tags: [x]\n",
         r"memory 'v1-locations': tags: unknown key"),
        ("key: onboarding", "key: v2-locations", r"memory 'v2-locations': duplicate memory key"),
        ("supersedes: v1-locations", "supersedes: onboarding",
         r"supersedes 'onboarding', which is not the key of an earlier memory"),
        ("[v2-locations]", "[v3-locations]",
         r"case 'm1': expected memory 'v3-locations' is not a key under `memories`"),
        ("[v2-locations]", "[v1-locations]",
         r"case 'm1': expected memory 'v1-locations' is superseded"),
        ('    expected_endpoints: ["POST /v2/quotes/{id}/accept"]\n', "    answerable: false\n",
         r"case 'control': `expected_memories` needs an answerable case"),
    ],
)
def test_bad_memories_are_usage_errors_naming_the_file_and_memory(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    with pytest.raises(UsageError, match=message) as caught:
        load_dataset(path)
    assert str(path) in str(caught.value)


def test_a_memory_superseded_twice_is_refused(tmp_path: Path) -> None:
    text = GOOD.replace(
        "  - key: onboarding",
        "  - {key: v2b, supersedes: v1-locations, kind: decision, text: again}\n"
        "  - key: onboarding",
    )
    with pytest.raises(UsageError, match="'v1-locations' is already superseded"):
        load_dataset(write(tmp_path, text))


def test_the_shipped_memory_dataset_has_the_cases_issue_5_asks_for() -> None:
    dataset = load_dataset(DATASETS / "sample-memory.yaml")
    memory_cases = [c for c in dataset.cases if c.expected_memories]
    controls = [c for c in dataset.cases if c.expected_memories == []]
    assert len(memory_cases) >= 12 and 3 <= len(controls) <= 4
    kinds = {m.kind for m in dataset.memories}
    assert {"decision", "warning", "procedure"} <= kinds
    assert any(m.supersedes for m in dataset.memories)
    tags = {t for c in memory_cases for t in c.tags}
    assert {"deprecated", "warning", "procedure", "superseded"} <= tags
